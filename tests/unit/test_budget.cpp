// The sweep planner against fake devices of very different speeds: both must hold the
// budget, and the fast one must lose no point of its normal plan.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <vector>

#include "gpudissect/budget.hpp"
#include "gpudissect/sweep.hpp"

namespace gd {
namespace {

// A device that moves `rate` bytes per second with a fixed cost per launch.
struct FakeDevice {
  double rate;
  double launch_overhead;
  double seconds(double bytes) const { return launch_overhead + bytes / rate; }
};

struct SweepRun {
  double wall = 0;
  int measured = 0, skipped = 0;
  std::vector<std::string> reasons;
};

// The bandwidth probe's footprint sweep as it plans it: 4 KiB to 4 GiB, 2 points per
// doubling, 8 GB per launch as target, 5 repeats plus a warm-up.
SweepRun sweep(const FakeDevice& d, double budget) {
  SweepPlanner plan(budget);
  SweepRun r;
  const int launches = 6;
  // One calibration launch of 64 MiB (what the probe does before its first sweep).
  const double cal = 64.0 * (1 << 20);
  plan.record(cal, 1, d.seconds(cal));
  r.wall += d.seconds(cal);
  for (uint64_t fp : log_spaced_footprints(4096, 4ull << 30, 2, 4096)) {
    const uint64_t passes = plan.passes(8ull << 30, fp);
    const double bytes = double(passes) * double(fp);
    const BudgetVerdict v = plan.admit(bytes, launches);
    if (!v.run) {
      ++r.skipped;
      r.reasons.push_back(v.reason);
      continue;
    }
    const double t = launches * d.seconds(bytes);
    plan.record(bytes, launches, t);
    r.wall += t;
    ++r.measured;
  }
  return r;
}

TEST(SweepPlanner, SlowCpuLikeDeviceHoldsTheBudget) {
  const FakeDevice cpu{2e9, 20e-6};  // 2 GB/s
  const double budget = 10;
  const SweepRun r = sweep(cpu, budget);
  EXPECT_LE(r.wall, budget);
  EXPECT_GT(r.measured, 3);
  EXPECT_GT(r.skipped, 0);
  ASSERT_FALSE(r.reasons.empty());
  EXPECT_NE(r.reasons.front().find("skipped: would take ~"), std::string::npos);
  EXPECT_NE(r.reasons.front().find("over the sweep's budget"), std::string::npos);
}

TEST(SweepPlanner, FastGpuLikeDeviceKeepsItsWholePlan) {
  const FakeDevice gpu{4e12, 5e-6};  // 4 TB/s
  const SweepRun r = sweep(gpu, 30);
  EXPECT_EQ(r.skipped, 0);
  EXPECT_LT(r.wall, 30);
  EXPECT_GE(r.measured, 40);  // the whole grid
  // Every launch still moves the full 8 GB target: the cap (4 TB/s x 50 ms) is far above.
  SweepPlanner plan(30);
  plan.record(8e9, 6, 6 * gpu.seconds(8e9));
  EXPECT_EQ(plan.passes(8ull << 30, 1ull << 20), 8192u);
}

TEST(SweepPlanner, PassesCappedByLaunchTimeAtTheRateSeen) {
  SweepPlanner plan(60, 0.05);
  EXPECT_EQ(plan.passes(1000, 100), 10u);  // nothing seen: the target
  plan.record(1e9, 1, 0.5);                // 2 GB/s
  EXPECT_EQ(plan.passes(8ull << 30, 1ull << 20), uint64_t(std::ceil(1e8 / (1 << 20))));
  EXPECT_EQ(plan.passes(8ull << 30, 1ull << 30), 1u);  // at least one pass
}

TEST(SweepPlanner, OnceSkippedLaterPointsAreSkippedWithTheSameReason) {
  SweepPlanner plan(1.0);
  plan.record(1e9, 1, 0.5);
  EXPECT_TRUE(plan.admit(1e8, 1).run);
  const BudgetVerdict big = plan.admit(1e10, 1);
  EXPECT_FALSE(big.run);
  EXPECT_NEAR(big.estimate_seconds, 5.0, 1e-9);
  const BudgetVerdict small = plan.admit(1e3, 1);
  EXPECT_FALSE(small.run);
  EXPECT_EQ(small.reason, big.reason);
}

TEST(SweepPlanner, TimeLeftCountsOnlyWhatFits) {
  SweepPlanner plan(10);
  plan.record(1e9, 1, 1.0);  // 1 GB/s, 1 s spent
  EXPECT_NEAR(plan.time_left({{1e9, 2}, {2e9, 3}, {1e9, 1}}), 9.0, 1e-9);
  EXPECT_NEAR(plan.time_left({{1e9, 2}, {1e10, 1}}), 2.0, 1e-9);
}

TEST(SweepPlanner, BudgetShare) {
  EXPECT_DOUBLE_EQ(budget_share(60, 0, 4), 15);
  EXPECT_DOUBLE_EQ(budget_share(60, 30, 3), 10);
  EXPECT_DOUBLE_EQ(budget_share(60, 90, 3), 0);
}

TEST(Unstable, SpreadOverTenPercentIsUnstable) {
  Summary s;
  s.median = 41.3;
  s.q1 = 33;
  s.q3 = 49.5;
  s.n = 5;
  EXPECT_TRUE(is_unstable(s));
  EXPECT_EQ(unstable_note(s),
            " (unstable: \xC2\xB1"
            "40 %)");
  s.q1 = 41;
  s.q3 = 42;
  EXPECT_FALSE(is_unstable(s));
  EXPECT_EQ(unstable_note(s), "");
  Summary one = s;
  one.n = 1;
  one.q1 = 0;
  EXPECT_FALSE(is_unstable(one));  // a single value has no spread to judge
}

}  // namespace
}  // namespace gd

