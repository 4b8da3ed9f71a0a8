// Pointer-chase chains: Sattolo cycles, the single-cycle check, and walking a chain.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <vector>

#include "gpudissect/chain.hpp"
#include "gpudissect/chase_chain.hpp"

using gd::is_single_cycle;
using gd::sattolo_cycle;
using gd::walk;

namespace {

// Independent check: following next from 0 visits every line exactly once before
// returning to 0.
bool visits_every_line_once(const std::vector<uint32_t>& next) {
  std::vector<bool> seen(next.size(), false);
  uint32_t at = 0;
  for (std::size_t k = 0; k < next.size(); ++k) {
    if (at >= next.size() || seen[at]) return false;
    seen[at] = true;
    at = next[at];
  }
  return at == 0;
}

}  // namespace

const std::vector<uint32_t> kSizes{1u, 2u, 3u, 7u, 1000u, 1u << 20};

TEST(ChainSattolo, SingleCycleCoveringEveryLine) {
  for (uint32_t n : kSizes) {
    SCOPED_TRACE(::testing::Message() << "n=" << n);
    const auto next = sattolo_cycle(n);
    ASSERT_EQ(next.size(), n);
    EXPECT_TRUE(is_single_cycle(next));
    EXPECT_TRUE(visits_every_line_once(next));
    // A permutation: every line is somebody's successor exactly once.
    std::vector<int> hits(n, 0);
    for (uint32_t v : next) {
      ASSERT_LT(v, n);
      ++hits[v];
    }
    for (uint32_t i = 0; i < n; ++i) ASSERT_EQ(hits[i], 1) << "line " << i;
  }
}

TEST(ChainSattolo, NoFixedPointsAboveOneLine) {
  for (uint32_t n : kSizes) {
    if (n < 2) continue;
    SCOPED_TRACE(::testing::Message() << "n=" << n);
    const auto next = sattolo_cycle(n, 77);
    for (uint32_t i = 0; i < n; ++i) ASSERT_NE(next[i], i) << "fixed point at " << i;
  }
}

TEST(ChainSattolo, DeterministicForASeed) {
  for (uint32_t n : kSizes) {
    SCOPED_TRACE(::testing::Message() << "n=" << n);
    EXPECT_EQ(sattolo_cycle(n, 42), sattolo_cycle(n, 42));
    EXPECT_EQ(sattolo_cycle(n), sattolo_cycle(n));
    EXPECT_TRUE(is_single_cycle(sattolo_cycle(n, 42)));
  }
}

TEST(ChainSattoloEdge, OneLinePointsToItself) {
  EXPECT_EQ(sattolo_cycle(1), std::vector<uint32_t>{0});
  EXPECT_EQ(sattolo_cycle(1, 5), std::vector<uint32_t>{0});
}

TEST(ChainSattoloEdge, TwoAndThreeLines) {
  // Only one single cycle over two lines; over three lines one of two.
  EXPECT_EQ(sattolo_cycle(2), (std::vector<uint32_t>{1, 0}));
  const auto three = sattolo_cycle(3);
  EXPECT_TRUE(three == (std::vector<uint32_t>{1, 2, 0}) ||
              three == (std::vector<uint32_t>{2, 0, 1}));
}

TEST(ChainSattoloEdge, DifferentSeedsGiveDifferentChains) {
  EXPECT_NE(sattolo_cycle(1000, 1), sattolo_cycle(1000, 2));
  EXPECT_NE(sattolo_cycle(1000), sattolo_cycle(1000, 12345));
  EXPECT_NE(sattolo_cycle(1u << 20, 1), sattolo_cycle(1u << 20, 2));
}

TEST(ChainSattoloEdge, ZeroLinesThrows) { EXPECT_THROW(sattolo_cycle(0), std::invalid_argument); }

TEST(ChainIsSingleCycle, AcceptsKnownCycles) {
  EXPECT_TRUE(is_single_cycle({0}));
  EXPECT_TRUE(is_single_cycle({1, 0}));
  EXPECT_TRUE(is_single_cycle({1, 2, 3, 0}));
  EXPECT_TRUE(is_single_cycle({3, 0, 1, 2}));
  EXPECT_TRUE(is_single_cycle({2, 3, 1, 0}));  // 0 -> 2 -> 1 -> 3 -> 0
}

TEST(ChainIsSingleCycle, RejectsTwoCycles) {
  EXPECT_FALSE(is_single_cycle({1, 0, 3, 2}));     // (0 1)(2 3)
  EXPECT_FALSE(is_single_cycle({1, 2, 0, 4, 3}));  // (0 1 2)(3 4)
  EXPECT_FALSE(is_single_cycle({0, 1}));           // two fixed points
  EXPECT_FALSE(is_single_cycle({0, 2, 1}));        // fixed point plus a 2-cycle
}

