// The bandwidth probe's part of every report: the summary table (terminal and HTML), one
// CSV per curve, and the charts (against footprint per operation, against active SMs,
// against shared-memory stride, host link against transfer size).
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iomanip>
#include <ostream>
#include <sstream>

#include "bandwidth/bandwidth.hpp"
#include "charts.hpp"
#include "gpudissect/budget.hpp"
#include "gpudissect/units.hpp"
#include "output.hpp"
#include "probe_report.hpp"
#include "sections.hpp"

namespace gd::report {

namespace {

using detail::script_num;

struct Row {
  std::string level, gbps, spread, bpc, pct, clock, instruction, where, peak_basis;
};

// Each figure against the peak of its own level (gd::figure_peak), "-" where none exists.
std::vector<Row> rows(const BandwidthProbeResult& p, const DeviceInfo& info) {
  std::vector<Row> out;
  for (const BandwidthFigure& f : p.figures) {
    Row r;
    r.level = f.name;
    r.gbps = format_fixed(f.gbps.median, f.gbps.median < 100 ? 1 : 0);
    r.spread = format_fixed(100 * f.gbps.relative_spread(), 1) + "%";
    r.bpc = f.bytes_per_clk_sm ? format_fixed(f.bytes_per_clk_sm->median, 1) : "-";
    const std::optional<BandwidthPeak> peak = figure_peak(f, info, p.peak_gbps_api);
    r.pct = peak ? format_fixed(100 * f.gbps.median / peak->gbps, 1) + "%" : "-";
    r.peak_basis = peak ? peak->basis : "";
    r.clock = f.clock_mhz ? format_fixed(*f.clock_mhz, 0) : "-";
    r.instruction = f.timed_instruction.value_or("-");
    r.where = f.where;
    if (is_unstable(f.gbps)) {
      // Not a result: the value is shown only with its spread, in the "where" column.
      r.where = format_fixed(f.gbps.median, f.gbps.median < 100 ? 1 : 0) + " GB/s" +
                unstable_note(f.gbps) + ", " + r.where;
      r.gbps = "unstable";
      r.pct = "-";
    }
    out.push_back(std::move(r));
  }
  return out;
}

// Every curve of the result with the family it belongs to.
std::vector<std::pair<std::string, const BandwidthCurve*>> all_curves(
    const BandwidthProbeResult& p) {
  std::vector<std::pair<std::string, const BandwidthCurve*>> out;
  for (const auto& [n, c] : p.footprint) out.emplace_back("footprint_" + n, &c);
  for (const auto& [n, c] : p.scaling) out.emplace_back("scaling_" + n, &c);
  for (const auto& [n, c] : p.shared) out.emplace_back("shared_" + n, &c);
  for (const auto& [n, c] : p.host) out.emplace_back("host_" + n, &c);
  for (const auto& [n, c] : p.other) out.emplace_back("other_" + n, &c);
  return out;
}

// One chart: several curves against x (log2 axis where `logx`), GB/s on y.
std::optional<detail::ChartSpec> chart(
    const std::string& name, const std::string& title, const std::string& xlabel, bool logx,
    const std::vector<std::pair<std::string, const BandwidthCurve*>>& curves, double peak = 0,
    bool logy = false) {
  detail::ChartSpec spec;
  spec.name = name;
  spec.title = title;
  std::string& s = spec.script;
  s += "set encoding utf8\nset title " + detail::gnuplot_quote(title) + "\n";
  s += "set grid xtics ytics lc rgb '#dddddd'\nset border 3\nset tics nomirror out\n";
  std::string plot;
  static const char* kColours[] = {"#1f77b4", "#d62728", "#2ca02c", "#9467bd",
                                   "#ff7f0e", "#8c564b", "#e377c2", "#17becf"};
  int i = 0;
  for (const auto& [label, c] : curves) {
    std::string block = "$d" + std::to_string(i) + " << EOD\n";
    int n = 0;
    for (const BandwidthPoint& p : c->points)
      if (p.status.ok() && p.gbps && (!logx || p.x > 0)) {
        block += script_num(p.x) + ' ' + script_num(p.gbps->median) + ' ' + script_num(p.gbps->q1) +
                 ' ' + script_num(p.gbps->q3) + '\n';
        ++n;
      }
    if (n == 0) continue;
    s += block + "EOD\n";
    plot += std::string(plot.empty() ? "plot " : ", \\\n     ") + "$d" + std::to_string(i) +
            " using 1:2:3:4 with yerrorlines lw 2 pt " + std::to_string(i < 8 ? 7 : 5) +
            " ps 0.6 dt " + std::to_string(i / 8 + 1) + " lc rgb '" + kColours[i % 8] + "' title " +
            detail::gnuplot_quote(label);
    ++i;
  }
  if (plot.empty()) return std::nullopt;
  if (logx) s += "set logscale x 2\nset format x '%.0b%B'\n";
  // Footprint curves span 1-35 TB/s: on a linear axis the device-memory variants overlap.
  s += "set xlabel " + detail::gnuplot_quote(xlabel) + "\nset ylabel 'GB/s'\n";
  s += logy ? "set logscale y 10\nset yrange [*:*]\n" : "set yrange [0:*]\n";
  s += "set key outside right top box\n";
  if (peak > 0)
    plot += ", \\\n     " + script_num(peak) + " with lines dt 2 lc rgb '#888888' title " +
            detail::gnuplot_quote("API memory peak " + format_fixed(peak, 0) + " GB/s");
  s += plot + "\n";
  return spec;
}

std::vector<detail::ChartSpec> specs(const BandwidthProbeResult& p) {
  std::vector<detail::ChartSpec> out;
  std::vector<std::pair<std::string, const BandwidthCurve*>> fp, sc, sh, ho;
  for (const auto& [n, c] : p.footprint) fp.emplace_back(n, &c);
  for (const auto& [n, c] : p.scaling)
    sc.emplace_back(n == "l2" ? "L2-resident" : n == "dram" ? "DRAM-resident" : n, &c);
  for (const auto& [n, c] : p.shared) sh.emplace_back(n, &c);
  for (const auto& [n, c] : p.host) ho.emplace_back(n, &c);
  const double peak = p.peak_gbps_api.value_or(0);
  if (auto s = chart("bandwidth_footprint", "Bandwidth against footprint (read + write counted)",
                     "footprint (all buffers)", true, fp, peak, true))
    out.push_back(*s);
  if (auto s = chart("bandwidth_scaling", "Read bandwidth against active SMs (one block per SM)",
                     "active SMs", false, sc, peak))
    out.push_back(*s);
  if (auto s =
          chart("bandwidth_shared_stride", "Shared memory against access stride (bank conflicts)",
                "stride (elements of the access width)", false, sh))
    out.push_back(*s);
  if (auto s =
          chart("bandwidth_host", "Host link against transfer size", "transfer size", true, ho))
    out.push_back(*s);
  return out;
}

}  // namespace

void print_bandwidth_summary(std::ostream& os, const RunResult& r) {
  if (!r.get<BandwidthProbeResult>()) return;
  const BandwidthProbeResult& p = *r.get<BandwidthProbeResult>();
  os << "\nBandwidth probe: " << p.status.name();
  if (!p.status.reason.empty()) os << " (" << p.status.reason << ")";
  os << ", " << format_fixed(p.wall_seconds, 1) << " s";
  if (p.clock_mhz_measured)
    os << ", SM clock " << format_fixed(*p.clock_mhz_measured, 0) << " MHz measured";
  if (p.peak_gbps_api) os << ", API memory peak " << format_fixed(*p.peak_gbps_api, 0) << " GB/s";
  os << "\n";
  const std::vector<Row> rs = rows(p, r.device);
  if (!rs.empty()) {
    os << "  " << std::left << std::setw(26) << "level" << std::right << std::setw(10) << "GB/s"
       << std::setw(8) << "spread" << std::setw(10) << "B/clk/SM" << std::setw(8) << "% peak"
       << std::setw(7) << "MHz"
       << "  " << std::left << std::setw(36) << "instruction timed"
       << "where\n";
    for (const Row& x : rs)
      os << "  " << std::left << std::setw(26) << x.level << std::right << std::setw(10) << x.gbps
         << std::setw(8) << x.spread << std::setw(10) << x.bpc << std::setw(8) << x.pct
         << std::setw(7) << x.clock << "  " << std::left << std::setw(36) << x.instruction
         << x.where << "\n";
    os << "  % peak: of the level's own peak (L1, shared: 128 B/clk/SM x SMs x the clock seen; "
          "device memory: the API peak; -: no documented peak)\n";
  }
  if (p.last_cache_bytes && !p.last_cache_source.empty())
    os << "  device memory: figures from footprints past 4 x "
       << format_bytes(double(*p.last_cache_bytes)) << ", " << p.last_cache_source << "\n";
  for (const auto& [n, c] : p.footprint) {
    if (!c.status.ok())
      os << "  " << n << ": " << c.status.name() << " (" << c.status.reason << ")\n";
    if (c.levels.empty()) continue;
    os << "  " << n << " plateaus:";
    // The curve's first and last measured points. One level over a curve that falls by more
    // than 20 % end to end is a slope, not a plateau (PoCL's read falls smoothly from ~140 to
    // ~40 GB/s and the level finder sees no step): its median would disagree with the
    // table's device-memory figure, the last point, so the line says what the curve does.
    const BandwidthPoint* first = nullptr;
    const BandwidthPoint* last = nullptr;
    for (const BandwidthPoint& pt : c.points)
      if (pt.status.ok() && pt.gbps) {
        if (!first) first = &pt;
        last = &pt;
      }
    if (c.levels.size() == 1 && first && last && first != last &&
        first->gbps->median > 1.2 * last->gbps->median) {
      os << " none, falling from " << format_fixed(first->gbps->median, 0) << " GB/s at "
         << format_bytes(first->x) << " to " << format_fixed(last->gbps->median, 0) << " GB/s at "
         << format_bytes(last->x) << "\n";
      continue;
    }
    for (const BandwidthLevel& l : c.levels) {
      os << " " << l.name << " " << format_fixed(l.gbps, 0) << " GB/s";
      if (l.capacity_lo_bytes) os << " (to " << format_bytes(double(*l.capacity_lo_bytes)) << ")";
      os << ";";
    }
    os << "\n";
  }
  for (const auto& [n, c] : p.scaling)
    if (!c.note.empty()) os << "  scaling " << n << ": " << c.note << "\n";
  for (const auto& [n, c] : p.host)
    if (!c.note.empty()) os << "  host " << n << ": " << c.note << "\n";
  if (p.host_latency_us)
    os << "  host link: 4 KiB pinned transfer " << format_fixed(p.host_latency_us->median, 1)
       << " us\n";
  for (const auto& [key, c] : all_curves(p))
    if (c->status.code == StatusCode::unsupported || c->status.code == StatusCode::error)
      os << "  " << key << ": " << c->status.name() << " (" << c->status.reason << ")\n";
}

std::vector<std::filesystem::path> write_bandwidth_csv(const std::filesystem::path& dir,
                                                       const RunResult& r) {
  std::vector<std::filesystem::path> out;
  if (!r.get<BandwidthProbeResult>()) return out;
  const BandwidthProbeResult& p = *r.get<BandwidthProbeResult>();
  for (const auto& [key, c] : all_curves(p)) {
    if (c->points.empty()) continue;
    const auto path = dir / (detail::file_stem("bandwidth_" + slugify(key)) + ".csv");
    OutputFile f(path);
    f << c->x_unit
      << ",status,gbps_median,gbps_q1,gbps_q3,bytes_per_clk_sm,clock_mhz,read_bytes,write_bytes,"
         "sms,reason\n";
    for (const BandwidthPoint& q : c->points) {
      f << script_num(q.x) << ',' << detail::csv_field(q.status.name()) << ',';
      if (q.gbps)
        f << script_num(q.gbps->median) << ',' << script_num(q.gbps->q1) << ','
          << script_num(q.gbps->q3);
      else
        f << ",,";
      f << ',' << (q.bytes_per_clk_sm ? script_num(q.bytes_per_clk_sm->median) : "") << ','
        << (q.clock_mhz ? script_num(*q.clock_mhz) : "") << ',' << q.read_bytes << ','
        << q.write_bytes << ',' << q.sms << ',' << detail::csv_field(q.status.reason) << '\n';
    }
    f.commit();
    out.push_back(path);
  }
  const auto summary = dir / "bandwidth_summary.csv";
  OutputFile f(summary);
  f << "level,gbps_median,gbps_q1,gbps_q3,bytes_per_clk_sm,percent_of_level_peak,clock_mhz,"
       "instruction,where,level_peak_gbps,level_peak_basis\n";
  for (const BandwidthFigure& x : p.figures) {
    const std::optional<BandwidthPeak> peak = figure_peak(x, r.device, p.peak_gbps_api);
    f << detail::csv_field(x.name) << ',' << script_num(x.gbps.median) << ','
      << script_num(x.gbps.q1) << ',' << script_num(x.gbps.q3) << ','
      << (x.bytes_per_clk_sm ? script_num(x.bytes_per_clk_sm->median) : "") << ','
      << (peak ? script_num(100 * x.gbps.median / peak->gbps) : "") << ','
      << (x.clock_mhz ? script_num(*x.clock_mhz) : "") << ','
      << detail::csv_field(x.timed_instruction.value_or("")) << ',' << detail::csv_field(x.where)
      << ',' << (peak ? script_num(peak->gbps) : "") << ','
      << detail::csv_field(peak ? peak->basis : "") << '\n';
  }
  f.commit();
  out.push_back(summary);
  return out;
}

std::string bandwidth_html_section(const RunResult& r, SectionContext& ctx) {
  if (!r.get<BandwidthProbeResult>()) return {};
  const BandwidthProbeResult& p = *r.get<BandwidthProbeResult>();
  std::ostringstream h;
  h << "<h2 id=\"bandwidth\">Bandwidth</h2>\n<p>Status: " << detail::html_escape(p.status.name());
  if (!p.status.reason.empty()) h << " (" << detail::html_escape(p.status.reason) << ")";
  h << "; " << format_fixed(p.wall_seconds, 1) << " s";
  if (p.clock_mhz_measured)
    h << "; SM clock measured " << format_fixed(*p.clock_mhz_measured, 0) << " MHz";
  if (p.peak_gbps_api)
    h << "; API device-memory peak " << format_fixed(*p.peak_gbps_api, 0) << " GB/s";
  h << ".</p>\n<table>\n<tr><th>level</th><th>GB/s</th><th>spread</th><th>B/clk/SM</th><th>% of "
       "the level's peak</th>"
       "<th>MHz</th><th>instruction timed</th><th>where</th></tr>\n";
  for (const Row& x : rows(p, r.device))
    h << "<tr><td>" << detail::html_escape(x.level) << "</td><td>" << x.gbps << "</td><td>"
      << x.spread << "</td><td>" << x.bpc << "</td><td title=\""
      << detail::html_escape(x.peak_basis) << "\">" << x.pct << "</td><td>" << x.clock
      << "</td><td><code>" << detail::html_escape(x.instruction) << "</code></td><td>"
      << detail::html_escape(x.where) << "</td></tr>\n";
  h << "</table>\n<ul>\n";
  for (const auto& [n, c] : p.footprint) {
    h << "<li>" << detail::html_escape(n) << ": " << detail::html_escape(c.status.name());
    for (const BandwidthLevel& l : c.levels) {
      h << "; " << detail::html_escape(l.name) << " " << format_fixed(l.gbps, 0) << " GB/s";
      if (l.capacity_lo_bytes) h << " (to " << format_bytes(double(*l.capacity_lo_bytes)) << ")";
    }
    if (!c.status.reason.empty()) h << " (" << detail::html_escape(c.status.reason) << ")";
    h << "</li>\n";
  }
  for (const auto& [n, c] : p.scaling)
    if (!c.note.empty())
      h << "<li>scaling " << detail::html_escape(n) << ": " << detail::html_escape(c.note)
        << "</li>\n";
  for (const auto& [n, c] : p.host)
    if (!c.note.empty())
      h << "<li>host " << detail::html_escape(n) << ": " << detail::html_escape(c.note)
        << "</li>\n";
  h << "</ul>\n";
  for (const detail::ChartSpec& s : specs(p)) h << section_chart(s, ctx);
  return h.str();
}

}  // namespace gd::report

namespace gd::report {

std::optional<detail::ChartSpec> bandwidth_curves_chart(
    const std::string& name, const std::string& title,
    const std::vector<std::pair<std::string, const BandwidthCurve*>>& curves,
    const std::string& x_label) {
  return chart(name, title, x_label, true, curves);
}

}  // namespace gd::report

namespace gd {

// The probe's report half (report/probe_report.hpp), registered by probes/registry.cpp.
std::unique_ptr<report::ProbeReport> make_bandwidth_report() {
  return report::make_probe_report(report::print_bandwidth_summary, report::write_bandwidth_csv,
                                   report::bandwidth_html_section);
}

}  // namespace gd
