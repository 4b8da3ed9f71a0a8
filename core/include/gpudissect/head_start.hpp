// Runs the probes' AheadWork (Probe::ahead: compiling their kernels) in the background at low
// priority from the start of a run, while the first probes measure. GPU-free.
#pragma once

#include <atomic>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace gd {

class HeadStart {
 public:
  using Work = std::function<void(const std::atomic<bool>& cancel)>;
  // Starts one thread per (non-empty) work, all at once: the longest compile of any probe
  // then starts at the beginning instead of behind another probe's. Each thread lowers its
  // own scheduling priority (nice 19 on Linux, which the threads it starts inherit), so
  // the measuring thread keeps its core. An exception from a work is dropped: the probe meets
  // the failure again in its own turn, on the run's thread, and reports it there. While it
  // runs, HeadStart::wait_for_current() waits for it.
  explicit HeadStart(std::vector<Work> works);
  HeadStart(const HeadStart&) = delete;
  HeadStart& operator=(const HeadStart&) = delete;
  // Cancels and waits (a compile already started finishes first).
  ~HeadStart();

  // No further work item starts; the ones running are told through their `cancel`.
  void cancel() { cancel_ = true; }
  // Blocks until every work has returned; the seconds it waited.
  double wait();
  bool done() const { return left_ == 0; }
  // Seconds from the start to the last work's return (0 until done).
  double seconds() const { return seconds_; }
  // The number of works that were given (non-empty ones).
  std::size_t size() const { return works_.size(); }

  // For a measurement timed on the host (pageable transfers, host memory), which the
  // background compiles would disturb: waits for the run's head start, if one is running in
  // this process; returns the seconds waited (0 where none ran or it had finished).
  static double wait_for_current();

 private:
  std::vector<Work> works_;
  std::atomic<bool> cancel_{false};
  std::atomic<std::size_t> left_{0};
  std::atomic<double> seconds_{0};
  std::mutex mu_;
  std::condition_variable finished_;
  std::vector<std::thread> threads_;
};

}  // namespace gd
