// The atomics probe: how fast two threads can hand a value back and forth (within an SM,
// between SMs, SM-to-SM for every pair, GPU to host), and how many atomic operations per
// clock an SM and the whole GPU sustain, by space, type, contention and scope.
#pragma once

#include <atomic>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "atomics/atomics.hpp"
#include "gpudissect/device.hpp"
#include "gpudissect/probe.hpp"
#include "gpudissect/progress.hpp"

namespace gd {

struct AtomicsOptions {
  bool quick = false;                // fewer figures, 3 repeats (CI)
  int repeats = 5;                   // timed repeats (launches) per figure
  uint32_t round_trips = 2000;       // per timed ping-pong repeat
  bool matrix = true;                // the SM-to-SM latency matrix
  int matrix_max_sms = 0;            // SMs 0..N-1 in the matrix; 0: every SM
  uint32_t matrix_round_trips = 64;  // per segment; 4 segments per pair, median taken
  int locations = 16;                // global ping-pongs: flag locations (mean over them)
  int placements = 16;               // global throughput: target placements (mean over them)
  std::set<std::string> parts = {"latency", "throughput"};  // plus the matrix when `matrix`
};

// Options from `--option atomics.KEY=VALUE` pairs (KEY without the prefix). Throws
// std::invalid_argument naming the key on an unknown key or a bad value.
AtomicsOptions parse_atomics_options(const std::map<std::string, std::string>& kv);
std::vector<OptionSpec> atomics_option_specs();

// The throughput requests the probe makes, in order (exposed for tests and the report).
std::vector<ThroughputRequest> atomics_throughput_plan(const AtomicsOptions& opt);

// Fills `out` as it goes, so whatever was measured survives an exception or `stop`.
// Throws ProbeError (gpudissect/probe.hpp) on a backend failure after recording it in `out`;
// a failed exact check marks its figure as an error and the probe goes on.
void run_atomics(Device& dev, const AtomicsOptions& opt, Progress& progress,
                 const std::atomic<bool>& stop, AtomicsProbeResult& out);

}  // namespace gd
