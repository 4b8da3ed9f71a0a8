#include "registry.hpp"

namespace gd {

const ProbeRegistry& probe_registry() {
  static const ProbeRegistry registry = [] {
    ProbeRegistry r;
    r.add(make_latency_probe());
    r.add(make_memory_probe());
    r.add(make_bandwidth_probe());
    r.add(make_compute_probe());
    r.add(make_frontend_probe());
    r.add(make_atomics_probe());
    r.add(make_host_memory_probe());
    r.add(make_links_probe());
    return r;
  }();
  return registry;
}

}  // namespace gd
