#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <functional>
#include <random>
#include <stdexcept>
#include <vector>

#include "gpudissect/levels.hpp"

using gd::CurvePoint;
using gd::detect_levels;
using gd::DetectedLevel;
using gd::steps_to_refine;

namespace {

constexpr double KiB = 1024.0, MiB = 1024.0 * KiB;

// Footprints 1 KiB .. 256 MiB at 4 points per doubling.
std::vector<double> grid(double lo = KiB, double hi = 256 * MiB, int per_doubling = 4) {
  std::vector<double> f;
  for (int k = 0;; ++k) {
    const double v = lo * std::exp2(static_cast<double>(k) / per_doubling);
    if (v > hi * (1 + 1e-9)) break;
    f.push_back(v);
  }
  return f;
}

struct Step {
  double capacity;  // bytes: footprints <= capacity see `latency`
  double latency;
};

// A staircase: each step's latency up to its capacity, `last` beyond.
std::function<double(double)> staircase(std::vector<Step> steps, double last) {
  return [steps, last](double f) {
    for (const auto& s : steps)
      if (f <= s.capacity) return s.latency;
    return last;
  };
}

// Multiplicative Gaussian noise of relative size `noise`, seeded.
std::vector<CurvePoint> make_curve(const std::function<double(double)>& lat,
                                   const std::vector<double>& fps, double noise = 0,
                                   unsigned seed = 1) {
  std::mt19937 rng(seed);
  std::normal_distribution<double> g(0.0, 1.0);
  std::vector<CurvePoint> c;
  for (double f : fps) {
    CurvePoint p;
    p.footprint_bytes = f;
    p.latency = lat(f) * (noise > 0 ? 1 + noise * g(rng) : 1.0);
    c.push_back(p);
  }
  return c;
}

std::vector<CurvePoint> gpu_curve(double noise = 0, unsigned seed = 1) {
  return make_curve(staircase({{256 * KiB, 33}, {48 * MiB, 270}}, 650), grid(), noise, seed);
}

void expect_bracket(const DetectedLevel& l, double cap, double max_ratio) {
  ASSERT_TRUE(l.capacity_lo.has_value());
  ASSERT_TRUE(l.capacity_hi.has_value());
  EXPECT_LE(*l.capacity_lo, cap);
  EXPECT_GE(*l.capacity_hi, cap);
  EXPECT_LE(*l.capacity_hi / *l.capacity_lo, max_ratio * (1 + 1e-9));
}

void expect_near_rel(double got, double want, double rel) {
  EXPECT_NEAR(got, want, rel * want) << "got " << got << " want " << want;
}

const double kGridStep = std::exp2(0.25);

// gpu_curve's three levels found: L1 and L2 latencies within 1%, device memory's within
// `dram_rel`, and the two capacities bracketed by neighbouring grid points.
void expect_gpu_levels(const std::vector<DetectedLevel>& lv, double dram_rel) {
  ASSERT_EQ(lv.size(), 3u);
  expect_near_rel(lv[0].latency, 33, 0.01);
  expect_near_rel(lv[1].latency, 270, 0.01);
  expect_near_rel(lv[2].latency, 650, dram_rel);
  expect_bracket(lv[0], 256 * KiB, kGridStep);
  expect_bracket(lv[1], 48 * MiB, kGridStep);
}

}  // namespace

TEST(LevelsClean, ThreeLevels) {
  const auto c = gpu_curve();
  const auto lv = detect_levels(c);
  ASSERT_NO_FATAL_FAILURE(expect_gpu_levels(lv, 0.01));
  EXPECT_FALSE(lv[2].capacity_lo.has_value());
  EXPECT_FALSE(lv[2].capacity_hi.has_value());
  EXPECT_EQ(lv[0].first, 0u);
  EXPECT_EQ(lv[2].last, c.size() - 1);
  for (const auto& l : lv) EXPECT_GT(l.confidence, 0.9);
}

TEST(LevelsNoise, OnePercent) {
  for (unsigned seed = 1; seed <= 8; ++seed) {
    SCOPED_TRACE(seed);
    const auto lv = detect_levels(gpu_curve(0.01, seed));
    expect_gpu_levels(lv, 0.015);
  }
}

