// Block records through OpenCL and Vulkan: the same record CUDA's dispatch and occupancy
// kernels write per block ({SM id | warp slot << 32, start, end, kOccupancyMagic}), read where
// the device tells a work-group its SM (NVIDIA's OpenCL through inline PTX %smid and
// %globaltimer; Vulkan through VK_NV_shader_sm_builtins and VK_KHR_shader_clock's device
// clock), so that the model's dispatch_stats and resident_blocks judge them as CUDA's. The
// kernel text and the arithmetic on the records are here, GPU-free.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "frontend/frontend.hpp"

namespace gd {

// OpenCL C for NVIDIA's compiler, one kernel serving dispatch (spin_ns 0) and occupancy:
//   __kernel void gd_fe_blocks(__global ulong* rec, ulong spin_ns, __local uint* scratch)
// Work-item 0 of each group writes the record; every work-item spins until spin_ns have passed
// on %globaltimer since its group's start. `scratch` is the launch's dynamic local memory: it
// limits residency as CUDA's dynamic shared memory does; touched only when spin_ns is ~0, so
// the compiler cannot drop it.
std::string generate_blocks_opencl();
inline constexpr const char* kBlocksKernel = "gd_fe_blocks";

// The records of `blocks` blocks from 4 words each, times scaled from the device clock's ticks
// by ns_per_tick: exactly as written where it is 1 (a nanosecond timer), else counted from the
// earliest start (a double holds no 64-bit tick count exactly). Throws BackendError naming
// `what` when some block left no record (its magic word missing).
std::vector<BlockRecord> parse_block_records(const std::vector<uint64_t>& words, std::size_t blocks,
                                             double ns_per_tick, const std::string& what);

// A device clock's nanoseconds per tick from two spins of one work-group, each measured in
// ticks (the shader's own end - start) and in ns (the dispatch's timestamps): the difference
// of the two cancels the dispatch's fixed cost. nullopt unless the long spin took more of
// both.
std::optional<double> ns_per_tick(double ticks_short, double ns_short, double ticks_long,
                                  double ns_long);

// Blocks per SM an occupancy launch sends where no API predicts residency: twice the most the
// warp and block limits could allow (sm_90: 64 warps, 32 blocks) plus two, as CUDA sends twice
// cudaOccupancyMaxActiveBlocksPerMultiprocessor's answer plus two, so every SM stays full for
// a whole spin.
int occupancy_blocks_per_sm(int block_threads, int max_warps = 64, int max_blocks = 32);
// The grid per SM an occupancy request asks for where no API predicts residency: its own
// blocks_per_sm, else `waves` times the most the same limits allow (the refill grid, as CUDA
// sizes it from the occupancy API), else occupancy_blocks_per_sm.
int occupancy_grid_per_sm(int blocks_per_sm, int waves, int block_threads, int max_warps = 64,
                          int max_blocks = 32);

}  // namespace gd
