// The memory probe (issue 9 parts 1, 2, 3, 4 and 6): L1 under each shared-memory carve-out,
// caches private to a scheduler partition, L1/L2 fetch granularity, L1/L2 line and ways,
// constant memory past its first level, and the TLB behind chunk-mapped memory. The registry entry
// is probes/memory/entry.cpp, the model and pure logic probes/memory/memory.hpp, the kernels
// probes/memory/cuda.cu.
#pragma once

#include <atomic>

#include "gpudissect/device.hpp"
#include "memory/memory.hpp"
#include "gpudissect/probe.hpp"
#include "gpudissect/progress.hpp"

namespace gd {

struct MemoryOptions {
  bool quick = false;  // 2 points per doubling, 3 repeats, 4 carve-outs, 2 warp counts
  bool carveout = true, partition = true, granularity = true, constant = true;
  bool tlb = true;                           // off with quick
  bool l2_line = true, l2_ways = true;       // off with quick
  uint64_t tlb_max_footprint = 16ull << 30;  // of the TLB sweeps (one line per 2 MiB)
  int repeats = 5;
  int points_per_doubling = 4;
  int refine = 6;  // evenly spaced points added inside each capacity edge
  uint64_t min_footprint = 8 * 1024;
  uint64_t max_footprint = 384 * 1024;  // past the largest L1 (256 KiB on sm_90)
  int max_warps = 4;
  uint64_t hops = 4096;  // timed hops per repeat (at least the chain's lines)
  double budget = 60;    // seconds; points past it are skipped with the reason
};

MemoryOptions parse_memory_options(const OptionValues& kv, const std::vector<OptionSpec>& specs);
std::vector<OptionSpec> memory_option_specs();

// Fills `out` as it goes; throws ProbeError (gpudissect/probe.hpp) on a backend failure after
// recording it.
void run_memory(Device& dev, const MemoryOptions& opt, Progress& progress,
                const std::atomic<bool>& stop, MemoryProbeResult& out);

}  // namespace gd
