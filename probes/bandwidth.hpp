// The bandwidth probe: bytes per second and per cycle per SM at every level, against
// footprint, against active SMs, against shared-memory stride, and over the host link.
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>

#include "gpudissect/device.hpp"
#include "gpudissect/result.hpp"
#include "progress.hpp"

namespace gd {

struct BandwidthOptions {
  bool quick = false;  // fewer points and smaller sizes (CI, a first look)
  int points_per_doubling = 2;
  int repeats = 5;
  uint64_t min_footprint = 0;             // 0: one chunk
  std::optional<uint64_t> max_footprint;  // sweep's end; default max(8x L2, 512 MiB)
  uint64_t large_bytes = 4ull << 30;      // the one large point, per buffer (0: none)
  uint64_t host_max_bytes = 1ull << 30;
  // Parts to run: footprint, scaling, shared, constant, host.
  std::set<std::string> parts = {"footprint", "scaling", "shared", "constant", "host"};
};

// Options from the command line's `--option bandwidth.KEY=VALUE` pairs (KEY without the
// prefix). Throws std::invalid_argument naming the key on a bad key or value.
BandwidthOptions parse_bandwidth_options(const std::map<std::string, std::string>& kv);

// Fills `out` as it goes, so whatever was measured survives an exception or `stop`.
void run_bandwidth(Device& dev, const BandwidthOptions& opt, Progress& progress,
                   const std::atomic<bool>& stop, BandwidthProbeResult& out);

// Plateaus of a bandwidth-vs-footprint curve, found on time per byte (which rises with
// footprint like latency does) and named like the latency probe's levels: L1 (or L2 for a
// curve that bypasses L1), L2 near/far parts, device memory past 2x the L2. Exposed for
// tests.
void assign_bandwidth_levels(BandwidthCurve& curve, int first_cache_level,
                             std::optional<uint64_t> l2_bytes);

}  // namespace gd