namespace gd {
namespace {

TEST(SweepPlanner, SmallerPointsGiveWayToTheLargest) {
  SweepPlanner plan(1.0);
  plan.record(1e9, 1, 0.5);  // 2 GB/s, 0.5 s left
  // 0.3 s now would leave 0.2 s for a 0.4 s largest point: skipped, sweep not closed.
  const BudgetVerdict small = plan.admit_keeping(6e8, 1, 8e8, 1);
  EXPECT_FALSE(small.run);
  EXPECT_NE(small.reason.find("largest footprint"), std::string::npos);
  EXPECT_TRUE(plan.admit(8e8, 1).run);  // the largest still runs
  // When even the largest cannot fit, the smaller points run as admit says.
  SweepPlanner p2(1.0);
  p2.record(1e9, 1, 0.5);
  EXPECT_TRUE(p2.admit_keeping(2e8, 1, 1e10, 1).run);
}

}  // namespace
}  // namespace gd

namespace gd {
namespace {

// The next curve's first point is planned from launches timed within a launch, not from the
// previous curve's wall-clock rate with its setup folded in: on PoCL a 512 MiB read (6
// launches of 0.025 s, ~0.3 s filling and checking its buffer) reads as 2.34 GB/s that way,
// and the write curve's first 16 KiB point, planned at 3.6 GB a launch, would be refused as
// a 9 s point and close the curve: every write and copy point skipped.
TEST(SweepPlanner, EstimatesAreLaunchesAtTheirOwnRatePlusScaledSetup) {
  SweepPlanner read(10);
  const double fp = 512.0 * (1 << 20);
  read.record(fp, 6, 6 * 0.025 + 0.3, 0.025, fp);  // 21.5 GB/s within a launch
  // A point of twice the footprint: its launches plus twice the setup.
  EXPECT_NEAR(*read.estimate(2 * fp, 6, 2 * fp), 6 * 0.05 + 0.6, 1e-9);
  // A small point's setup shrinks with its footprint.
  EXPECT_NEAR(*read.estimate(1e9, 6, 16384), 6e9 / (fp / 0.025) + 0.3 * 16384 / fp, 1e-9);
  // The next curve starts from that in-launch rate: its first point fits.
  SweepPlanner write(7.4);
  write.assume_rate(2.34e9, fp / 0.025);
  const BudgetVerdict v = write.admit(3.6e9, 6, 16384);
  EXPECT_TRUE(v.run) << v.reason;
  EXPECT_LT(v.estimate_seconds, 2.0);
  // Far past the point it was seen at (over 16x), a setup is not scaled: a small point's
  // setup is mostly allocations (an H100's 32 KiB copy point, scaled to 207 MiB, reserved a
  // whole --quick curve's share for its largest point).
  SweepPlanner copy(0.6);
  copy.record(2.4e12 * 1e-5, 4, 4e-5 + 80e-6, 1e-5, 32768);
  EXPECT_LT(*copy.estimate(2.4e12 * 1e-5, 4, 207.0 * (1 << 20)), 1e-3);
  EXPECT_NEAR(*copy.estimate(0, 4, 8 * 32768.0), 8 * 80e-6, 1e-9);
  // Without timed launches the wall-clock rate still rules (setup folded in).
  SweepPlanner wall(10);
  wall.record(1e9, 2, 1.0);
  EXPECT_NEAR(*wall.estimate(1e9, 2, 123), 1.0, 1e-9);
}

}  // namespace
}  // namespace gd
