// The frontend probe: instruction caches, launch latency and rate, block dispatch and
// occupancy measured by running. The registry entry is probes/frontend/entry.cpp.
#pragma once

#include <atomic>
#include <map>
#include <string>
#include <vector>

#include "frontend/frontend.hpp"
#include "gpudissect/device.hpp"
#include "gpudissect/probe.hpp"
#include "gpudissect/progress.hpp"

namespace gd {

struct FrontendOptions {
  bool quick = false;
  bool icache = true, partitions = true, launch = true, dispatch = true, occupancy = true;
  int min_instructions = 1024;
  int max_instructions = 0;  // 0: 131072 on CUDA, 4096 on OpenCL
  int points_per_doubling = 2;
  bool refine = true;               // extra sizes at each level's edge (1/8 of a doubling)
  int region_instructions = 16384;  // per region of the partition test
  int repeats = 5;
  int launches = 200;       // launch-latency samples per batch
  bool launch_pin = true;   // the launch-timing thread stays on one CPU while it times
  int launch_batches = 10;  // batches: a launch figure is the median of the batches' medians
  int rate_kernels = 2000;
  bool refill = true;      // refill after the first wave
  int refill_waves = 8;    // grid: this many times the resident blocks, every SM
  int refill_spin_us = 5;  // each block's time on its SM
};

// `--option frontend.KEY=VALUE`; throws std::invalid_argument naming the key.
FrontendOptions parse_frontend_options(const OptionValues& kv,
                                       const std::vector<OptionSpec>& specs);

// Code sizes of the sweep: min..max, `per_doubling` points per doubling, multiples of
// kIcacheChains, increasing, max included.
std::vector<int> icache_sizes(int min_instructions, int max_instructions, int per_doubling);
// The icache sweep's largest kernel: the option, else by language (and --quick on CUDA).
int icache_max_instructions(const FrontendOptions& opt, const std::string& language);

// Sizes to add inside the capacity bracket [lo_bytes, hi_bytes] of an edge: `steps`
// geometric steps between the bracketing instruction counts (bytes / 16), none already
// measured, none above max_instructions (empty where the bracket's top is above it).
std::vector<int> icache_refinement(const std::vector<int>& measured, double lo_bytes,
                                   double hi_bytes, int max_instructions, int steps);

// The instruction-cache sweep's sizes (instructions) for these options on this language.
std::vector<int> icache_sweep_sizes(const FrontendOptions& opt, const std::string& language);
// The instruction-cache kernels the sweep and the partition test start with (the edges'
// refinement adds more once the sweep has found them).
std::vector<IcacheKernelSpec> icache_compile_plan(const FrontendOptions& opt, FrontendKernels& k);
// Register caps of the occupancy part's register-forcing kernels.
std::vector<int> occupancy_register_caps(const FrontendOptions& opt);
// Those kernels compiled ahead, beside the probes before this one, where the backend can
// (KernelSet::compiles_beside_measurements); empty otherwise.
AheadWork frontend_ahead(Device& dev, const FrontendOptions& opt);

void run_frontend(Device& dev, const FrontendOptions& opt, Progress& progress,
                  const std::atomic<bool>& stop, FrontendProbeResult& out);

}  // namespace gd
