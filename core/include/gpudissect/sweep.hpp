// Planning a latency sweep: which footprints to measure, and how many hops at each.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

namespace gd {

// Footprints from lo to hi inclusive, `per_doubling` per factor of two, each rounded to a
// whole number of strides (at least one), strictly increasing, hi always included.
std::vector<uint64_t> log_spaced_footprints(uint64_t lo, uint64_t hi, int per_doubling,
                                            uint64_t stride);

// The geometric midpoint of a and b rounded to a whole number of strides, if one lies
// strictly between them and b/a is still above max_ratio.
std::optional<uint64_t> refine_between(uint64_t a, uint64_t b, uint64_t stride, double max_ratio);

// A capacity edge another curve located: its last footprint on a plateau, its first past it.
struct EdgeBracket {
  uint64_t lo = 0, hi = 0;
};

// The grid of a curve that crosses the same levels as one measured before it (a secondary
// memory path beside the global one): every `keep_every`-th point of `grid` inside the known
// plateaus, every point within a factor `guard` of a known edge (where this curve's own edge
// is expected and refinement starts from), and the first and last points always. With no
// edges, or keep_every <= 1, the grid itself.
std::vector<uint64_t> thin_footprints(const std::vector<uint64_t>& grid, int keep_every,
                                      const std::vector<EdgeBracket>& edges, double guard);

// Ratio of the capacity bracket that counts as located: 1/8 of a doubling.
inline constexpr double kCapacityResolution = 1.0905077326652577;  // 2^(1/8)

struct ChasePlan {
  uint64_t warmup_hops = 0;
  uint64_t hops_per_repeat = 0;
  int repeats = 0;
};

struct ChaseBudget {
  // Largest cache the hierarchy is believed to have (e.g. the reported L2): warming
  // beyond a pass over this much memory changes nothing, so warm-up stops there.
  uint64_t largest_cache_bytes = 64ull << 20;
  uint64_t hops_per_repeat = 8192;
  int repeats = 5;
  uint64_t min_warmup_hops = 512;
};

// Warm-up is one full pass over the chain, capped at 1.25 passes over the largest cache
// (enough to reach the steady state of a footprint that does not fit).
ChasePlan plan_chase(uint64_t lines, uint64_t stride, const ChaseBudget& budget);

// The sweep's upper end: at least 4x the largest cache the device reports and at least
// `floor`, rounded up to a power of two, but never above `limit`.
uint64_t sweep_upper_bound(uint64_t largest_cache, uint64_t floor, uint64_t limit,
                           uint64_t cache_multiple = 4);

}  // namespace gd
