// The Vulkan backend's kernel sets, one line per probe that has kernels here. Probes without
// a line report `unsupported`: "the vulkan backend has no ... kernels".
#include "vulkan_probes.hpp"

namespace gd::vulkan {

namespace {
template <auto Make>
std::unique_ptr<KernelSet> make(Context& ctx, const DeviceInfo& info) {
  return Make(ctx, info);
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

}  // namespace gd::vulkan
