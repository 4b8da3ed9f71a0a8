// Writers of comparisons (gpudissect compare): terminal table, CSV, a self-contained HTML
// page with overlaid charts; and of baseline reports (regressions and improvements).
#pragma once

#include <filesystem>
#include <iosfwd>
#include <string>
#include <vector>

#include "gpudissect/compare.hpp"
#include "gpudissect/compare_backends.hpp"

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

// ---- one GPU through several backends (compare_report_backends.cpp, _parity.cpp) ----

// The inputs and how they were found to be one GPU, the counts, then each figure that
// differs beyond the tolerance (or cannot be compared) with both values, the ratio and both
// instruction listings side by side ("-" where a backend gave none), then the ids ok on one
// side only: per probe, and each with the other side's status and reason. With verbose, the
// figures within the tolerance too.
void print_cross_backend(std::ostream& os, const CrossBackendReport& r, bool verbose = false);
// Every id ok on either side: id,label,probe,verdict,unit,value_1,value_2,ratio,status_1,
// status_2,reason_1,reason_2,instructions_1,instructions_2,note (listings joined by "; ").
void write_cross_backend_csv(const std::filesystem::path& file, const CrossBackendReport& r);
// {"format": "gpudissect-cross-backend", "format_version": 1, "same_gpu", "tolerance",
// "inputs", "counts", "one_sided_per_probe", "figures": [{id, label, probe, verdict, unit,
// values [a, b], ratio, status [a, b], reason [a, b], instructions [[..], [..]], note}]}
std::string cross_backend_json(const CrossBackendReport& r);
void write_cross_backend_json(const std::filesystem::path& file, const CrossBackendReport& r);

// The parity table: per probe, each run's ok figures, and for each run after the first the
// ids it shares ok with the first (common) and how many of those agree (agree); a total row.
void print_parity(std::ostream& os, const ParityTable& t);
// The same as a Markdown table (for the docs), with a line saying what the columns count.
void print_parity_markdown(std::ostream& os, const ParityTable& t);
// Long form: probe,input,name,backend,ok,common,agree (the total as probe "all").
void write_parity_csv(const std::filesystem::path& file, const ParityTable& t);
// {"format": "gpudissect-parity", "format_version": 1, "tolerance", "inputs", "probes":
// [{probe, ok [..], common [null, ..], agree [null, ..]}], "total", "notes"}
std::string parity_json(const ParityTable& t);
void write_parity_json(const std::filesystem::path& file, const ParityTable& t);

}  // namespace gd::report
