// The CUDA backend's kernel sets, one line per probe that has kernels here.
#include "cuda_probes.hpp"

namespace gd::cuda {

namespace {
template <auto Make>
std::unique_ptr<KernelSet> make(int device, cudaStream_t stream, const DeviceInfo& info) {
  return Make(device, stream, info);
}
}  // namespace

const std::map<std::string, KernelFactory>& kernel_factories() {
  static const std::map<std::string, KernelFactory> table = {
      {BandwidthKernels::kProbe, make<make_bandwidth_kernels>},
      {ComputeKernels::kProbe, make<make_compute_kernels>},
      {AtomicsKernels::kProbe, make<make_atomics_kernels>},
      {FrontendKernels::kProbe, make<make_frontend_kernels>},
      {MemoryKernels::kProbe, make<make_memory_kernels>},
      {LinksKernels::kProbe, make<make_links_kernels>},
  };
  return table;
}

}  // namespace gd::cuda
