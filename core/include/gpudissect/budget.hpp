// Time budgets: how a sweep is planned from what the device turns out to be, so that a slow
// device (PoCL on a 2-core CPU) and a fast one (an H200) both finish in a bounded time and
// a fast one loses nothing. GPU-free; the probes feed it what they measure.
//
// The plan, per sweep (one curve of points measured in ascending size):
//   * one timed launch moves the probe's target traffic, but never more than the rate seen
//     so far can move in `max_launch_seconds` (a CPU moves a few GB/s: 8 GB per launch was
//     1.6 s, times repeats, times 20 points);
//   * a point whose estimate (its launches at the rate seen so far) would take the sweep past
//     its budget is skipped with the estimate as the reason, and so is every larger point;
//   * repeats stop early by the StoppingRule once they agree.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "gpudissect/stats.hpp"

namespace gd {

struct BudgetVerdict {
  bool run = true;
  double estimate_seconds = 0;  // 0 where nothing has been measured yet
  std::string reason;           // why it is skipped
};

class SweepPlanner {
 public:
  // budget_seconds: what the whole sweep may take; max_launch_seconds: one timed launch.
  explicit SweepPlanner(double budget_seconds, double max_launch_seconds = 0.1);

  double budget() const { return budget_; }
  double spent() const { return spent_; }
  double left() const { return budget_ > spent_ ? budget_ - spent_ : 0.0; }

  // A measured point: `launches` launches (warm-up included) of `bytes_per_launch` each
  // took `wall_seconds` in all (setup included, so estimates include it too);
  // `launch_seconds`, where known, is one launch's own time (the median the backend timed):
  // launches are sized from it, so a point's setup never shrinks the next one's launches,
  // and estimates are launches at that rate plus the setup; `footprint_bytes`, where given,
  // scales that setup to another point's footprint (buffers are filled and checked on the
  // host: PoCL spent ~0.3 s of setup on a 512 MiB read whose 6 launches took 0.15 s).
  void record(double bytes_per_launch, int launches, double wall_seconds,
              std::optional<double> launch_seconds = std::nullopt, double footprint_bytes = 0);
  // A rate measured elsewhere (a calibration launch, the previous sweep): the first point's
  // launches are planned from it. Costs no budget.
  void assume_rate(double bytes_per_second, std::optional<double> within_launch = {}) {
    if (bytes_per_second > 0) rate_ = launch_rate_ = bytes_per_second;
    if (within_launch && *within_launch > 0) {
      launch_rate_ = within_launch;
      launch_timed_ = true;
    }
  }
  // Time spent on something else that counts against this budget.
  void spend(double seconds) { spent_ += seconds; }
  // Bytes per second of the most recent point (sweeps ascend, so it is the slowest level
  // reached yet), if any point was recorded.
  std::optional<double> rate() const { return rate_; }
  // Bytes per second within a launch of the most recent point (or the assumed one).
  std::optional<double> launch_rate() const { return launch_rate_; }

  // How many passes of `bytes_per_pass` one launch should make to move `target_bytes`,
  // capped at the rate seen so far by max_launch_seconds and by an even split of what is
  // left of the budget over the `points_left` points (this one included) of `launches`
  // launches each, less the setup a point has cost beyond its launches; at least one. So a
  // slow device thins every point's launches instead of running out before the large ones.
  uint64_t passes(uint64_t target_bytes, uint64_t bytes_per_pass, int points_left = 1,
                  int launches = 1) const;
  // Seconds that `launches` launches of `bytes_per_launch` would take: at the rate within a
  // launch plus the setup (scaled to `footprint_bytes` where both are known) where launches
  // were timed, else at the wall-clock rate seen (setup folded in).
  std::optional<double> estimate(double bytes_per_launch, int launches,
                                 double footprint_bytes = 0) const;
  // Whether a point fits what is left of the budget. Once one point is refused, every later
  // (larger) one is too: the reason names the first.
  BudgetVerdict admit(double bytes_per_launch, int launches, double footprint_bytes = 0);
  // Like admit, for a point below the sweep's most important one (its largest regular
  // footprint, the device-memory figure): refused, without closing the sweep, when it would
  // leave too little for that point (`reserve_bytes_per_launch` x `reserve_launches`).
  BudgetVerdict admit_keeping(double bytes_per_launch, int launches,
                              double reserve_bytes_per_launch, int reserve_launches,
                              double footprint_bytes = 0, double reserve_footprint_bytes = 0);
  // Estimated seconds still to spend on the given points (bytes per launch, launches each),
  // those that would be skipped left out: what a progress line shows as time left.
  double time_left(const std::vector<std::pair<double, int>>& points) const;

 private:
  std::string rate_seen() const;  // for the reasons: the rate the estimate used
  double budget_, max_launch_;
  double spent_ = 0;
  std::optional<double> rate_;         // bytes per wall-clock second, setup included
  std::optional<double> launch_rate_;  // bytes per second within a launch
  bool launch_timed_ = false;          // launch_rate_ from timed launches, not the wall clock
  double setup_ = 0;                   // seconds a point cost beyond its launches
  double setup_footprint_ = 0;         // the footprint of that point, where given
  bool closed_ = false;
  std::string closed_reason_;
};

// How a probe's budget is shared by its sweeps: `budget` seconds over `sweeps` sweeps still
// to run, of which this is one. The share grows as earlier sweeps finish under theirs.
double budget_share(double probe_budget, double spent, int sweeps_left);

// A figure's spread is too large to be a result: relative IQR above this.
inline constexpr double kUnstableRelativeSpread = 0.10;
bool is_unstable(const Summary& s);
// "41.3 GB/s (unstable: ±40 %)" style suffix, "" for a stable summary.
std::string unstable_note(const Summary& s);

}  // namespace gd
