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
#define GD_ADD_PROBE(name) add(make_##name##_probe(), make_##name##_report());
    GD_PROBES(GD_ADD_PROBE)
#undef GD_ADD_PROBE
    return r;
  }();
  return registry;
}

}  // namespace gd
