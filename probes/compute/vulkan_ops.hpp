// The compute probe's ops through Vulkan: which have a module (compute.comp, built by
// vulkan.cmake), the SPIR-V each step is and what the device must offer for it; why the
// others have none; and the host's replay of each chain's checksum.
#pragma once

#include <vulkan/vulkan.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "compute/compute.hpp"

namespace gd::vulkan {

// compute.comp's steps per loop iteration in all chains together (ILP x steps per chain), for
// every op but those whose VkOp names fewer.
constexpr int kComputeStepsPerIteration = 256;
// warp.redux's (compute.comp sets GD_STEPS to it; VulkanShaders.EveryComputeLoopHoldsItsOp
// checks the two agree).
constexpr int kReduxStepsPerIteration = 64;

struct VkOp {
  const char* name;
  const char* spirv;  // the SPIR-V one step of the chain is
  // The device feature the module's capabilities need beyond Vulkan 1.1.
  enum class Need { none, float64, float16, int64, int_dot } need;
  VkSubgroupFeatureFlagBits subgroup;  // 0: not a subgroup op
  // Steps per loop iteration (compute.comp's GD_STEPS for this op). Fewer than the usual 256
  // where one step is a long sequence: NVIDIA's driver makes subgroupAdd a shuffle tree of
  // about 600 bytes, so 256 steps are a 150 KB loop that overflows the L1 instruction cache.
  int steps_per_iteration = kComputeStepsPerIteration;
};

// The op's Vulkan module, or nullptr where it has none.
const VkOp* find_vk_op(const std::string& name);
// Why an op without a module has none: the GLSL or Vulkan limit that stops it.
std::string no_module_reason(const ComputeOp& op);
// The VK_SUBGROUP_FEATURE_* name of a bit.
const char* subgroup_feature_name(VkSubgroupFeatureFlagBits bit);

// The checksum invocation 0 of compute.comp folds after `steps` steps of each of `ilp`
// chains, replayed on the host where the arithmetic is exact in IEEE terms (FP32/FP64) or
// integer. fused: FMA with one rounding; else a rounded multiply, then a rounded add, which
// Vulkan also allows for fma() (its precision is "inherited from OpFMul followed by OpFAdd").
// nullopt where there is no exact replay (FP16, the special functions and conversions whose
// rounding Vulkan leaves to the device, subgroup ops).
// ftz: FP32 results below the smallest normal flushed to zero after every step, as NVIDIA's
// driver does under SPIR-V's default float controls: there an FP32 mul chain of 10 ms
// (0.999^steps) ends at 0 where the IEEE replay keeps a denormal.
std::optional<uint32_t> host_checksum(const std::string& op, int ilp, uint64_t steps,
                                      const ComputeSeeds& z, bool fused, bool ftz = false);

// The words the first `subgroup` invocations of warp.shfl_up or warp.shfl_down fold (a whole
// subgroup of that size, every invocation active); empty for any other op.
std::vector<uint32_t> shuffle_checksums(const std::string& op, int ilp, uint64_t steps,
                                        const ComputeSeeds& z, uint32_t subgroup);

}  // namespace gd::vulkan
