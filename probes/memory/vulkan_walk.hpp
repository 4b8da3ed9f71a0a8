// The Vulkan memory chase's host-side plan, GPU-free so that it is unit-tested: how a walk is
// cut into dispatches under a driver's loop limit, and the time per hop from dispatches of
// growing length where the device has no shader clock.
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <vector>

namespace gd::vulkan_memory {

// A dispatch of mem_chase.comp: `warmup` hops, then `repeats` timed runs of `hops` hops.
struct WalkPiece {
  uint64_t warmup = 0, hops = 0;
  uint32_t repeats = 0;
};

// Loop iterations one invocation runs for a piece (GD_WALK_N: n / 32 + n % 32 per walk, and
// one per repeat), plus `extra` (the prefetch's).
inline uint64_t walk_iterations(const WalkPiece& p, uint64_t extra = 0) {
  auto walk = [](uint64_t n) { return n / 32 + n % 32; };
  return walk(p.warmup) + p.repeats * (walk(p.hops) + 1) + extra;
}

// The hops a piece walks in all.
inline uint64_t piece_hops(const WalkPiece& p) { return p.warmup + p.repeats * p.hops; }

// The whole walk as one piece where it fits `limit` loop iterations (none: no limit); else
// untimed pieces of at most `max_hops` hops each, the same hops in all (a driver with a loop
// limit, llvmpipe, has no shader clock: its timing is the dispatches' timestamps).
inline std::vector<WalkPiece> split_walk(const WalkPiece& whole, std::optional<uint64_t> limit,
                                         uint64_t max_hops = 1ull << 20) {
  if (!limit || walk_iterations(whole) + 16 <= *limit) return {whole};
  std::vector<WalkPiece> out;
  for (uint64_t left = piece_hops(whole); left > 0;) {
    const uint64_t now = std::min(left, max_hops);
    out.push_back({now, 0, 0});
    left -= now;
  }
  return out;
}

// Nanoseconds per hop of each timed repeat from walks of warmup + r x hops hops, r = 0..R
// (prefix_ns[r] each, from the same start): repeat r's hops are the difference of walks r+1
// and r (the launch and the warm-up cancel). Where noise makes a difference not positive, the
// mean over all repeats (walk R less walk 0), and failing that walk R's time over its hops:
// an upper bound.
inline std::vector<double> ns_per_hop_from_prefixes(const std::vector<double>& prefix_ns,
                                                    uint64_t warmup, uint64_t hops) {
  std::vector<double> out;
  if (prefix_ns.size() < 2 || hops == 0) return out;
  const std::size_t repeats = prefix_ns.size() - 1;
  const double mean = (prefix_ns.back() - prefix_ns.front()) / double(repeats * hops);
  const double bound = prefix_ns.back() / double(warmup + repeats * hops);
  for (std::size_t r = 0; r < repeats; ++r) {
    double ns = (prefix_ns[r + 1] - prefix_ns[r]) / double(hops);
    if (!(ns > 0)) ns = mean > 0 ? mean : bound;
    out.push_back(ns);
  }
  return out;
}

}  // namespace gd::vulkan_memory
