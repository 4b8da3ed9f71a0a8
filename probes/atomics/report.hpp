// The atomics probe's part of every report: the terminal summary, CSV files, the HTML
// section (the SM-to-SM latency heat map, throughput bars and tables); the headline
// figures are the model's (atomics/figures.cpp).
#pragma once

#include <filesystem>
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

#include "charts.hpp"
#include "atomics/atomics.hpp"
#include "gpudissect/device.hpp"
#include "gpudissect/figure.hpp"
#include "sections.hpp"

namespace gd::report {

void print_atomics_summary(std::ostream& os, const AtomicsProbeResult& r, const DeviceInfo& info);
// atomics_latency.csv, atomics_throughput.csv and (where measured) atomics_matrix.csv (the
// SM x SM matrix, empty cells where not measured) and atomics_matrix_clusters.csv.
std::vector<std::filesystem::path> write_atomics_csv(const std::filesystem::path& dir,
                                                     const AtomicsProbeResult& r);
std::string atomics_html_section(const AtomicsProbeResult& r, const DeviceInfo& info,
                                 SectionContext& ctx);

// The gnuplot scripts, exposed for tests: the matrix heat map and the throughput bars
// (nullopt where there is nothing to draw).
std::optional<detail::ChartSpec> atomics_heatmap_chart(const AtomicsProbeResult& r);
std::optional<detail::ChartSpec> atomics_throughput_chart(const AtomicsProbeResult& r);

}  // namespace gd::report