TEST(ChainIsSingleCycle, RejectsNonPermutations) {
  EXPECT_FALSE(is_single_cycle({1, 1, 0}));  // line 1 reached twice, line 2 never
  EXPECT_FALSE(is_single_cycle({1, 2, 1}));
  EXPECT_FALSE(is_single_cycle({5, 0}));  // out of range
  EXPECT_FALSE(is_single_cycle({1, 7, 0}));
}

TEST(ChainIsSingleCycle, RejectsEmpty) { EXPECT_FALSE(is_single_cycle({})); }

TEST(ChainWalk, ZeroHopsStaysAndOneHopFollowsNext) {
  const auto next = sattolo_cycle(1000);
  for (uint32_t s : {0u, 1u, 499u, 999u}) {
    EXPECT_EQ(walk(next, s, 0), s);
    EXPECT_EQ(walk(next, s, 1), next[s]);
    EXPECT_EQ(walk(next, s, 2), next[next[s]]);
  }
}

TEST(ChainWalk, FullCycleReturnsToStart) {
  const auto next = sattolo_cycle(1000, 3);
  for (uint32_t s : {0u, 17u, 999u}) {
    EXPECT_EQ(walk(next, s, 1000), s);
    EXPECT_EQ(walk(next, s, 3000), s);
  }
  // And no earlier return: a single cycle does not come back before n hops.
  for (uint64_t h = 1; h < 1000; ++h) ASSERT_NE(walk(next, 5, h), 5u) << "hops " << h;
}

TEST(ChainWalk, HopsCompose) {
  const auto next = sattolo_cycle(997, 11);
  const uint32_t s = 123;
  for (uint64_t k : {0ull, 1ull, 5ull, 400ull, 996ull, 5000ull})
    for (uint64_t m : {0ull, 1ull, 3ull, 600ull, 997ull, 123456ull})
      ASSERT_EQ(walk(next, walk(next, s, k), m), walk(next, s, k + m)) << "k=" << k << " m=" << m;
}

TEST(ChainWalk, MatchesStepByStepWalkOnKnownChain) {
  const std::vector<uint32_t> next{2, 3, 1, 0};  // 0 -> 2 -> 1 -> 3 -> 0
  EXPECT_EQ(walk(next, 0, 1), 2u);
  EXPECT_EQ(walk(next, 0, 2), 1u);
  EXPECT_EQ(walk(next, 0, 3), 3u);
  EXPECT_EQ(walk(next, 0, 4), 0u);
  EXPECT_EQ(walk(next, 0, 5), 2u);
  EXPECT_EQ(walk(next, 3, 1ull << 40), 3u);  // long walks reduce modulo n
  EXPECT_EQ(walk(next, 3, (1ull << 40) + 1), 0u);
}

TEST(ChainWalk, EmptyChainThrows) {
  EXPECT_THROW(walk({}, 0, 0), std::invalid_argument);
  EXPECT_THROW(walk({}, 0, 5), std::invalid_argument);
}

// The page-grouped chain: one cycle through every line, each page's lines visited together:
// around the cycle the page changes exactly once per page (a page split into two runs would
// add a change).
TEST(PageGroupedCycle, OneCycleEveryLineOncePagesContiguous) {
  for (uint32_t n : {1u, 7u, 64u, 1000u, 4096u}) {
    for (uint32_t per_page : {1u, 8u, 64u}) {
      const auto next = gd::page_grouped_cycle(n, per_page, 42);
      ASSERT_EQ(next.size(), n);
      EXPECT_TRUE(gd::is_single_cycle(next)) << n << " " << per_page;
      const uint32_t pages = (n + per_page - 1) / per_page;
      uint32_t changes = 0;
      for (uint32_t i = 0; i < n; ++i) changes += next[i] / per_page != i / per_page;
      EXPECT_EQ(changes, pages > 1 ? pages : 0) << n << " " << per_page;
    }
  }
}

TEST(PageGroupedCycle, RandomInsidePagesAndAcrossThem) {
  const auto next = gd::page_grouped_cycle(64 * 64, 64, 7);
  int sequential = 0, same_page = 0;
  for (uint32_t i = 0; i < next.size(); ++i) {
    sequential += next[i] == i + 1;
    same_page += next[i] / 64 == i / 64;
  }
  EXPECT_LT(sequential, 200);     // not a linear walk a prefetcher could follow
  EXPECT_GT(same_page, 64 * 60);  // but almost every hop stays in its page
  EXPECT_THROW(gd::page_grouped_cycle(0, 8), std::invalid_argument);
  EXPECT_THROW(gd::page_grouped_cycle(8, 0), std::invalid_argument);
}