TEST(LevelsNoise, ThreePercent) {
  for (unsigned seed = 1; seed <= 8; ++seed) {
    SCOPED_TRACE(seed);
    const auto lv = detect_levels(gpu_curve(0.03, seed));
    ASSERT_EQ(lv.size(), 3u);
    expect_near_rel(lv[0].latency, 33, 0.03);
    expect_near_rel(lv[1].latency, 270, 0.03);
    expect_near_rel(lv[2].latency, 650, 0.04);
    ASSERT_TRUE(lv[0].capacity_lo && lv[0].capacity_hi);
    EXPECT_LE(*lv[0].capacity_lo, 256 * KiB);
    EXPECT_GE(*lv[0].capacity_hi, 256 * KiB);
  }
}

TEST(LevelsOutliers, SingleOutlierPerPlateau) {
  for (double noise : {0.0, 0.01}) {
    SCOPED_TRACE(noise);
    auto c = gpu_curve(noise, 3);
    // +30% at one point inside each plateau: 16 KiB, 4 MiB, 128 MiB.
    for (auto& p : c)
      if (p.footprint_bytes == 16 * KiB || p.footprint_bytes == 4 * MiB ||
          p.footprint_bytes == 128 * MiB)
        p.latency *= 1.3;
    const auto lv = detect_levels(c);
    expect_gpu_levels(lv, 0.015);
  }
}

TEST(LevelsOutliers, OutlierNearPlateauEnd) {
  auto c = gpu_curve();
  // Second point from the end of L1, and the second point of L2.
  for (auto& p : c)
    if (p.footprint_bytes == 256 * KiB / kGridStep ||
        p.footprint_bytes == 256 * KiB * kGridStep * kGridStep)
      p.latency *= 1.3;
  const auto lv = detect_levels(c);
  ASSERT_EQ(lv.size(), 3u);
  expect_near_rel(lv[0].latency, 33, 0.01);
  expect_near_rel(lv[1].latency, 270, 0.01);
  expect_bracket(lv[0], 256 * KiB, kGridStep);
}

// The step from 270 to 650 spread log-linearly over 1.5 doublings after 4 MiB.
TEST(LevelsRamp, GradualTransition) {
  const double a = 4 * MiB, b = a * std::exp2(1.5);
  auto lat = [&](double f) {
    if (f <= a) return 270.0;
    if (f >= b) return 650.0;
    const double t = std::log2(f / a) / 1.5;
    return 270.0 * std::pow(650.0 / 270.0, t);
  };
  const auto fps = grid(64 * KiB, 256 * MiB);
  for (double noise : {0.0, 0.01}) {
    SCOPED_TRACE(noise);
    const auto c = make_curve(lat, fps, noise, 5);
    const auto lv = detect_levels(c);
    ASSERT_EQ(lv.size(), 2u);
    expect_near_rel(lv[0].latency, 270, 0.01);
    expect_near_rel(lv[1].latency, 650, 0.015);
    // The ramp points strictly between a and b belong to no level.
    for (const auto& l : lv)
      for (std::size_t i = l.first; i <= l.last; ++i)
        EXPECT_FALSE(c[i].footprint_bytes > a * 1.0001 && c[i].footprint_bytes < b / 1.0001)
            << "ramp point " << i << " on a level";
    ASSERT_TRUE(lv[0].capacity_lo && lv[0].capacity_hi);
    expect_near_rel(*lv[0].capacity_lo, a, 0.001);
    // A smeared edge is less certain than a sharp one.
    EXPECT_LT(lv[0].confidence, detect_levels(gpu_curve())[1].confidence);
  }
}

TEST(LevelsRamp, PureRampGivesNoLevels) {
  // 100 -> 1000 linearly in log-footprint over the whole curve.
  const auto fps = grid();
  const double span = std::log2(fps.back() / fps.front());
  auto lat = [&](double f) { return 100.0 * std::pow(10.0, std::log2(f / KiB) / span); };
  for (double noise : {0.0, 0.01}) {
    SCOPED_TRACE(noise);
    EXPECT_EQ(detect_levels(make_curve(lat, fps, noise, 7)).size(), 0u);
  }
}

