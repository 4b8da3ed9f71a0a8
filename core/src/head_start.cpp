#include "gpudissect/head_start.hpp"

#include <chrono>

#include "gpudissect/stopwatch.hpp"

#if defined(__linux__)
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

namespace gd {

namespace {

// The calling thread only, to nice 19 (on Linux a thread is a task with its own nice value,
// inherited by the threads it creates). Best effort: a failure leaves the priority as it was.
void lower_this_thread_priority() {
#if defined(__linux__)
  (void)setpriority(PRIO_PROCESS, static_cast<id_t>(syscall(SYS_gettid)), 19);
#endif
}

std::mutex current_mu;
HeadStart* current = nullptr;  // the one running in this process, if any

}  // namespace

HeadStart::HeadStart(std::vector<Work> works) {
  for (auto& w : works)
    if (w) works_.push_back(std::move(w));
  left_ = works_.size();
  if (works_.empty()) return;
  const auto t0 = std::chrono::steady_clock::now();
  for (const Work& w : works_)
    threads_.emplace_back([this, &w, t0] {
      lower_this_thread_priority();
      if (!cancel_) {
        try {
          w(cancel_);
        } catch (...) {
          // the probe meets it again in its turn (see the header)
        }
      }
      std::lock_guard<std::mutex> g(mu_);
      if (--left_ == 0) {
        seconds_ = seconds_since(t0);
        finished_.notify_all();
      }
    });
  std::lock_guard<std::mutex> g(current_mu);
  current = this;
}

HeadStart::~HeadStart() {
  {
    std::lock_guard<std::mutex> g(current_mu);
    if (current == this) current = nullptr;
  }
  cancel_ = true;
  for (auto& t : threads_)
    if (t.joinable()) t.join();
}

double HeadStart::wait() {
  const auto t0 = std::chrono::steady_clock::now();
  std::unique_lock<std::mutex> lock(mu_);
  finished_.wait(lock, [this] { return left_ == 0; });
  return seconds_since(t0);
}

double HeadStart::wait_for_current() {
  std::lock_guard<std::mutex> g(current_mu);  // held: the HeadStart cannot end meanwhile
  return current ? current->wait() : 0.0;
}

}  // namespace gd
