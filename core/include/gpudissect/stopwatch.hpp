// Wall-clock seconds on the steady clock, for the probes' and the run's own timings, and the
// time of day as the result files write it.
#pragma once

#include <chrono>
#include <ctime>
#include <string>

namespace gd {

inline double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// Now, in UTC: "2026-11-28T22:52:09Z".
inline std::string now_iso8601() {
  const std::time_t t = std::time(nullptr);
  std::tm utc{};
  gmtime_r(&t, &utc);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &utc);
  return buf;
}

}  // namespace gd
