#include "gpudissect/clock_ramp.hpp"

#include <algorithm>
#include <cmath>

#include "gpudissect/units.hpp"

namespace gd {

RampState clock_ramp_state(const std::vector<double>& mhz, double elapsed_s, bool has_clock,
                           const ClockRampRule& rule) {
  if (!has_clock) return elapsed_s >= rule.no_clock_seconds ? RampState::timed : RampState::go_on;
  if (mhz.size() >= 2 && elapsed_s >= rule.min_seconds) {
    const double a = mhz[mhz.size() - 2], b = mhz.back();
    if (a > 0 && b > 0 && std::abs(b - a) <= rule.tolerance * std::max(a, b) &&
        b >= rule.target_fraction * rule.target_mhz)
      return RampState::stable;
  }
  return elapsed_s >= rule.cap_seconds ? RampState::capped : RampState::go_on;
}

std::string low_clock_note(double mhz, double peak_mhz) {
  if (!(mhz > 0) || !(peak_mhz > 0) || mhz >= kLowClockFraction * peak_mhz) return {};
  return "GPU clock low: " + format_fixed(mhz, 0) + " MHz after the timed work, " +
         format_fixed(100 * mhz / peak_mhz, 0) + " % of the " + format_fixed(peak_mhz, 0) +
         " MHz seen on this device: figures per second or in ns are off by as much (per-clock "
         "figures use the clock seen)";
}

}  // namespace gd