TEST(LevelsRamp, RampBetweenPlateaus) {
  // 270 flat to 2 MiB, ramp over 3 doublings to 650 at 16 MiB, flat after.
  const double a = 2 * MiB, b = 16 * MiB;
  auto lat = [&](double f) {
    if (f <= a) return 270.0;
    if (f >= b) return 650.0;
    return 270.0 * std::pow(650.0 / 270.0, std::log2(f / a) / 3.0);
  };
  for (double noise : {0.0, 0.01, 0.02}) {
    for (unsigned seed = 1; seed <= 4; ++seed) {
      SCOPED_TRACE(noise);
      SCOPED_TRACE(seed);
      const auto c = make_curve(lat, grid(32 * KiB, 256 * MiB), noise, seed);
      const auto lv = detect_levels(c);
      ASSERT_EQ(lv.size(), 2u);
      expect_near_rel(lv[0].latency, 270, 0.02);
      expect_near_rel(lv[1].latency, 650, 0.02);
    }
  }
}

TEST(LevelsFlat, OneLevelNoCapacity) {
  for (double noise : {0.0, 0.01, 0.03}) {
    SCOPED_TRACE(noise);
    const auto c = make_curve([](double) { return 400.0; }, grid(), noise, 11);
    const auto lv = detect_levels(c);
    ASSERT_EQ(lv.size(), 1u);
    expect_near_rel(lv[0].latency, 400, 0.01);
    EXPECT_FALSE(lv[0].capacity_lo.has_value());
    EXPECT_FALSE(lv[0].capacity_hi.has_value());
    EXPECT_EQ(lv[0].first, 0u);
    EXPECT_EQ(lv[0].last, c.size() - 1);
  }
}

TEST(LevelsSmallStep, TenPercentIsALevel) {
  for (double noise : {0.0, 0.005}) {
    SCOPED_TRACE(noise);
    const auto c = make_curve(staircase({{1 * MiB, 100}}, 110), grid(), noise, 13);
    const auto lv = detect_levels(c);
    ASSERT_EQ(lv.size(), 2u);
    expect_near_rel(lv[0].latency, 100, 0.01);
    expect_near_rel(lv[1].latency, 110, 0.01);
    expect_bracket(lv[0], 1 * MiB, kGridStep);
  }
}

TEST(LevelsSmallStep, ThreePercentWiggleIsNot) {
  for (double noise : {0.0, 0.005}) {
    SCOPED_TRACE(noise);
    const auto c = make_curve(staircase({{1 * MiB, 100}}, 103), grid(), noise, 17);
    EXPECT_EQ(detect_levels(c).size(), 1u);
  }
}

TEST(LevelsCpu, FourLevelsThreePercentNoise) {
  const auto lat = staircase({{48 * KiB, 4}, {2 * MiB, 14}, {32 * MiB, 50}}, 300);
  for (unsigned seed = 1; seed <= 8; ++seed) {
    SCOPED_TRACE(seed);
    const auto lv = detect_levels(make_curve(lat, grid(), 0.03, seed));
    ASSERT_EQ(lv.size(), 4u);
    expect_near_rel(lv[0].latency, 4, 0.04);
    expect_near_rel(lv[1].latency, 14, 0.04);
    expect_near_rel(lv[2].latency, 50, 0.04);
    expect_near_rel(lv[3].latency, 300, 0.04);
    for (std::size_t i = 0; i < 3; ++i) {
      ASSERT_TRUE(lv[i].capacity_lo && lv[i].capacity_hi);
      const double cap = std::array<double, 3>{48 * KiB, 2 * MiB, 32 * MiB}[i];
      EXPECT_LE(*lv[i].capacity_lo, cap);
      EXPECT_GE(*lv[i].capacity_hi, cap);
    }
  }
}

