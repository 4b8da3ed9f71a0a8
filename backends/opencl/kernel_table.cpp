// The OpenCL backend's kernel sets, one name per probe that has kernels here.
#include "gpudissect/kernel_sets.hpp"
#include "opencl_probes.hpp"

namespace gd::opencl {

const std::map<std::string, KernelFactory>& kernel_factories() {
  static const auto table =
      kernel_table<KernelFactory, make_bandwidth_kernels, make_compute_kernels,
                   make_atomics_kernels, make_frontend_kernels, make_memory_kernels>();
  return table;
}

}  // namespace gd::opencl
