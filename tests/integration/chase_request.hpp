// What the OpenCL and Vulkan backend tests share about a latency chase: the request they send,
// where the chain must end, and the checks that hold on every backend. Both backends walk the
// warm-up, then N and 2N hops per repeat from line 0 (the pair of launches that cancels the
// launch cost).
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <stdexcept>
#include <string>
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

// Every path the device supports walks a 16 KiB chain to the right end, every hop counted;
// `expect_sane(t, path)` judges each timing. Returns how many paths ran.
template <class Sane>
int walk_every_supported_path(Device& dev, Sane expect_sane) {
  const auto next = sattolo_cycle(16 * 1024 / kStride);
  int ran = 0;
  for (MemPath p : all_mem_paths()) {
    if (!dev.supports(p).ok) continue;
    if (dev.max_footprint(p) < 16u * 1024) {
      ADD_FAILURE() << to_string(p) << ": cannot hold 16 KiB";
      continue;
    }
    const auto req = request(p, next);
    const ChaseTiming t = dev.chase(req);
    expect_sane(t, to_string(p));
    EXPECT_EQ(t.end_line, expected_end(next, req)) << to_string(p);
    EXPECT_EQ(t.hops_walked, expected_hops(req)) << to_string(p);
    ++ran;
  }
  return ran;
}

// Buffers are reused: a smaller chain after a larger one on the same path, in a buffer that
// still holds the larger chain's data beyond the new footprint.
inline void expect_reused_buffer_gives_the_right_end(Device& dev) {
  const auto big = sattolo_cycle(64 * 1024 / kStride, 1);
  const auto small = sattolo_cycle(8 * 1024 / kStride, 2);
  for (MemPath p : all_mem_paths()) {
    if (!dev.supports(p).ok || dev.max_footprint(p) < 64 * 1024) continue;
    const auto rb = request(p, big, 1000);
    EXPECT_EQ(dev.chase(rb).end_line, expected_end(big, rb)) << to_string(p);
    const auto rs = request(p, small, 1000);
    EXPECT_EQ(dev.chase(rs).end_line, expected_end(small, rs)) << to_string(p);
  }
}

// The end line tells a chase of the wrong chain, or a wrong hop count, from the right one.
inline void expect_end_line_detects_a_wrong_walk(Device& dev) {
  const auto a = sattolo_cycle(256, 11);
  const auto b = sattolo_cycle(256, 12);
  const auto req = request(MemPath::global, a);
  const uint64_t total = expected_hops(req);
  const auto t = dev.chase(req);
  EXPECT_EQ(t.hops_walked, total);
  EXPECT_EQ(t.end_line, walk(a, 0, total));
  EXPECT_NE(t.end_line, walk(b, 0, total));
  EXPECT_NE(t.end_line, walk(a, 0, total - 1));
  EXPECT_NE(t.end_line, walk(a, 0, total + 1));
}

// Sets GD_TEST_INDEX_CHASE=1 (the backends then walk index chains where they would walk
// addresses) for its lifetime.
struct ForceIndexChase {
  ForceIndexChase() { setenv("GD_TEST_INDEX_CHASE", "1", 1); }
  ~ForceIndexChase() { unsetenv("GD_TEST_INDEX_CHASE"); }
};

// Every chain a backend can walk ends where the host predicts, on every supported path: the
// address and byte-offset chains (stride 64), the index fallback for lines too small for an
// address (4 bytes) or not 8-byte aligned (12), and the fallback forced at stride 64. Sattolo
// chains with different seeds, so that a walk of another chain, or of the right one a hop
// short or long, ends elsewhere. `after(path, stride, forced)` runs after each chase.
template <class After>
int expect_every_chain_kind_ends_right(Device& dev, After after) {
  int ran = 0;
  for (bool forced : {false, true}) {
    std::optional<ForceIndexChase> force;
    if (forced) force.emplace();
    for (uint64_t stride : {uint64_t{4}, uint64_t{12}, uint64_t{64}}) {
      if (forced && stride != 64) continue;
      const auto next = sattolo_cycle(4096 / 4, static_cast<uint32_t>(stride + forced));
      for (MemPath p : all_mem_paths()) {
        if (!dev.supports(p).ok) continue;
        auto req = request(p, next, 3000, 2);
        req.stride_bytes = stride;
        if (dev.max_footprint(p) < req.footprint_bytes()) continue;
        const ChaseTiming t = dev.chase(req);
        const uint64_t total = expected_hops(req);
        EXPECT_EQ(t.hops_walked, total) << to_string(p) << " stride " << stride;
        EXPECT_EQ(t.end_line, walk(next, 0, total)) << to_string(p) << " stride " << stride;
        EXPECT_NE(t.end_line, walk(next, 0, total - 1)) << to_string(p) << " stride " << stride;
        after(p, stride, forced);
        ++ran;
      }
    }
  }
  return ran;
}

// A stride the chase cannot use, or no chain at all, is refused.
inline void expect_a_bad_request_rejected(Device& dev) {
  const auto next = sattolo_cycle(64);
  auto r = request(MemPath::global, next);
  r.stride_bytes = 6;
  EXPECT_THROW(dev.chase(r), std::invalid_argument);
  r = request(MemPath::global, next);
  r.next = nullptr;
  EXPECT_THROW(dev.chase(r), std::invalid_argument);
}

}  // namespace gd::test
