// The Vulkan memory chase's host-side plan (probes/memory/vulkan_walk.hpp): the cut of a walk
// under llvmpipe's loop limit and the time per hop from walks of growing length; and the
// memory probe's latency unit (ns where a backend has no cycle counter) in figures and JSON.
#include <gtest/gtest.h>

#include "memory/memory.hpp"
#include "memory/vulkan_walk.hpp"

namespace gd::vulkan_memory {
namespace {

TEST(VulkanMemoryWalk, IterationsCountTheUnrolledLoopAndItsTail) {
  EXPECT_EQ(walk_iterations({64, 0, 0}), 2u);
  EXPECT_EQ(walk_iterations({65, 0, 0}), 3u);
  // 100 warm-up hops: 3 + 4; 2 repeats of 40 hops: (1 + 8 + 1) each; 5 of the prefetch.
  EXPECT_EQ(walk_iterations({100, 40, 2}, 5), 7u + 20u + 5u);
}

TEST(VulkanMemoryWalk, OnePieceWithoutALimitOrWhenItFits) {
  const WalkPiece w{5000, 4096, 5};
  const auto none = split_walk(w, std::nullopt);
  ASSERT_EQ(none.size(), 1u);
  EXPECT_EQ(none[0].repeats, 5u);
  const auto fits = split_walk(w, 65535);
  ASSERT_EQ(fits.size(), 1u);
  EXPECT_EQ(fits[0].hops, 4096u);
}

TEST(VulkanMemoryWalk, PastTheLimitUntimedPiecesOfTheSameHops) {
  // 3 x 2^20 + 7 warm-up hops and 3 repeats of 2^20: 98311 + 3 x 32769 iterations.
  const WalkPiece w{(3ull << 20) + 7, 1ull << 20, 3};
  const auto pieces = split_walk(w, 65535);
  ASSERT_EQ(pieces.size(), 7u);
  uint64_t hops = 0;
  for (const WalkPiece& p : pieces) {
    EXPECT_EQ(p.repeats, 0u);
    EXPECT_LE(p.warmup, 1ull << 20);
    EXPECT_LT(walk_iterations(p), 65535u);
    hops += piece_hops(p);
  }
  EXPECT_EQ(hops, piece_hops(w));
  EXPECT_EQ(pieces.back().warmup, 7u);
}

TEST(VulkanMemoryWalk, NsPerHopIsTheDifferenceOfSuccessiveWalks) {
  // Launch 10 us + warm-up 1000 hops x 2 ns; repeats of 100 hops at 5, 6, 7 ns.
  const std::vector<double> t = {12000, 12500, 13100, 13800};
  const auto ns = ns_per_hop_from_prefixes(t, 1000, 100);
  ASSERT_EQ(ns.size(), 3u);
  EXPECT_DOUBLE_EQ(ns[0], 5.0);
  EXPECT_DOUBLE_EQ(ns[1], 6.0);
  EXPECT_DOUBLE_EQ(ns[2], 7.0);
}

TEST(VulkanMemoryWalk, NoisyDifferencesFallBackToTheMeanThenTheBound) {
  // The second walk came out faster than the first: that repeat takes the mean (1800 / 200).
  const auto ns = ns_per_hop_from_prefixes({1000, 900, 2800}, 0, 100);
  ASSERT_EQ(ns.size(), 2u);
  EXPECT_DOUBLE_EQ(ns[0], 9.0);
  EXPECT_DOUBLE_EQ(ns[1], 19.0);
  // No positive difference at all: the last walk over its hops (an upper bound).
  const auto flat = ns_per_hop_from_prefixes({1000, 1000}, 100, 100);
  ASSERT_EQ(flat.size(), 1u);
  EXPECT_DOUBLE_EQ(flat[0], 5.0);
  EXPECT_TRUE(ns_per_hop_from_prefixes({1000}, 0, 100).empty());
}

}  // namespace
}  // namespace gd::vulkan_memory

namespace gd {
namespace {

// A constant curve as a backend without a cycle counter reports it: hops in ns.
MemoryProbeResult ns_constant_result() {
  MemoryProbeResult m;
  MemCurve c;
  c.key = "constant";
  c.load = MemLoad::constant;
  c.unit = "ns";
  const double ns[] = {10, 10, 10, 30, 30, 30, 30};
  for (int i = 0; i < 7; ++i) {
    MemPoint p;
    p.footprint_bytes = 1024ull << i;
    p.cycles = summarize({ns[i]});
    c.points.push_back(p);
  }
  c.capacity = estimate_capacity(c.points);
  m.constant = c;
  m.constant_bank_bytes = 65536;
  return m;
}

TEST(MemoryUnit, LatencyFiguresSayTheCurvesUnitAndTheBankTheyWalked) {
  const MemoryProbeResult m = ns_constant_result();
  DeviceInfo vk;
  vk.backend = "vulkan";
  bool latency = false;
  for (const Figure& f : memory_figures(m, vk)) {
    EXPECT_EQ(f.where, "one constant buffer of up to 64 KiB (the API's limit)") << f.id;
    if (f.id == "memory.constant.L1_5.latency") {
      latency = true;
      EXPECT_EQ(f.unit, "ns");
      EXPECT_DOUBLE_EQ(f.value->median, 30.0);
    }
  }
  EXPECT_TRUE(latency);
  DeviceInfo cuda;
  cuda.backend = "cuda";
  MemoryProbeResult c = m;
  c.constant->unit = "cycles";
  for (const Figure& f : memory_figures(c, cuda)) {
    EXPECT_EQ(f.where, "64 KiB __constant__ bank, then 31 KiB of kernel parameters");
    if (f.id == "memory.constant.L1_5.latency") EXPECT_EQ(f.unit, "cycles");
  }
}

TEST(MemoryUnit, TheCurvesUnitIsWrittenOnlyWhenItIsNotCycles) {
  MemCurve c;
  c.key = "x";
  nlohmann::json j = c;
  EXPECT_FALSE(j.contains("unit"));
  EXPECT_EQ(j.get<MemCurve>().unit, "cycles");
  c.unit = "ns";
  j = c;
  EXPECT_EQ(j.at("unit"), "ns");
  EXPECT_EQ(j.get<MemCurve>().unit, "ns");
}

}  // namespace
}  // namespace gd
