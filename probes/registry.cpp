#include "registry.hpp"

#include "probe_report.hpp"

namespace gd {

const ProbeRegistry& probe_registry() {
  static const ProbeRegistry registry = [] {
    ProbeRegistry r;
    // Both halves of a probe under its name: the measurement here, the report for the writers.
    auto add = [&r](std::unique_ptr<Probe> probe, std::unique_ptr<report::ProbeReport> rep) {
      report::probe_reports().add(probe->name(), std::move(rep));
      r.add(std::move(probe));
    };
    add(make_latency_probe(), make_latency_report());
    add(make_memory_probe(), make_memory_report());
    add(make_bandwidth_probe(), make_bandwidth_report());
    add(make_compute_probe(), make_compute_report());
    add(make_frontend_probe(), make_frontend_report());
    add(make_atomics_probe(), make_atomics_report());
    add(make_host_memory_probe(), make_host_memory_report());
    add(make_links_probe(), make_links_report());
    return r;
  }();
  return registry;
}

}  // namespace gd
