// The result model: everything a run measured, as the JSON, CSV, terminal and HTML writers
// see it. One model, many writers; the JSON form is versioned (schema_version).
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "gpudissect/bandwidth.hpp"
#include "gpudissect/compute.hpp"
#include "gpudissect/device.hpp"
#include "gpudissect/stats.hpp"
#include "gpudissect/status.hpp"

namespace gd {

inline constexpr int kSchemaVersion = 1;

struct LatencyPoint {
  uint64_t footprint_bytes = 0;
  uint64_t stride_bytes = 0;
  std::string status = "ok";  // ok | skipped | error
  std::string reason;
  std::optional<Summary> cycles;  // per hop; absent without a device clock
  std::optional<Summary> ns;      // per hop
  std::optional<double> clock_mhz;
};

struct Level {
  std::string name;                        // "L1", "L2", "device memory", "L1 TLB", ...
  std::optional<uint64_t> capacity_bytes;  // absent for the last level
  std::optional<uint64_t> capacity_lo_bytes, capacity_hi_bytes;  // interval the edge lies in
  std::optional<double> latency_cycles;
  std::optional<double> latency_ns;
  double confidence = 0;
  // Extra cost of this level over the previous one (TLB miss cost, DRAM minus L2).
  std::optional<double> step_cycles, step_ns;
};

struct CurveResult {
  Status status;
  uint64_t stride_bytes = 0;
  std::optional<std::string> timed_instruction;  // SASS opcode of the chase, where known
  std::string note;  // a finding in words, e.g. that no level ended within the sweep
  std::vector<LatencyPoint> points;
  std::vector<Level> levels;
  // Device-memory latency minus the last cache's, where the curve reaches device memory.
  std::optional<double> dram_minus_last_cache_cycles, dram_minus_last_cache_ns;
  double wall_seconds = 0;
};

struct LatencyProbeResult {
  Status status;
  double wall_seconds = 0;
  std::optional<double> clock_mhz_measured;  // median SM clock over the probe's chases
  std::optional<Telemetry> telemetry_before, telemetry_after;
  std::map<std::string, CurveResult> paths;  // keyed by path name
  std::map<std::string, CurveResult> tlb;    // keyed by "stride_<bytes>"
};

struct ToolInfo {
  std::string name = "gpudissect";
  std::string version;
  std::string command;
  std::string started_at;  // ISO 8601 UTC
};

struct RunResult {
  int schema_version = kSchemaVersion;
  ToolInfo tool;
  DeviceInfo device;
  std::optional<LatencyProbeResult> latency;
  std::optional<BandwidthProbeResult> bandwidth;
  std::optional<ComputeProbeResult> compute;
};

// JSON mapping. from_json throws std::runtime_error with a clear message on a
// malformed document or an unknown schema version.
nlohmann::json to_json(const RunResult& r);
RunResult run_result_from_json(const nlohmann::json& j);

void to_json(nlohmann::json& j, const Summary& s);
void from_json(const nlohmann::json& j, Summary& s);
void to_json(nlohmann::json& j, const DeviceInfo& d);
void from_json(const nlohmann::json& j, DeviceInfo& d);
void to_json(nlohmann::json& j, const Telemetry& t);
void from_json(const nlohmann::json& j, Telemetry& t);
void to_json(nlohmann::json& j, const LatencyPoint& p);
void from_json(const nlohmann::json& j, LatencyPoint& p);
void to_json(nlohmann::json& j, const Level& l);
void from_json(const nlohmann::json& j, Level& l);
void to_json(nlohmann::json& j, const CurveResult& c);
void from_json(const nlohmann::json& j, CurveResult& c);
void to_json(nlohmann::json& j, const LatencyProbeResult& p);
void from_json(const nlohmann::json& j, LatencyProbeResult& p);

}  // namespace gd
