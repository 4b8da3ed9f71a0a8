// What the OpenCL and Vulkan backend tests share about a latency chase: the request they send
// and where the chain must end. Both backends walk the warm-up, then N and 2N hops per repeat
// from line 0 (the pair of launches that cancels the launch cost).
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "gpudissect/chain.hpp"
#include "gpudissect/device.hpp"

namespace gd::test {

constexpr uint64_t kStride = 64;
constexpr uint64_t kHops = 20000;
constexpr uint64_t kWarmup = 1000;
constexpr int kRepeats = 3;

// Hops the backend walks: warmup, then N and 2N hops per repeat, from line 0.
inline uint64_t expected_hops(const ChaseRequest& r) {
  return r.warmup_hops + r.repeats * r.hops_per_repeat * 3;
}

// The end line the probe expects after those hops.
inline uint32_t expected_end(const std::vector<uint32_t>& next, const ChaseRequest& r) {
  return walk(next, 0, expected_hops(r));
}

inline ChaseRequest request(MemPath p, const std::vector<uint32_t>& next, uint64_t hops = kHops,
                            int repeats = kRepeats) {
  ChaseRequest r;
  r.path = p;
  r.next = &next;
  r.stride_bytes = kStride;
  r.warmup_hops = kWarmup;
  r.hops_per_repeat = hops;
  r.repeats = repeats;
  return r;
}

// The upper median (the middle element of an odd count).
inline double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace gd::test
