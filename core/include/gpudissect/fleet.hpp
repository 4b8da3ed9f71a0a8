// Fleets: many GPUs (one rank each, over MPI or as local processes) measured with the same
// probes, judged against each other and, optionally, against a baseline. GPU-free and
// launcher-free: the ranks, MPI and the processes are cli/fleet_cmd.cpp; the page is
// report/fleet_report.cpp. Everything here works on the headline figures only.
//
// How a GPU is judged, figure by figure: against the median and the MAD (median absolute
// deviation) of the OTHER GPUs' values (leave-one-out: a sick GPU does not pull its own
// yardstick, and a fleet of two can be judged at all). robust z = (x - median) / scale,
// scale = max(1.4826 x MAD, noise_floor x |median|) (the floor keeps a fleet of identical
// values from flagging a 0.1 % difference). A figure makes its GPU an outlier when it is
// WORSE than the median (lower for rates, higher for latencies) by more than `threshold`
// robust z AND by more than `min_deviation` relative. Better-than-median figures are shown,
// never flagged. A figure that failed on one GPU and is ok on most others also flags it, and
// so does an active hardware or thermal slowdown (NVML throttle reasons), and uncorrected
// ECC errors since the driver loaded (NVML).
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "gpudissect/compare.hpp"
#include "gpudissect/device.hpp"
#include "gpudissect/figure.hpp"
#include "gpudissect/status.hpp"

