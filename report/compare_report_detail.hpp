// What the compare writers share (report/compare_report*.cpp): a cell as text, and the
// overlaid charts. Private to those files.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "charts.hpp"
#include "gpudissect/compare.hpp"

namespace gd::report::compare_page {

// Terminal text: control characters (escape sequences, line breaks) become '?', so that a
// name or reason from a file can neither move the cursor nor forge a line of the report.
std::string terminal_text(const std::string& s);
// `s` padded to `w` code points (so UTF-8 text lines up), on the left when `right`.
std::string pad_cell(const std::string& s, std::size_t w, bool right = false);
// "12.5 %" from 0.125, as compare prints numbers.
std::string percent_text(double fraction);

// "~", ">", "<" for a value stated as about, at least or at most.
std::string qualifier_mark(const std::string& q);
// "x1.25": a ratio to the first input; "" when absent.
std::string ratio_text(const std::optional<double>& r);
// A cell's value as text: qualifier, number, or the status where the figure failed.
std::string cell_value(const CompareCell& c, const std::string& unit);
// A cell's per-SM-per-clock figure as text, "*" where derived here.
std::string cell_per_clk(const CompareCell& c);

// Curves of several inputs overlaid: one line per series, with the levels of inputs without
// curves (references) drawn as dashed lines across.
std::optional<detail::ChartSpec> overlay_chart(const std::string& name, const std::string& title,
                                               const std::string& ylabel,
                                               const std::vector<CurveSeries>& series, bool bytes_x,
                                               const std::string& xlabel = "",
                                               const std::vector<LevelMark>& marks = {},
                                               const std::string& mark_unit = "");
// Grouped bars: one group per compute figure, one bar per input, per SM per clock.
std::optional<detail::ChartSpec> rate_bars(const Comparison& c);

}  // namespace gd::report::compare_page
