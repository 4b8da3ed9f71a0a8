// Sweep planning (footprints, refinement, chase plans, upper bound) and byte units.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <vector>

#include "gpudissect/stopwatch.hpp"
#include "gpudissect/sweep.hpp"
#include "gpudissect/units.hpp"

using gd::ChaseBudget;
using gd::ChasePlan;
using gd::kCapacityResolution;
using gd::log_spaced_footprints;
using gd::plan_chase;
using gd::refine_between;
using gd::sweep_upper_bound;
using gd::thin_footprints;

namespace {
constexpr uint64_t KiB = 1024;
constexpr uint64_t MiB = 1024 * KiB;
constexpr uint64_t GiB = 1024 * MiB;
}  // namespace

TEST(SweepFootprints, StandardSweepShape) {
  const auto fp = log_spaced_footprints(1024, 256 * MiB, 4, 128);
  ASSERT_EQ(fp.size(), 18u * 4u + 1u);
  EXPECT_EQ(fp.front(), 1024u);
  EXPECT_EQ(fp.back(), 256 * MiB);
  for (std::size_t i = 0; i < fp.size(); ++i) {
    EXPECT_EQ(fp[i] % 128, 0u) << "i=" << i;
    if (i > 0) EXPECT_GT(fp[i], fp[i - 1]) << "i=" << i;
    // Each point is the geometric point 1024 * 2^(i/4) rounded to the nearest stride.
    const double exact = 1024.0 * std::exp2(static_cast<double>(i) / 4.0);
    EXPECT_LE(std::fabs(static_cast<double>(fp[i]) - exact), 64.0) << "i=" << i;
  }
  // Every fourth point is an exact power of two.
  for (std::size_t i = 0; i < fp.size(); i += 4) EXPECT_EQ(fp[i], 1024u << (i / 4)) << "i=" << i;
}

TEST(SweepFootprints, NeighbourRatiosAreQuarterDoublings) {
  const auto fp = log_spaced_footprints(1024, 256 * MiB, 4, 128);
  const double r = std::exp2(0.25);
  for (std::size_t i = 1; i < fp.size(); ++i) {
    const double ratio = static_cast<double>(fp[i]) / static_cast<double>(fp[i - 1]);
    // Stride rounding distorts the first few points (ten lines or so); past 16 KiB
    // (128 lines) the ratio is within 1%.
    if (fp[i - 1] >= 16 * KiB)
      EXPECT_NEAR(ratio, r, 0.01 * r) << "i=" << i;
    else
      EXPECT_NEAR(ratio, r, 0.08 * r) << "i=" << i;
  }
}

TEST(SweepFootprints, HiNotAPowerOfTwoIsTheLastPoint) {
  const uint64_t hi = 384 * KiB;  // 3 * 128 KiB
  const auto fp = log_spaced_footprints(1024, hi, 4, 128);
  EXPECT_EQ(fp.front(), 1024u);
  EXPECT_EQ(fp.back(), hi);
  ASSERT_GE(fp.size(), 2u);
  EXPECT_LT(fp[fp.size() - 2], hi);
  // 34 geometric points up to 1024 * 2^8.5, then hi.
  EXPECT_EQ(fp.size(), 36u);
  for (std::size_t i = 1; i < fp.size(); ++i) EXPECT_GT(fp[i], fp[i - 1]);

  const auto g = log_spaced_footprints(4 * MiB, 50 * MiB, 8, 64);
  EXPECT_EQ(g.front(), 4 * MiB);
  EXPECT_EQ(g.back(), 50 * MiB);
}

TEST(SweepFootprints, HiNotAStrideMultipleRoundsDown) {
  const auto fp = log_spaced_footprints(1024, 3000, 4, 128);
  EXPECT_EQ(fp, (std::vector<uint64_t>{1024, 1280, 1408, 1664, 2048, 2432, 2944}));
}

TEST(SweepFootprints, LoEqualsHi) {
  EXPECT_EQ(log_spaced_footprints(4096, 4096, 4, 128), std::vector<uint64_t>{4096});
}

TEST(SweepFootprints, TinyStride) {
  EXPECT_EQ(log_spaced_footprints(1, 16, 1, 1), (std::vector<uint64_t>{1, 2, 4, 8, 16}));
  EXPECT_EQ(log_spaced_footprints(1024, 4096, 4, 4),
            (std::vector<uint64_t>{1024, 1216, 1448, 1724, 2048, 2436, 2896, 3444, 4096}));
}

