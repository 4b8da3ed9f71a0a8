// The probes this build knows, in the order `gpudissect run` runs them and reports show
// them. Each probe has two halves: its measurement (a Probe; factory in probes/<name>/
// entry.cpp) and its report (a report::ProbeReport; factory in probes/<name>/report.cpp).
// registry.cpp, the composition root, registers both for every line of GD_PROBES.
#pragma once

#include <memory>

#include "gpudissect/probe.hpp"

namespace gd {

namespace report {
class ProbeReport;  // report/probe_report.hpp
}

// The probes; the first call also registers their report halves (report::probe_reports()).
const ProbeRegistry& probe_registry();

// The probes in run order, one line each: adding a probe is its folder (probes/<name>/,
// with make_<name>_probe() in entry.cpp and make_<name>_report() in report.cpp) and one
// line here.
#define GD_PROBES(X) \
  X(latency)         \
  X(memory)          \
  X(bandwidth)       \
  X(compute)         \
  X(frontend)        \
  X(atomics)         \
  X(host_memory)     \
  X(links)

#define GD_DECLARE_PROBE(name)                \
  std::unique_ptr<Probe> make_##name##_probe(); \
  std::unique_ptr<report::ProbeReport> make_##name##_report();
GD_PROBES(GD_DECLARE_PROBE)
#undef GD_DECLARE_PROBE

}  // namespace gd
