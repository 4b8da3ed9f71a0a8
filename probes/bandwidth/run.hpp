// The bandwidth probe: bytes per second and per cycle per SM at every level, against
// footprint, against active SMs, against shared-memory stride, and over the host link.
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>

#include "bandwidth/bandwidth.hpp"
#include "gpudissect/device.hpp"
#include "gpudissect/result.hpp"
#include "gpudissect/progress.hpp"

namespace gd {

struct BandwidthOptions {
  bool quick = false;  // fewer points and smaller sizes (CI, a first look)
  int points_per_doubling = 2;
  bool points_per_doubling_set = false;  // given explicitly: kept even on a slow device
  int repeats = 5;
  uint64_t min_footprint = 0;             // 0: one chunk
  std::optional<uint64_t> max_footprint;  // sweep's end; default max(8x L2, 512 MiB)
  uint64_t large_bytes = 4ull << 30;      // the one large point, per buffer (0: none)
  uint64_t host_max_bytes = 1ull << 30;
  // Seconds the probe may take (60 % footprint sweeps, shared among the curves; 15 % shared
  // memory; 25 % host link; see gpudissect/budget.hpp). An H200's whole plan takes ~9 s,
  // so only slow devices are cut.
  double budget_seconds = 75;
  bool budget_set = false;  // given as an option (--quick doubles only its own default)
  // Parts to run: footprint, scaling, shared, constant, host.
  std::set<std::string> parts = {"footprint", "scaling", "shared", "constant", "host"};
  // The latency probe's result of the same device in this run, if it ran first: plateaus
  // are named after its levels (name_levels_from_latency). Not an option: set by the run.
  const LatencyProbeResult* latency = nullptr;
};

// Options from the command line's `--option bandwidth.KEY=VALUE` pairs (KEY without the
// prefix). Throws std::invalid_argument naming the key on a bad key or value.
BandwidthOptions parse_bandwidth_options(const std::map<std::string, std::string>& kv);

// Fills `out` as it goes, so whatever was measured survives an exception or `stop`.
void run_bandwidth(Device& dev, const BandwidthOptions& opt, Progress& progress,
                   const std::atomic<bool>& stop, BandwidthProbeResult& out);

// The largest cache in front of device memory, which tells device-memory points (past 4x it)
// from cached ones and sizes the sweeps: the API's size (CUDA's L2, OpenCL's global-memory
// cache), unless the same run's latency map of the global path contradicts it. It does where
// the map reached device memory (its last level has no capacity), the edge into that level
// lies below half the API's size but not below 1/8 of it, and both sides of the edge are
// confident (>= 0.5): then the cache ends at that edge. The H200's map ends its L2 at
// 61.5-64 MiB against the API's 60 MiB, which stands. run_bandwidth does not ask the map of
// a CPU device: a VM's CPU through PoCL reports its host's 480 MiB L3, and its maps put
// memory past 4.2, 31-34 or 56-90 MiB (its TLB's reach, run to run) while reads ran at cache
// speed to 64 MiB; there the read curve's own memory plateau decides (find_memory_plateau,
// adopted by the probe on slow devices under the same bounds).
struct LastCache {
  std::optional<uint64_t> bytes;
  std::string source;  // "API" or how the map contradicted it
};
LastCache last_cache(std::optional<uint64_t> api_bytes, const std::vector<Level>* global_levels);

// Plateaus of a bandwidth-vs-footprint curve, found on time per byte (which rises with
// footprint like latency does) and named like the latency probe's levels: L1 (or L2 for a
// curve that bypasses L1), L2 near/far parts, device memory past 2x the L2. Exposed for
// tests.
void assign_bandwidth_levels(BandwidthCurve& curve, int first_cache_level,
                             std::optional<uint64_t> l2_bytes);

// Renames every footprint curve's plateaus after the latency probe's levels of the same
// device (its global path: L1, L2 near, L2 far, device memory), so that both probes name a
// footprint alike. Pure logic, no device. The rule:
//  - A plateau is named by where it ends (its capacity_lo, the last footprint on it): the
//    first cache level whose capacity (top of its interval, +10%) it ends at or below.
//    The L1 is per SM while a stream kernel spreads its footprint over every SM, so the L1
//    stands for SMs x its capacity (SMs: the curve's points); the L2 parts are shared.
//  - A plateau ending past the last cache, or the last plateau of a curve whose points go
//    past it, is "device memory"; a single plateau that starts inside a cache and runs into
//    device memory without a step is "<level> to device memory (no step)".
//  - L1 is a candidate only where the curve's accesses can allocate in it and the curve shows
//    it: loads that skip L1 by construction (curves read_l2*, copy_l2*, *bulk: .cg,
//    no-allocate, the copy engine) never; write and copy curves only if one of their
//    plateaus ends within the L1 (NVIDIA's stores do not allocate in L1, and their write
//    curves show no step there: the H200's write curve is flat from 16 KiB to 4 GiB).
//  - A name met twice in one curve gets " (2)", " (3)": two plateaus within one level are a
//    finding (e.g. how many SMs share lines), not another cache level.
// Without a global path with cache levels, nothing is renamed. Keeps the headline figures
// consistent: "L1 read" exists only while the read curve has an L1 plateau.
// A map whose last level is a cache without an end (no capacity, not "device memory") gets
// last_cache_bytes (the bandwidth probe's) as that end where it lies past the cache before.
void name_levels_from_latency(BandwidthProbeResult& bw, const LatencyProbeResult& latency,
                              std::optional<uint64_t> last_cache_bytes = std::nullopt);

// Makes every footprint curve's plateau lines agree with the device-memory figures
// (make_figures: each curve's largest footprint past 4x the last cache): the curve's last
// level "device memory" gets the median of its points there, and a curve with points there
// but no such level (no step found, or one named "<cache> to device memory (no step)") gets
// one; an earlier plateau named device memory that ends below those footprints is "partly
// cached". Flat-grid curves are device memory throughout and are left alone.
void device_memory_levels(BandwidthProbeResult& bw, std::optional<uint64_t> last_cache_bytes);

}  // namespace gd
