// Whether the GPU was ours while we measured: other processes on it, its utilisation while
// we were idle, and the clock-throttle reasons, sampled before and after each probe. A
// shared or throttled GPU gives figures that look like results and are not (a latency map
// with a time-sliced chase finds "L2 at 1178 cycles"), so the run says so before any figure.
//
// The samples are taken by the backend (NVML, where present); everything here is GPU-free:
// the verdict is a function of the samples, unit-tested with fabricated ones.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "gpudissect/device.hpp"
#include "gpudissect/figure.hpp"

namespace gd {

// Utilisation (percent of the last sample period with a kernel running) above which an idle
// GPU is taken to be used by someone else. Only the sample taken before the first probe
// counts ("start": this run has launched no kernel yet); NVML averages over the last
// period (up to a second), so a sample after a probe, or before the next one, counts ours.
inline constexpr double kBusyUtilizationPercent = 10.0;

// One reading of the GPU's state, before or after one probe.
struct GpuStateSample {
  std::string probe;  // the probe it belongs to
  // "start" (before the first probe: this run idle so far) | "before" | "after"
  std::string when;
  // Whether the management library answered at all; false: nothing below is known.
  bool known = false;
  std::optional<double> utilization_percent;  // GPU utilisation, 0..100
  // Whether the process lists could be read; when false, `processes` says nothing.
  bool processes_known = false;
  std::vector<GpuProcess> processes;       // other processes on the GPU (never our own)
  std::vector<std::string> throttle_reasons;  // as Telemetry names them; empty: none
};

// Throttle reasons that lower the clock under load: power cap, thermal and hardware
// slowdowns. Idle, application-clock, sync-boost and display settings are not throttling.
bool is_throttling_reason(const std::string& reason);
// Whether this sample shows another user: another process, or utilisation over
// kBusyUtilizationPercent in the "start" sample (while this run was idle).
bool sample_shared(const GpuStateSample& s);
bool sample_throttled(const GpuStateSample& s);

struct GpuState {
  // "idle" | "shared" | "throttled" | "shared+throttled" | "unknown" (no management
  // library: nothing can be said, which is not the same as idle).
  std::string verdict = "unknown";
  bool shared = false, throttled = false;
  std::vector<std::string> reasons;  // in words, one per finding
  std::vector<GpuProcess> processes;  // every other process seen, once per pid
  // Probes measured while the GPU was shared or throttled (a sample before or after it said
  // so): their figures carry a `suspect` note.
  std::vector<std::string> suspect_probes;
  std::vector<GpuStateSample> samples;

  bool flagged() const { return shared || throttled; }
  // What a suspect figure of `probe` says; empty where the probe was measured on a quiet GPU.
  std::string suspect_note(const std::string& probe) const;
};

// The verdict over every sample of a run.
GpuState judge_gpu_state(std::vector<GpuStateSample> samples);

// "other processes on the GPU: 4242 (python3), 77 (?)": for messages.
std::string describe_processes(const std::vector<GpuProcess>& ps);
// The one line the terminal summary and the HTML banner open with: empty for "idle";
// "unknown" says plainly that nothing could be read.
std::string gpu_state_headline(const GpuState& s);

// Marks `figures` of `probe` suspect where the state says the probe was measured on a
// shared or throttled GPU. Ids, values and statuses are left as they are.
void mark_suspect_figures(const GpuState& s, const std::string& probe, std::vector<Figure>& figures);

void to_json(nlohmann::json& j, const GpuProcess& p);
void from_json(const nlohmann::json& j, GpuProcess& p);
void to_json(nlohmann::json& j, const GpuStateSample& s);
void from_json(const nlohmann::json& j, GpuStateSample& s);
void to_json(nlohmann::json& j, const GpuState& s);
void from_json(const nlohmann::json& j, GpuState& s);

}  // namespace gd
