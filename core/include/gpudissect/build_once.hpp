// Values built at most once per key, from any thread. The CUDA backends compile their
// generated kernels this way: a run starts the compiles early on a background thread
// (Probe::ahead), and the probe's own call for the same kernel, on the run's thread, must
// wait for that compile rather than start a second one of the same source. GPU-free.
#pragma once

#include <condition_variable>
#include <map>
#include <mutex>
#include <string>

namespace gd {

template <class Value>
class BuildOnce {
 public:
  // The value of `key`: built by `make()` (which returns a Value) on the first call; a call
  // that comes while another thread builds the same key waits for it. If `make` throws, the
  // exception reaches its caller and the key counts as not built (a later call tries again).
  // The reference stays valid, and the value unchanged, for the object's life.
  template <class Make>
  const Value& get(const std::string& key, Make&& make) {
    std::unique_lock<std::mutex> lock(mu_);
    Slot& slot = slots_[key];  // std::map: references survive later insertions
    for (;;) {
      if (slot.state == State::built) return slot.value;
      if (slot.state == State::none) break;
      done_.wait(lock);  // another thread is building this key
    }
    slot.state = State::building;
    lock.unlock();
    try {
      Value v = make();
      lock.lock();
      slot.value = std::move(v);
      slot.state = State::built;
    } catch (...) {
      lock.lock();
      slot.state = State::none;
      done_.notify_all();
      throw;
    }
    done_.notify_all();
    return slot.value;
  }

  // The value if it is built, else nullptr; never waits, never builds.
  const Value* find(const std::string& key) const {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = slots_.find(key);
    return it != slots_.end() && it->second.state == State::built ? &it->second.value : nullptr;
  }

 private:
  enum class State { none, building, built };
  struct Slot {
    State state = State::none;
    Value value{};
  };
  mutable std::mutex mu_;
  std::condition_variable done_;
  std::map<std::string, Slot> slots_;
};

}  // namespace gd
