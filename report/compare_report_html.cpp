// The compare page: one self-contained HTML file (inline CSS, SVG charts from gnuplot)
// with the inputs, caveats, charts, the figures side by side and, in baseline mode, the
// verdicts first.
#include <algorithm>
#include <sstream>

#include "compare_report.hpp"
#include "compare_report_detail.hpp"
#include "gpudissect/units.hpp"
#include "report.hpp"
#include "style.hpp"

namespace gd::report {

namespace fs = std::filesystem;
using namespace detail;
using namespace compare_page;

namespace {

// The comparison page's own rules, after the shared style (style.hpp).
const char* kCompareCss = R"css(
th.in { font-weight: normal; font-size: 0.85em; min-width: 7em; }
th.in b { font-size: 1.1em; }
td .r { color: #666; font-size: 0.85em; display: block; }
td .c { color: #245; font-size: 0.85em; display: block; }
td.ref { background: #fafaf4; }
)css";

struct Page {
  std::ostringstream o;
  std::vector<std::string> failures;
  bool charts = false;
  fs::path png_dir;  // also write each chart as PNG here (empty: no)
  std::vector<fs::path> pngs;
  int n = 0;
  void chart(const std::optional<ChartSpec>& spec, const std::string& caption) {
    if (!spec || !charts) return;
    std::string err;
    if (!png_dir.empty()) {
      std::error_code ec;
      fs::create_directories(png_dir, ec);
      const fs::path out = png_dir / (file_stem(spec->name) + ".png");
      if (render_chart(*spec, ChartFormat::png, out, &err))
        pngs.push_back(out);
      else
        failures.push_back("PNG " + out.string() + ": " + err);
    }
    if (auto svg = render_inline_svg(*spec, "k" + std::to_string(n++) + "-", &err)) {
      o << "<figure class=\"chart\">\n" << *svg << "\n";
      if (!caption.empty()) o << "<figcaption>" << html_escape(caption) << "</figcaption>\n";
      o << "</figure>\n";
    } else {
      o << "<p class=\"note\">The chart <code>" << html_escape(spec->name)
        << "</code> could not be drawn: gnuplot failed (" << html_escape(err) << ").</p>\n";
    }
  }
};

std::string group_of(const std::string& id) {
  const auto dot = id.find('.');
  return dot == std::string::npos ? id : id.substr(0, dot);
}

std::string group_title(const std::string& g) {
  if (g == "latency") return "Latency and capacity";
  if (g == "bandwidth") return "Bandwidth";
  if (g == "compute") return "Instructions";
  return "Other figures: " + g;
}

void inputs_header_cells(std::ostringstream& o, const Comparison& c) {
  for (std::size_t i = 0; i < c.inputs.size(); ++i) {
    const CompareInput& in = c.inputs[i];
    o << "<th class=\"in n\"><b>[" << i + 1 << "] " << html_escape(in.label) << "</b><br>"
      << html_escape(in.reference ? "reference" : in.backend) << "<br>"
      << html_escape(in.units > 0 ? std::to_string(in.units) + " " + in.unit_name + "s"
                                  : in.unit_name + "s: ?")
      << "<br>"
      << html_escape(in.clock_mhz ? format_fixed(*in.clock_mhz, 0) + " MHz " + in.clock_source
                                  : "clock: ?")
      << "</th>";
  }
}

void figures_tables(Page& p, const Comparison& c) {
  std::vector<std::string> groups;
  for (const CompareRow& r : c.rows)
    if (std::find(groups.begin(), groups.end(), group_of(r.id)) == groups.end())
      groups.push_back(group_of(r.id));
  for (const std::string& g : groups) {
    p.o << "<h3>" << html_escape(group_title(g)) << "</h3>\n<div class=\"wide\"><table>\n"
        << "<tr><th>figure</th><th>unit</th>";
    inputs_header_cells(p.o, c);
    p.o << "</tr>\n";
    for (const CompareRow& r : c.rows) {
      if (group_of(r.id) != g) continue;
      p.o << "<tr><td>" << html_escape(r.label) << "<br><code>" << html_escape(r.id)
          << "</code></td><td>" << html_escape(r.unit)
          << (r.higher_is_better ? "" : "<br><span class=\"muted\">lower is better</span>")
          << "</td>";
      for (std::size_t i = 0; i < c.inputs.size(); ++i) {
        const CompareCell& cell = r.cells[i];
        std::string title = cell.note;
        if (!cell.status.ok())
          title = cell.status.reason;
        else if (!cell.instruction.empty())
          title = cell.instruction + (cell.where.empty() ? "" : "; " + cell.where);
        else if (title.empty())
          title = cell.where;
        p.o << "<td class=\"n" << (c.inputs[i].reference ? " ref" : "") << "\""
            << (title.empty() ? "" : " title=\"" + html_escape(title) + "\"") << ">";
        if (!cell.present) {
          p.o << "<span class=\"muted\">–</span></td>";
          continue;
        }
        const std::string v = cell_value(cell, r.unit);
        p.o << html_escape(v.empty() ? "–" : v);
        if (i > 0 && cell.ratio) p.o << "<span class=\"r\">" << ratio_text(cell.ratio) << "</span>";
        if (cell.per_sm && !r.per_sm_unit.empty())
          p.o << "<span class=\"c\">"
              << html_escape(compare_number(*cell.per_sm, r.per_sm_unit) + " " + r.per_sm_unit)
              << "</span>";
        if (cell.per_clk) {
          p.o << "<span class=\"c\">" << html_escape(cell_per_clk(cell) + " " + cell.per_clk_unit)
              << (i > 0 && cell.per_clk_ratio ? " " + ratio_text(cell.per_clk_ratio) : "")
              << "</span>";
        }
        p.o << "</td>";
      }
      p.o << "</tr>\n";
    }
    p.o << "</table></div>\n";
  }
}

// Baseline mode: the verdicts, regressions first.
void verdicts_section(Page& p, const BaselineReport& r) {
  p.o << "<h2>Against the baseline</h2>\n<p>" << r.regressions() << " regressed, "
      << r.improvements() << " improved, tolerance "
      << html_escape(format_fixed(r.tolerance * 100, 2)) << " %. "
      << (r.regressions() ? "<b>Regression</b> (the command exits with status 3)."
                          : "No regression.")
      << "</p>\n";
  const std::vector<std::pair<std::string, std::vector<Verdict>>> groups = {
      {"Regressions", {Verdict::regressed, Verdict::failed}},
      {"Improvements", {Verdict::improved, Verdict::recovered}},
      {"Not comparable, or failed in both", {Verdict::not_comparable, Verdict::failed_both}},
      {"In one run only (listed, not failures)", {Verdict::only_new, Verdict::only_baseline}},
      {"Not gated (host-side figures; --include-host gates them)", {Verdict::not_gated}}};
  for (const auto& [title, verdicts] : groups) {
    std::vector<const BaselineItem*> items;
    for (const BaselineItem& it : r.items)
      if (std::find(verdicts.begin(), verdicts.end(), it.verdict) != verdicts.end())
        items.push_back(&it);
    if (items.empty()) continue;
    p.o << "<h3>" << html_escape(title) << " (" << items.size() << ")</h3>\n<table>\n"
        << "<tr><th>figure</th><th class=\"n\">baseline</th><th class=\"n\">new</th><th>unit</th>"
           "<th class=\"n\">change</th><th>verdict</th></tr>\n";
    for (const BaselineItem* it : items)
      p.o << "<tr><td>" << html_escape(it->label) << "<br><code>" << html_escape(it->id)
          << "</code></td><td class=\"n\">"
          << html_escape(it->baseline ? compare_number(*it->baseline, it->unit) : "-")
          << "</td><td class=\"n\">"
          << html_escape(it->current ? compare_number(*it->current, it->unit) : "-") << "</td><td>"
          << html_escape(it->unit) << "</td><td class=\"n\">"
          << html_escape(it->change ? (*it->change >= 0 ? "+" : "") +
                                          format_fixed(*it->change * 100, 1) + " %"
                                    : "")
          << "</td><td>"
          << html_escape(to_string(it->verdict) + (it->reason.empty() ? "" : ": " + it->reason))
          << "</td></tr>\n";
    p.o << "</table>\n";
  }
}

}  // namespace

namespace {

// The page's head, title and the note on charts.
void page_head(Page& p, const Comparison& c, const std::string& why) {
  std::string names;
  for (const auto& in : c.inputs) names += (names.empty() ? "" : " vs ") + in.label;
  p.o << "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
         "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>"
      << html_escape("gpudissect compare: " + names) << "</title>\n<style>" << page_css(1200)
      << kCompareCss << "</style>\n</head>\n<body>\n<h1>" << html_escape(names) << "</h1>\n"
      << "<p class=\"sub\">gpudissect compare · " << c.inputs.size() << " inputs · "
      << c.rows.size() << " figures in two or more of them</p>\n";
  if (!p.charts)
    p.o << "<p class=\"note\">No charts: charts need gnuplot, which was not found ("
        << html_escape(why) << "). The tables below hold every figure.</p>\n";
}

// The inputs (name, backend, SMs, clock, file), the caveats, how to read the tables.
void inputs_section(Page& p, const Comparison& c) {
  p.o << "<h2>Inputs</h2>\n<table>\n<tr><th></th><th>name</th><th>kind</th><th>backend</th>"
         "<th class=\"n\">SMs / CUs / cores</th><th class=\"n\">clock</th><th>from</th></tr>\n";
  for (std::size_t i = 0; i < c.inputs.size(); ++i) {
    const CompareInput& in = c.inputs[i];
    p.o << "<tr><td>[" << i + 1 << "]</td><td>" << html_escape(in.label) << "</td><td>"
        << (in.reference ? "reference" : "result") << "</td><td>" << html_escape(in.backend)
        << "</td><td class=\"n\">"
        << html_escape(in.units > 0 ? std::to_string(in.units) + " " + in.unit_name + "s" : "-")
        << "</td><td class=\"n\">"
        << html_escape(in.clock_mhz
                           ? format_fixed(*in.clock_mhz, 0) + " MHz (" + in.clock_source + ")"
                           : "-")
        << "</td><td><code>" << html_escape(in.origin) << "</code></td></tr>\n";
  }
  p.o << "</table>\n";
  for (const std::string& cv : c.caveats)
    p.o << "<p class=\"note\">" << html_escape(cv) << "</p>\n";
  p.o << "<p class=\"muted\">Each figure keeps one unit: latencies in ns and, under the id "
         "ending in <code>.cycles</code>, in cycles, never mixed. Below each value: its ratio to "
         "[1], the value per SM (for rates: GB/s per SM is bytes per ns per SM, comparable "
         "across clocks), and per SM per clock — as measured, or, marked *, derived here from "
         "the value, the input's SM count and its clock. For a reference GPU an SM stands for "
         "its unit (CU, WGP, core); ~ marks an approximate figure, &gt; a lower and &lt; an upper "
         "bound, as the source states them. Hover over a value for its instruction, method and "
         "source.</p>\n";
}

void latency_charts(Page& p, const Comparison& c) {
  const auto lat_ns = latency_series(c.inputs, "global", false);
  const auto lat_cyc = latency_series(c.inputs, "global", true);
  if (lat_ns.empty() && lat_cyc.empty()) return;
  p.o << "<h2>Latency against footprint (global path)</h2>\n";
  const auto marks_ns = latency_marks(c.inputs, "global", false);
  const auto marks_cyc = latency_marks(c.inputs, "global", true);
  p.chart(overlay_chart("compare_latency_ns", "Global-path latency against footprint (ns)",
                        "latency per load (ns)", lat_ns, true, "", marks_ns, "ns"),
          marks_ns.empty() ? "Nanoseconds: comparable across clocks."
                           : "Nanoseconds: comparable across clocks. Dashed lines: levels a "
                             "reference GPU's source states (no curve).");
  p.chart(overlay_chart("compare_latency_cycles",
                        "Global-path latency against footprint (cycles, each at its own clock)",
                        "latency per load (cycles)", lat_cyc, true, "", marks_cyc, "cycles"),
          "Cycles: each input at its own SM clock (see the inputs table); inputs without a "
          "cycle counter (OpenCL) are absent here.");
}

void bandwidth_charts(Page& p, const Comparison& c) {
  bool bw_head = false;
  for (const std::string op : {"read", "write", "copy"}) {
    const auto gb = bandwidth_series(c.inputs, op, false);
    if (gb.empty()) continue;
    if (!bw_head) p.o << "<h2>Bandwidth against footprint</h2>\n";
    bw_head = true;
    const auto marks = bandwidth_marks(c.inputs, op, false);
    p.chart(
        overlay_chart("compare_bw_" + op, "Bandwidth against footprint: " + op + " (GB/s)", "GB/s",
                      gb, true, "", marks, "GB/s"),
        marks.empty() ? "" : "Dashed lines: levels a reference GPU's source states (no curve).");
    if (op == "read") {
      const auto clk_marks = bandwidth_marks(c.inputs, op, true);
      p.chart(
          overlay_chart("compare_bw_read_clk",
                        "Bandwidth against footprint: read (bytes per clock per SM)", "B/clk/SM",
                        bandwidth_series(c.inputs, op, true), true, "", clk_marks, "B/clk/SM"),
          "Per SM per clock: each input at its own clock and SM count (an SM stands for a "
          "CU, WGP or core of other GPUs).");
    }
  }
}

void rate_charts(Page& p, const Comparison& c) {
  if (auto bars = rate_bars(c)) {
    p.o << "<h2>Instruction rates</h2>\n";
    p.chart(bars,
            "Per SM per clock, for the instructions two or more inputs have; missing bars "
            "are figures an input lacks.");
  }
  const auto ops = sweep_ops(c.inputs);
  if (ops.empty()) return;
  p.o << "<h2>ILP x occupancy</h2>\n";
  for (const std::string& op : ops)
    p.chart(overlay_chart("compare_sweep_" + slugify(op), op + ": ILP x occupancy", "ops/clk/SM",
                          sweep_series(c.inputs, op), false, "warps per SM"),
            "");
}

// The figures side by side, those only one input has, the footer.
void figures_section(Page& p, const Comparison& c) {
  p.o << "<h2>Figures side by side</h2>\n";
  if (c.rows.empty()) p.o << "<p>No figure is present in two or more inputs.</p>\n";
  figures_tables(p, c);
  if (!c.only_in.empty()) {
    p.o << "<h2>Figures only one input has</h2>\n";
    for (const auto& [label, ids] : c.only_in) {
      p.o << "<details><summary>" << html_escape(label) << ": " << ids.size() << "</summary><p>";
      for (std::size_t i = 0; i < ids.size(); ++i)
        p.o << (i ? ", " : "") << "<code>" << html_escape(ids[i]) << "</code>";
      p.o << "</p></details>\n";
    }
  }
  p.o << "<footer>Written by gpudissect compare from saved results and the reference "
         "database; each reference figure names its source.</footer>\n</body>\n</html>\n";
}

}  // namespace

std::vector<fs::path> write_comparison_html(const fs::path& file, const Comparison& c, bool png,
                                            const BaselineReport* verdicts) {
  ensure_writable(file);
  Page p;
  if (png) p.png_dir = file.parent_path().empty() ? fs::path(".") : file.parent_path();
  std::string why;
  p.charts = gnuplot_available(&why);
  page_head(p, c, why);
  if (verdicts) verdicts_section(p, *verdicts);
  inputs_section(p, c);
  latency_charts(p, c);
  bandwidth_charts(p, c);
  rate_charts(p, c);
  figures_section(p, c);
  std::string page = p.o.str();
  if (!p.failures.empty()) {
    std::string notes;
    for (const auto& f : p.failures) notes += "<p class=\"note\">" + html_escape(f) + "</p>\n";
    page.insert(page.find("<h2>Inputs</h2>"), notes);
  }
  write_text(file, page);
  return p.pngs;
}

}  // namespace gd::report