TEST(LevelsHopper, FarL2PartitionIsASubLevel) {
  // L2 near partition 260 up to 24 MiB, far 300 up to 50 MiB, then DRAM with a TLB tail.
  auto lat = [](double f) {
    if (f <= 200 * KiB) return 33.0;
    if (f <= 24 * MiB) return 260.0;
    if (f <= 50 * MiB) return 300.0;
    return 650.0 * (1 + 0.1 * std::max(0.0, std::log2(f / (128 * MiB))));
  };
  const auto lv = detect_levels(make_curve(lat, grid(), 0.01, 21));
  ASSERT_EQ(lv.size(), 3u);
  expect_near_rel(lv[0].latency, 33, 0.01);
  EXPECT_GT(lv[1].latency, 255);
  EXPECT_LT(lv[1].latency, 305);
  ASSERT_TRUE(lv[1].capacity_lo && lv[1].capacity_hi);
  EXPECT_LE(*lv[1].capacity_lo, 50 * MiB);
  EXPECT_GE(*lv[1].capacity_hi, 50 * MiB);
  EXPECT_GT(lv[2].latency, 600);

  gd::LevelOptions keep;
  keep.sublevel_ratio = 0;
  EXPECT_EQ(detect_levels(make_curve(lat, grid(), 0.01, 21), keep).size(), 4u);
}

TEST(LevelsRamp, FlatStretchOnTheRampPastAHashedL2IsNoLevel) {
  // An H200's L2 through Vulkan: near 289 cycles to 27 MiB, far 531 to 54 MiB, then device
  // memory 675; the far edge sampled at 32 points a doubling shows the hit rate falling
  // over 55-64 MiB, with a flat stretch (580, 574, 598, 599) that is no cache.
  std::vector<CurvePoint> c;
  for (double f : grid(KiB, 32 * MiB)) {
    const double lat = f <= 200 * KiB  ? 32.0
                       : f <= 27 * MiB ? 289.0
                       : f <= 30 * MiB ? 333.0
                                       : 437.0;
    c.push_back({f, lat, 0.004});
  }
  const std::array<std::array<double, 2>, 12> edge = {{{38.05, 531.3},
                                                       {45.25, 531.5},
                                                       {53.82, 531.1},
                                                       {55.00, 544.9},
                                                       {56.20, 558.8},
                                                       {57.43, 580.2},
                                                       {58.69, 574.2},
                                                       {59.97, 598.1},
                                                       {61.29, 599.4},
                                                       {64.00, 642.8},
                                                       {76.11, 674.9},
                                                       {90.51, 675.2}}};
  for (const auto& e : edge) c.push_back({e[0] * MiB, e[1], 0.01});
  for (double f : {128.0, 181.0, 256.0}) c.push_back({f * MiB, 675.5, 0.003});

  const auto lv = detect_levels(c);
  ASSERT_EQ(lv.size(), 4u);
  expect_near_rel(lv[2].latency, 531, 0.02);
  ASSERT_TRUE(lv[2].capacity_lo.has_value());
  EXPECT_GE(*lv[2].capacity_lo, 53 * MiB);
  EXPECT_LE(*lv[2].capacity_lo, 58 * MiB);
  EXPECT_GT(lv[3].latency, 660);

  gd::LevelOptions keep;
  keep.min_capacity_ratio = 0;
  EXPECT_EQ(detect_levels(c, keep).size(), 5u);
}

