// Bringing the GPU's clock up (the Vulkan backend's ramp) and the note on a figure measured
// far below the clock the GPU reached: the GPU-free rules.
#include <gtest/gtest.h>

#include <vector>

#include "gpudissect/clock_ramp.hpp"

namespace {

using gd::clock_ramp_state;
using gd::ClockRampRule;
using gd::RampState;

// The H200 through NVIDIA's Vulkan driver: idle at 345 MHz, 1980 MHz under load. Readings
// climb and the ramp stops at the first pair that agrees, not before.
TEST(ClockRamp, StopsOnceTwoReadingsAgree) {
  const std::vector<double> seen = {345, 1200, 1975, 1980};
  const std::vector<double> at = {0.10, 0.16, 0.21, 0.24};  // seconds of busy work so far
  std::vector<double> mhz;
  for (std::size_t i = 0; i < seen.size(); ++i) {
    mhz.push_back(seen[i]);
    const RampState s = clock_ramp_state(mhz, at[i], true);
    if (i + 1 < seen.size())
      EXPECT_EQ(s, RampState::go_on) << "after " << seen[i];
    else
      EXPECT_EQ(s, RampState::stable) << "after " << seen[i];  // 1975 -> 1980: 0.25 %
  }
}

// An idle clock is stable too: two agreeing readings before min_seconds do not stop it (a
// driver that takes a while to react would be caught at idle), the same readings after do.
TEST(ClockRamp, AgreeingIdleReadingsTooEarlyGoOn) {
  const ClockRampRule rule;
  EXPECT_EQ(clock_ramp_state({345, 346}, rule.min_seconds / 2, true), RampState::go_on);
  EXPECT_EQ(clock_ramp_state({345, 346}, rule.min_seconds, true), RampState::stable);
  // One reading is never stable.
  EXPECT_EQ(clock_ramp_state({1980}, 0.5, true), RampState::go_on);
}

// With the device's highest clock known (the latency probe's 1980 MHz), a stable plateau
// below 95 % of it is a step of the driver's ramp: go on, up to the cap. Without this an
// H200's ramps settle at 556-1576 MHz.
TEST(ClockRamp, APlateauBelowTheKnownPeakGoesOn) {
  ClockRampRule rule;
  rule.target_mhz = 1980;
  EXPECT_EQ(clock_ramp_state({1576, 1580}, 0.3, true, rule), RampState::go_on);
  EXPECT_EQ(clock_ramp_state({1576, 1580}, rule.cap_seconds, true, rule), RampState::capped);
  EXPECT_EQ(clock_ramp_state({1965, 1975}, 0.3, true, rule), RampState::stable);
  rule.target_mhz = 0;  // unknown: any stable pair
  EXPECT_EQ(clock_ramp_state({1576, 1580}, 0.3, true, rule), RampState::stable);
}

// Tolerance: 2.5 % of the larger reading by default.
TEST(ClockRamp, ToleranceIsRelative) {
  EXPECT_EQ(clock_ramp_state({1000, 1024}, 0.3, true), RampState::stable);
  EXPECT_EQ(clock_ramp_state({1000, 1030}, 0.3, true), RampState::go_on);
  EXPECT_EQ(clock_ramp_state({1030, 1000}, 0.3, true), RampState::go_on);
  ClockRampRule wide;
  wide.tolerance = 0.05;
  EXPECT_EQ(clock_ramp_state({1000, 1030}, 0.3, true, wide), RampState::stable);
}

// A clock that never settles stops at the cap, and only there.
TEST(ClockRamp, CapIsHonoured) {
  const ClockRampRule rule;
  std::vector<double> mhz;
  double t = 0;
  RampState s = RampState::go_on;
  for (int i = 0; i < 1000 && s == RampState::go_on; ++i) {
    mhz.push_back(i % 2 ? 1000 : 1500);  // never two alike
    t += 0.03;
    s = clock_ramp_state(mhz, t, true);
  }
  EXPECT_EQ(s, RampState::capped);
  EXPECT_GE(t, rule.cap_seconds);
  EXPECT_LT(t, rule.cap_seconds + 0.03 + 1e-9);
  // A stable pair at the cap is still stable (the better reason).
  EXPECT_EQ(clock_ramp_state({1980, 1980}, 5.0, true), RampState::stable);
  EXPECT_EQ(clock_ramp_state({}, 5.0, true), RampState::capped);
}

// No shader clock: a fixed busy period, whatever the (absent) readings.
TEST(ClockRamp, NoClockIsAFixedBusyPeriod) {
  const ClockRampRule rule;
  EXPECT_EQ(clock_ramp_state({}, 0.0, false), RampState::go_on);
  EXPECT_EQ(clock_ramp_state({}, rule.no_clock_seconds * 0.99, false), RampState::go_on);
  EXPECT_EQ(clock_ramp_state({}, rule.no_clock_seconds, false), RampState::timed);
  EXPECT_EQ(clock_ramp_state({1980, 1980}, 0.05, false), RampState::go_on);  // readings ignored
}

// Below 80 % of the highest clock seen a figure says so, with both clocks; otherwise nothing.
TEST(ClockRamp, LowClockNote) {
  EXPECT_EQ(gd::low_clock_note(1980, 1980), "");
  EXPECT_EQ(gd::low_clock_note(1600, 1980), "");  // 81 %: throttling, not idle
  const std::string n = gd::low_clock_note(345, 1980);
  EXPECT_NE(n.find("GPU clock low"), std::string::npos) << n;
  EXPECT_NE(n.find("345 MHz"), std::string::npos) << n;
  EXPECT_NE(n.find("1980 MHz"), std::string::npos) << n;
  EXPECT_NE(n.find("17 %"), std::string::npos) << n;
  EXPECT_EQ(gd::low_clock_note(345, 0), "");  // no peak known
  EXPECT_EQ(gd::low_clock_note(0, 1980), "");
}

}  // namespace
