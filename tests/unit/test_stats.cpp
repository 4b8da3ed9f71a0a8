// Robust statistics and the stopping rule, on known vectors and seeded synthetic samples.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <stdexcept>
#include <vector>

#include "gpudissect/stats.hpp"

using gd::median;
using gd::quantile;
using gd::robust_sigma;
using gd::StoppingRule;
using gd::summarize;
using gd::Summary;

namespace {

std::vector<double> normal_sample(std::size_t n, double mean, double sigma, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> dist(mean, sigma);
  std::vector<double> v(n);
  for (auto& x : v) x = dist(rng);
  return v;
}

double plain_stddev(const std::vector<double>& v) {
  double mean = 0;
  for (double x : v) mean += x;
  mean /= static_cast<double>(v.size());
  double ss = 0;
  for (double x : v) ss += (x - mean) * (x - mean);
  return std::sqrt(ss / static_cast<double>(v.size() - 1));
}

}  // namespace

TEST(StatsQuantile, OddSizeUnsorted) {
  const std::vector<double> v{5, 1, 4, 2, 3};
  EXPECT_DOUBLE_EQ(median(v), 3.0);
  EXPECT_DOUBLE_EQ(quantile(v, 0.0), 1.0);
  EXPECT_DOUBLE_EQ(quantile(v, 1.0), 5.0);
  EXPECT_DOUBLE_EQ(quantile(v, 0.25), 2.0);
  EXPECT_DOUBLE_EQ(quantile(v, 0.75), 4.0);
  // Linear interpolation between order statistics: pos = 0.1 * 4 = 0.4.
  EXPECT_DOUBLE_EQ(quantile(v, 0.1), 1.4);
}

TEST(StatsQuantile, EvenSizeInterpolates) {
  const std::vector<double> v{4, 1, 3, 2};
  EXPECT_DOUBLE_EQ(median(v), 2.5);
  EXPECT_DOUBLE_EQ(quantile(v, 0.25), 1.75);
  EXPECT_DOUBLE_EQ(quantile(v, 0.75), 3.25);
  EXPECT_DOUBLE_EQ(quantile(v, 0.0), 1.0);
  EXPECT_DOUBLE_EQ(quantile(v, 1.0), 4.0);
}

TEST(StatsQuantile, SingleElementAndTies) {
  EXPECT_DOUBLE_EQ(median({7.5}), 7.5);
  EXPECT_DOUBLE_EQ(quantile({7.5}, 0.0), 7.5);
  EXPECT_DOUBLE_EQ(quantile({7.5}, 1.0), 7.5);
  EXPECT_DOUBLE_EQ(median({2, 2, 9, 2}), 2.0);
  EXPECT_DOUBLE_EQ(median({-3, -1}), -2.0);
}

TEST(StatsQuantile, DoesNotDependOnInputOrder) {
  const std::vector<double> a{10, 20, 30, 40, 50, 60};
  const std::vector<double> b{60, 10, 50, 20, 40, 30};
  for (double q : {0.0, 0.1, 0.25, 0.5, 0.75, 0.9, 1.0})
    EXPECT_DOUBLE_EQ(quantile(a, q), quantile(b, q)) << "q=" << q;
  EXPECT_DOUBLE_EQ(median(b), 35.0);
}

TEST(StatsQuantile, EmptyThrows) {
  EXPECT_THROW(quantile({}, 0.5), std::invalid_argument);
  EXPECT_THROW(median({}), std::invalid_argument);
  EXPECT_THROW(summarize({}), std::invalid_argument);
}

TEST(StatsSummary, FieldsOfKnownVector) {
  // Sorted: 2 4 6 8 10 12 14.
  const Summary s = summarize({10, 2, 8, 4, 6, 12, 14});
  EXPECT_DOUBLE_EQ(s.median, 8.0);
  EXPECT_DOUBLE_EQ(s.q1, 5.0);   // pos 1.5
  EXPECT_DOUBLE_EQ(s.q3, 11.0);  // pos 4.5
  EXPECT_DOUBLE_EQ(s.min, 2.0);
  EXPECT_DOUBLE_EQ(s.max, 14.0);
  EXPECT_EQ(s.n, 7u);
  EXPECT_DOUBLE_EQ(s.iqr(), 6.0);
  EXPECT_DOUBLE_EQ(s.relative_spread(), 0.75);
}

TEST(StatsSummary, EvenVector) {
  const Summary s = summarize({3, 1, 2, 4});
  EXPECT_DOUBLE_EQ(s.median, 2.5);
  EXPECT_DOUBLE_EQ(s.q1, 1.75);
  EXPECT_DOUBLE_EQ(s.q3, 3.25);
  EXPECT_DOUBLE_EQ(s.min, 1.0);
  EXPECT_DOUBLE_EQ(s.max, 4.0);
  EXPECT_EQ(s.n, 4u);
}

TEST(StatsSummary, RelativeSpread) {
  Summary s;
  s.median = 200;
  s.q1 = 190;
  s.q3 = 230;
  EXPECT_DOUBLE_EQ(s.relative_spread(), 0.2);
  s.median = -200;  // spread is relative to the magnitude
  EXPECT_DOUBLE_EQ(s.relative_spread(), 0.2);
  s.median = 0;  // no division by zero
  EXPECT_DOUBLE_EQ(s.relative_spread(), 0.0);
  EXPECT_DOUBLE_EQ(summarize({5, 5, 5}).relative_spread(), 0.0);
}

