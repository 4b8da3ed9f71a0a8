// The probes this build knows, in the order `gpudissect run` runs them and reports show
// them. Each entry's factory lives in that probe's own entry.cpp (probes/<name>/).
#pragma once

#include <memory>

#include "gpudissect/probe.hpp"

namespace gd {

const ProbeRegistry& probe_registry();

std::unique_ptr<Probe> make_latency_probe();
std::unique_ptr<Probe> make_bandwidth_probe();
std::unique_ptr<Probe> make_compute_probe();
std::unique_ptr<Probe> make_host_memory_probe();
std::unique_ptr<Probe> make_atomics_probe();
std::unique_ptr<Probe> make_frontend_probe();
std::unique_ptr<Probe> make_memory_probe();
std::unique_ptr<Probe> make_links_probe();

}  // namespace gd