TEST(SweepFootprints, LargeStrideCollapsesDuplicates) {
  // Everything below 1.5 MiB rounds to one 1 MiB line; duplicates are dropped.
  const auto fp = log_spaced_footprints(1 * KiB, 4 * MiB, 4, 1 * MiB);
  EXPECT_EQ(fp, (std::vector<uint64_t>{1 * MiB, 2 * MiB, 3 * MiB, 4 * MiB}));
}

TEST(SweepFootprints, BadArgumentsThrow) {
  EXPECT_THROW(log_spaced_footprints(1024, 4096, 4, 0), std::invalid_argument);
  EXPECT_THROW(log_spaced_footprints(1024, 4096, 0, 128), std::invalid_argument);
  EXPECT_THROW(log_spaced_footprints(1024, 4096, -2, 128), std::invalid_argument);
  EXPECT_THROW(log_spaced_footprints(0, 4096, 4, 128), std::invalid_argument);
  EXPECT_THROW(log_spaced_footprints(4096, 1024, 4, 128), std::invalid_argument);
}

TEST(SweepRefine, GeometricMidpointRoundedToStride) {
  EXPECT_EQ(refine_between(1024, 4096, 128, kCapacityResolution), std::optional<uint64_t>(2048));
  // sqrt(1024 * 2048) = 1448.15 -> 11.31 lines of 128 -> 1408.
  EXPECT_EQ(refine_between(1024, 2048, 128, kCapacityResolution), std::optional<uint64_t>(1408));
  // Same pair, stride 64: 22.63 lines -> 23 * 64 = 1472.
  EXPECT_EQ(refine_between(1024, 2048, 64, kCapacityResolution), std::optional<uint64_t>(1472));
  EXPECT_EQ(refine_between(32 * MiB, 64 * MiB, 128, kCapacityResolution),
            std::optional<uint64_t>(47453184));  // round(sqrt(2) * 32 MiB / 128) * 128
}

TEST(SweepRefine, NulloptWhenBracketAlreadyFineEnough) {
  // 1.05 <= 2^(1/8)
  EXPECT_FALSE(refine_between(1000 * 128, 1050 * 128, 128, kCapacityResolution).has_value());
  // Ratio exactly max_ratio counts as located.
  EXPECT_FALSE(refine_between(1024, 2048, 128, 2.0).has_value());
  EXPECT_TRUE(refine_between(1024, 2048, 128, 1.99).has_value());
}

TEST(SweepRefine, NulloptWhenNoStrideMultipleStrictlyBetween) {
  // sqrt(1024 * 1280) = 1144.9 -> 4.47 lines of 256 -> 1024 == a.
  EXPECT_FALSE(refine_between(1024, 1280, 256, kCapacityResolution).has_value());
  // Adjacent lines: nothing between.
  EXPECT_FALSE(refine_between(128, 256, 128, kCapacityResolution).has_value());
}

TEST(SweepThin, PlateausThinnedEdgesKept) {
  // An H200's global path: edges at 220K..230K (L1), 28.2M..30.8M (near L2), 56.4M..61.5M.
  const auto grid = log_spaced_footprints(1024, 256 * MiB, 4, 128);
  const std::vector<gd::EdgeBracket> edges = {
      {220416, 230144}, {28215808, 30769536}, {56431616, 61539072}};
  const auto thin = thin_footprints(grid, 4, edges, std::sqrt(2.0));
  EXPECT_EQ(thin.front(), 1024u);
  EXPECT_EQ(thin.back(), 256 * MiB);
  EXPECT_LT(thin.size(), grid.size() / 2);
  for (uint64_t fp : grid) {
    const bool kept = std::find(thin.begin(), thin.end(), fp) != thin.end();
    bool near = false;
    for (const auto& e : edges)
      near = near || (fp >= e.lo / std::sqrt(2.0) && fp <= e.hi * std::sqrt(2.0));
    const bool power_of_two = (fp & (fp - 1)) == 0;
    // Every point near an edge and every power of two (one per doubling); nothing else.
    EXPECT_EQ(kept, near || power_of_two) << fp;
  }
  // Device memory past 87 MiB: 128M and 256M only, against 7 points in the full grid.
  EXPECT_EQ(std::count_if(thin.begin(), thin.end(), [](uint64_t f) { return f > 90 * MiB; }), 2);
}

TEST(SweepThin, NothingKnownKeepsTheGrid) {
  const auto grid = log_spaced_footprints(1024, 64 * MiB, 4, 128);
  EXPECT_EQ(thin_footprints(grid, 4, {}, 1.5), grid);
  EXPECT_EQ(thin_footprints(grid, 1, {{4096, 8192}}, 1.5), grid);
  // The last point stays even off the one-per-doubling rhythm.
  const auto odd = log_spaced_footprints(1024, 384 * KiB, 4, 128);
  EXPECT_EQ(thin_footprints(odd, 4, {{4096, 4864}}, 1.1).back(), 384 * KiB);
}

