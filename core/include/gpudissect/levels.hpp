// Finding the levels of a memory hierarchy in a latency-vs-footprint curve.
//
// A level is a plateau: a run of footprints over which latency stays flat. Its capacity
// is where the plateau ends, bracketed by the last footprint still on the plateau and
// the first footprint clearly above it. Noise, single outliers and smooth ramps must
// not create levels.
#pragma once

#include <cstddef>
#include <optional>
#include <vector>

namespace gd {

struct CurvePoint {
  double footprint_bytes = 0;  // strictly increasing along a curve
  double latency = 0;          // cycles or ns per access; must be > 0
  double spread = 0;           // relative spread of the repeats at this point (IQR/median), >= 0
};

struct DetectedLevel {
  std::size_t first = 0, last = 0;  // indices of the first and last point on the plateau
  double latency = 0;               // plateau latency (robust centre of its points)
  // Capacity bracket: last footprint on the plateau, first footprint beyond it.
  // Absent for the last level (the curve never leaves it).
  std::optional<double> capacity_lo, capacity_hi;
  double confidence = 0;  // 0..1: how sure the plateau and its edge are real
};

struct LevelOptions {
  // Smallest relative rise between consecutive levels that can make a new level.
  double min_relative_step = 0.08;
  // Fewest points a plateau needs (the first and last level may have fewer when the
  // sweep starts or ends on them; see min_edge_points).
  std::size_t min_points = 3;
  std::size_t min_edge_points = 2;
  // Smallest relative noise assumed per point, so a perfectly clean curve still has a scale.
  double noise_floor = 0.015;
  // A level whose step up from the level below is smaller than this fraction of the steps
  // on both its outer sides is a sub-level (e.g. Hopper's far L2 partition) and is merged
  // into the level below. 0 keeps every sub-level.
  double sublevel_ratio = 0.2;
  // Two levels whose capacities are less than this ratio apart are one level and a piece of
  // the ramp that leaves it (a cache whose hit rate falls over a range of footprints, as a
  // hashed L2 does near its size, shows short flat stretches on that ramp); the level with
  // the narrower plateau (in doublings of footprint) is dropped. 0 keeps them.
  double min_capacity_ratio = 1.25;
};

// Levels in order of increasing footprint. An empty or one-point curve gives one level
// (or none for an empty curve). Latencies of successive levels increase.
std::vector<DetectedLevel> detect_levels(const std::vector<CurvePoint>& curve,
                                         const LevelOptions& opt = {});

// Indices i where the step from curve[i] to curve[i+1] is a rise worth locating more
// precisely: the adaptive sweep puts new footprints between such pairs.
std::vector<std::size_t> steps_to_refine(const std::vector<CurvePoint>& curve,
                                         double min_relative_rise = 0.04);

}  // namespace gd
