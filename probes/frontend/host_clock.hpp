// The host's steady clock in nanoseconds, for the launch timings that the CUDA and OpenCL
// kernel sets of this probe compare against the GPU's timer.
#pragma once

#include <chrono>

namespace gd::frontend {

inline double now_ns() {
  return static_cast<double>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                 std::chrono::steady_clock::now().time_since_epoch())
                                 .count());
}

}  // namespace gd::frontend