TEST(SweepRefine, DegenerateBrackets) {
  EXPECT_FALSE(refine_between(0, 4096, 128, kCapacityResolution).has_value());
  EXPECT_FALSE(refine_between(4096, 4096, 128, kCapacityResolution).has_value());
  EXPECT_FALSE(refine_between(4096, 1024, 128, kCapacityResolution).has_value());
}

TEST(SweepRefine, CapacityResolutionIsAnEighthOfADoubling) {
  EXPECT_DOUBLE_EQ(kCapacityResolution, std::pow(2.0, 1.0 / 8.0));
  EXPECT_DOUBLE_EQ(std::pow(kCapacityResolution, 8), 2.0);
}

TEST(SweepPlanChase, SmallChainWarmsOneFullPass) {
  ChaseBudget b;  // 64 MiB largest cache, 8192 hops, 5 repeats, min warm-up 512
  ChasePlan p = plan_chase(4096, 128, b);
  EXPECT_EQ(p.warmup_hops, 4096u);
  EXPECT_EQ(p.hops_per_repeat, 8192u);
  EXPECT_EQ(p.repeats, 5);
  // Tiny chains still get min_warmup_hops.
  EXPECT_EQ(plan_chase(100, 128, b).warmup_hops, 512u);
  EXPECT_EQ(plan_chase(1, 128, b).warmup_hops, 512u);
  b.min_warmup_hops = 10;
  EXPECT_EQ(plan_chase(100, 128, b).warmup_hops, 100u);
}

TEST(SweepPlanChase, LargeChainWarmsOneAndAQuarterPassesOverTheCache) {
  ChaseBudget b;
  b.largest_cache_bytes = 64 * MiB;
  b.hops_per_repeat = 1000;
  b.repeats = 9;
  // 64 MiB / 128 B = 524288 lines; 1.25 passes = 655360 hops.
  const uint64_t lines = (1 * GiB) / 128;
  ChasePlan p = plan_chase(lines, 128, b);
  EXPECT_EQ(p.warmup_hops, 655360u);
  EXPECT_LT(p.warmup_hops, lines);
  EXPECT_EQ(p.hops_per_repeat, 1000u);
  EXPECT_EQ(p.repeats, 9);
  // Just above the cache (1.1x) still warms the whole chain; above 1.25x it is capped.
  EXPECT_EQ(plan_chase(576716, 128, b).warmup_hops, 576716u);
  EXPECT_EQ(plan_chase(700000, 128, b).warmup_hops, 655360u);
  // The cap is in lines of this stride.
  EXPECT_EQ(plan_chase(lines, 4096, b).warmup_hops, 16384u + 4096u);
}

TEST(SweepUpperBound, FourTimesLargestCacheRoundedUp) {
  EXPECT_EQ(sweep_upper_bound(50 * MiB, 1 * MiB, 1ull << 40), 256 * MiB);  // 200 -> 256
  EXPECT_EQ(sweep_upper_bound(64 * MiB, 1 * MiB, 1ull << 40), 256 * MiB);  // exact
  EXPECT_EQ(sweep_upper_bound(40 * MiB, 1 * MiB, 1ull << 40), 256 * MiB);  // 160 -> 256
  EXPECT_EQ(sweep_upper_bound(6 * MiB, 1 * MiB, 1ull << 40), 32 * MiB);    // 24 -> 32
}

// --quick's latency sweep: twice the largest cache. The H200's 60 MiB L2 -> 128 MiB, which
// still leaves device memory two points per doubling past the L2's far half.
TEST(SweepUpperBound, QuickUsesTwiceTheLargestCache) {
  EXPECT_EQ(sweep_upper_bound(60 * MiB, 64 * MiB, 1ull << 40, 2), 128 * MiB);
  EXPECT_EQ(sweep_upper_bound(50 * MiB, 1 * MiB, 1ull << 40, 2), 128 * MiB);  // 100 -> 128
  EXPECT_EQ(sweep_upper_bound(2 * MiB, 64 * MiB, 1ull << 40, 2), 64 * MiB);   // the floor
}

TEST(SweepUpperBound, FloorWinsWhenLarger) {
  EXPECT_EQ(sweep_upper_bound(1 * MiB, 64 * MiB, 1ull << 40), 64 * MiB);
  EXPECT_EQ(sweep_upper_bound(1 * MiB, 100 * MiB, 1ull << 40), 128 * MiB);
  EXPECT_EQ(sweep_upper_bound(0, 8 * MiB, 1ull << 40), 8 * MiB);
}

