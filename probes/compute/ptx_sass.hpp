// The compute probe's NVIDIA OpenCL path, GPU-free: recognising the platform, the per
// work-group clock records its kernels write, and the PTX a program binary holds assembled
// to SASS with CUDA's own tools (ptxas, cuobjdump), run from an argument list, never a shell.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "compute/compute.hpp"
#include "gpudissect/tools.hpp"

namespace gd {

// Whether an OpenCL platform is NVIDIA's: its compiler takes inline PTX (the clock and SM
// id of the measurement) and its program binaries are PTX text.
bool is_nvidia_opencl(const std::string& platform_name, const std::string& platform_vendor);

// Fills t's clock fields from the 4 words per work-group the clocked kernels write (as
// CUDA's: loop cycles, %globaltimer before and after, pack_sm_clock(SM id, clock start)):
// the span from the earliest start to the latest end, the median cycles per group, the clock
// from the per-SM windows (from the groups' own cycles over ns in a latency launch).
void apply_block_clocks(ComputeTiming& t, const std::vector<uint64_t>& tim, std::size_t groups,
                        bool latency);

// Whether some instruction of `ptx` is `expect` (an op's ptx_expect, written for CUDA's
// inline PTX): same opcode, the expected modifiers in order with others allowed between
// (fma.rn.f32 in fma.rn.ftz.f32), integer types by width (add.u32 in add.s32).
bool ptx_holds(const std::string& ptx, const std::string& expect);

// "sm_90" for compute capability 9.0.
std::string sm_target(int major, int minor);

struct SassTools {
  std::string ptxas, cuobjdump;  // full paths, empty where not found
  bool found() const { return !ptxas.empty() && !cuobjdump.empty(); }
};
// The tools from this process's PATH and CUDA_HOME, looked up once.
const SassTools& sass_tools();

// What PTX gives as machine code: the cuobjdump --dump-sass listing of the PTX assembled by
// ptxas for `sm`, or why there is none ("no ptxas/cuobjdump found", "ptxas failed: ...").
struct PtxSass {
  std::string sass;
  std::string why;
};
// Works in a private temporary directory (mode 0700), removed before it returns. A PTX
// version newer than ptxas knows is retried under ptxas's own (ptx_with_version).
PtxSass ptx_to_sass(const std::string& ptx, const std::string& sm, const SassTools& tools);

// The version ptxas names as its own when it refuses a PTX file's (.version 9.0 against
// "current version is '8.8'"): "8.8", or empty.
std::string ptxas_current_version(const std::string& ptxas_output);
// The PTX with its .version directive set to `version`.
std::string ptx_with_version(const std::string& ptx, const std::string& version);

}  // namespace gd
