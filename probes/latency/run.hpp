// The latency probe: pointer-chase latency against footprint for each memory path, cache
// levels found from each curve, and a TLB sweep at page-sized strides.
#pragma once

#include <atomic>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <vector>

#include "gpudissect/device.hpp"
#include "gpudissect/progress.hpp"
#include "gpudissect/result.hpp"
#include "gpudissect/sweep.hpp"

namespace gd {

struct LatencyOptions {
  std::vector<MemPath> paths;  // empty: the backend's own paths
  uint64_t min_footprint = 1024;
  std::optional<uint64_t> max_footprint;  // default: >= 4x the largest reported cache
  uint64_t default_floor = 256ull << 20;  // the sweep reaches at least this far
  uint64_t cache_multiple = 4;            // ... and this many times the largest cache
  int points_per_doubling = 4;
  // Paths measured after the global one (l2, readonly, texture, image) cross the same cache
  // levels: inside the plateaus the global path found, they take this many points per
  // doubling; near its edges, every point (their own edges, if elsewhere, are still found
  // and refined). The large footprints are most of a path's time (an H200's device memory
  // plateau: 9 points of ~0.25 s each). points_per_doubling: every path takes the full grid,
  // as on CPU devices always (run.cpp says why).
  int secondary_points_per_doubling = 1;
  std::optional<uint64_t> stride;  // default: per path (128 B; 64 B constant)
  int max_refine_rounds = 8;
  // Chains visit every line of a page before the next page (random inside and across
  // pages) when this exceeds the stride; default 64 KiB groups on a CPU device, off (fully
  // random chains) on GPUs (latency.cpp says why).
  std::optional<uint64_t> page_bytes;
  ChaseBudget budget;
  // TLB sweep: one line per page-sized stride, through the L2-only path where there is one.
  std::optional<bool> tlb;  // default: on for CUDA and CPU devices
  // Several strides: the reach grows with the stride until the stride passes the page size.
  // Empty: per device, these on GPUs; on a CPU one 4 KiB page and a line (see latency.cpp).
  std::vector<uint64_t> tlb_strides;
  std::optional<uint64_t> tlb_min_footprint;  // default 2M on GPUs, 16 strides on a CPU
  // At most this, and never more than the free memory less a margin: the larger the sweep,
  // the larger the reach it can find (an H200 shows no TLB step up to 64 GiB). Default 160G,
  // 64M on a CPU (4x the reach of a 4096-entry TLB of 4 KiB pages).
  std::optional<uint64_t> tlb_max_footprint;
  uint64_t tlb_free_margin = 8ull << 30;
  // Seconds one path's sweep may take (gpudissect/budget.hpp): the largest footprints are
  // skipped, with the estimate as the reason, when they would take it past. An H200 path
  // takes 1-4 s, so only slow devices are cut. The TLB sweep is not limited.
  double path_budget_seconds = 15;
  // A first look: the global path only, 2 points per doubling, 3 repeats, no TLB sweep,
  // 2 refinement rounds, 4 s per path.
  bool quick = false;
};

// The paths a backend measures by default.
std::vector<MemPath> default_paths(const DeviceInfo& info);

// The footprints `grid` gets near the last cache's far edge: every point of a 32-per-doubling
// grid (aligned with one of `per_doubling` from `lo`, whose points it keeps) from
// largest_cache x 2^(-5/32) to largest_cache x 2^(1/32), rounded to the stride, within
// [lo, hi], merged in order. Why: an H200's 60 MiB L2 leaves its plateau over a few percent
// of footprint (53.8 MiB on it, 58.7 MiB 4-5 % over it, 61.3 MiB off it); with 4 points per
// doubling and refinement to 2^(1/8), one backend's 58.7 MiB point joined the plateau and
// another's did not, and the far edge's capacity differed by 9 % between the backends. At
// 2^(1/32) steps two curves' edges can differ by a step of 2.2 %.
std::vector<uint64_t> add_far_edge_points(const std::vector<uint64_t>& grid, uint64_t lo,
                                          uint64_t hi, int per_doubling, uint64_t stride,
                                          uint64_t largest_cache);

// Runs the probe, filling `out` as it goes so that whatever was measured survives an
// exception or an interruption (`stop` set, e.g. by Ctrl-C). Throws ProbeError on a
// backend error after recording it in `out`.
void run_latency(Device& dev, const LatencyOptions& opt, Progress& progress,
                 const std::atomic<bool>& stop, LatencyProbeResult& out);

// Names, capacities and derived figures for a measured curve (exposed for tests):
// kind is "cache" (global, l2, readonly, texture, image), "constant", "scratch"
// (shared/local: one level) or "tlb".
// scratch_name names the one level of a scratchpad path ("shared", "local").
// check_consistency: a hierarchy that the curve contradicts (level_check.hpp) makes the
// curve "unstable" with no levels; off for CPU devices, whose curves carry the host's own
// noise (the OS, other processes) by nature and are judged by their spread figure by figure.
void assign_levels(CurveResult& curve, const std::string& kind, int first_cache_level,
                   std::optional<uint64_t> largest_cache,
                   const std::string& scratch_name = "on-chip", bool check_consistency = true);

// On a CPU a TLB sweep walks one line_bytes line per page, so its lines fill the caches too:
// renames the levels of `tlb` (as assign_levels named them) where a step's line footprint
// lands on the capacity of one of `caches` (the global path's levels): that step is the
// cache's, the TLB level stays, and only the other steps number TLB levels.
void name_tlb_levels_by_lines(CurveResult& tlb, uint64_t line_bytes,
                              const std::vector<Level>& caches);

}  // namespace gd
