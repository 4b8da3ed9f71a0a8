// A short latency sweep, as the OpenCL and Vulkan backend tests run it on PoCL and lavapipe:
// 4 KiB up to `max_footprint`, no refinement, no TLB sweep, 4096 hops a repeat.
#pragma once

#include <atomic>
#include <cstdint>
#include <vector>

#include "gpudissect/device.hpp"
#include "gpudissect/progress.hpp"
#include "latency/run.hpp"

namespace gd::test {

inline LatencyOptions short_sweep(std::vector<MemPath> paths, uint64_t max_footprint,
                                  int points_per_doubling, int repeats) {
  LatencyOptions opt;
  opt.paths = std::move(paths);
  opt.min_footprint = 4 * 1024;
  opt.max_footprint = max_footprint;
  opt.default_floor = max_footprint;
  opt.points_per_doubling = points_per_doubling;
  opt.max_refine_rounds = 0;
  opt.tlb = false;
  opt.budget.hops_per_repeat = 4096;
  opt.budget.repeats = repeats;
  return opt;
}

inline LatencyProbeResult run_sweep(Device& dev, const LatencyOptions& opt) {
  NullProgress progress;
  std::atomic<bool> stop{false};
  LatencyProbeResult out;
  run_latency(dev, opt, progress, stop, out);
  return out;
}

}  // namespace gd::test
