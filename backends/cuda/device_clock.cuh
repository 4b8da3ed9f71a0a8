// The GPU's nanosecond clock for every kernel of the backend: %globaltimer (a PTX special
// register, the same on every SM), which the kernels read beside clock64() so that a
// measured SM clock and wall times come from the device itself.
#pragma once

namespace gd::cuda {

__device__ __forceinline__ unsigned long long globaltimer_ns() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

}  // namespace gd::cuda
