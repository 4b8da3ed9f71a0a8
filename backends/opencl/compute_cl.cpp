// OpenCL kernels of the compute probe. (Scaffold.)
#include "opencl_probes.hpp"

namespace gd::opencl {

std::unique_ptr<ComputeKernels> make_compute_kernels(const Handles&, const DeviceInfo&) {
  return nullptr;
}

}  // namespace gd::opencl
