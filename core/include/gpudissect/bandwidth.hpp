// Bandwidth at every level: the backend-neutral contract of the bandwidth probe and its result model.
// (Scaffold: the bandwidth probe fills this in.)
#pragma once

#include <nlohmann/json.hpp>

#include "gpudissect/status.hpp"

namespace gd {

// What a backend offers the bandwidth probe. A backend without it returns nullptr from
// Device::bandwidth().
class BandwidthKernels {
 public:
  virtual ~BandwidthKernels() = default;
};

struct BandwidthProbeResult {
  Status status;
  double wall_seconds = 0;
};

void to_json(nlohmann::json& j, const BandwidthProbeResult& r);
void from_json(const nlohmann::json& j, BandwidthProbeResult& r);

}  // namespace gd
