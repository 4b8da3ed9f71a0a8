// CUDA kernels of the bandwidth probe. (Scaffold.)
#include "cuda_probes.hpp"

namespace gd::cuda {

std::unique_ptr<BandwidthKernels> make_bandwidth_kernels(int, cudaStream_t, const DeviceInfo&) {
  return nullptr;
}

}  // namespace gd::cuda
