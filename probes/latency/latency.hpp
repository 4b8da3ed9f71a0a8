// The latency probe's model: its result type is core's (gpudissect/result.hpp, which every
// writer reads); what the probe's registry entry and the report writers share about it.
#pragma once

#include <string>
#include <vector>

#include "gpudissect/result.hpp"

namespace gd {

// Path names in the tool's usual order (global, l2, readonly, texture, constant, shared,
// local, image: the MemPath order), then any other path the result holds. Figure ids and
// every report list the paths in this order.
std::vector<std::string> path_order(const LatencyProbeResult& p);

}  // namespace gd
