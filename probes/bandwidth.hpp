// The bandwidth probe. (Scaffold.)
#pragma once

#include <atomic>
#include <map>
#include <string>

#include "gpudissect/device.hpp"
#include "gpudissect/result.hpp"
#include "progress.hpp"

namespace gd {

struct BandwidthOptions {
  bool quick = false;
};

// Options from the command line's `--option bandwidth.KEY=VALUE` pairs (KEY without the
// prefix). Throws std::invalid_argument naming the key on a bad key or value.
BandwidthOptions parse_bandwidth_options(const std::map<std::string, std::string>& kv);

// Fills `out` as it goes, so whatever was measured survives an exception or `stop`.
void run_bandwidth(Device& dev, const BandwidthOptions& opt, Progress& progress,
              const std::atomic<bool>& stop, BandwidthProbeResult& out);

}  // namespace gd
