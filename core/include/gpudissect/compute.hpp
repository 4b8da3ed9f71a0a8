// What one SM does per cycle: the backend-neutral contract of the compute probe and its result model.
// (Scaffold: the compute probe fills this in.)
#pragma once

#include <nlohmann/json.hpp>

#include "gpudissect/status.hpp"

namespace gd {

// What a backend offers the compute probe. A backend without it returns nullptr from
// Device::compute().
class ComputeKernels {
 public:
  virtual ~ComputeKernels() = default;
};

struct ComputeProbeResult {
  Status status;
  double wall_seconds = 0;
};

void to_json(nlohmann::json& j, const ComputeProbeResult& r);
void from_json(const nlohmann::json& j, ComputeProbeResult& r);

}  // namespace gd
