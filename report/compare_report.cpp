// Writers of comparisons and baseline reports: terminal, CSV, HTML (one self-contained page,
// inline CSS and SVG charts from gnuplot).
#include "compare_report.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <ostream>
#include <set>
#include <sstream>
#include <stdexcept>

#include "charts.hpp"
#include "gpudissect/units.hpp"
#include "report.hpp"
#include "style.hpp"

namespace gd::report {

namespace fs = std::filesystem;
using namespace detail;

std::string compare_number(double v, const std::string& unit) {
  if (!std::isfinite(v)) return "-";
  if (unit == "bytes") return format_bytes(v);
  const double a = std::fabs(v);
  int digits = a >= 1000 ? 0 : a >= 100 ? 1 : a >= 10 ? 2 : a >= 1 ? 3 : 4;
  if (a >= 1000) digits = 0;
  std::string s = format_fixed(v, digits);
  // Trailing zeros after the point say nothing here.
  if (s.find('.') != std::string::npos) {
    while (!s.empty() && s.back() == '0') s.pop_back();
    if (!s.empty() && s.back() == '.') s.pop_back();
  }
  return s;
}

namespace {

std::string qualifier_mark(const std::string& q) {
  if (q == "approx") return "~";
  if (q == "at least") return ">";
  if (q == "at most") return "<";
  return "";
}

std::string ratio_text(const std::optional<double>& r) {
  if (!r) return "";
  return "x" + format_fixed(*r, *r >= 10 ? 1 : 2);
}

// A cell's value as text: qualifier, number, or the status where the figure failed.
std::string cell_value(const CompareCell& c, const std::string& unit) {
  if (!c.present) return "";
  if (!c.status.ok()) return c.status.status;
  if (c.unit_mismatch) return "(in " + c.unit + ")";
  if (!c.value) return "";
  return qualifier_mark(c.qualifier) + compare_number(*c.value, unit);
}

std::string cell_per_clk(const CompareCell& c) {
  if (!c.present || !c.status.ok() || !c.per_clk) return "";
  // The value's qualifier (about, over, below) carries over to a per-clock figure derived
  // from it, and belongs to one the source gives per clock only.
  const bool qualified = !c.value || c.per_clk_derived;
  return (qualified ? qualifier_mark(c.qualifier) : std::string()) +
         compare_number(*c.per_clk, c.per_clk_unit) + (c.per_clk_derived ? "*" : "");
}

std::string pad(const std::string& s, std::size_t w, bool right) {
  // Width in code points, so that "~" or "x" and UTF-8 text line up.
  std::size_t n = 0;
  for (unsigned char ch : s) n += (ch & 0xC0) != 0x80;
  if (n >= w) return s;
  return right ? std::string(w - n, ' ') + s : s + std::string(w - n, ' ');
}

// The per-clock unit a row shows (first cell's that has one).
std::string row_clk_unit(const CompareRow& row) {
  for (const CompareCell& c : row.cells)
    if (c.per_clk) return c.per_clk_unit;
  return "";
}

std::string csv_num(const std::optional<double>& v) {
  if (!v) return "";
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.9g", *v);
  return buf;
}

}  // namespace

// ---------------------------------------------------------------------------------------
// terminal

void print_comparison(std::ostream& os, const Comparison& c) {
  os << "Inputs (ratios are to [1]; * = per SM per clock derived here from the value, the "
        "SM count and the clock):\n";
  for (std::size_t i = 0; i < c.inputs.size(); ++i)
    os << "  [" << i + 1 << "] " << c.inputs[i].label << "  (" << input_facts(c.inputs[i]) << ")  "
       << c.inputs[i].origin << "\n";
  for (const std::string& cv : c.caveats) os << "  note: " << cv << "\n";
  if (c.rows.empty()) {
    os << "\nNo figure is present in two or more inputs.\n";
    return;
  }
  const std::size_t n = c.inputs.size();
  std::size_t idw = 6;
  for (const CompareRow& r : c.rows) idw = std::max(idw, r.id.size());
  idw = std::min<std::size_t>(idw, 44);
  // Up to three inputs: values and per-clock figures in one table; more: two tables, so
  // that a line stays readable.
  const bool one_table = n <= 3;
  auto value_cells = [&](const CompareRow& r) {
    for (std::size_t i = 0; i < n; ++i) {
      const CompareCell& cell = r.cells[i];
      std::string v = cell_value(cell, r.unit);
      if (i > 0 && cell.ratio) v += " " + ratio_text(cell.ratio);
      os << "  " << pad(v.empty() ? "-" : v, 16, true);
    }
  };
  auto clk_cells = [&](const CompareRow& r) {
    const std::string clk_unit = row_clk_unit(r);
    os << "  " << pad(clk_unit, 12, false);
    for (std::size_t i = 0; i < n; ++i) {
      const CompareCell& cell = r.cells[i];
      std::string v = cell_per_clk(cell);
      if (!v.empty() && cell.per_clk_unit != clk_unit) v += " " + cell.per_clk_unit;
      if (i > 0 && cell.per_clk_ratio) v += " " + ratio_text(cell.per_clk_ratio);
      os << "  " << pad(v.empty() ? "-" : v, 14, true);
    }
  };
  auto head = [&](bool values, bool clk) {
    os << "\n" << pad("id", idw, false);
    if (values) {
      os << "  " << pad("unit", 8, false);
      for (std::size_t i = 0; i < n; ++i)
        os << "  " << pad("[" + std::to_string(i + 1) + "]", 16, true);
    }
    if (clk) {
      os << "  " << pad("per SM per clock", 12, false);
      for (std::size_t i = 0; i < n; ++i)
        os << "  " << pad("[" + std::to_string(i + 1) + "]", 14, true);
    }
    os << "\n";
  };
  head(true, one_table);
  for (const CompareRow& r : c.rows) {
    os << pad(r.id, idw, false) << "  " << pad(r.unit, 8, false);
    value_cells(r);
    if (one_table) clk_cells(r);
    os << "\n";
  }
  if (!one_table) {
    os << "\nPer SM per clock:";
    head(false, true);
    for (const CompareRow& r : c.rows) {
      if (row_clk_unit(r).empty()) continue;
      os << pad(r.id, idw, false);
      clk_cells(r);
      os << "\n";
    }
  }
  std::size_t only = 0;
  for (const auto& [label, ids] : c.only_in) only += ids.size();
  if (only)
    os << "\n" << only << " figure(s) present in one input only (listed in the CSV and HTML).\n";
}

// ---------------------------------------------------------------------------------------
// CSV

void write_comparison_csv(const fs::path& file, const Comparison& c) {
  std::ostringstream o;
  o << "id,label,unit,input,name,kind,backend,units,clock_mhz,clock_source,status,qualifier,"
       "value,ratio,per_sm,per_sm_unit,per_sm_per_clk,per_sm_per_clk_unit,per_clk_derived,"
       "per_clk_ratio,instruction,note\n";
  for (const CompareRow& r : c.rows) {
    for (std::size_t i = 0; i < c.inputs.size(); ++i) {
      const CompareInput& in = c.inputs[i];
      const CompareCell& cell = r.cells[i];
      if (!cell.present) continue;
      o << csv_field(r.id) << ',' << csv_field(r.label) << ','
        << csv_field(cell.unit_mismatch ? cell.unit : r.unit) << ',' << i + 1 << ','
        << csv_field(in.label) << ',' << (in.reference ? "reference" : "result") << ','
        << csv_field(in.backend) << ',' << (in.units > 0 ? std::to_string(in.units) : "") << ','
        << csv_num(in.clock_mhz) << ',' << csv_field(in.clock_source) << ','
        << csv_field(cell.status.status) << ',' << csv_field(cell.qualifier) << ','
        << csv_num(cell.value) << ',' << csv_num(cell.ratio) << ',' << csv_num(cell.per_sm) << ','
        << (cell.per_sm ? r.per_sm_unit : "") << ',' << csv_num(cell.per_clk) << ','
        << csv_field(cell.per_clk ? cell.per_clk_unit : "") << ','
        << (cell.per_clk ? (cell.per_clk_derived ? "1" : "0") : "") << ','
        << csv_num(cell.per_clk_ratio) << ',' << csv_field(cell.instruction) << ','
        << csv_field(cell.status.ok() ? cell.note : cell.status.reason) << "\n";
    }
  }
  for (const auto& [label, ids] : c.only_in)
    for (const std::string& id : ids)
      o << csv_field(id) << ",,,," << csv_field(label) << ",,,,,,only in this input,,,,,,,,,,,\n";
  write_text(file, o.str());
}

// ---------------------------------------------------------------------------------------
// HTML

namespace {

// The comparison page's own rules, after the shared style (style.hpp).
const char* kCompareCss = R"css(
th.in { font-weight: normal; font-size: 0.85em; min-width: 7em; }
th.in b { font-size: 1.1em; }
td .r { color: #666; font-size: 0.85em; display: block; }
td .c { color: #245; font-size: 0.85em; display: block; }
td.ref { background: #fafaf4; }
)css";

const char* const kPalette[] = {"#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e",
                                "#8c564b", "#e377c2", "#17becf", "#7f7f7f", "#bcbd22"};

std::string num(double v) { return script_num(v); }

std::string common_settings(const std::string& title) {
  return "set encoding utf8\nset title " + gnuplot_quote(title) +
         "\nset grid xtics ytics lc rgb '#dddddd' lw 1 dt 1\nset border 3 lc rgb '#444444'\n"
         "set tics nomirror out\nset key outside right top box opaque\n";
}

// Log2 x axis of byte sizes with 1K/1M/1G labels over [lo, hi].
std::string bytes_axis(double lo, double hi) {
  const int k_lo = static_cast<int>(std::floor(std::log2(lo) + 1e-9));
  const int k_hi = static_cast<int>(std::ceil(std::log2(hi) - 1e-9));
  int step = 1;
  while ((k_hi - k_lo) / step > 11) ++step;
  std::string tics;
  for (int k = k_lo; k <= k_hi; ++k) {
    if (k % step != 0) continue;
    if (!tics.empty()) tics += ", ";
    tics += gnuplot_quote(axis_bytes_label(std::ldexp(1.0, k))) + " " + num(std::ldexp(1.0, k));
  }
  return "set logscale x 2\nset xrange [" + num(lo / 1.25) + ":" + num(hi * 1.25) +
         "]\nset xtics (" + tics + ")\nset xlabel 'footprint (bytes, log scale)'\n";
}

// Curves of several inputs overlaid: one line per series.
std::optional<ChartSpec> overlay_chart(const std::string& name, const std::string& title,
                                       const std::string& ylabel,
                                       const std::vector<CurveSeries>& series, bool bytes_x,
                                       const std::string& xlabel = "",
                                       const std::vector<LevelMark>& marks = {},
                                       const std::string& mark_unit = "") {
  if (series.empty()) return std::nullopt;
  double lo = 0, hi = 0, ymax = 0;
  for (const LevelMark& m : marks) ymax = std::max(ymax, m.value);
  for (const auto& s : series)
    for (const auto& [x, y] : s.points) {
      lo = lo == 0 ? x : std::min(lo, x);
      hi = std::max(hi, x);
      ymax = std::max(ymax, y);
    }
  if (hi <= 0) return std::nullopt;
  ChartSpec spec;
  spec.name = name;
  spec.title = title;
  std::string& s = spec.script;
  s += common_settings(title);
  std::string plot = "plot ";
  for (std::size_t i = 0; i < series.size(); ++i) {
    s += "$d" + std::to_string(i) + " << EOD\n";
    for (const auto& [x, y] : series[i].points) s += num(x) + " " + num(y) + "\n";
    s += "EOD\n";
    plot += (i ? ", \\\n     " : "") + std::string("$d") + std::to_string(i) +
            " using 1:2 with linespoints lw 2 pt 7 ps 0.5 dt " +
            std::to_string(series[i].variant % 5 + 1) + " lc rgb '" +
            kPalette[series[i].input_index % 10] + "' title " + gnuplot_quote(series[i].input);
  }
  if (bytes_x)
    s += bytes_axis(lo, hi);
  else
    s += "set xlabel " + gnuplot_quote(xlabel) + "\nset xrange [0:" + num(hi * 1.05) + "]\n";
  s += "set ylabel " + gnuplot_quote(ylabel) + "\nset yrange [0:" + num(ymax * 1.1) + "]\n";
  // Levels of inputs without curves (reference GPUs): a dashed line across, labelled.
  // Sorted by height, labels alternate sides, so that close levels stay legible.
  std::vector<LevelMark> sorted = marks;
  std::stable_sort(sorted.begin(), sorted.end(),
                   [](const LevelMark& a, const LevelMark& b) { return a.value < b.value; });
  int nth = 0;
  for (const LevelMark& m : sorted) {
    const bool right = nth++ % 2 == 1;
    const std::string colour = kPalette[m.input_index % 10];
    s += "set arrow from graph 0, first " + num(m.value) + " to graph 1, first " + num(m.value) +
         " nohead dt 2 lw 1.5 lc rgb '" + colour + "' front\n";
    std::string level = m.level;
    std::replace(level.begin(), level.end(), '_', ' ');
    std::string text = m.input + " " + level + ": " + qualifier_mark(m.qualifier) +
                       compare_number(m.value, "") + " " + mark_unit +
                       (m.derived ? " (derived)" : "");
    s += "set label " + gnuplot_quote(text) + " at graph " + (right ? "0.99" : "0.01") +
         ", first " + num(m.value) + (right ? " right" : " left") +
         " offset 0,0.6 font ',9' tc rgb '" + colour + "' front\n";
  }
  s += plot + "\n";
  return spec;
}

// Grouped bars: one group per compute figure, one bar per input, per SM per clock.
std::optional<ChartSpec> rate_bars(const Comparison& c) {
  std::vector<const CompareRow*> rows;
  std::string unit;
  for (const CompareRow& r : c.rows) {
    if (r.id.rfind("compute.", 0) != 0 || r.id.size() > 8 + 40) continue;
    if (r.id.size() > 8 && r.id.compare(r.id.size() - 8, 8, ".latency") == 0) continue;
    std::string u;
    int with = 0;
    bool same = true;
    for (const CompareCell& cell : r.cells) {
      if (!cell.per_clk || *cell.per_clk <= 0) continue;
      if (u.empty()) u = cell.per_clk_unit;
      same = same && u == cell.per_clk_unit;
      ++with;
    }
    if (with < 2 || !same) continue;
    if (unit.empty()) unit = u;
    if (u != unit) continue;  // one unit per chart (ops/clk/SM, as the tool measures)
    rows.push_back(&r);
  }
  if (rows.empty()) return std::nullopt;
  ChartSpec spec;
  spec.name = "compare_rates";
  spec.title = "Instruction rates per SM per clock (" + unit + ", log scale)";
  std::string& s = spec.script;
  s += common_settings(spec.title);
  s += "set style data histograms\nset style histogram clustered gap 1\n"
       "set style fill solid 0.85 border -1\nset boxwidth 0.9\nset datafile missing '-'\n"
       "set logscale y 2\nset xtics rotate by -50 left font ',9'\nset ylabel " +
       gnuplot_quote(unit) + "\nset grid noxtics\n";
  s += "$bars << EOD\n";
  for (const CompareRow* r : rows) {
    s += gnuplot_datum(r->id.substr(8));
    for (const CompareCell& cell : r->cells)
      s += " " + ((cell.per_clk && *cell.per_clk > 0) ? num(*cell.per_clk) : std::string("-"));
    s += "\n";
  }
  s += "EOD\n";
  std::string plot = "plot ";
  for (std::size_t i = 0; i < c.inputs.size(); ++i)
    plot += (i ? ", \\\n     " : "") + std::string("$bars using ") + std::to_string(i + 2) +
            (i == 0 ? ":xtic(1)" : "") + " lc rgb '" + kPalette[i % 10] + "' title " +
            gnuplot_quote(c.inputs[i].label);
  s += plot + "\n";
  return spec;
}

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

}  // namespace

namespace {

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
      {"In one run only (listed, not failures)", {Verdict::only_new, Verdict::only_baseline}}};
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

std::vector<fs::path> write_comparison_html(const fs::path& file, const Comparison& c, bool png,
                                            const BaselineReport* verdicts) {
  ensure_writable(file);
  Page p;
  if (png) p.png_dir = file.parent_path().empty() ? fs::path(".") : file.parent_path();
  std::string why;
  p.charts = gnuplot_available(&why);
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

  if (verdicts) verdicts_section(p, *verdicts);
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

  // Charts.
  const auto lat_ns = latency_series(c.inputs, "global", false);
  const auto lat_cyc = latency_series(c.inputs, "global", true);
  if (!lat_ns.empty() || !lat_cyc.empty()) {
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
  if (auto bars = rate_bars(c)) {
    p.o << "<h2>Instruction rates</h2>\n";
    p.chart(bars,
            "Per SM per clock, for the instructions two or more inputs have; missing bars "
            "are figures an input lacks.");
  }
  const auto ops = sweep_ops(c.inputs);
  if (!ops.empty()) {
    p.o << "<h2>ILP x occupancy</h2>\n";
    for (const std::string& op : ops)
      p.chart(overlay_chart("compare_sweep_" + slugify(op), op + ": ILP x occupancy", "ops/clk/SM",
                            sweep_series(c.inputs, op), false, "warps per SM"),
              "");
  }

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
  std::string page = p.o.str();
  if (!p.failures.empty()) {
    std::string notes;
    for (const auto& f : p.failures) notes += "<p class=\"note\">" + html_escape(f) + "</p>\n";
    page.insert(page.find("<h2>Inputs</h2>"), notes);
  }
  write_text(file, page);
  return p.pngs;
}

// ---------------------------------------------------------------------------------------
// baseline

void print_baseline(std::ostream& os, const BaselineReport& r, bool verbose) {
  os << "Baseline: " << r.baseline.label << " (" << input_facts(r.baseline) << ") "
     << r.baseline.origin << "\n";
  os << "New run:  " << r.current.label << " (" << input_facts(r.current) << ") "
     << r.current.origin << "\n";
  os << "Tolerance: " << format_fixed(r.tolerance * 100, 2) << " %\n";
  if (r.baseline.name != r.current.name) os << "note: the two runs are of different devices\n";
  if (r.baseline.clock_mhz && r.current.clock_mhz &&
      std::fabs(*r.baseline.clock_mhz - *r.current.clock_mhz) > 0.01 * *r.baseline.clock_mhz)
    os << "note: the clocks differ (" << format_fixed(*r.baseline.clock_mhz, 0) << " against "
       << format_fixed(*r.current.clock_mhz, 0) << " MHz)\n";

  auto section = [&](const std::string& title, auto pred) {
    std::vector<const BaselineItem*> items;
    for (const BaselineItem& it : r.items)
      if (pred(it)) items.push_back(&it);
    if (items.empty()) return;
    std::size_t w = 10;
    for (const auto* it : items) w = std::max(w, it->id.size());
    w = std::min<std::size_t>(w, 48);
    os << "\n" << title << " (" << items.size() << "):\n";
    for (const auto* it : items) {
      os << "  " << pad(it->id, w, false) << "  "
         << pad(it->baseline ? compare_number(*it->baseline, it->unit) : "-", 10, true) << " -> "
         << pad(it->current ? compare_number(*it->current, it->unit) : "-", 10, true) << " "
         << pad(it->unit, 8, false) << " "
         << pad(it->change
                    ? (*it->change >= 0 ? "+" : "") + format_fixed(*it->change * 100, 1) + " %"
                    : "",
                9, true)
         << "  " << to_string(it->verdict) << (it->reason.empty() ? "" : ": " + it->reason) << "\n";
    }
  };
  section("REGRESSIONS", [](const BaselineItem& i) { return is_regression(i.verdict); });
  section("Improvements", [](const BaselineItem& i) {
    return i.verdict == Verdict::improved || i.verdict == Verdict::recovered;
  });
  section("Not comparable / failed in both", [](const BaselineItem& i) {
    return i.verdict == Verdict::not_comparable || i.verdict == Verdict::failed_both;
  });
  section("Only in one run (listed, not failures)", [](const BaselineItem& i) {
    return i.verdict == Verdict::only_new || i.verdict == Verdict::only_baseline;
  });
  // Changes past the tolerance that a capacity's sweep step cannot resolve: shown, not flagged.
  section("Past the tolerance but within the measurement's step (not flagged)",
          [](const BaselineItem& i) { return i.verdict == Verdict::within && !i.reason.empty(); });
  if (verbose)
    section("Within tolerance",
            [](const BaselineItem& i) { return i.verdict == Verdict::within && i.reason.empty(); });
  int within = 0, only = 0;
  for (const auto& it : r.items) {
    within += it.verdict == Verdict::within;
    only += it.verdict == Verdict::only_new || it.verdict == Verdict::only_baseline;
  }
  os << "\n"
     << r.items.size() << " figures: " << r.regressions() << " regressed, " << r.improvements()
     << " improved, " << within << " within tolerance, " << only << " in one run only.\n";
  os << (r.regressions() ? "RESULT: REGRESSION (exit status 3)\n" : "RESULT: no regression\n");
}

void write_baseline_csv(const fs::path& file, const BaselineReport& r) {
  std::ostringstream o;
  o << "id,label,unit,higher_is_better,baseline,current,change,verdict,reason\n";
  for (const BaselineItem& it : r.items)
    o << csv_field(it.id) << ',' << csv_field(it.label) << ',' << csv_field(it.unit) << ','
      << (it.higher_is_better ? 1 : 0) << ',' << csv_num(it.baseline) << ',' << csv_num(it.current)
      << ',' << csv_num(it.change) << ',' << csv_field(to_string(it.verdict)) << ','
      << csv_field(it.reason) << "\n";
  write_text(file, o.str());
}

}  // namespace gd::report