TEST(StatsRobustSigma, KnownVector) {
  // median 3, |deviations| = 2 1 0 1 2 -> MAD 1.
  EXPECT_DOUBLE_EQ(robust_sigma({1, 2, 3, 4, 5}), 1.4826);
  EXPECT_DOUBLE_EQ(robust_sigma({4, 4, 4}), 0.0);
}

TEST(StatsRobustSigma, NormalSampleIsAboutOne) {
  const auto v = normal_sample(10000, 100.0, 1.0, 12345);
  EXPECT_NEAR(robust_sigma(v), 1.0, 0.05);
  // Scales with the sample.
  const auto w = normal_sample(10000, 0.0, 7.0, 999);
  EXPECT_NEAR(robust_sigma(w), 7.0, 0.35);
}

TEST(StatsRobustSigma, RobustToTenPercentGrossOutliers) {
  auto v = normal_sample(10000, 100.0, 1.0, 777);
  for (std::size_t i = 0; i < v.size(); i += 10) v[i] = (i % 20 == 0) ? 1e6 : -1e6;
  // The plain standard deviation explodes; the robust one barely moves (~1.13 in theory
  // for 10% symmetric contamination).
  EXPECT_GT(plain_stddev(v), 1e5);
  const double s = robust_sigma(v);
  EXPECT_GT(s, 0.95);
  EXPECT_LT(s, 1.25);
  // One-sided outliers move the median a little, sigma stays close to 1 too.
  auto w = normal_sample(10000, 100.0, 1.0, 778);
  for (std::size_t i = 0; i < w.size(); i += 10) w[i] = 1e9;
  EXPECT_GT(robust_sigma(w), 0.95);
  EXPECT_LT(robust_sigma(w), 1.25);
}

TEST(StatsStoppingRule, NotDoneBelowMinSamples) {
  const StoppingRule rule;  // min 3, max 15, target 0.01
  EXPECT_FALSE(rule.done({}));
  EXPECT_FALSE(rule.done({100.0}));
  EXPECT_FALSE(rule.done({100.0, 100.0}));  // zero spread, but too few samples
  EXPECT_TRUE(rule.done({100.0, 100.0, 100.0}));
}

TEST(StatsStoppingRule, DoneAtMaxSamplesEvenIfWide) {
  const StoppingRule rule;
  std::vector<double> wide;
  for (int i = 0; i < 14; ++i) wide.push_back(i % 2 ? 50.0 : 150.0);
  EXPECT_FALSE(rule.done(wide));
  wide.push_back(100.0);
  ASSERT_EQ(wide.size(), 15u);
  EXPECT_TRUE(rule.done(wide));
  wide.push_back(10.0);
  EXPECT_TRUE(rule.done(wide));
}

TEST(StatsStoppingRule, TightSampleStopsWideDoesNot) {
  const StoppingRule rule;
  // Sorted 99.9 99.95 100 100.05 100.1: IQR 0.1 over 100 = 0.001 < 0.01.
  EXPECT_TRUE(rule.done({100.0, 100.1, 99.9, 100.05, 99.95}));
  // Sorted 80 90 100 110 120: IQR 20 over 100 = 0.2.
  EXPECT_FALSE(rule.done({100.0, 120.0, 80.0, 110.0, 90.0}));
}

TEST(StatsStoppingRule, SeededSyntheticSamples) {
  StoppingRule rule;
  rule.min_samples = 5;
  rule.max_samples = 50;
  rule.target_relative_spread = 0.02;
  // 0.1% noise: relative IQR ~ 0.00135, well below 2%.
  const auto tight = normal_sample(5, 500.0, 0.5, 1);
  EXPECT_TRUE(rule.done(tight));
  EXPECT_FALSE(rule.done({tight.begin(), tight.begin() + 4}));  // below min_samples
  // 10% noise: relative IQR ~ 0.135.
  const auto wide = normal_sample(20, 500.0, 50.0, 2);
  EXPECT_FALSE(rule.done(wide));
  EXPECT_TRUE(rule.done(normal_sample(50, 500.0, 50.0, 3)));  // max_samples reached
}

TEST(StatsStoppingRule, TargetIsInclusiveBoundary) {
  StoppingRule rule;
  rule.target_relative_spread = 0.2;
  EXPECT_TRUE(rule.done({80, 90, 100, 110, 120}));  // exactly 0.2
  rule.target_relative_spread = 0.19;
  EXPECT_FALSE(rule.done({80, 90, 100, 110, 120}));
}

namespace gd {
namespace {
// Student's t at 0.975: the table's ends and the formula past it, against published values
// (NIST/SEMATECH e-Handbook, table 1.3.6.7.2).
TEST(StatsStudentT, KnownQuantiles) {
  EXPECT_DOUBLE_EQ(student_t95(1), 12.706);
  EXPECT_DOUBLE_EQ(student_t95(3), 3.182);
  EXPECT_DOUBLE_EQ(student_t95(15), 2.131);
  EXPECT_DOUBLE_EQ(student_t95(30), 2.042);
  EXPECT_NEAR(student_t95(40), 2.021, 0.002);
  EXPECT_NEAR(student_t95(60), 2.000, 0.002);
  EXPECT_NEAR(student_t95(100), 1.984, 0.002);
  EXPECT_DOUBLE_EQ(student_t95(0), student_t95(1));
  for (int d = 1; d < 200; ++d) EXPECT_GT(student_t95(d), student_t95(d + 1)) << d;
}
}  // namespace
}  // namespace gd
