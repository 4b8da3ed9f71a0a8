// Factories of the CUDA kernels behind the bandwidth and compute probes; each lives in its
// own .cu file and is created on first use by the CudaDevice.
#pragma once

#include <cuda_runtime.h>

#include <memory>

#include "gpudissect/bandwidth.hpp"
#include "gpudissect/compute.hpp"
#include "gpudissect/device.hpp"

namespace gd::cuda {

std::unique_ptr<BandwidthKernels> make_bandwidth_kernels(int device, cudaStream_t stream,
                                                         const DeviceInfo& info);
std::unique_ptr<ComputeKernels> make_compute_kernels(int device, cudaStream_t stream,
                                                     const DeviceInfo& info);

}  // namespace gd::cuda
