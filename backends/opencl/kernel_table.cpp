// The OpenCL backend's kernel sets, one line per probe that has kernels here.
#include "opencl_probes.hpp"

namespace gd::opencl {

namespace {
template <auto Make>
std::unique_ptr<KernelSet> make(const Handles& h, const DeviceInfo& info) {
  return Make(h, info);
}
}  // namespace

const std::map<std::string, KernelFactory>& kernel_factories() {
  static const std::map<std::string, KernelFactory> table = {
      {BandwidthKernels::kProbe, make<make_bandwidth_kernels>},
      {ComputeKernels::kProbe, make<make_compute_kernels>},
      {AtomicsKernels::kProbe, make<make_atomics_kernels>},
      {FrontendKernels::kProbe, make<make_frontend_kernels>},
  };
  return table;
}

}  // namespace gd::opencl
