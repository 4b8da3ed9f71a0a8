// The compute probe. (Scaffold.)
#pragma once

#include <atomic>
#include <map>
#include <string>

#include "gpudissect/device.hpp"
#include "gpudissect/result.hpp"
#include "progress.hpp"

namespace gd {

struct ComputeOptions {
  bool quick = false;
};

// Options from the command line's `--option compute.KEY=VALUE` pairs (KEY without the
// prefix). Throws std::invalid_argument naming the key on a bad key or value.
ComputeOptions parse_compute_options(const std::map<std::string, std::string>& kv);

// Fills `out` as it goes, so whatever was measured survives an exception or `stop`.
void run_compute(Device& dev, const ComputeOptions& opt, Progress& progress,
              const std::atomic<bool>& stop, ComputeProbeResult& out);

}  // namespace gd
