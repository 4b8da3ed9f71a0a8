#include "gpudissect/bandwidth.hpp"

namespace gd {

void to_json(nlohmann::json& j, const BandwidthProbeResult& r) {
  j = nlohmann::json{{"status", r.status.status}, {"wall_seconds", r.wall_seconds}};
  if (!r.status.reason.empty()) j["reason"] = r.status.reason;
}

void from_json(const nlohmann::json& j, BandwidthProbeResult& r) {
  r.status.status = j.value("status", "ok");
  r.status.reason = j.value("reason", "");
  r.wall_seconds = j.value("wall_seconds", 0.0);
}

}  // namespace gd
