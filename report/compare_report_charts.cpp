// The compare page's charts: curves of several inputs overlaid, instruction rates as
// grouped bars. Scripts for gnuplot; every name and label in them quoted (gnuplot_quote).
#include <algorithm>
#include <cmath>

#include "compare_report.hpp"
#include "compare_report_detail.hpp"
#include "gpudissect/units.hpp"
#include "report.hpp"

namespace gd::report::compare_page {

using namespace detail;

namespace {

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

}  // namespace

// Curves of several inputs overlaid: one line per series.
std::optional<ChartSpec> overlay_chart(const std::string& name, const std::string& title,
                                       const std::string& ylabel,
                                       const std::vector<CurveSeries>& series, bool bytes_x,
                                       const std::string& xlabel,
                                       const std::vector<LevelMark>& marks,
                                       const std::string& mark_unit) {
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

}  // namespace gd::report::compare_page
