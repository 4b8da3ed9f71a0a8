// Wall-clock seconds on the steady clock, for the probes' and the run's own timings.
#pragma once

#include <chrono>

namespace gd {

inline double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace gd
