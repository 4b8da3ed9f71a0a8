// The memory probe's measurement, shared by its files: the context every part runs in and
// the chase and capacity sweep they share (run.cpp); the parts themselves (run_parts.cpp).
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "gpudissect/stopwatch.hpp"
#include "memory/run.hpp"

namespace gd::memory_run {

using Clock = std::chrono::steady_clock;
constexpr uint64_t KiB = 1024;
constexpr uint64_t MiB = 1024 * KiB;

// What every measurement shares: the kernels, the options, the budget and the clocks seen.
struct Ctx {
  MemoryKernels& k;
  const MemoryOptions& opt;
  Progress& progress;
  const std::atomic<bool>& stop;
  Clock::time_point t0;
  std::vector<double> clocks;
  bool over_budget() const { return seconds_since(t0) > opt.budget; }
};

MemPoint measure(Ctx& c, MemChaseRequest req, const std::vector<uint32_t>& next, uint64_t footprint,
                 MemCurve& curve);
// A random-chain point at `footprint` bytes per warp.
MemPoint capacity_point(Ctx& c, const MemChaseRequest& base, uint64_t footprint, MemCurve& curve);

// Runs fn for one point; memory that cannot be had skips the point with the reason, any other
// backend error propagates (the part records it and the probe fails).
template <class F>
MemPoint guarded_point(uint64_t footprint, F&& fn) {
  try {
    return fn();
  } catch (const AllocationFailed& e) {
    MemPoint p;
    p.footprint_bytes = footprint;
    p.status = {StatusCode::skipped, e.what()};
    return p;
  }
}

// The capacity sweep: a coarse geometric grid that stops a few points past the first edge,
// then evenly spaced points inside the edge's bracket.
void capacity_curve(Ctx& c, const MemChaseRequest& base, uint64_t lo, uint64_t hi,
                    const std::string& what, MemCurve& curve);

// The parts (run_parts.cpp).
void carveout_part(Ctx& c, const DeviceInfo& info, MemoryProbeResult& out);
void partition_part(Ctx& c, MemoryProbeResult& out);
void granularity_part(Ctx& c, MemoryProbeResult& out);
void line_part(Ctx& c, MemoryProbeResult& out);
void ways_part(Ctx& c, MemoryProbeResult& out);
void l2_line_part(Ctx& c, const DeviceInfo& info, MemoryProbeResult& out);
void l2_ways_part(Ctx& c, const DeviceInfo& info, MemoryProbeResult& out);
void constant_part(Ctx& c, MemoryProbeResult& out);
void tlb_part(Ctx& c, MemoryProbeResult& out);

}  // namespace gd::memory_run
