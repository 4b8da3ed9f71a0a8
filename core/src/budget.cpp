#include "gpudissect/budget.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace gd {

SweepPlanner::SweepPlanner(double budget_seconds, double max_launch_seconds)
    : budget_(std::max(0.0, budget_seconds)), max_launch_(std::max(1e-6, max_launch_seconds)) {}

void SweepPlanner::record(double bytes_per_launch, int launches, double wall_seconds,
                          std::optional<double> launch_seconds, double footprint_bytes) {
  spent_ += std::max(0.0, wall_seconds);
  if (bytes_per_launch > 0 && launches > 0 && wall_seconds > 0) {
    rate_ = bytes_per_launch * launches / wall_seconds;
    launch_timed_ = launch_seconds && *launch_seconds > 0;
    launch_rate_ = launch_timed_ ? bytes_per_launch / *launch_seconds : *rate_;
    if (launch_seconds) {
      setup_ = std::max(0.0, wall_seconds - launches * *launch_seconds);
      setup_footprint_ = footprint_bytes;
    }
  }
}

uint64_t SweepPlanner::passes(uint64_t target_bytes, uint64_t bytes_per_pass, int points_left,
                              int launches) const {
  if (bytes_per_pass == 0) return 1;
  double bytes = double(target_bytes);
  if (launch_rate_) {
    const double share = (left() / std::max(1, points_left) - setup_) / std::max(1, launches);
    bytes = std::min(bytes, *launch_rate_ * std::clamp(share, 0.0, max_launch_));
  }
  return std::max<uint64_t>(1, uint64_t(std::ceil(bytes / double(bytes_per_pass))));
}

std::optional<double> SweepPlanner::estimate(double bytes_per_launch, int launches,
                                             double footprint_bytes) const {
  if (launch_timed_ && launch_rate_ && *launch_rate_ > 0) {
    // A point's setup (its buffers filled and checked) grows with its footprint; the last
    // point's, scaled. (Taken as a rate, a 512 MiB point's setup made PoCL's next 16 KiB point
    // look like a 9 s one, and every write and copy point was skipped.) Scaled up at most 16x:
    // a small point's setup is mostly fixed costs (allocations), and an H100's 32 KiB copy
    // point, scaled to its 207 MiB largest one, would reserve the whole --quick share of the
    // curve and skip every point between.
    double setup = setup_;
    if (footprint_bytes > 0 && setup_footprint_ > 0) {
      const double scale = footprint_bytes / setup_footprint_;
      if (scale <= 16) setup *= scale;  // past 16x: the last point's setup as it was
    }
    return bytes_per_launch * launches / *launch_rate_ + setup;
  }
  if (!rate_ || *rate_ <= 0) return std::nullopt;
  return bytes_per_launch * launches / *rate_;
}

namespace {
std::string seconds_text(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, s < 10 ? "%.1f" : "%.0f", s);
  return buf;
}
std::string rate_text(double bps) {
  char buf[48];
  std::snprintf(buf, sizeof buf, "%.3g GB/s", bps / 1e9);
  return buf;
}
}  // namespace

std::string SweepPlanner::rate_seen() const {
  if (launch_timed_ && launch_rate_) return rate_text(*launch_rate_) + " (within a launch)";
  return rate_ ? rate_text(*rate_) : "-";
}

BudgetVerdict SweepPlanner::admit(double bytes_per_launch, int launches, double footprint_bytes) {
  BudgetVerdict v;
  if (closed_) {
    v.run = false;
    v.reason = closed_reason_;
    return v;
  }
  const std::optional<double> e = estimate(bytes_per_launch, launches, footprint_bytes);
  if (!e) return v;  // nothing measured yet: the first point always runs
  v.estimate_seconds = *e;
  if (*e > left()) {
    v.run = false;
    v.reason = "skipped: would take ~" + seconds_text(*e) + " s at the " + rate_seen() +
               " seen, over the sweep's budget (" + seconds_text(left()) + " s of " +
               seconds_text(budget_) + " s left)";
    closed_ = true;
    closed_reason_ = v.reason;
  }
  return v;
}

BudgetVerdict SweepPlanner::admit_keeping(double bytes_per_launch, int launches,
                                          double reserve_bytes_per_launch, int reserve_launches,
                                          double footprint_bytes, double reserve_footprint_bytes) {
  const std::optional<double> e = estimate(bytes_per_launch, launches, footprint_bytes);
  const std::optional<double> r =
      estimate(reserve_bytes_per_launch, reserve_launches, reserve_footprint_bytes);
  if (!closed_ && e && r && *e + *r > left() && *r <= left()) {
    BudgetVerdict v;
    v.run = false;
    v.estimate_seconds = *e;
    v.reason = "skipped: ~" + seconds_text(*e) + " s at the " + rate_seen() +
               " seen would leave too little of the sweep's budget (" + seconds_text(left()) +
               " s) for its largest footprint (~" + seconds_text(*r) + " s)";
    return v;
  }
  return admit(bytes_per_launch, launches, footprint_bytes);
}

double SweepPlanner::time_left(const std::vector<std::pair<double, int>>& points) const {
  double t = 0, room = left();
  for (const auto& [bytes, launches] : points) {
    const std::optional<double> e = estimate(bytes, launches);
    if (!e) continue;
    if (*e > room) break;
    t += *e;
    room -= *e;
  }
  return t;
}

double budget_share(double probe_budget, double spent, int sweeps_left) {
  const double left = std::max(0.0, probe_budget - spent);
  return sweeps_left > 0 ? left / sweeps_left : left;
}

bool is_unstable(const Summary& s) {
  return s.n >= 2 && s.relative_spread() > kUnstableRelativeSpread;
}

std::string unstable_note(const Summary& s) {
  if (!is_unstable(s)) return "";
  char buf[48];
  std::snprintf(buf, sizeof buf, " (unstable: \xC2\xB1%.0f %%)", 100 * s.relative_spread());
  return buf;
}

}  // namespace gd
