// Factories of the CUDA kernels behind each probe; each lives in its own .cu file and is
// created on first use by the CudaDevice, through kernel_factories().
#pragma once

#include <cuda_runtime.h>

#include <map>
#include <memory>
#include <string>

#include "atomics/atomics.hpp"
#include "bandwidth/bandwidth.hpp"
#include "compute/compute.hpp"
#include "gpudissect/device.hpp"
#include "frontend/frontend.hpp"
#include "links/links.hpp"
#include "memory/memory.hpp"

namespace gd::cuda {

std::unique_ptr<BandwidthKernels> make_bandwidth_kernels(int device, cudaStream_t stream,
                                                         const DeviceInfo& info);
std::unique_ptr<ComputeKernels> make_compute_kernels(int device, cudaStream_t stream,
                                                     const DeviceInfo& info);
std::unique_ptr<AtomicsKernels> make_atomics_kernels(int device, cudaStream_t stream,
                                                     const DeviceInfo& info);
std::unique_ptr<FrontendKernels> make_frontend_kernels(int device, cudaStream_t stream,
                                                       const DeviceInfo& info);
std::unique_ptr<MemoryKernels> make_memory_kernels(int device, cudaStream_t stream,
                                                   const DeviceInfo& info);
std::unique_ptr<LinksKernels> make_links_kernels(int device, cudaStream_t stream,
                                                 const DeviceInfo& info);
// Probe name -> factory of its kernel set: the one table a new probe's kernels join.
using KernelFactory = std::unique_ptr<KernelSet> (*)(int device, cudaStream_t stream,
                                                     const DeviceInfo& info);
const std::map<std::string, KernelFactory>& kernel_factories();

// NVRTC to PTX for `arch` ("compute_90", "compute_90a"); needs no GPU (CI checks every
// generated compute kernel with it). Throws BackendError with NVRTC's log.
std::string compile_to_ptx(const std::string& source, const std::string& arch);

}  // namespace gd::cuda
