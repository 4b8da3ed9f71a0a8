#include "gpudissect/level_check.hpp"

#include <algorithm>

#include "gpudissect/stats.hpp"
#include "gpudissect/units.hpp"

namespace gd {

namespace {

std::string pct(double v) { return format_fixed(100 * v, 0) + " %"; }

double median_spread(const std::vector<CurvePoint>& c, std::size_t a, std::size_t b) {
  std::vector<double> s;
  for (std::size_t i = a; i <= b && i < c.size(); ++i) s.push_back(std::max(0.0, c[i].spread));
  return s.empty() ? 0.0 : median(s);
}

}  // namespace

HierarchyCheck check_hierarchy(const std::vector<CurvePoint>& curve,
                               const std::vector<DetectedLevel>& levels,
                               const HierarchyCheckOptions& opt) {
  HierarchyCheck out;
  auto fail = [&](std::string why) {
    out.ok = false;
    out.reason = "the levels are not a consistent hierarchy: " + std::move(why) +
                 "; no level is published for this curve (was the GPU shared?)";
    return out;
  };
  if (curve.empty() || levels.empty()) return out;

  // 1. Repeats disagree at most points: the plateaus are the noise's, not the caches'.
  std::size_t noisy = 0;
  for (const CurvePoint& p : curve) noisy += p.spread > opt.point_spread;
  if (noisy > opt.max_noisy_fraction * double(curve.size()))
    return fail("the repeats disagree by over " + pct(opt.point_spread) + " at " +
                std::to_string(noisy) + " of " + std::to_string(curve.size()) + " points");

  // 2. Latencies of successive levels must rise (detect_levels orders them so; a level that
  //    does not is a contradiction however it came about).
  for (std::size_t k = 1; k < levels.size(); ++k)
    if (!(levels[k].latency > levels[k - 1].latency))
      return fail("level " + std::to_string(k + 1) + " (" +
                  format_fixed(levels[k].latency, 1) + ") is not above level " +
                  std::to_string(k) + " (" + format_fixed(levels[k - 1].latency, 1) + ")");

  // 3. The curve falls back below a plateau it has left: a larger footprint cannot be
  //    served faster than a smaller one that had already spilled out of that level.
  std::size_t falls = 0;
  std::size_t first_fall = 0;
  for (std::size_t k = 0; k + 1 < levels.size(); ++k)
    for (std::size_t i = levels[k].last + 1; i < curve.size(); ++i)
      if (curve[i].latency < opt.fall_back * levels[k].latency) {
        if (falls++ == 0) first_fall = i;
      }
  if (falls > opt.max_fall_back_points)
    return fail("latency falls back below a plateau it had left, at " + std::to_string(falls) +
                " points (first at " + format_bytes(curve[first_fall].footprint_bytes) + ")");

  // 4. A level many times the one below with nothing between, where the repeats disagree:
  //    what a time-sliced chase looks like (every point past the first level inflated).
  const double curve_spread = median_spread(curve, 0, curve.size() - 1);
  for (std::size_t k = 1; k < levels.size(); ++k) {
    const double jump = levels[k].latency / levels[k - 1].latency;
    const bool adjacent = levels[k].first <= levels[k - 1].last + 2;
    const double level_spread = median_spread(curve, levels[k].first, levels[k].last);
    if (jump > opt.max_jump && adjacent &&
        std::max(curve_spread, level_spread) > opt.point_spread)
      return fail("level " + std::to_string(k + 1) + " is " + format_fixed(jump, 1) +
                  "x level " + std::to_string(k) + " with no point between, and its repeats "
                  "spread " + pct(std::max(curve_spread, level_spread)) + " (median)");
  }
  return out;
}

}  // namespace gd
