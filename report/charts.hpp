// Internal to the report writers: gnuplot charts, and the pieces the terminal, CSV and
// HTML writers share (number formatting, the summary rows). Not part of the public API.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "bandwidth/bandwidth.hpp"
#include "format.hpp"
#include "gpudissect/result.hpp"
#include "latency/latency.hpp"

namespace gd::report::detail {

// ---- formatting shared by the writers (html_escape, gnuplot_quote, ...: format.hpp) ----

// opt_fixed, opt_bytes, mhz, median_spread, status_text: format.hpp.
// "216 KiB..232 KiB" for a level's capacity interval, "-" where absent.
std::string capacity_interval(const Level& l);
// "2 MiB" for "stride_2097152" (the curve's stride, or the key's number).
std::string tlb_stride_label(const std::string& key, const CurveResult& c);
// Byte count as an axis label: 1024 -> "1K", 1048576 -> "1M", 3 GiB -> "3G".
std::string axis_bytes_label(double bytes);

// Path names in the tool's usual order: gd::path_order (latency/latency.hpp).
// TLB keys by increasing stride.
std::vector<std::string> tlb_order(const LatencyProbeResult& p);
// The stride of a TLB curve: its stride_bytes, else the number in "stride_<bytes>".
uint64_t tlb_stride(const std::string& key, const CurveResult& c);

// One row of the level summary, formatted; the terminal and HTML print the same rows.
struct SummaryRow {
  std::string path, level, capacity, interval, cycles, ns, confidence;
  std::string note;  // set instead of the figures for an unsupported / failed path
};
std::vector<SummaryRow> summary_rows(const LatencyProbeResult& p);

struct DramRow {
  std::string path, from_to, cycles, ns;
};
std::vector<DramRow> dram_rows(const LatencyProbeResult& p);

struct TlbRow {
  std::string stride, level, reach, pages, cycles, ns, miss_cycles, miss_ns, confidence;
  std::string note;
};
std::vector<TlbRow> tlb_rows(const LatencyProbeResult& p);

// ---- gnuplot ----

// The executable to run: $GD_GNUPLOT if set, else "gnuplot".
std::string gnuplot_executable();

enum class ChartFormat { svg, png };

struct ChartSpec {
  std::string name;    // file stem: "latency_global", "latency_all", "tlb"
  std::string title;   // shown above the chart in the HTML
  std::string script;  // gnuplot commands after terminal/output: data blocks, settings, plot
};

// Charts for a result: one per path that has measured points, the combined one, and the
// TLB one (where there is TLB data). Combined first.
std::vector<ChartSpec> chart_specs(const RunResult& r);
// The combined chart alone / one path's chart; nullopt without measured points.
std::optional<ChartSpec> combined_chart(const RunResult& r);
std::optional<ChartSpec> path_chart(const std::string& path, const CurveResult& c);
std::optional<ChartSpec> tlb_chart(const LatencyProbeResult& p);

// Runs gnuplot on the spec, writing `out`. False with *err (gnuplot's message) on failure.
bool render_chart(const ChartSpec& spec, ChartFormat fmt, const std::filesystem::path& out,
                  std::string* err);
// Renders to SVG and returns the markup ready to inline in HTML (XML prolog removed, ids
// made unique with id_prefix). nullopt with *err on failure.
std::optional<std::string> render_inline_svg(const ChartSpec& spec, const std::string& id_prefix,
                                             std::string* err);

}  // namespace gd::report::detail

namespace gd::report {
struct SectionContext;  // sections.hpp
// A section's chart: inline SVG in a <figure> (with an optional caption), also written as a
// PNG where the context asks; on a gnuplot failure "" and a note in the context. "" when the
// context has no charts (the page says once why).
std::string section_chart(const detail::ChartSpec& spec, SectionContext& ctx,
                          const std::string& caption = "");
// section_chart under an <h4> heading of the chart's title; "" where it gives "".
std::string titled_chart(const detail::ChartSpec& spec, SectionContext& ctx);
// Bandwidth curves (GB/s) against footprint on one chart, log2 x axis (probes/bandwidth/report.cpp;
// the host memory section draws its curves with it too).
std::optional<detail::ChartSpec> bandwidth_curves_chart(
    const std::string& name, const std::string& title,
    const std::vector<std::pair<std::string, const BandwidthCurve*>>& curves,
    const std::string& x_label = "footprint (bytes)");
}  // namespace gd::report
