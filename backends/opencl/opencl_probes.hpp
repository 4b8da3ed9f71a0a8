// Factories of the OpenCL kernels behind each probe; each lives in its own file and is
// created on first use by the OpenCLDevice, through kernel_factories().
#pragma once

#include <CL/cl.h>

#include <map>
#include <memory>
#include <string>

#include "atomics/atomics.hpp"
#include "bandwidth/bandwidth.hpp"
#include "compute/compute.hpp"
#include "frontend/frontend.hpp"
#include "gpudissect/device.hpp"
#include "memory/memory.hpp"
#include "opencl_check.hpp"

namespace gd::opencl {

// Borrowed from the OpenCLDevice, which outlives the kernels it creates.
struct Handles {
  cl_platform_id platform = nullptr;
  cl_device_id device = nullptr;
  cl_context context = nullptr;
  cl_command_queue queue = nullptr;  // in order, profiling enabled
};

std::unique_ptr<BandwidthKernels> make_bandwidth_kernels(const Handles& h, const DeviceInfo& info);
std::unique_ptr<ComputeKernels> make_compute_kernels(const Handles& h, const DeviceInfo& info);
std::unique_ptr<AtomicsKernels> make_atomics_kernels(const Handles& h, const DeviceInfo& info);
std::unique_ptr<FrontendKernels> make_frontend_kernels(const Handles& h, const DeviceInfo& info);
std::unique_ptr<MemoryKernels> make_memory_kernels(const Handles& h, const DeviceInfo& info);

// Probe name -> factory of its kernel set: the one table a new probe's kernels join.
using KernelFactory = std::unique_ptr<KernelSet> (*)(const Handles& h, const DeviceInfo& info);
const std::map<std::string, KernelFactory>& kernel_factories();

}  // namespace gd::opencl
