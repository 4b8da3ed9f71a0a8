// The CUDA backend's kernel sets, one name per probe that has kernels here.
#include "cuda_probes.hpp"
#include "gpudissect/kernel_sets.hpp"

namespace gd::cuda {

const std::map<std::string, KernelFactory>& kernel_factories() {
  static const auto table =
      kernel_table<KernelFactory, make_bandwidth_kernels, make_compute_kernels,
                   make_atomics_kernels, make_frontend_kernels, make_memory_kernels,
                   make_links_kernels>();
  return table;
}

}  // namespace gd::cuda
