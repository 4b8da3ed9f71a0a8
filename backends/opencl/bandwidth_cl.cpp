// OpenCL kernels of the bandwidth probe. (Scaffold.)
#include "opencl_probes.hpp"

namespace gd::opencl {

std::unique_ptr<BandwidthKernels> make_bandwidth_kernels(const Handles&, const DeviceInfo&) {
  return nullptr;
}

}  // namespace gd::opencl
