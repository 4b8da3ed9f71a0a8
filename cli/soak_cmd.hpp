// `gpudissect run --duration`: the quick profile repeated until the time is up.
#pragma once

#include "run_steps.hpp"

namespace gd::cli {

// Testing only (--inject slow:REPETITION:FIGURE:FACTOR): from that repetition (1-based)
// on, the figure's value is scaled by FACTOR, so that a test can make a soak regress.
struct SoakInjection {
  std::size_t from = 1;  // the first repetition slowed (1 the second)
  bool late = false;     // instead: every repetition that starts after 2/3 of the duration
  std::string figure;
  double factor = 1;
};
// Throws UsageError naming a malformed one.
std::vector<SoakInjection> parse_injections(const std::vector<std::string>& raw);

// Repeats the plan's probes until `duration_s` has passed (at least once), writing the JSON
// (the last finished repetition's run plus "soak") after every probe and repetition; prints
// the summary and the soak table. Returns the exit status (3 for a regression).
int run_soak(const RunArgs& a, const RunPlan& plan, RunSession& s, double duration_s,
             double tolerance);

}  // namespace gd::cli