TEST(LevelsRamp, PlateauWhoseHitRateStartsToFallInsideItsPieceIsKept) {
  // An H200's far L2 through Vulkan (the committed call's global path): 521-525 cycles over
  // 38-54 MiB, then 532, 543, 547 before the ramp's 575-596 and device memory's 667. The
  // segmentation made 38-57 MiB one piece, whose rise read as a ramp: the level found was
  // the flat stretch 58.7-61.3 MiB at 577 cycles (CUDA's far L2 on that GPU: 514).
  std::vector<CurvePoint> c;
  for (double f : grid(KiB, 32 * MiB)) {
    const double lat = f <= 180 * KiB  ? 32.0
                       : f <= 27 * MiB ? 287.0
                       : f <= 30 * MiB ? 374.0
                                       : 444.0;
    c.push_back({f, lat, 0.004});
  }
  const std::array<std::array<double, 3>, 11> edge = {{{38.05, 523.5, 0.007},
                                                       {45.25, 521.1, 0.001},
                                                       {53.82, 524.5, 0.007},
                                                       {55.00, 532.4, 0.003},
                                                       {56.20, 542.6, 0.006},
                                                       {57.43, 546.6, 0.008},
                                                       {58.69, 575.1, 0.019},
                                                       {59.97, 577.5, 0.031},
                                                       {61.29, 596.4, 0.011},
                                                       {64.00, 643.1, 0.023},
                                                       {76.11, 669.8, 0.006}}};
  for (const auto& e : edge) c.push_back({e[0] * MiB, e[1], e[2]});
  for (double f : {90.5, 128.0, 181.0, 256.0}) c.push_back({f * MiB, 667.0, 0.003});

  const auto lv = detect_levels(c);
  ASSERT_EQ(lv.size(), 4u);
  expect_near_rel(lv[2].latency, 525, 0.02);
  ASSERT_TRUE(lv[2].capacity_lo.has_value());
  EXPECT_GE(*lv[2].capacity_lo, 53 * MiB);
  EXPECT_LE(*lv[2].capacity_lo, 58 * MiB);
  EXPECT_GT(lv[3].latency, 660);
}

TEST(LevelsSpacing, ExtraPointsNearStepTightenBracket) {
  const auto lat = staircase({{300 * KiB, 33}}, 270);
  auto fps = grid(KiB, 16 * MiB);
  const auto coarse = detect_levels(make_curve(lat, fps));
  // Insert 3 extra points in the grid interval around 300 KiB (256 .. 304.4 KiB).
  for (double f : {270 * KiB, 290 * KiB, 302 * KiB}) fps.push_back(f);
  std::sort(fps.begin(), fps.end());
  const auto fine = detect_levels(make_curve(lat, fps));
  ASSERT_EQ(coarse.size(), 2u);
  ASSERT_EQ(fine.size(), 2u);
  expect_bracket(coarse[0], 300 * KiB, kGridStep);
  expect_bracket(fine[0], 300 * KiB, 302.0 / 290.0);
  EXPECT_LT(*fine[0].capacity_hi / *fine[0].capacity_lo,
            *coarse[0].capacity_hi / *coarse[0].capacity_lo);
}

TEST(LevelsDegenerate, EmptyOneTwo) {
  EXPECT_TRUE(detect_levels({}).empty());

  const auto one = detect_levels({{KiB, 42, 0}});
  ASSERT_EQ(one.size(), 1u);
  EXPECT_DOUBLE_EQ(one[0].latency, 42);
  EXPECT_FALSE(one[0].capacity_lo.has_value());
  EXPECT_GE(one[0].confidence, 0);
  EXPECT_LE(one[0].confidence, 1);

  const auto two_flat = detect_levels({{KiB, 42, 0}, {2 * KiB, 42.5, 0}});
  ASSERT_EQ(two_flat.size(), 1u);
  EXPECT_EQ(two_flat[0].first, 0u);
  EXPECT_EQ(two_flat[0].last, 1u);
  expect_near_rel(two_flat[0].latency, 42.25, 1e-9);

  // One point on each side of a step is not enough for a plateau (min_edge_points = 2).
  EXPECT_TRUE(detect_levels({{KiB, 42, 0}, {2 * KiB, 300, 0}}).empty());

  EXPECT_THROW(detect_levels({{KiB, 0, 0}}), std::invalid_argument);
  EXPECT_THROW(detect_levels({{2 * KiB, 1, 0}, {KiB, 1, 0}}), std::invalid_argument);
}

