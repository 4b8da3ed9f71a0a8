// Runs the probes' AheadWork (Probe::ahead: compiling their kernels) on one background
// thread at low priority, from the start of a run, while the first probes measure. GPU-free.
#pragma once

#include <atomic>
#include <functional>
#include <thread>
#include <vector>

namespace gd {

class HeadStart {
 public:
  using Work = std::function<void(const std::atomic<bool>& cancel)>;
  // Starts a thread that runs `works` in order (empty ones skipped); none: no thread. The
  // thread lowers its own scheduling priority (nice +10 on Linux, which the threads it
  // starts inherit), so the host-timed parts of the probes measuring meanwhile keep their
  // cores. An exception from a work is dropped: the probe meets the failure again in its
  // own turn, on the run's thread, and reports it there.
  explicit HeadStart(std::vector<Work> works);
  HeadStart(const HeadStart&) = delete;
  HeadStart& operator=(const HeadStart&) = delete;
  // Cancels and waits (a compile already started finishes first).
  ~HeadStart();

  // No further work item starts; the one running is told through its `cancel`.
  void cancel() { cancel_ = true; }
  // Whether every work has returned.
  bool done() const { return done_; }
  // Seconds from the start to the last work's return (0 until done).
  double seconds() const { return seconds_; }
  // The number of works that were given (non-empty ones).
  std::size_t size() const { return works_.size(); }

 private:
  std::vector<Work> works_;
  std::atomic<bool> cancel_{false}, done_{false};
  std::atomic<double> seconds_{0};
  std::thread thread_;
};

}  // namespace gd