namespace gd {

inline constexpr int kFleetSchemaVersion = 1;

// ---- robust statistics ----

// Median of v; nullopt when v is empty.
std::optional<double> fleet_median(std::vector<double> v);
// Median absolute deviation from the median (raw, not scaled); nullopt when v is empty.
std::optional<double> fleet_mad(const std::vector<double>& v);
// 1.4826: scales a MAD to a standard deviation for normally distributed data.
inline constexpr double kMadToSigma = 1.4826;

// ---- one rank's report ----

// The `links` probe run once per node (by the node's first rank, after every rank of the node
// has finished measuring): the links.* figures of that node's GPUs together.
struct NodeLinks {
  Status status;          // the links probe's own status (unsupported on a non-CUDA backend)
  std::string device_id;  // the device the run was opened on (the probe uses every GPU)
  double wall_seconds = 0;
  std::vector<Figure> figures;  // links.* only
};

struct FleetRank {
  int rank = 0;
  int local_rank = 0;
  std::string host;
  std::string device_id;  // the device this rank measured (or tried to)
  // ok: measured; error: the measurement failed or the device did not open; timeout: killed
  // after the per-rank timeout; missing: no report reached rank 0 before the deadline.
  Status status;
  std::string note;      // e.g. "a probe failed: ..." for a partial result
  std::string injected;  // the fault injected for testing, "" for none
  double wall_seconds = 0;
  DeviceInfo device;  // as the backend reported it (empty when the device did not open)
  std::optional<Telemetry> telemetry;
  std::vector<Figure> figures;
  nlohmann::json result;                // the rank's whole RunResult JSON (null when none)
  std::optional<NodeLinks> node_links;  // on the node's first rank, where links were measured
};

// One node's links, for the report: the host and what its first rank measured.
struct FleetNode {
  std::string host;
  int rank = 0;  // the rank that measured it
  NodeLinks links;
};

// The identity columns of the table: bus id, UUID, serial where the backend gives them
// (DeviceInfo.extra keys pci_bus_id, uuid, serial), "" otherwise.
std::string fleet_bus_id(const FleetRank& r);
std::string fleet_uuid(const FleetRank& r);
std::string fleet_serial(const FleetRank& r);
// "ECC enabled, 0 uncorrected / 3 corrected errors" from NVML's keys (ecc,
// ecc_uncorrected_volatile, ecc_corrected_volatile), "" where the backend gives none.
std::string fleet_ecc(const FleetRank& r);

void to_json(nlohmann::json& j, const NodeLinks& n);
void from_json(const nlohmann::json& j, NodeLinks& n);
void to_json(nlohmann::json& j, const FleetRank& r);
void from_json(const nlohmann::json& j, FleetRank& r);

// Throttle reasons that mean a sick or badly cooled GPU (hardware slowdown, thermal, power
// brake), not an idle or capped one.
bool is_alarming_throttle_reason(const std::string& reason);

// ---- fault injection (testing only) ----

// "slow:RANK:FIGURE:FACTOR" (scale one figure of one rank), "fail:RANK" (that rank opens a
// device that does not exist), "hang:RANK" (that rank's measurement never ends, so the
// per-rank timeout kills it).
struct FleetInjection {
  std::string kind;  // slow | fail | hang
  int rank = 0;
  std::string figure;
  double factor = 1;
};
// Throws std::invalid_argument with the expected forms on a malformed spec.
FleetInjection parse_fleet_injection(const std::string& spec);
// Multiplies the figure's value (every statistic of it) by the factor; false when the rank
// has no such figure with a value.
bool apply_slow_injection(FleetRank& r, const std::string& figure, double factor);

// ---- the analysis ----

struct FleetOptions {
  double threshold = 3.5;                    // robust z
  double min_deviation = 0.05;               // relative distance from the median, as a fraction
  double noise_floor = 0.01;                 // smallest scale, relative to the median
  std::optional<double> baseline_tolerance;  // set: judge each GPU against the baseline too
};

enum class CellMark {
  absent,   // this GPU has no such figure
  failed,   // not ok on this GPU
  alone,    // no other GPU has a value to compare with
  near,     // within half the threshold
  drift,    // worse, beyond half the threshold but not an outlier
  outlier,  // worse beyond the threshold and the minimum deviation
  better,   // better beyond the threshold and the minimum deviation (not flagged)
};
std::string to_string(CellMark m);

struct FleetCell {
  CellMark mark = CellMark::absent;
  std::optional<double> value;
  std::string reason;               // status reason of a failed figure
  std::optional<double> median;     // of the other GPUs
  std::optional<double> mad;        // of the other GPUs (raw)
  std::optional<double> z;          // robust z, signed as value - median
  std::optional<double> deviation;  // (value - median) / median
  bool flags = false;               // this cell makes the GPU an outlier
};

struct FleetRow {
  std::string id, label, unit;
  bool higher_is_better = true;
  std::optional<double> median, mad;  // of all GPUs' values (what the table's footer shows)
  // The coarsest step any GPU's figure states (Figure::resolution, capacities): a GPU within
  // it of the median is not an outlier, however tight the others agree.
  double resolution = 0;
  std::vector<FleetCell> cells;  // one per rank, in FleetReport::ranks order
};

// interrupted: the rank was stopped by a signal (a preempted job) before it finished; says
// nothing about the GPU.
// busy: another process used the GPU while it was measured (its run's gpu_state says shared,
// or its rank refused with --require-idle): its figures say nothing about its health, so it
// is neither judged nor part of the others' yardstick. to_string: "busy (another process)".
enum class GpuVerdict { healthy, outlier, regressed, failed, interrupted, busy };
std::string to_string(GpuVerdict v);

// Whether this rank's GPU was shared with another process: its run's top-level gpu_state
// says so, or the rank's status is "busy" (run --require-idle refused, exit 5).
bool fleet_rank_busy(const FleetRank& r);

// What a rank's own soak found (its run JSON's `soak` section: fleet --duration, or a
// collected `run --duration` JSON). regressions: one line per figure the soak judged worse at
// its end than at its start (the GPU is "regressed"); alarms: alarming throttle events and
// new uncorrected ECC errors during the soak (the GPU is an "outlier", as for a plain run).
struct FleetSoak {
  bool soaked = false;
  int repetitions = 0;
  std::vector<std::string> regressions, alarms;
  std::string malformed;  // "" or what is wrong with the section (the GPU then fails)
};
FleetSoak fleet_soak(const FleetRank& r);

struct FleetGpu {
  int index = 0;  // into FleetReport::ranks
  GpuVerdict verdict = GpuVerdict::healthy;
  // Why, one line each: "bandwidth.dram.read 410 GB/s: -48% vs median 790 (z -25)".
  std::vector<std::string> reasons;
  std::optional<BaselineReport> baseline;  // with --baseline and a measured GPU
  int baseline_regressions = 0;
  std::optional<int> soak_regressions;  // where the rank soaked
};

// Adds a soaked rank's findings to its GPU's verdict: drift regresses it, alarms make it an
// outlier, a malformed soak section fails it.
void fleet_soak_verdict(FleetGpu& g, const FleetRank& r);

struct FleetReport {
  std::vector<FleetRank> ranks;  // by rank
  FleetOptions options;
  std::vector<FleetRow> rows;      // figure ids in first-seen order
  std::vector<FleetGpu> gpus;      // one per rank: the unhealthy first (failed, outlier,
                                   // regressed), then the healthy, each group by rank
  std::vector<std::string> notes;  // caveats a reader needs (a fleet of two, a GPU twice ...)
  std::vector<FleetNode> nodes;    // links per node, in rank order (empty: not measured)
  int unhealthy() const;           // outlier, regressed or failed (interrupted and busy are not)
  int busy() const;                // GPUs another process used while they were measured
  // 0 every GPU healthy; 3 at least one outlier, regression or failed rank (drain it);
  // 4 none of those but at least one GPU busy (measure it again later: not a sick GPU).
  int exit_code() const { return unhealthy() ? 3 : busy() ? 4 : 0; }
};

// `baseline` (with options.baseline_tolerance set) judges each measured GPU with
// compare_baseline; a regression makes the GPU "regressed" unless it is already worse.
FleetReport analyse_fleet(std::vector<FleetRank> ranks, const FleetOptions& options,
                          const CompareInput* baseline = nullptr);

// The fleet JSON: the settings, every rank's report (with its whole result) and the verdicts.
nlohmann::json fleet_to_json(const FleetReport& rep, const nlohmann::json& run_info);

}  // namespace gd