TEST(LevelsDegenerate, ShortCurveEdgeLevels) {
  // 2 + 3 points: both levels sit at an end of the curve.
  std::vector<CurvePoint> c = {
      {KiB, 30, 0}, {2 * KiB, 30, 0}, {4 * KiB, 200, 0}, {8 * KiB, 201, 0}, {16 * KiB, 199, 0}};
  const auto lv = detect_levels(c);
  ASSERT_EQ(lv.size(), 2u);
  EXPECT_EQ(lv[0].last, 1u);
  EXPECT_EQ(lv[1].first, 2u);
  EXPECT_DOUBLE_EQ(*lv[0].capacity_lo, 2 * KiB);
  EXPECT_DOUBLE_EQ(*lv[0].capacity_hi, 4 * KiB);
}

TEST(LevelsConfidence, CleanBigStepBeatsNoisySmallStep) {
  const auto clean = detect_levels(gpu_curve());
  ASSERT_EQ(clean.size(), 3u);
  // 12% step at 3% noise.
  const auto noisy = detect_levels(make_curve(staircase({{1 * MiB, 100}}, 112), grid(), 0.03, 23));
  for (const auto* lv : {&clean, &noisy})
    for (const auto& l : *lv) {
      EXPECT_GE(l.confidence, 0.0);
      EXPECT_LE(l.confidence, 1.0);
    }
  if (!noisy.empty())
    for (const auto& l : noisy) EXPECT_LT(l.confidence, clean[0].confidence - 0.2);
  // The spread field raises the noise estimate and lowers confidence.
  auto spread = make_curve(staircase({{1 * MiB, 100}}, 112), grid());
  for (auto& p : spread) p.spread = 0.08;
  const auto sp = detect_levels(spread);
  const auto nsp = detect_levels(make_curve(staircase({{1 * MiB, 100}}, 112), grid()));
  ASSERT_EQ(nsp.size(), 2u);
  for (const auto& l : sp) EXPECT_LT(l.confidence, nsp[0].confidence);
}

TEST(LevelsConfidence, FewPointsLowerConfidence) {
  // Same step, last level with only 2 points vs many.
  const auto lat = staircase({{64 * MiB, 270}}, 650);
  const auto many = detect_levels(make_curve(lat, grid(16 * MiB, 1024 * MiB)));
  const auto few =
      detect_levels(make_curve(lat, grid(16 * MiB, 64 * MiB * kGridStep * kGridStep * 1.001)));
  ASSERT_EQ(many.size(), 2u);
  ASSERT_EQ(few.size(), 2u);
  EXPECT_EQ(few[1].last - few[1].first + 1, 2u);
  EXPECT_LT(few[1].confidence, many[1].confidence);
}

TEST(LevelsRefine, FindsStepsOfCleanCurve) {
  const auto c = gpu_curve();
  const auto s = steps_to_refine(c);
  std::vector<std::size_t> want;
  for (std::size_t i = 0; i + 1 < c.size(); ++i)
    if (c[i + 1].latency > c[i].latency * 1.04) want.push_back(i);
  ASSERT_EQ(want.size(), 2u);
  EXPECT_EQ(s, want);
  EXPECT_DOUBLE_EQ(c[s[0]].footprint_bytes, 256 * KiB);
}

TEST(LevelsRefine, NothingOnFlatNoisyCurve) {
  for (unsigned seed = 1; seed <= 8; ++seed) {
    SCOPED_TRACE(seed);
    const auto c = make_curve([](double) { return 300.0; }, grid(), 0.03, seed);
    EXPECT_TRUE(steps_to_refine(c).empty());
  }
  EXPECT_TRUE(steps_to_refine({}).empty());
  EXPECT_TRUE(steps_to_refine({{KiB, 1, 0}}).empty());
}

TEST(LevelsRefine, SmallCleanStepAndNoisyBigStep) {
  // A 6% step on a clean curve is worth refining; a 3.5x step through 3% noise too.
  const auto small = make_curve(staircase({{1 * MiB, 100}}, 106), grid());
  EXPECT_EQ(steps_to_refine(small).size(), 1u);
  const auto big = make_curve(staircase({{2 * MiB, 14}}, 50), grid(), 0.03, 3);
  const auto s = steps_to_refine(big);
  ASSERT_EQ(s.size(), 1u);
  EXPECT_DOUBLE_EQ(big[s[0]].footprint_bytes, 2 * MiB);
}