TEST(SweepUpperBound, LimitCaps) {
  EXPECT_EQ(sweep_upper_bound(50 * MiB, 1 * MiB, 128 * MiB), 128 * MiB);
  EXPECT_EQ(sweep_upper_bound(50 * MiB, 1 * MiB, 100 * MiB), 100 * MiB);
  EXPECT_EQ(sweep_upper_bound(1 * MiB, 1 * GiB, 512 * MiB), 512 * MiB);
}

// ---- units ----

TEST(UnitsFormatBytes, KnownValues) {
  EXPECT_EQ(gd::format_bytes(1024), "1 KiB");
  EXPECT_EQ(gd::format_bytes(1536), "1.50 KiB");
  EXPECT_EQ(gd::format_bytes(256.0 * MiB), "256 MiB");
  EXPECT_EQ(gd::format_bytes(500), "500 B");
  EXPECT_EQ(gd::format_bytes(0), "0 B");
  EXPECT_EQ(gd::format_bytes(50.0 * MiB), "50 MiB");
  EXPECT_EQ(gd::format_bytes(8.0 * GiB), "8 GiB");
  EXPECT_EQ(gd::format_bytes(25.5 * MiB), "25.5 MiB");
  EXPECT_EQ(gd::format_bytes(228.0 * KiB), "228 KiB");
}

TEST(UnitsFormatFixed, DigitsAndNaN) {
  EXPECT_EQ(gd::format_fixed(3.14159, 2), "3.14");
  EXPECT_EQ(gd::format_fixed(2.0, 0), "2");
  EXPECT_EQ(gd::format_fixed(std::nan(""), 3), "-");
}

TEST(UnitsSlugify, Names) {
  EXPECT_EQ(gd::slugify("NVIDIA H200"), "nvidia-h200");
  EXPECT_EQ(gd::slugify("  "), "device");
  EXPECT_EQ(gd::slugify(""), "device");
  EXPECT_EQ(gd::slugify("  AMD Radeon (TM)  Pro!! "), "amd-radeon-tm-pro");
  EXPECT_EQ(gd::slugify("pthread-Intel(R) Core(TM) i7"), "pthread-intel-r-core-tm-i7");
}

// A driver's string with its terminating NUL, a /proc line, a tool's message: trimmed at both
// ends only.
TEST(UnitsTrim, WhiteSpaceAndNulAtTheEnds) {
  EXPECT_EQ(gd::trim(std::string("NVIDIA CUDA\0", 12)), "NVIDIA CUDA");
  EXPECT_EQ(gd::trim(" \t model name : AMD EPYC \r\n"), "model name : AMD EPYC");
  EXPECT_EQ(gd::trim(std::string(" \0 \n", 4)), "");
  EXPECT_EQ(gd::trim(""), "");
}

TEST(UnitsNowIso8601, UtcToTheSecond) {
  const std::string t = gd::now_iso8601();
  ASSERT_EQ(t.size(), 20u) << t;
  EXPECT_EQ(t[4], '-');
  EXPECT_EQ(t[10], 'T');
  EXPECT_EQ(t[19], 'Z');
  EXPECT_GE(t.substr(0, 4), "2025");
}

TEST(UnitsParseBytes, Accepted) {
  EXPECT_EQ(gd::parse_bytes("4096"), std::optional<uint64_t>(4096));
  EXPECT_EQ(gd::parse_bytes("64K"), std::optional<uint64_t>(64 * KiB));
  EXPECT_EQ(gd::parse_bytes("64KiB"), std::optional<uint64_t>(64 * KiB));
  EXPECT_EQ(gd::parse_bytes("64k"), std::optional<uint64_t>(64 * KiB));
  EXPECT_EQ(gd::parse_bytes("1.5M"), std::optional<uint64_t>(1536 * KiB));
  EXPECT_EQ(gd::parse_bytes("8G"), std::optional<uint64_t>(8 * GiB));
  EXPECT_EQ(gd::parse_bytes("8gb"), std::optional<uint64_t>(8 * GiB));
  EXPECT_EQ(gd::parse_bytes("100MiB"), std::optional<uint64_t>(100 * MiB));
  EXPECT_EQ(gd::parse_bytes("512B"), std::optional<uint64_t>(512));
}

TEST(UnitsParseBytes, Rejected) {
  for (const char* bad :
       {"", "12Q", "-5", "K", "0", "0K", "abc", "5 XB", "-1M", "1e19", "2000000G", "nan", "inf"})
    EXPECT_FALSE(gd::parse_bytes(bad).has_value()) << "'" << bad << "'";
}