// The CPU default of the latency probe: 64 B lines grouped by 64 KiB (1024 lines, 16 pages
// of 4 KiB), the last group partial. Each group's lines come as one run in the cycle, and
// a run touches only its group's 16 pages: the TLB never needs more entries than that
// within a group, however large the footprint.
TEST(PageGroupedCycle, SixteenPageGroupsAreRunsOverSixteenPages) {
  const uint32_t per_group = 1024, n = 10 * per_group + 100;
  const auto next = gd::page_grouped_cycle(n, per_group, 3);
  ASSERT_TRUE(gd::is_single_cycle(next));
  // Walk the cycle from the start of a run (a hop that changes group lands on one).
  uint32_t at = 0;
  while (next[at] / per_group == at / per_group) at = next[at];
  at = next[at];
  std::vector<int> runs(11, 0);
  std::vector<std::vector<bool>> pages(11, std::vector<bool>(16, false));
  uint32_t group = at / per_group;
  runs[group] = 1;
  for (uint32_t k = 0; k < n; ++k) {
    pages[at / per_group][(at % per_group) * 64 / 4096] = true;
    const uint32_t to = next[at];
    if (to / per_group != group) {
      group = to / per_group;
      ++runs[group];
    }
    at = to;
  }
  for (uint32_t g = 0; g < 11; ++g) {
    EXPECT_EQ(runs[g], g == group ? 2 : 1) << g;  // the first run is counted again at the end
    const int touched = static_cast<int>(std::count(pages[g].begin(), pages[g].end(), true));
    EXPECT_EQ(touched, g < 10 ? 16 : 2) << g;  // 100 lines of the last group: 2 pages
  }
}

// ---- what the OpenCL and Vulkan chains hold (chase_chain.hpp) ----

TEST(ChaseChain, AddressesOnlyWhereALineHoldsAnAlignedAddress) {
  EXPECT_FALSE(gd::address_chain_fits(4));
  EXPECT_FALSE(gd::address_chain_fits(12));  // every other line start is not 8-byte aligned
  EXPECT_TRUE(gd::address_chain_fits(8));
  EXPECT_TRUE(gd::address_chain_fits(64));
  using gd::ChainKind;
  using gd::MemPath;
  EXPECT_EQ(gd::opencl_chain_kind(MemPath::global, 64, false), ChainKind::address);
  EXPECT_EQ(gd::opencl_chain_kind(MemPath::l2, 128, false), ChainKind::address);
  EXPECT_EQ(gd::opencl_chain_kind(MemPath::global, 64, true), ChainKind::index);
  EXPECT_EQ(gd::opencl_chain_kind(MemPath::l2, 4, false), ChainKind::index);
  EXPECT_EQ(gd::opencl_chain_kind(MemPath::constant, 4, false), ChainKind::bytes);
  EXPECT_EQ(gd::opencl_chain_kind(MemPath::local, 64, true), ChainKind::bytes);
  EXPECT_EQ(gd::opencl_chain_kind(MemPath::image, 64, false), ChainKind::index);
}

TEST(ChaseChain, ReachedValueBackToTheElement) {
  using gd::ChainKind;
  EXPECT_EQ(gd::chase_end_element(ChainKind::index, 48, 0), 48u);
  EXPECT_EQ(gd::chase_end_element(ChainKind::bytes, 192, 0), 48u);
  EXPECT_FALSE(gd::chase_end_element(ChainKind::bytes, 194, 0));
  const uint64_t base = 0x7f0000001000ull;
  EXPECT_EQ(gd::chase_end_element(ChainKind::address, base + 192, base), 48u);
  EXPECT_EQ(gd::chase_end_element(ChainKind::address, base, base), 0u);
  EXPECT_FALSE(gd::chase_end_element(ChainKind::address, base - 64, base));
  EXPECT_FALSE(gd::chase_end_element(ChainKind::address, base + 2, base));
}

// Walking the address image as a GPU would (each hop loads the 64-bit word at the address it
// holds) ends where walk() ends, and the image is not the index image.
TEST(ChaseChain, AddressImageWalksTheChain) {
  const auto next = sattolo_cycle(100, 3);
  gd::ChaseRequest r;
  r.next = &next;
  r.stride_bytes = 24;
  const uint64_t base = 0x123400000000ull + 8;
  const std::vector<uint32_t> image = gd::address_chase_image(r, base);
  ASSERT_EQ(image.size(), 100u * 24 / 4);
  auto load = [&](uint64_t a) {
    const uint64_t w = (a - base) / 4;
    return uint64_t{image.at(w)} | (uint64_t{image.at(w + 1)} << 32);
  };
  uint64_t a = base;
  for (int h = 0; h < 1000; ++h) a = load(a);
  ASSERT_EQ((a - base) % 24, 0u);
  EXPECT_EQ((a - base) / 24, walk(next, 0, 1000));
  EXPECT_EQ(gd::chase_end_element(gd::ChainKind::address, a, base), (a - base) / 4);
  EXPECT_NE(image, gd::index_chase_image(r));
}
