// Runs a probe the way most probe tests do: no progress shown, no stop asked.
#pragma once

#include <atomic>

#include "gpudissect/device.hpp"
#include "gpudissect/progress.hpp"

namespace gd::fakes {

// `run` is the probe's run function (run_memory, run_latency...). What it throws passes to
// the caller, and `out` keeps what the probe had filled in by then.
template <class Run, class Options, class Result>
void run_probe(Run run, Device& dev, const Options& opt, Result& out) {
  NullProgress progress;
  std::atomic<bool> stop{false};
  run(dev, opt, progress, stop, out);
}

}  // namespace gd::fakes
