// The result model: everything a run measured, as the JSON, CSV, terminal and HTML writers
// see it. One model, many writers; the JSON form is versioned (schema_version).
#pragma once

#include <any>
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "gpudissect/device.hpp"
#include "gpudissect/figure.hpp"
#include "gpudissect/gpu_state.hpp"
#include "gpudissect/probe.hpp"
#include "gpudissect/provenance.hpp"
#include "gpudissect/stats.hpp"
#include "gpudissect/status.hpp"

namespace gd {

// 2: a top-level "figures" list (headline figures with stable ids); version 1 files, which
// lack it, still load (their figures are derived on loading).
// 3: a top-level "provenance" (host, OS, drivers, build, command line); older files, which
// lack it, still load (without one).
inline constexpr int kSchemaVersion = 3;
inline constexpr int kOldestSchemaVersion = 1;

struct LatencyPoint {
  uint64_t footprint_bytes = 0;
  uint64_t stride_bytes = 0;
  Status status;                  // ok, skipped or error
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
  static constexpr const char* kProbe = "latency";
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
  // Probe name -> that probe's result (LatencyProbeResult, BandwidthProbeResult ...). A probe
  // this build does not know, read from a newer file, is kept as its raw JSON.
  std::map<std::string, std::any> probes;
  // Headline figures of every probe present, in registry order (ProbeRegistry::figures).
  std::vector<Figure> figures;
  // Whether the GPU was ours while the probes ran (top-level "gpu_state"); absent in files
  // written before it was sampled. An optional key of its own: older readers ignore it, so
  // the schema version stays.
  std::optional<GpuState> gpu_state;
  // Where it ran (schema 3); absent in older files.
  std::optional<Provenance> provenance;
  // A soak run's series (`run --duration`): kept as written, so that `report --json` keeps it.
  std::optional<nlohmann::json> soak;

  // Typed access by the result type's kProbe name: nullptr where the probe is absent.
  template <class T>
  const T* get() const {
    auto it = probes.find(T::kProbe);
    return it == probes.end() ? nullptr : std::any_cast<T>(&it->second);
  }
  template <class T>
  T* get() {
    auto it = probes.find(T::kProbe);
    return it == probes.end() ? nullptr : std::any_cast<T>(&it->second);
  }
  // Sets (or replaces) a probe's result and returns it.
  template <class T>
  T& put(T value = T{}) {
    return *std::any_cast<T>(&(probes[T::kProbe] = std::move(value)));
  }
};

// The headline figures of every registered probe present in `r`, in registry order.
std::vector<Figure> collect_figures(const RunResult& r, const ProbeRegistry& registry);

// JSON mapping, each probe's part through its registry entry. from_json throws
// std::runtime_error with a clear message on a malformed document or an unknown schema
// version; it derives the figures where the file has none (version 1).
nlohmann::json to_json(const RunResult& r, const ProbeRegistry& registry);
RunResult run_result_from_json(const nlohmann::json& j, const ProbeRegistry& registry);

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
