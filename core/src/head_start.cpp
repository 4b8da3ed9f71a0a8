#include "gpudissect/head_start.hpp"

#include <chrono>

#if defined(__linux__)
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

namespace gd {

namespace {

// Nice +10 for the calling thread only (on Linux a thread is a task with its own nice value,
// inherited by the threads it creates). Best effort: a failure leaves the priority as it was.
void lower_this_thread_priority() {
#if defined(__linux__)
  const auto tid = static_cast<id_t>(syscall(SYS_gettid));
  const int now = getpriority(PRIO_PROCESS, tid);
  (void)setpriority(PRIO_PROCESS, tid, now + 10 > 19 ? 19 : now + 10);
#endif
}

}  // namespace

HeadStart::HeadStart(std::vector<Work> works) {
  for (auto& w : works)
    if (w) works_.push_back(std::move(w));
  if (works_.empty()) {
    done_ = true;
    return;
  }
  thread_ = std::thread([this] {
    const auto t0 = std::chrono::steady_clock::now();
    lower_this_thread_priority();
    for (const Work& w : works_) {
      if (cancel_) break;
      try {
        w(cancel_);
      } catch (...) {
        // the probe meets it again in its turn (see the header)
      }
    }
    seconds_ = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    done_ = true;
  });
}

HeadStart::~HeadStart() {
  cancel_ = true;
  if (thread_.joinable()) thread_.join();
}

}  // namespace gd
