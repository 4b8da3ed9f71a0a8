// Factories of the Vulkan kernels behind each probe; each lives in its own file and is
// created on first use by the VulkanDevice, through kernel_factories().
#pragma once

#include <map>
#include <memory>
#include <string>

#include "atomics/atomics.hpp"
#include "bandwidth/bandwidth.hpp"
#include "compute/compute.hpp"
#include "frontend/frontend.hpp"
#include "gpudissect/device.hpp"
#include "memory/memory.hpp"
#include "vulkan_context.hpp"

namespace gd::vulkan {

// The context is borrowed from the VulkanDevice, which outlives the kernels it creates.
std::unique_ptr<BandwidthKernels> make_bandwidth_kernels(Context& ctx, const DeviceInfo& info);
std::unique_ptr<ComputeKernels> make_compute_kernels(Context& ctx, const DeviceInfo& info);
std::unique_ptr<AtomicsKernels> make_atomics_kernels(Context& ctx, const DeviceInfo& info);
// One ping-pong game of `kind` by a single invocation taking both players' turns, so no wait
// ever spins: every mode's shader runs, and is checked (pingpong_check), on a driver that
// cannot run two waiting players (lavapipe). Throws BackendError for the host kind.
// `location`: the flag location (global kinds; gd::kLocationStride apart).
PingPongOutcome play_pingpong_solo(Context& ctx, PingPong kind, uint32_t rounds, int location = 0);
std::unique_ptr<FrontendKernels> make_frontend_kernels(Context& ctx, const DeviceInfo& info);
std::unique_ptr<MemoryKernels> make_memory_kernels(Context& ctx, const DeviceInfo& info);

// Probe name -> factory of its kernel set: the one table a new probe's kernels join.
using KernelFactory = std::unique_ptr<KernelSet> (*)(Context& ctx, const DeviceInfo& info);
const std::map<std::string, KernelFactory>& kernel_factories();

}  // namespace gd::vulkan
