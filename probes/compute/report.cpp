// The compute probe's part of every report: the instruction table in the style of seed
// 003 (opcode seen, ops/clk/SM, % of peak, GPU-wide rate, latency), the mixed-issue and
// barrier tables, and charts of the ILP x occupancy sweeps.
#include <cstdio>
#include <fstream>
#include <map>
#include <optional>
#include <ostream>
#include <sstream>

#include "charts.hpp"
#include "compute/compute.hpp"
#include "gpudissect/budget.hpp"  // unstable_note
#include "gpudissect/units.hpp"
#include "output.hpp"
#include "probe_report.hpp"
#include "sections.hpp"

namespace gd::report {

namespace {

// GPU-wide rate in its natural unit (gd::rate_unit): FLOP/s for floating-point arithmetic,
// OP/s for integer arithmetic (IMAD, dp4a, s8 tensor ops), instructions/s otherwise.
std::string gpu_rate(const ComputeFigure& f) {
  if (f.compiled_away) return "0 (no instruction)";
  const std::optional<double> v = rate_tera(f);
  if (!v) return "-";
  // A loop without the intended instruction has no rate of that instruction to state.
  if (f.missing_instruction) return "(flagged)";
  // Below 0.1 tera (a CPU through lavapipe or PoCL) two decimals would print 0.00.
  return format_fixed(*v, f.klass == "tensor" ? 1 : *v < 0.1 ? 4 : 2) + " " + rate_unit(f);
}

std::string first_opcode(const ComputeFigure& f) {
  if (f.opcodes.empty()) return f.instruction.empty() ? "-" : f.instruction;
  std::string s = f.opcodes.front();
  for (std::size_t i = 1; i < f.opcodes.size() && i < 3; ++i) s += ", " + f.opcodes[i];
  return s;
}

// The figure's note; cut to `max` characters for the terminal (0: whole, for HTML).
std::string status_note(const ComputeFigure& f, std::size_t max = 90) {
  std::string n;
  if (f.missing_instruction) n = "FLAGGED: loop lacks the instruction";
  // Why it compiled away, or that the GPU's clock was low (Vulkan).
  if (!f.note.empty()) n += (n.empty() ? "" : "; ") + f.note;
  if (f.clock_source == "reported")
    n += std::string(n.empty() ? "" : "; ") + "per clock at the reported clock";
  if (f.clock_source == "none")
    n += std::string(n.empty() ? "" : "; ") + "no clock: per clock unknown";
  if (!f.status.ok()) n += (n.empty() ? "" : "; ") + f.status.name() + ": " + f.status.reason;
  if (max > 3 && n.size() > max) n = n.substr(0, max - 3) + "...";
  return n;
}

// The ILP x occupancy sweep as a table: a row per op and ILP, a column per warps/SM.
void print_ilp_grid(std::ostream& os, const std::vector<ComputeFigure>& sweep) {
  char line[512];
  os << "\nILP x occupancy: thread-instructions/clk/SM (rows: op, ILP; columns: warps/SM)\n";
  std::map<std::pair<std::string, int>, std::map<int, double>> grid;
  std::vector<std::pair<std::string, int>> order;
  std::vector<int> warps;
  for (const auto& f : sweep) {
    auto key = std::make_pair(f.label, f.ilp);
    if (!grid.count(key)) order.push_back(key);
    if (f.ops_per_clk_sm) grid[key][f.warps_per_sm] = f.ops_per_clk_sm->median;
    if (std::find(warps.begin(), warps.end(), f.warps_per_sm) == warps.end())
      warps.push_back(f.warps_per_sm);
  }
  std::sort(warps.begin(), warps.end());
  os << "  " << std::string(30, ' ');
  for (int w : warps) {
    std::snprintf(line, sizeof line, "%7d", w);
    os << line;
  }
  os << "\n";
  for (const auto& key : order) {
    std::snprintf(line, sizeof line, "  %-24s ILP %d", key.first.substr(0, 24).c_str(), key.second);
    os << line;
    for (int w : warps) {
      auto it = grid[key].find(w);
      std::snprintf(line, sizeof line, "%7s",
                    it == grid[key].end() ? "-" : format_fixed(it->second, 1).c_str());
      os << line;
    }
    os << "\n";
  }
}

// Every opcode of the timed loop, or the instruction where no machine code was read
// (Vulkan: the SPIR-V op).
std::string opcodes_text(const ComputeFigure& f) {
  std::string ops;
  for (const auto& s : f.opcodes) ops += (ops.empty() ? "" : ", ") + s;
  return ops.empty() ? f.instruction : ops;
}

// One swept op's chart: throughput against warps per SM, a line per ILP (`by_ilp`).
detail::ChartSpec sweep_chart(const std::vector<ComputeFigure>& sweep, const std::string& op,
                              const std::map<int, std::vector<std::pair<int, double>>>& by_ilp) {
  detail::ChartSpec spec;
  spec.name = "compute_sweep_" + op;
  for (auto& ch : spec.name)
    if (ch == '.') ch = '_';
  spec.name = detail::file_stem(spec.name);  // the op comes from the file
  spec.title = op + ": thread-instructions/clk/SM against warps/SM";
  std::ostringstream s;
  for (const auto& [ilp, pts] : by_ilp) {
    s << "$ilp" << ilp << " << EOD\n";
    for (const auto& [w, v] : pts) s << w << " " << v << "\n";
    s << "EOD\n";
  }
  // The PNG stands alone (no HTML heading beside it): title, peak line, key clear of
  // the curves (they rise to the left, so the key goes bottom right).
  std::optional<double> peak;
  for (const auto& f : sweep)
    if (f.op == op && f.peak_per_clk_sm) peak = f.peak_per_clk_sm;
  s << "set title " << detail::gnuplot_quote(op + ": thread-instructions/clk/SM (ILP x warps/SM)")
    << "\n"
    << "set xlabel 'warps per SM'\nset ylabel 'ops/clk/SM'\nset key right bottom box opaque\n"
       "set grid\nset logscale x 2\nset yrange [0:"
    << (peak ? format_fixed(*peak * 1.1, 0) : std::string("*")) << "]\n";
  if (peak)
    s << "set arrow from graph 0, first " << format_fixed(*peak, 1) << " to graph 1, first "
      << format_fixed(*peak, 1) << " nohead dashtype 2 lc rgb 'red'\nset label 'peak "
      << format_fixed(*peak, 0) << "' at graph 0.02, first " << format_fixed(*peak * 1.03, 1)
      << " tc rgb 'red'\n";
  s << "plot ";
  bool first = true;
  for (const auto& [ilp, pts] : by_ilp) {
    s << (first ? "" : ", ") << "$ilp" << ilp << " with linespoints lw 2 pt " << (ilp + 3)
      << " title 'ILP " << ilp << "'";
    first = false;
  }
  s << "\n";
  spec.script = s.str();
  return spec;
}

}  // namespace

void print_compute_summary(std::ostream& os, const RunResult& r) {
  if (!r.get<ComputeProbeResult>()) return;
  const auto& c = *r.get<ComputeProbeResult>();
  os << "\nCompute probe: " << c.status.name();
  if (!c.status.reason.empty()) os << " (" << c.status.reason << ")";
  if (c.clock_mhz)
    os << (c.clock_source == "reported" ? ", clock REPORTED by the driver (not measured) "
                                        : ", SM clock seen ")
       << format_fixed(*c.clock_mhz, 0) << " MHz";
  os << ", " << c.sms << " SMs, " << format_fixed(c.wall_seconds, 1) << " s\n";
  if (c.table.empty()) return;
  char line[512];
  std::snprintf(line, sizeof line, "%-28s %-34s %16s %7s %18s %10s\n", "instruction",
                "opcodes in the timed loop", "ops/clk/SM", "% peak", "GPU-wide", "lat (clk)");
  os << line;
  for (const auto& f : c.table) {
    if (f.status.code == StatusCode::unsupported) {
      std::snprintf(line, sizeof line, "%-28s unsupported: %s\n", f.label.c_str(),
                    f.status.reason.c_str());
      os << line;
      continue;
    }
    std::snprintf(line, sizeof line, "%-28s %-34s %16s %7s %18s %10s %s\n", f.label.c_str(),
                  first_opcode(f).substr(0, 34).c_str(),
                  detail::median_spread(f.ops_per_clk_sm, 1).c_str(),
                  f.fraction_of_peak ? format_fixed(100 * *f.fraction_of_peak, 1).c_str() : "-",
                  gpu_rate(f).c_str(),
                  f.latency_cycles ? format_fixed(f.latency_cycles->median, 1).c_str()
                  : f.latency_ns   ? (format_fixed(f.latency_ns->median, 2) + " ns").c_str()
                                   : "-",
                  status_note(f).c_str());
    os << line;
  }
  if (!c.mixed.empty()) {
    os << "\nMixed issue (ILP 8 of each, interleaved): thread-instructions/clk/SM\n";
    for (const auto& f : c.mixed) {
      std::snprintf(
          line, sizeof line, "  %-44s %10s + %10s = %10s %s\n", f.label.c_str(),
          f.ops_per_clk_sm ? format_fixed(f.ops_per_clk_sm->median, 1).c_str() : "-",
          f.mix_ops_per_clk_sm ? format_fixed(f.mix_ops_per_clk_sm->median, 1).c_str() : "-",
          f.ops_per_clk_sm && f.mix_ops_per_clk_sm
              ? format_fixed(f.ops_per_clk_sm->median + f.mix_ops_per_clk_sm->median, 1).c_str()
              : "-",
          status_note(f).c_str());
      os << line;
    }
  }
  if (!c.sync.empty()) {
    os << "\n__syncthreads, one block: cycles per barrier by block size\n  ";
    for (const auto& f : c.sync)
      os << f.warps_per_sm * 32 << ": "
         << (f.latency_cycles ? format_fixed(f.latency_cycles->median, 1) : std::string("-"))
         << "  ";
    os << "\n";
  }
  if (!c.sweep.empty()) print_ilp_grid(os, c.sweep);
}

std::vector<std::filesystem::path> write_compute_csv(const std::filesystem::path& dir,
                                                     const RunResult& r) {
  std::vector<std::filesystem::path> files;
  if (!r.get<ComputeProbeResult>()) return files;
  const auto& c = *r.get<ComputeProbeResult>();
  auto write = [&](const std::string& name, const std::vector<ComputeFigure>& v) {
    if (v.empty()) return;
    const auto p = dir / name;
    OutputFile f(p);
    f << "op,mix,label,class,status,reason,ilp,warps_per_sm,ops_per_clk_sm,ops_per_clk_sm_q1,"
         "ops_per_clk_sm_q3,mix_ops_per_clk_sm,ops_per_s,flops_per_op,peak_per_clk_sm,"
         "fraction_of_peak,latency_cycles,clock_mhz,sass_per_op,missing_instruction,"
         "implied_latency_cycles,opcodes,gpu_rate,gpu_rate_unit\n";
    auto o = [](const std::optional<double>& v) { return v ? format_fixed(*v, 6) : std::string(); };
    for (const auto& e : v) {
      std::string ops;
      for (const auto& s : e.opcodes) ops += (ops.empty() ? "" : " ") + s;
      f << detail::csv_field(e.op) << "," << detail::csv_field(e.mix) << ","
        << detail::csv_field(e.label) << "," << detail::csv_field(e.klass) << ","
        << detail::csv_field(e.status.name()) << "," << detail::csv_field(e.status.reason) << ","
        << e.ilp << "," << e.warps_per_sm << ","
        << (e.ops_per_clk_sm ? format_fixed(e.ops_per_clk_sm->median, 6) : "") << ","
        << (e.ops_per_clk_sm ? format_fixed(e.ops_per_clk_sm->q1, 6) : "") << ","
        << (e.ops_per_clk_sm ? format_fixed(e.ops_per_clk_sm->q3, 6) : "") << ","
        << (e.mix_ops_per_clk_sm ? format_fixed(e.mix_ops_per_clk_sm->median, 6) : "") << ","
        << (e.ops_per_s ? format_fixed(e.ops_per_s->median, 0) : "") << "," << o(e.flops_per_op)
        << "," << o(e.peak_per_clk_sm) << "," << o(e.fraction_of_peak) << ","
        << (e.latency_cycles ? format_fixed(e.latency_cycles->median, 3) : "") << ","
        << o(e.clock_mhz) << "," << o(e.sass_per_op) << "," << (e.missing_instruction ? 1 : 0)
        << "," << o(e.implied_latency) << "," << detail::csv_field(ops) << ","
        << (rate_tera(e) && !e.missing_instruction ? format_fixed(*rate_tera(e), 6) : "") << ","
        << rate_unit(e) << "\n";
    }
    f.commit();
    files.push_back(p);
  };
  write("compute.csv", c.table);
  write("compute_mixed.csv", c.mixed);
  write("compute_sync.csv", c.sync);
  write("compute_sweep.csv", c.sweep);
  return files;
}

std::string compute_html_section(const RunResult& r, SectionContext& ctx) {
  if (!r.get<ComputeProbeResult>()) return {};
  const auto& c = *r.get<ComputeProbeResult>();
  std::ostringstream h;
  h << "<h2 id=\"compute\">Compute</h2>\n<p>Status: " << detail::html_escape(c.status.name());
  if (!c.status.reason.empty()) h << " (" << detail::html_escape(c.status.reason) << ")";
  if (c.clock_mhz)
    h << (c.clock_source == "reported" ? "; clock reported by the driver, not measured: "
                                       : "; SM clock seen ")
      << format_fixed(*c.clock_mhz, 0) << " MHz";
  h << "; peaks: " << detail::html_escape(c.peak_source) << ".</p>\n";
  if (!c.table.empty()) {
    h << "<table>\n<tr><th>instruction</th><th>opcodes in the timed loop</th><th>ops/clk/SM "
         "(median ± IQR/2)</th><th>% of peak</th><th>GPU-wide</th><th>latency (clk)</th>"
         "<th>note</th></tr>\n";
    for (const auto& f : c.table) {
      const std::string ops = opcodes_text(f);
      h << "<tr><td>" << detail::html_escape(f.label) << "</td><td>" << detail::html_escape(ops)
        << "</td><td>" << detail::median_spread(f.ops_per_clk_sm, 2) << "</td><td>"
        << (f.fraction_of_peak ? format_fixed(100 * *f.fraction_of_peak, 1) : "-") << "</td><td>"
        << gpu_rate(f) << "</td><td>"
        << (f.latency_cycles ? format_fixed(f.latency_cycles->median, 1)
            : f.latency_ns   ? format_fixed(f.latency_ns->median, 2) + " ns"
                             : "-")
        << "</td><td>" << detail::html_escape(status_note(f, 0)) << "</td></tr>\n";
    }
    h << "</table>\n";
  }
  if (!c.mixed.empty()) {
    h << "<h3>Mixed issue</h3>\n<table><tr><th>pair</th><th>first /clk/SM</th><th>second "
         "/clk/SM</th><th>opcodes</th></tr>\n";
    for (const auto& f : c.mixed) {
      const std::string ops = opcodes_text(f);
      h << "<tr><td>" << detail::html_escape(f.label) << "</td><td>"
        << detail::median_spread(f.ops_per_clk_sm, 1) << "</td><td>"
        << detail::median_spread(f.mix_ops_per_clk_sm, 1) << "</td><td>" << detail::html_escape(ops)
        << "</td></tr>\n";
    }
    h << "</table>\n";
  }
  // One chart per swept op: throughput against warps per SM, a line per ILP.
  if (!c.sweep.empty() && ctx.charts) {
    std::map<std::string, std::map<int, std::vector<std::pair<int, double>>>> by_op;
    std::vector<std::string> order;
    for (const auto& f : c.sweep) {
      if (!by_op.count(f.op)) order.push_back(f.op);
      if (f.ops_per_clk_sm)
        by_op[f.op][f.ilp].push_back({f.warps_per_sm, f.ops_per_clk_sm->median});
    }
    h << "<h3>ILP x occupancy</h3>\n";
    for (const auto& op : order) {
      h << titled_chart(sweep_chart(c.sweep, op, by_op[op]), ctx);
    }
  }
  return h.str();
}

}  // namespace gd::report

namespace gd {

// The probe's report half (report/probe_report.hpp), registered by probes/registry.cpp.
std::unique_ptr<report::ProbeReport> make_compute_report() {
  return report::make_probe_report(report::print_compute_summary, report::write_compute_csv,
                                   report::compute_html_section);
}

}  // namespace gd
