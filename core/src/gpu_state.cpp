#include "gpudissect/gpu_state.hpp"

#include <algorithm>
#include <set>

#include "gpudissect/json_fields.hpp"
#include "gpudissect/units.hpp"

namespace gd {

using json_fields::get;
using json_fields::put;

bool is_throttling_reason(const std::string& r) {
  // NVML's software power cap counts: a GPU held at its power limit by someone else's load
  // runs our kernels at a lower clock, as a hardware slowdown does.
  static const std::set<std::string> kThrottling = {
      "sw_power_cap",        "hw_slowdown",         "sw_thermal_slowdown",
      "hw_thermal_slowdown", "hw_power_brake_slowdown"};
  return kThrottling.count(r) > 0;
}

bool sample_shared(const GpuStateSample& s) {
  if (!s.known) return false;
  if (s.processes_known && !s.processes.empty()) return true;
  // After a probe (and before the next) the utilisation counts our own kernels: only the
  // reading before our first kernel means someone else.
  return s.when == "start" && s.utilization_percent &&
         *s.utilization_percent > kBusyUtilizationPercent;
}

bool sample_throttled(const GpuStateSample& s) {
  return s.known && std::any_of(s.throttle_reasons.begin(), s.throttle_reasons.end(),
                                is_throttling_reason);
}

std::string describe_processes(const std::vector<GpuProcess>& ps) {
  std::string s;
  for (const GpuProcess& p : ps)
    s += (s.empty() ? "" : ", ") + std::to_string(p.pid) + " (" +
         (p.name.empty() ? std::string("name unknown") : p.name) + ")";
  return s;
}

GpuState judge_gpu_state(std::vector<GpuStateSample> samples) {
  GpuState st;
  st.samples = std::move(samples);
  bool any_known = false;
  std::set<uint32_t> pids;
  std::set<std::string> throttles;
  double busiest_idle = -1;
  std::string busiest_probe;
  for (const GpuStateSample& s : st.samples) {
    if (!s.known) continue;
    any_known = true;
    const bool sh = sample_shared(s), th = sample_throttled(s);
    st.shared = st.shared || sh;
    st.throttled = st.throttled || th;
    if ((sh || th) && std::find(st.suspect_probes.begin(), st.suspect_probes.end(), s.probe) ==
                          st.suspect_probes.end())
      st.suspect_probes.push_back(s.probe);
    if (s.processes_known)
      for (const GpuProcess& p : s.processes)
        if (pids.insert(p.pid).second) st.processes.push_back(p);
    for (const std::string& r : s.throttle_reasons)
      if (is_throttling_reason(r)) throttles.insert(r);
    if (s.when == "start" && s.utilization_percent &&
        *s.utilization_percent > kBusyUtilizationPercent &&
        *s.utilization_percent > busiest_idle) {
      busiest_idle = *s.utilization_percent;
      busiest_probe = s.probe;
    }
  }
  if (!any_known) {
    st.verdict = "unknown";
    st.reasons.push_back(
        "no management library (NVML) answered: whether other processes used the GPU or its "
        "clock was throttled is unknown");
    return st;
  }
  if (!st.processes.empty())
    st.reasons.push_back("other processes on the GPU: " + describe_processes(st.processes));
  if (busiest_idle >= 0)
    st.reasons.push_back("GPU utilisation " + format_fixed(busiest_idle, 0) +
                         " % before this run's first kernel (before the " + busiest_probe +
                         " probe)");
  if (!throttles.empty()) {
    std::string t;
    for (const std::string& r : throttles) t += (t.empty() ? "" : ", ") + r;
    st.reasons.push_back("clock throttled: " + t);
  }
  st.verdict = st.shared && st.throttled ? "shared+throttled"
               : st.shared               ? "shared"
               : st.throttled            ? "throttled"
                                         : "idle";
  return st;
}

std::string GpuState::suspect_note(const std::string& probe) const {
  if (std::find(suspect_probes.begin(), suspect_probes.end(), probe) == suspect_probes.end())
    return {};
  bool sh = false, th = false;
  for (const GpuStateSample& s : samples)
    if (s.probe == probe) {
      sh = sh || sample_shared(s);
      th = th || sample_throttled(s);
    }
  if (sh && th) return "measured while the GPU was shared with another process and throttled";
  if (sh) return "measured while the GPU was shared with another process";
  return "measured while the GPU's clock was throttled";
}

std::string gpu_state_headline(const GpuState& s) {
  if (s.verdict == "idle") return {};
  if (s.verdict == "unknown")
    return "GPU state unknown: no NVML, so other processes and throttling could not be checked";
  std::string what = s.shared && s.throttled ? "SHARED with another process and THROTTLED"
                     : s.shared              ? "SHARED with another process"
                                             : "THROTTLED";
  std::string h = "WARNING: the GPU was " + what + " while measuring; figures of " +
                  std::to_string(s.suspect_probes.size()) + " probe" +
                  (s.suspect_probes.size() == 1 ? "" : "s") + " (";
  for (std::size_t i = 0; i < s.suspect_probes.size(); ++i)
    h += (i ? ", " : "") + s.suspect_probes[i];
  h += ") are suspect.";
  for (std::string r : s.reasons) {  // each a sentence of its own
    if (!r.empty() && r[0] >= 'a' && r[0] <= 'z') r[0] = static_cast<char>(r[0] - 'a' + 'A');
    h += " " + r + ".";
  }
  return h;
}

void mark_suspect_figures(const GpuState& s, const std::string& probe,
                          std::vector<Figure>& figures) {
  const std::string note = s.suspect_note(probe);
  if (note.empty()) return;
  for (Figure& f : figures) f.suspect = note;
}

void to_json(nlohmann::json& j, const GpuProcess& p) {
  j = nlohmann::json{{"pid", p.pid}};
  if (!p.name.empty()) j["name"] = p.name;
  if (!p.kind.empty()) j["kind"] = p.kind;
  put(j, "used_memory_bytes", p.used_memory_bytes);
}
void from_json(const nlohmann::json& j, GpuProcess& p) {
  json_fields::need(j, "pid", p.pid);
  get(j, "name", p.name);
  get(j, "kind", p.kind);
  get(j, "used_memory_bytes", p.used_memory_bytes);
}

void to_json(nlohmann::json& j, const GpuStateSample& s) {
  j = nlohmann::json{{"probe", s.probe}, {"when", s.when}, {"known", s.known}};
  if (!s.known) return;
  put(j, "utilization_percent", s.utilization_percent);
  if (s.processes_known) j["processes"] = s.processes;
  j["throttle_reasons"] = s.throttle_reasons;
}
void from_json(const nlohmann::json& j, GpuStateSample& s) {
  get(j, "probe", s.probe);
  get(j, "when", s.when);
  get(j, "known", s.known);
  get(j, "utilization_percent", s.utilization_percent);
  s.processes_known = j.contains("processes") && j["processes"].is_array();
  if (s.processes_known) j["processes"].get_to(s.processes);
  get(j, "throttle_reasons", s.throttle_reasons);
}

void to_json(nlohmann::json& j, const GpuState& s) {
  j = nlohmann::json{{"verdict", s.verdict},
                     {"shared", s.shared},
                     {"throttled", s.throttled},
                     {"reasons", s.reasons},
                     {"processes", s.processes},
                     {"suspect_probes", s.suspect_probes},
                     {"samples", s.samples}};
}
void from_json(const nlohmann::json& j, GpuState& s) {
  // The samples are the record; the verdict is derived again from them, so that a file's
  // verdict and its samples cannot disagree. A file with a verdict and no samples (written
  // by hand, or trimmed) keeps what it says.
  std::vector<GpuStateSample> samples;
  get(j, "samples", samples);
  if (!samples.empty()) {
    s = judge_gpu_state(std::move(samples));
    return;
  }
  s = GpuState{};
  get(j, "verdict", s.verdict);
  get(j, "shared", s.shared);
  get(j, "throttled", s.throttled);
  get(j, "reasons", s.reasons);
  get(j, "processes", s.processes);
  get(j, "suspect_probes", s.suspect_probes);
}

}  // namespace gd
