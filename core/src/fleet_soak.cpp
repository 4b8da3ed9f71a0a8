// A fleet GPU's soak: what its own `run --duration` found (fleet --duration, or a collected
// soak JSON). The rank's soak section is input from a file: every field is checked for its
// type before use, and a malformed section is a reason on the GPU, never a crash.
#include <cmath>
#include <sstream>

#include "gpudissect/fleet.hpp"
#include "gpudissect/fleet_units.hpp"
#include "gpudissect/json_read.hpp"

namespace gd {

namespace {

std::string signed_percent(double p) {
  std::ostringstream os;
  os.setf(std::ios::fixed);
  os.precision(1);
  os << (p >= 0 ? "+" : "") << p << "%";
  return os.str();
}

// "bandwidth.dram.read drifted -12.0% over the soak (3.10 TB/s -> 2.73 TB/s)".
std::string drift_line(const nlohmann::json& f) {
  // Streamed rather than concatenated: GCC 12's -Wrestrict misreads chains of `+` here.
  std::ostringstream line;
  line << f.at("id").get<std::string>() << " drifted";
  const std::string unit =
      f.contains("unit") && f["unit"].is_string() ? f["unit"].get<std::string>() : "";
  if (f.contains("drift_percent") && f["drift_percent"].is_number())
    line << " " << signed_percent(f["drift_percent"].get<double>());
  line << " over the soak";
  if (f.contains("first") && f["first"].is_number() && f.contains("last") && f["last"].is_number())
    line << " (" << fleet_quantity(f["first"].get<double>(), unit) << " -> "
         << fleet_quantity(f["last"].get<double>(), unit) << ")";
  return line.str();
}

}  // namespace

FleetSoak fleet_soak(const FleetRank& r) {
  FleetSoak s;
  if (!r.result.is_object() || !r.result.contains("soak")) return s;
  const nlohmann::json& soak = r.result["soak"];
  s.soaked = true;
  if (!soak.is_object() || !soak.contains("figures") || !soak["figures"].is_array()) {
    s.malformed = "its soak section has no list of figures";
    return s;
  }
  if (soak.contains("repetitions") && soak["repetitions"].is_array())
    s.repetitions = static_cast<int>(soak["repetitions"].size());
  for (const nlohmann::json& f : soak["figures"]) {
    if (!f.is_object() || !f.contains("id") || !f["id"].is_string()) {
      s.malformed = "a soak figure without an id";
      continue;
    }
    if (f.contains("regressed") && f["regressed"].is_boolean() && f["regressed"].get<bool>())
      s.regressions.push_back(drift_line(f));
  }
  // Throttle events counted over the soak, by reason: a sick or badly cooled GPU slows down.
  if (soak.contains("throttle_events") && soak["throttle_events"].is_object())
    for (const auto& [why, n] : soak["throttle_events"].items())
      if (const auto count = json_to_integer<long long>(n);
          n.is_number_integer() && count && *count > 0 && is_alarming_throttle_reason(why))
        s.alarms.push_back("clocks throttled during the soak: " + why + " in " +
                           std::to_string(*count) + " repetition(s)");
  // Uncorrected ECC errors that appeared during the soak.
  auto uncorrected = [&](const char* key) -> std::optional<long long> {
    if (!soak.contains(key) || !soak[key].is_object()) return std::nullopt;
    const nlohmann::json& e = soak[key];
    if (!e.contains("uncorrected") || !e["uncorrected"].is_number_integer()) return std::nullopt;
    return json_to_integer<long long>(e["uncorrected"]);
  };
  const auto before = uncorrected("ecc_before"), after = uncorrected("ecc_after");
  if (before && after && *after > *before)
    s.alarms.push_back("uncorrected ECC errors during the soak: " + std::to_string(*before) +
                       " -> " + std::to_string(*after));
  return s;
}

// A soak's own findings: drift regresses the GPU, alarms make it an outlier, a malformed
// section fails it (nothing it says can be trusted).
void fleet_soak_verdict(FleetGpu& g, const FleetRank& r) {
  const FleetSoak s = fleet_soak(r);
  if (!s.soaked) return;
  g.soak_regressions = static_cast<int>(s.regressions.size());
  g.reasons.insert(g.reasons.end(), s.alarms.begin(), s.alarms.end());
  g.reasons.insert(g.reasons.end(), s.regressions.begin(), s.regressions.end());
  if (!s.malformed.empty()) {
    g.reasons.push_back("the rank's soak cannot be read: " + s.malformed);
    g.verdict = GpuVerdict::failed;
  } else if (!s.alarms.empty() && g.verdict != GpuVerdict::failed) {
    g.verdict = GpuVerdict::outlier;
  } else if (!s.regressions.empty() && g.verdict == GpuVerdict::healthy) {
    g.verdict = GpuVerdict::regressed;
  }
}

}  // namespace gd
