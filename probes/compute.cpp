#include "compute.hpp"

#include <stdexcept>

#include "gpudissect/compute.hpp"

namespace gd {

ComputeOptions parse_compute_options(const std::map<std::string, std::string>& kv) {
  ComputeOptions o;
  for (const auto& [k, v] : kv) {
    if (k == "quick")
      o.quick = v == "1" || v == "true" || v == "yes";
    else
      throw std::invalid_argument("unknown compute option '" + k + "'");
  }
  return o;
}

void run_compute(Device& dev, const ComputeOptions&, Progress&, const std::atomic<bool>&,
              ComputeProbeResult& out) {
  if (!dev.compute()) {
    out.status = {"unsupported", "the " + dev.info().backend + " backend has no compute kernels yet"};
    return;
  }
  out.status = {"unsupported", "not implemented yet"};
}

}  // namespace gd
