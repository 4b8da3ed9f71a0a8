// Comparing GPUs: results of this tool (any backend, any schema version it reads) side by
// side with each other and with published reference figures, normalised per SM (CU, WGP,
// core) and per clock; and a new run against a baseline with a tolerance (regression gate).
// GPU-free and writer-free: the terminal, CSV and HTML pages are report/compare_report.*.
#pragma once

#include <filesystem>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "gpudissect/figure.hpp"
#include "gpudissect/result.hpp"

namespace gd {

// ---- the reference database (data/reference/*.json) ----

// Where a reference figure comes from: a document, named so a reader can find it.
struct ReferenceSource {
  std::string key;       // "seed000": what figures cite
  std::string document;  // "seeds/000_13dfafdb81848e22.txt"
  std::string title;     // the article, paper or page, with its author or site
};

// A figure as the source states it. `value` is in `unit`; a figure stated only per SM per
// clock has that unit ("B/clk/SM", "ops/clk/SM"); one stated both ways has both.
struct ReferenceFigure {
  std::string id;     // same scheme and ids as the tool's figures
  std::string label;  // "shared memory latency"
  double value = 0;
  std::string unit;
  std::optional<double> per_sm_per_clk;
  std::string per_sm_per_clk_unit;
  // "" (as stated), "approx" ("~8.7 TB/s"), "at least" ("over 3.6 TB/s"), "at most"
  // ("below 32 bytes per cycle"): shown beside the value, never dropped.
  std::string qualifier;
  std::string method;  // how the source measured it, and how it was read from the source
  std::string source;  // a ReferenceSource key
};

// A GPU of the reference database. Facts absent from the sources stay absent.
struct ReferenceGpu {
  std::filesystem::path file;
  std::string name;                  // "GTX 980 Ti": what --reference matches
  std::vector<std::string> aliases;  // also matched ("GM200", "EVGA GTX 980 Ti SC")
  std::string vendor, architecture;
  int compute_units = 0;         // 0: not stated
  std::string unit_name = "SM";  // "SM", "SMX", "CU", "WGP", "core"
  std::string compute_units_note;
  std::optional<double> clock_mhz;  // the clock the figures were measured at, if stated
  std::string clock_note;
  std::map<std::string, std::string> facts;  // other facts, as text ("L2": "3 MB")
  std::vector<ReferenceSource> sources;
  std::vector<ReferenceFigure> figures;
  // The sources' titles, joined: what `reference list` prints.
  std::string sources_text() const;
};

// Units a figure may have (the tool's and the per-clock ones).
const std::vector<std::string>& known_units();
// Whether an id has the tool's shape: lowercase first part, dot-separated parts of
// letters, digits and '_' ("latency.global.L2_near.cycles", "compute.fp32.fma").
bool well_formed_figure_id(const std::string& id);

// Every problem of a reference document (empty: valid): required fields, known units,
// well-formed and unique ids, units that fit the id (".cycles" in cycles, ".capacity" in
// bytes, latencies in ns, bandwidths in GB/s ...), sources that resolve.
std::vector<std::string> validate_reference_json(const nlohmann::json& j);
// Parses a valid document; throws std::runtime_error listing the problems otherwise.
ReferenceGpu reference_from_json(const nlohmann::json& j, const std::filesystem::path& file = {});

struct ReferenceDb {
  std::filesystem::path dir;
  std::vector<ReferenceGpu> gpus;   // sorted by name
  std::vector<std::string> errors;  // "file: problem" for files that did not load
};
ReferenceDb load_reference_dir(const std::filesystem::path& dir);
// Case-insensitive match on name, alias or file stem; nullptr when none.
const ReferenceGpu* find_reference(const ReferenceDb& db, const std::string& name);

// The reference folder: $GD_REFERENCE_DIR if set, else the first that exists of
// <exe dir>/../share/gpudissect/reference (installed: cmake --install, the .deb),
// <exe dir>/../data/reference, <exe dir>/../../data/reference (a build folder inside the
// source tree), then `fallback` (the source tree the binary was built from, for build
// folders elsewhere). nullopt if none.
std::optional<std::filesystem::path> find_reference_dir(const std::filesystem::path& exe,
                                                        const std::filesystem::path& fallback = {});

// ---- inputs ----

// One column of a comparison: a result file or a reference GPU.
struct CompareInput {
  std::string name;    // device name or reference GPU name
  std::string label;   // unique among the inputs (a repeated name gets " #2")
  std::string origin;  // the file it came from
  bool reference = false;
  std::string backend;  // "cuda", "opencl"; "reference" for a reference
  int units = 0;        // SMs / CUs / cores; 0: unknown
  std::string unit_name = "SM";
  std::optional<double> clock_mhz;  // the SM clock the figures were taken at
  std::string clock_source;         // "measured", "reported", "stated"
  std::vector<Figure> figures;
  std::map<std::string, std::string> qualifiers;  // id -> "approx" | "at least" | "at most"
  std::map<std::string, std::string> notes;       // id -> method and source, for references
  std::shared_ptr<const RunResult> run;           // the curves; null for a reference
};

// A result: figures as saved (derived on loading for schema 1); the clock measured by the
// latency, compute or bandwidth probe, else the driver's.
CompareInput input_from_result(RunResult r, const std::string& origin);
CompareInput input_from_reference(const ReferenceGpu& g);
// Gives repeated names distinct labels ("NVIDIA H200", "NVIDIA H200 #2").
void label_inputs(std::vector<CompareInput>& inputs);
// "cuda, 132 SMs, 1980 MHz (measured)": what a column header says about an input.
std::string input_facts(const CompareInput& in);

// ---- normalisation ----

// The unit of value / (units x clock): GB/s -> B/clk/SM, TFLOP/s -> FLOP/clk/SM, TOP/s ->
// OP/clk/SM; ns -> cycles (a latency times the clock). nullopt: nothing to normalise.
std::optional<std::string> per_clock_unit(const std::string& unit);
// value in `unit` divided by units and clock (value x clock for ns). nullopt where the unit
// has no per-clock form, or units (where needed) or the clock are unknown or not positive.
std::optional<double> per_sm_per_clock(double value, const std::string& unit, int units,
                                       std::optional<double> clock_mhz);
// value / units for rates (GB/s per SM = bytes per ns per SM): what compares GPUs whose
// clocks differ or are unknown. nullopt for latencies, capacities, per-clock units.
std::optional<double> per_sm(double value, const std::string& unit, int units);
std::optional<std::string> per_sm_unit(const std::string& unit);  // "GB/s/SM"
// `value` in unit `from` expressed in unit `to` (TB/s -> GB/s, us -> ns ...); nullopt when
// the units measure different things.
std::optional<double> convert_unit(double value, const std::string& from, const std::string& to);

// ---- the comparison ----

struct CompareCell {
  bool present = false;  // the input has this figure at all
  Status status;
  std::optional<double> value;  // in the row's unit
  std::string unit;             // the figure's own unit when it cannot be converted
  bool unit_mismatch = false;
  std::string qualifier;
  std::optional<double> per_sm;   // in the row's per_sm_unit
  std::optional<double> per_clk;  // stated per_sm_per_clk, else derived
  std::string per_clk_unit;
  bool per_clk_derived = false;         // computed here from value, units and clock
  std::optional<double> ratio;          // value / first input's value
  std::optional<double> per_clk_ratio;  // per_clk / first input's per_clk (same unit)
  std::string instruction, where, note;
};

struct CompareRow {
  std::string id, label, unit;
  std::string per_sm_unit;
  bool higher_is_better = true;
  std::vector<CompareCell> cells;  // one per input
  int present = 0;                 // inputs with a value (or per-clock value)
};

struct Comparison {
  std::vector<CompareInput> inputs;
  std::vector<CompareRow> rows;  // ids present in >= 2 inputs, in first-seen order
  // Ids found in one input only: input label -> ids.
  std::map<std::string, std::vector<std::string>> only_in;
  // Warnings a reader needs: different backends, clocks, unit counts.
  std::vector<std::string> caveats;
};

Comparison compare(std::vector<CompareInput> inputs);

// ---- baseline ----

// "3%", "3", "0.5 %" -> 0.03, 0.03, 0.005 (a number is a percentage); nullopt if malformed
// or negative.
std::optional<double> parse_tolerance(const std::string& s);

enum class Verdict {
  within,          // |change| <= tolerance
  improved,        // better by more than the tolerance
  regressed,       // worse by more than the tolerance
  failed,          // not ok in the new run, ok in the baseline: a regression
  recovered,       // ok in the new run, not ok in the baseline
  failed_both,     // not ok in either
  only_new,        // absent from the baseline
  only_baseline,   // absent from the new run
  not_comparable,  // units differ, or a zero baseline
  not_gated,       // a host-side figure, left out of the gate (see is_host_figure)
};
std::string to_string(Verdict v);
bool is_regression(Verdict v);  // regressed or failed

// Whether a figure measures the host rather than the GPU and its link: the host memory probe
// (host.*) and pageable copies (bandwidth.host.*_pageable, staged through host memory by the
// driver). A shared host's memory is noisy, so a GPU gate leaves these out unless asked.
// Pinned copies, links.host.* and atomics.host.* measure the link and stay in.
bool is_host_figure(const std::string& id);

// The relative spread a figure measured: its interquartile range over its median (the
// tool's spread figure, Summary::relative_spread), 0 for a single sample, a per-clock-only
// figure or a summary whose quartiles do not bracket its median.
double measured_spread(const Figure& f);

struct BaselineItem {
  std::string id, label, unit;
  bool higher_is_better = true;
  std::optional<double> baseline, current;
  std::optional<double> change;  // (current - baseline) / baseline
  Verdict verdict = Verdict::within;
  std::string reason;  // the status reason for failed ones, why not comparable ...
  double spread = 0;   // the baseline's measured spread (relative) that widened the band
};

struct BaselineReport {
  CompareInput baseline, current;
  double tolerance = 0;
  bool include_host = false;        // host-side figures were gated too
  std::vector<BaselineItem> items;  // in the new run's order, then baseline-only ids
  int regressions() const;
  int improvements() const;
  int not_gated() const;  // host-side figures left out
};

// Each figure of `current` against `baseline` (higher_is_better, the unit, the step
// (Figure::resolution) and the spread (measured_spread) from the baseline's figure, never
// from the file judged): a change beyond the largest of `tolerance` (a fraction), the step and
// the spread is a regression or an improvement; exactly at it is within. A figure ok in the
// baseline that the new run lacks, or states in another unit, is `failed`; with allow_missing
// a missing one is only listed (only_baseline), for partial runs such as --quick. Host-side
// figures (is_host_figure) are `not_gated`, their reason saying what they would have been,
// unless include_host.
BaselineReport compare_baseline(const CompareInput& baseline, const CompareInput& current,
                                double tolerance, bool allow_missing = false,
                                bool include_host = false);

// ---- curves for the charts ----

// One input's curve: (x, y) points, for the overlaid charts.
struct CurveSeries {
  std::string input;    // label
  int input_index = 0;  // which input (its colour in a chart)
  int variant = 0;      // which curve of that input (its dash pattern: ILP 1, 2, 4 ...)
  std::vector<std::pair<double, double>> points;
};
// Latency against footprint on the global path (or `path`), in ns or cycles.
std::vector<CurveSeries> latency_series(const std::vector<CompareInput>& inputs,
                                        const std::string& path, bool cycles);
// Latency levels of inputs without curves (references) on `path`: one mark per figure
// latency.<path>.<level> (ns) or .cycles, for drawing as a level across the chart.
struct LevelMark {
  std::string input;  // label
  int input_index = 0;
  std::string level;  // "L2", "device_memory"
  double value = 0;
  std::string qualifier;
  bool derived = false;  // per SM per clock computed here from the value
};
std::vector<LevelMark> latency_marks(const std::vector<CompareInput>& inputs,
                                     const std::string& path, bool cycles);
// Bandwidth levels of inputs without curves (references) for footprint curve `op`:
// bandwidth.{l1,l2,dram}.<op> in GB/s, or per SM per clock (stated, else derived).
std::vector<LevelMark> bandwidth_marks(const std::vector<CompareInput>& inputs,
                                       const std::string& op, bool per_clk);
// Bandwidth footprint curve `op` ("read", "write", "copy"): GB/s or B/clk/SM.
std::vector<CurveSeries> bandwidth_series(const std::vector<CompareInput>& inputs,
                                          const std::string& op, bool per_clk);
// ILP x occupancy of compute op `op`: one series per input and ILP ("H200, ILP 4"),
// x = warps per SM, y = ops/clk/SM.
std::vector<CurveSeries> sweep_series(const std::vector<CompareInput>& inputs,
                                      const std::string& op);
// Ops with sweep points in any input, in first-seen order.
std::vector<std::string> sweep_ops(const std::vector<CompareInput>& inputs);

}  // namespace gd
