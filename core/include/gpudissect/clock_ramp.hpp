// Bringing a GPU's clock up before timed work, and saying when a figure was measured far
// below the clock the GPU reached: the GPU-free rules, which the Vulkan backend applies.
//
// Why: NVIDIA's Vulkan driver leaves the GPU at (near) its idle clock (345 MHz on an H200)
// through the compute and atomics probes' short dispatches (~2 ms) with host work between
// them, so every figure comes out ~5.7x slow (FP32 fma 12.6 TFLOP/s against CUDA's 66.3,
// global atomicAdd 119 GOP/s against 438), while the latency probe's long dispatches on the
// same GPU see 1980 MHz, and nothing says the clock was low.
#pragma once

#include <string>
#include <vector>

namespace gd {

struct ClockRampRule {
  double tolerance = 0.025;  // two successive readings this close (relative): stable
  // Busy work before a stable pair counts: an idle clock is stable too, and a driver that
  // takes a while to react would otherwise be caught at it.
  double min_seconds = 0.2;
  double cap_seconds = 1.2;       // stop here, stable or not
  double no_clock_seconds = 0.3;  // the fixed busy period where no clock can be read
  // The highest clock the device was seen at (0: unknown): a stable pair below
  // target_fraction of it is a plateau of the driver's ramp, not the end. On an H200 a
  // ramp without it settles at 556-1576 MHz where the latency probe's chases run at 1980.
  double target_mhz = 0;
  double target_fraction = 0.95;
};

enum class RampState {
  go_on,   // keep the GPU busy and read again
  stable,  // the last two readings agree (after min_seconds)
  capped,  // cap_seconds passed without two agreeing readings
  timed,   // no clock: the fixed busy period is over
};

// After `elapsed_s` seconds of busy work that read the clock `mhz` (in order; ignored where
// `has_clock` is false): go on or stop, and why.
RampState clock_ramp_state(const std::vector<double>& mhz, double elapsed_s, bool has_clock,
                           const ClockRampRule& rule = {});

// Below this fraction of the highest clock seen on the device, a figure ran at a low clock.
constexpr double kLowClockFraction = 0.8;
// Empty where `mhz` is at least kLowClockFraction x `peak_mhz` (or either is not positive);
// else a note for the figure: the clock it ran at against the highest seen.
std::string low_clock_note(double mhz, double peak_mhz);

}  // namespace gd
