// CUDA kernels of the compute probe. (Scaffold.)
#include "cuda_probes.hpp"

namespace gd::cuda {

std::unique_ptr<ComputeKernels> make_compute_kernels(int, cudaStream_t, const DeviceInfo&) {
  return nullptr;
}

}  // namespace gd::cuda
