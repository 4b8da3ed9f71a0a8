// The atomics probe's part of every report: the terminal summary, CSV files, the HTML
// section (the SM-to-SM latency heat map, throughput bars and tables) and the headline
// figures. They take the probe's own result, so the probe's adapter calls them directly.
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

// "over 16 flag locations 380.1 to 470.2 cycles (repeats within 0.4 %)": where a figure is
// the median over placements of its target, the range the placement moved it over; empty
// without a spread. Exposed for tests.
std::string placement_spread_text(const std::optional<PlacementSpread>& s, const std::string& what,
                                  const std::string& unit, int decimals);

void print_atomics_summary(std::ostream& os, const AtomicsProbeResult& r, const DeviceInfo& info);
// atomics_latency.csv, atomics_throughput.csv and (where measured) atomics_matrix.csv (the
// SM x SM matrix, empty cells where not measured) and atomics_matrix_clusters.csv.
std::vector<std::filesystem::path> write_atomics_csv(const std::filesystem::path& dir,
                                                     const AtomicsProbeResult& r);
std::string atomics_html_section(const AtomicsProbeResult& r, const DeviceInfo& info,
                                 SectionContext& ctx);
// Headline figures: "atomics.<latency key>" (cycles, or ns without a clock; lower is
// better), "atomics.<throughput key>" (GOP/s of thread-level atomics, GPU-wide, with
// ops/clk/SM), "atomics.sm_matrix.{min,median,max}".
std::vector<Figure> atomics_figures(const AtomicsProbeResult& r, const DeviceInfo& info);

// The gnuplot scripts, exposed for tests: the matrix heat map and the throughput bars
// (nullopt where there is nothing to draw).
std::optional<detail::ChartSpec> atomics_heatmap_chart(const AtomicsProbeResult& r);
std::optional<detail::ChartSpec> atomics_throughput_chart(const AtomicsProbeResult& r);

}  // namespace gd::report
