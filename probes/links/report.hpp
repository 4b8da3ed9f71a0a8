// The links probe's part of every report: the terminal summary (topology, nvbandwidth-style
// matrices, host links, an nccl-tests-style collectives table), CSV files and the HTML
// section. They take the probe's own result, so the probe's adapter calls them directly.
#pragma once

#include <filesystem>
#include <iosfwd>
#include <string>
#include <vector>

#include "links/links.hpp"
#include "sections.hpp"

namespace gd::report {

void print_links_summary(std::ostream& os, const LinksProbeResult& r);
// links_topology.csv, links_p2p.csv (every pair, curve and size), links_latency.csv,
// links_host.csv, links_nccl.csv; each only where there is something in it.
std::vector<std::filesystem::path> write_links_csv(const std::filesystem::path& dir,
                                                   const LinksProbeResult& r);
std::string links_html_section(const LinksProbeResult& r, SectionContext& ctx);
// An n x n matrix as nvbandwidth prints one: rows src, columns dst, "N/A" where absent.
std::string format_links_matrix(const std::vector<double>& m, int n, int decimals);

}  // namespace gd::report
