// The probes this build knows, in the order `gpudissect run` runs them and reports show
// them. Each probe has two halves: its measurement (a Probe; factory in probes/<name>/
// entry.cpp) and its report (a report::ProbeReport; factory in probes/<name>/report.cpp).
// registry.cpp, the composition root, registers both in one line per probe.
#pragma once

#include <memory>

#include "gpudissect/probe.hpp"

namespace gd {

namespace report {
class ProbeReport;  // report/probe_report.hpp
}

// The probes; the first call also registers their report halves (report::probe_reports()).
const ProbeRegistry& probe_registry();

std::unique_ptr<Probe> make_latency_probe();
std::unique_ptr<Probe> make_bandwidth_probe();
std::unique_ptr<Probe> make_compute_probe();
std::unique_ptr<Probe> make_host_memory_probe();
std::unique_ptr<Probe> make_atomics_probe();
std::unique_ptr<Probe> make_frontend_probe();
std::unique_ptr<Probe> make_memory_probe();
std::unique_ptr<Probe> make_links_probe();

std::unique_ptr<report::ProbeReport> make_latency_report();
std::unique_ptr<report::ProbeReport> make_bandwidth_report();
std::unique_ptr<report::ProbeReport> make_compute_report();
std::unique_ptr<report::ProbeReport> make_host_memory_report();
std::unique_ptr<report::ProbeReport> make_atomics_report();
std::unique_ptr<report::ProbeReport> make_frontend_report();
std::unique_ptr<report::ProbeReport> make_memory_report();
std::unique_ptr<report::ProbeReport> make_links_report();

}  // namespace gd
