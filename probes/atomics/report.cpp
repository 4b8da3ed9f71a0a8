// The atomics probe's report: latencies (ping-pong), the SM-to-SM matrix as a heat map with
// its structure, throughput per pattern as bars and a table, each beside the instruction
// timed, plus CSV files and the headline figures.
#include "atomics/report.hpp"

#include <cmath>
#include <cstdio>
#include <fstream>
#include <iomanip>
#include <ostream>
#include <sstream>

#include "gpudissect/budget.hpp"  // unstable_note
#include "gpudissect/units.hpp"
#include "output.hpp"
#include "probe_report.hpp"

namespace gd::report {

namespace {

using detail::script_num;

// A latency in the unit it has: cycles where the backend has a clock, else ns.
std::string latency_text(const AtomicLatency& l) {
  if (!l.status.ok()) return l.status.name() + " (" + l.status.reason + ")";
  std::string s;
  if (l.cycles) s += format_fixed(l.cycles->median, 1) + " cycles" + unstable_note(*l.cycles);
  if (l.ns)
    s += std::string(s.empty() ? "" : ", ") + format_fixed(l.ns->median, 1) + " ns" +
         (l.cycles ? std::string() : unstable_note(*l.ns));
  return s;
}

std::string gops_text(const AtomicThroughput& t) {
  if (!t.gops) return "-";
  return format_fixed(t.gops->median, t.gops->median < 10 ? 2 : 1) + unstable_note(*t.gops);
}

std::string per_clk_text(const AtomicThroughput& t) {
  if (!t.ops_per_clk_sm) return "-";
  return format_fixed(t.ops_per_clk_sm->median, t.ops_per_clk_sm->median < 10 ? 2 : 1);
}

std::string latency_spread(const AtomicLatency& l) {
  if (l.placement_cycles)
    return placement_spread_text(l.placement_cycles, "flag locations", "cycles", 1);
  return placement_spread_text(l.placement_ns, "flag locations", "ns", 1);
}

std::string with(const std::string& note, const std::string& more) {
  if (more.empty()) return note;
  return note.empty() ? more : note + "; " + more;
}

std::string spread_num(const std::optional<PlacementSpread>& s, bool max) {
  return s ? script_num(max ? s->max : s->min) : "";
}

}  // namespace

// ---- terminal ----

// "each cell the mean of 4 flag placements; one placement alone: median 340 to 368" or "".
std::string placement_text(const SmMatrix& m) {
  if (m.placements <= 1 || m.placement_summaries.empty()) return {};
  double lo = m.placement_summaries.front().all.median, hi = lo;
  for (const MatrixSummary& s : m.placement_summaries) {
    lo = std::min(lo, s.all.median);
    hi = std::max(hi, s.all.median);
  }
  return "each cell the mean of " + std::to_string(m.placements) +
         " flag placements (a pair's flag line moved to other L2 slices); one placement "
         "alone: median " +
         format_fixed(lo, 0) + " to " + format_fixed(hi, 0);
}

void print_atomics_summary(std::ostream& os, const AtomicsProbeResult& r, const DeviceInfo& info) {
  os << "\nAtomics probe: " << r.status.name();
  if (!r.status.reason.empty()) os << " (" << r.status.reason << ")";
  os << ", " << format_fixed(r.wall_seconds, 1) << " s";
  if (r.clock_mhz_measured)
    os << ", SM clock " << format_fixed(*r.clock_mhz_measured, 0) << " MHz measured";
  const char* units = info.backend == "opencl" ? " compute units" : " SMs";
  os << ", " << info.compute_units << units << "\n";
  if (!r.latency.empty()) {
    os << "  hand-over latency (half a round trip):\n";
    for (const auto& [key, l] : r.latency) {
      os << "    " << std::left << std::setw(34) << key << std::setw(34) << latency_text(l);
      if (l.instruction) os << "  " << *l.instruction;
      if (l.sm_a && l.sm_b) os << "  (SMs " << *l.sm_a << ", " << *l.sm_b << ")";
      os << "\n";
      if (const std::string sp = latency_spread(l); !sp.empty()) os << "      " << sp << "\n";
    }
  }
  if (r.matrix) {
    const SmMatrix& m = *r.matrix;
    os << "  SM-to-SM matrix: " << m.status.name();
    if (!m.status.reason.empty()) os << " (" << m.status.reason << ")";
    if (m.summary.all.n) {
      os << ", " << m.sms << " SMs, " << m.summary.all.n << " pairs, " << m.unit << " min "
         << format_fixed(m.summary.all.min, 0) << " median "
         << format_fixed(m.summary.all.median, 0) << " max " << format_fixed(m.summary.all.max, 0)
         << ", " << format_fixed(m.seconds, 2) << " s\n    " << m.summary.structure;
      if (const std::string p = placement_text(m); !p.empty()) os << "\n    " << p;
    }
    os << "\n";
  }
  if (!r.throughput.empty()) {
    os << "  throughput (thread-level atomics):\n    " << std::left << std::setw(40) << "pattern"
       << std::right << std::setw(10) << "GOP/s" << std::setw(12) << "ops/clk/SM"
       << "  instruction timed\n";
    for (const auto& [key, t] : r.throughput) {
      os << "    " << std::left << std::setw(40) << key;
      if (!t.status.ok()) {
        os << t.status.name() << " (" << t.status.reason << ")\n";
        continue;
      }
      os << std::right << std::setw(10) << gops_text(t) << std::setw(12) << per_clk_text(t) << "  "
         << t.instruction.value_or("-") << "\n";
      if (!t.note.empty()) os << "      " << t.note << "\n";
      if (const std::string sp = gops_spread(t); !sp.empty()) os << "      " << sp << "\n";
    }
  }
}

// ---- CSV ----

// shape: four CSV files (latency, throughput, matrix, clusters), each a short block in turn.
std::vector<std::filesystem::path> write_atomics_csv(const std::filesystem::path& dir,
                                                     const AtomicsProbeResult& r) {
  std::vector<std::filesystem::path> out;
  if (!r.latency.empty()) {
    const auto path = dir / "atomics_latency.csv";
    OutputFile f(path);
    f << "figure,status,cycles_median,cycles_q1,cycles_q3,ns_median,ns_q1,ns_q3,clock_mhz,"
         "round_trips,sm_a,sm_b,instruction,reason,locations,cycles_location_min,"
         "cycles_location_max,ns_location_min,ns_location_max\n";
    for (const auto& [key, l] : r.latency) {
      f << detail::csv_field(key) << ',' << detail::csv_field(l.status.name()) << ',';
      if (l.cycles)
        f << script_num(l.cycles->median) << ',' << script_num(l.cycles->q1) << ','
          << script_num(l.cycles->q3);
      else
        f << ",,";
      f << ',';
      if (l.ns)
        f << script_num(l.ns->median) << ',' << script_num(l.ns->q1) << ',' << script_num(l.ns->q3);
      else
        f << ",,";
      f << ',' << (l.clock_mhz ? script_num(*l.clock_mhz) : "") << ',' << l.round_trips << ','
        << (l.sm_a ? std::to_string(*l.sm_a) : "") << ',' << (l.sm_b ? std::to_string(*l.sm_b) : "")
        << ',' << detail::csv_field(l.instruction.value_or("")) << ','
        << detail::csv_field(l.status.reason) << ',' << l.locations << ','
        << spread_num(l.placement_cycles, false) << ',' << spread_num(l.placement_cycles, true)
        << ',' << spread_num(l.placement_ns, false) << ',' << spread_num(l.placement_ns, true)
        << '\n';
    }
    f.commit();
    out.push_back(path);
  }
  if (!r.throughput.empty()) {
    const auto path = dir / "atomics_throughput.csv";
    OutputFile f(path);
    f << "figure,status,space,op,type,contention,ways,use_return,scope,ops_per_launch,gops_median,"
         "gops_q1,gops_q3,ops_per_clk_sm,clock_mhz,sms,instruction,note,reason,placements,"
         "gops_placement_min,gops_placement_max\n";
    for (const auto& [key, t] : r.throughput) {
      f << detail::csv_field(key) << ',' << detail::csv_field(t.status.name()) << ','
        << detail::csv_field(t.space) << ',' << detail::csv_field(t.op) << ','
        << detail::csv_field(t.type) << ',' << detail::csv_field(t.contention) << ',' << t.ways
        << ',' << (t.use_return ? 1 : 0) << ',' << detail::csv_field(t.scope) << ','
        << t.ops_per_launch << ',';
      if (t.gops)
        f << script_num(t.gops->median) << ',' << script_num(t.gops->q1) << ','
          << script_num(t.gops->q3);
      else
        f << ",,";
      f << ',' << (t.ops_per_clk_sm ? script_num(t.ops_per_clk_sm->median) : "") << ','
        << (t.clock_mhz ? script_num(*t.clock_mhz) : "") << ',' << t.sms << ','
        << detail::csv_field(t.instruction.value_or("")) << ',' << detail::csv_field(t.note) << ','
        << detail::csv_field(t.status.reason) << ',' << t.placements << ','
        << spread_num(t.placement_gops, false) << ',' << spread_num(t.placement_gops, true) << '\n';
    }
    f.commit();
    out.push_back(path);
  }
  if (r.matrix && !r.matrix->values.empty()) {
    const SmMatrix& m = *r.matrix;
    const auto path = dir / "atomics_matrix.csv";
    OutputFile f(path);
    f << "sm";
    for (std::size_t j = 0; j < m.values.size(); ++j) f << ",sm" << j;
    f << '\n';
    for (std::size_t i = 0; i < m.values.size(); ++i) {
      f << i;
      for (double v : m.values[i]) f << ',' << (std::isfinite(v) ? script_num(v) : "");
      f << '\n';
    }
    f.commit();
    out.push_back(path);
    const auto clusters = dir / "atomics_matrix_clusters.csv";
    OutputFile c(clusters);
    c << "cluster,sms,median_within_" << m.unit << '\n';
    for (std::size_t k = 0; k < m.summary.clusters.size(); ++k) {
      std::string sms;
      for (int s : m.summary.clusters[k].sms) sms += (sms.empty() ? "" : " ") + std::to_string(s);
      c << k << ',' << detail::csv_field(sms) << ','
        << script_num(m.summary.clusters[k].median_within) << '\n';
    }
    c.commit();
    out.push_back(clusters);
  }
  return out;
}

// ---- charts ----

std::optional<detail::ChartSpec> atomics_heatmap_chart(const AtomicsProbeResult& r) {
  if (!r.matrix || r.matrix->summary.all.n == 0) return std::nullopt;
  const SmMatrix& m = *r.matrix;
  detail::ChartSpec spec;
  spec.name = "atomics_sm_matrix";
  spec.title = "SM-to-SM hand-over latency through global memory (CAS ping-pong), " + m.unit;
  std::string& s = spec.script;
  s += "set encoding utf8\nset title " + detail::gnuplot_quote(spec.title) + "\n";
  // Not-measured cells (the diagonal) are NaN, which gnuplot leaves blank.
  s += "$m << EOD\n";
  for (const auto& row : m.values) {
    std::string line;
    for (double v : row) line += (line.empty() ? "" : " ") + script_num(v);
    s += line + "\n";
  }
  s += "EOD\n";
  const int n = static_cast<int>(m.values.size());
  s += "set size ratio -1\nset xrange [-0.5:" + script_num(n - 0.5) + "]\nset yrange [" +
       script_num(n - 0.5) + ":-0.5]\n";
  s += "set xlabel 'SM (%smid)'\nset ylabel 'SM (%smid)'\nset cblabel " +
       detail::gnuplot_quote(m.unit + " per hand-over") + "\n";
  s += "set palette defined (0 '#2166ac', 1 '#f7f7f7', 2 '#b2182b')\nset tics out nomirror\n";
  s += "plot $m matrix with image notitle\n";
  return spec;
}

std::optional<detail::ChartSpec> atomics_throughput_chart(const AtomicsProbeResult& r) {
  // ops/clk/SM where the backend has a clock, else GOP/s.
  bool per_clk = false;
  for (const auto& [key, t] : r.throughput)
    if (t.ops_per_clk_sm) per_clk = true;
  std::string block;
  int n = 0;
  for (const auto& [key, t] : r.throughput) {
    const std::optional<Summary>& v = per_clk ? t.ops_per_clk_sm : t.gops;
    if (!t.status.ok() || !v || !(v->median > 0)) continue;
    // Data blocks take double quotes (single quotes would be printed).
    block +=
        std::to_string(n++) + ' ' + script_num(v->median) + ' ' + detail::gnuplot_datum(key) + '\n';
  }
  if (n == 0) return std::nullopt;
  detail::ChartSpec spec;
  spec.name = "atomics_throughput";
  spec.title = std::string("Atomic throughput, thread-level operations (") +
               (per_clk ? "ops/clk/SM" : "GOP/s") + ", log scale)";
  std::string& s = spec.script;
  s += "set encoding utf8\nset title " + detail::gnuplot_quote(spec.title) + "\n";
  s += "$t << EOD\n" + block + "EOD\n";
  s += "set style fill solid 0.8 border -1\nset boxwidth 0.8\nset logscale y 10\n";
  s += "set grid ytics lc rgb '#dddddd'\nset border 3\nset tics nomirror out\n";
  s += "set xtics rotate by -60 font ',8'\nset xrange [-0.6:" + script_num(n - 0.4) + "]\n";
  s += "set ylabel " + detail::gnuplot_quote(per_clk ? "ops/clk/SM" : "GOP/s") + "\n";
  s += "set bmargin 14\nplot $t using 1:2:xtic(3) with boxes lc rgb '#1f77b4' notitle\n";
  return spec;
}

// ---- HTML ----

std::string atomics_html_section(const AtomicsProbeResult& r, const DeviceInfo& info,
                                 SectionContext& ctx) {
  using detail::html_escape;
  std::ostringstream h;
  h << "<h2 id=\"atomics\">Atomics</h2>\n<p>Status: " << html_escape(r.status.name());
  if (!r.status.reason.empty()) h << " (" << html_escape(r.status.reason) << ")";
  h << "; " << format_fixed(r.wall_seconds, 1) << " s";
  if (r.clock_mhz_measured)
    h << "; SM clock measured " << format_fixed(*r.clock_mhz_measured, 0) << " MHz";
  h << "; " << info.compute_units << (info.backend == "opencl" ? " compute units" : " SMs")
    << ". Every figure's memory was checked exactly: counters equal the atomics made, "
       "ping-pong flags end at twice the round trips.</p>\n";
  if (!r.latency.empty()) {
    h << "<h3>Hand-over latency (half a round trip)</h3>\n<table>\n<tr><th>between</th><th>"
         "cycles</th><th>ns</th><th>MHz</th><th>SMs</th><th>instruction timed</th><th>note</th>"
         "</tr>\n";
    for (const auto& [key, l] : r.latency) {
      h << "<tr><td>" << html_escape(key) << "</td>";
      if (!l.status.ok()) {
        h << "<td colspan=\"6\">" << html_escape(l.status.name() + ": " + l.status.reason)
          << "</td></tr>\n";
        continue;
      }
      h << "<td>" << (l.cycles ? format_fixed(l.cycles->median, 1) : "-") << "</td><td>"
        << (l.ns ? format_fixed(l.ns->median, 1) : "-") << "</td><td>"
        << (l.clock_mhz ? format_fixed(*l.clock_mhz, 0) : "-") << "</td><td>"
        << (l.sm_a && l.sm_b ? std::to_string(*l.sm_a) + ", " + std::to_string(*l.sm_b) : "-")
        << "</td><td><code>" << html_escape(l.instruction.value_or("-")) << "</code></td><td>"
        << html_escape(with(l.note, latency_spread(l))) << "</td></tr>\n";
    }
    h << "</table>\n";
  }
  std::vector<detail::ChartSpec> charts;
  if (r.matrix) {
    const SmMatrix& m = *r.matrix;
    h << "<h3>SM-to-SM latency matrix</h3>\n<p>" << html_escape(m.status.name());
    if (!m.status.reason.empty()) h << " (" << html_escape(m.status.reason) << ")";
    if (m.summary.all.n)
      h << ": " << m.sms << " SMs, " << m.summary.all.n << " pairs in "
        << format_fixed(m.seconds, 2) << " s, " << m.round_trips_per_pair
        << " round trips per pair; " << html_escape(m.unit) << " per hand-over: min "
        << format_fixed(m.summary.all.min, 0) << ", median "
        << format_fixed(m.summary.all.median, 0) << ", max " << format_fixed(m.summary.all.max, 0)
        << ". Structure: " << html_escape(m.summary.structure) << ".";
    if (const std::string p = placement_text(m); !p.empty()) h << " " << html_escape(p) << ".";
    h << "</p>\n";
    if (m.summary.clusters.size() > 1) {
      h << "<table>\n<tr><th>group</th><th>SMs</th><th>median within</th></tr>\n";
      for (std::size_t k = 0; k < m.summary.clusters.size(); ++k) {
        std::string sms;
        for (int s : m.summary.clusters[k].sms) sms += (sms.empty() ? "" : " ") + std::to_string(s);
        h << "<tr><td>" << k << "</td><td>" << sms << "</td><td>"
          << format_fixed(m.summary.clusters[k].median_within, 0) << "</td></tr>\n";
      }
      h << "</table>\n";
    }
    if (auto c = atomics_heatmap_chart(r)) charts.push_back(*c);
  }
  if (!r.throughput.empty()) {
    h << "<h3>Throughput</h3>\n<p>Thread-level atomics the program asked for, GPU-wide; "
         "ops/clk/SM at the clock the kernel saw.</p>\n<table>\n<tr><th>figure</th><th>pattern"
         "</th><th>GOP/s</th><th>ops/clk/SM</th><th>instruction timed</th><th>note</th></tr>\n";
    for (const auto& [key, t] : r.throughput) {
      h << "<tr><td>" << html_escape(key) << "</td><td>" << html_escape(describe(t)) << "</td>";
      if (!t.status.ok()) {
        h << "<td colspan=\"4\">" << html_escape(t.status.name() + ": " + t.status.reason)
          << "</td></tr>\n";
        continue;
      }
      h << "<td>" << gops_text(t) << "</td><td>" << per_clk_text(t) << "</td><td><code>"
        << html_escape(t.instruction.value_or("-")) << "</code></td><td>"
        << html_escape(with(t.note, gops_spread(t))) << "</td></tr>\n";
    }
    h << "</table>\n";
    if (auto c = atomics_throughput_chart(r)) charts.push_back(*c);
  }
  for (const detail::ChartSpec& s : charts) h << section_chart(s, ctx);
  return h.str();
}

}  // namespace gd::report

namespace gd {

// The probe's report half (report/probe_report.hpp), registered by probes/registry.cpp.
std::unique_ptr<report::ProbeReport> make_atomics_report() {
  return report::make_probe_report(
      [](std::ostream& os, const RunResult& r) {
        if (const AtomicsProbeResult* a = r.get<AtomicsProbeResult>())
          report::print_atomics_summary(os, *a, r.device);
      },
      [](const std::filesystem::path& dir, const RunResult& r) {
        const AtomicsProbeResult* a = r.get<AtomicsProbeResult>();
        return a ? report::write_atomics_csv(dir, *a) : std::vector<std::filesystem::path>{};
      },
      [](const RunResult& r, report::SectionContext& ctx) {
        const AtomicsProbeResult* a = r.get<AtomicsProbeResult>();
        return a ? report::atomics_html_section(*a, r.device, ctx) : std::string();
      });
}

}  // namespace gd
