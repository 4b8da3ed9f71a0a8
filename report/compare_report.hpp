// Writers of comparisons (gpudissect compare): terminal table, CSV, a self-contained HTML
// page with overlaid charts; and of baseline reports (regressions and improvements).
#pragma once

#include <filesystem>
#include <iosfwd>
#include <string>
#include <vector>

#include "gpudissect/compare.hpp"

namespace gd::report {

// A number as the comparison shows it: 4 significant digits, bytes as KiB/MiB, "-" absent.
std::string compare_number(double v, const std::string& unit);

// The inputs with their facts, then one line per figure: value per input with its ratio to
// the first, then per SM per clock.
void print_comparison(std::ostream& os, const Comparison& c);
// Long form, one line per figure and input (any number of inputs):
// id,label,unit,input,name,kind,backend,units,clock_mhz,clock_source,status,qualifier,value,
// ratio,per_sm,per_sm_unit,per_sm_per_clk,per_sm_per_clk_unit,per_clk_derived,per_clk_ratio,
// instruction,note
void write_comparison_csv(const std::filesystem::path& file, const Comparison& c);
// The page: inputs (name, backend, SMs, clock), caveats, charts (latency against footprint
// in ns and in cycles, bandwidth against footprint, instruction rates per SM per clock as
// grouped bars, ILP x occupancy), the figures side by side. With `png`, also writes each chart
// as a PNG next to the page and returns those files. With `verdicts` (baseline mode), the page
// opens with the regressions and improvements. Throws std::runtime_error if it cannot write
// the page.
std::vector<std::filesystem::path> write_comparison_html(const std::filesystem::path& file,
                                                         const Comparison& c, bool png = false,
                                                         const BaselineReport* verdicts = nullptr);

// Regressions first, then improvements, then the figures only one side has; a line of
// totals. Figures within the tolerance are counted, not listed (all of them with verbose).
void print_baseline(std::ostream& os, const BaselineReport& r, bool verbose = false);
// Every figure: id,label,unit,higher_is_better,baseline,current,change,verdict,reason
void write_baseline_csv(const std::filesystem::path& file, const BaselineReport& r);

}  // namespace gd::report
