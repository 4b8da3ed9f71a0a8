// Whether the levels found in a latency curve make a hierarchy that can be published. Level
// detection (levels.hpp) finds plateaus in whatever curve it is given; a curve measured
// while another process time-sliced the chase (its repeats disagree, its latency wanders up
// and back down) still has plateaus, and they name a wrong hierarchy ("L1, then L2 at 1178
// cycles"). This check says when the curve itself contradicts its levels.
#pragma once

#include <string>
#include <vector>

#include "gpudissect/levels.hpp"
#include "gpudissect/status.hpp"

namespace gd {

// The status of a curve whose hierarchy failed the check: the word figures already use for a
// measurement too noisy to be a result (Status, status.hpp), with the check's reason.
inline constexpr StatusCode kInconsistentStatus = StatusCode::unstable;

struct HierarchyCheckOptions {
  // A point's repeats disagree when their relative spread (IQR/median) is over this: the
  // bound above which a figure is "unstable" (kUnstableRelativeSpread, budget.hpp).
  double point_spread = 0.10;
  // More than this fraction of the points with disagreeing repeats: the curve is noise.
  double max_noisy_fraction = 0.5;
  // A level more than this many times the latency of the one below it, with at most one
  // point between them, is implausible when the curve's or that level's repeats disagree
  // (median spread over point_spread).
  double max_jump = 3.0;
  // A point beyond a plateau's end whose latency is below this fraction of that plateau's
  // latency shows the curve falling back; this many such points make it inconsistent.
  double fall_back = 0.8;
  std::size_t max_fall_back_points = 1;
};

struct HierarchyCheck {
  bool ok = true;
  std::string reason;  // why not, in words, when !ok
};

// `levels` as detect_levels found them in `curve` (indices into it).
HierarchyCheck check_hierarchy(const std::vector<CurvePoint>& curve,
                               const std::vector<DetectedLevel>& levels,
                               const HierarchyCheckOptions& opt = {});

}  // namespace gd
