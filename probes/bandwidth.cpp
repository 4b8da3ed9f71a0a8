#include "bandwidth.hpp"

#include <stdexcept>

#include "gpudissect/bandwidth.hpp"

namespace gd {

BandwidthOptions parse_bandwidth_options(const std::map<std::string, std::string>& kv) {
  BandwidthOptions o;
  for (const auto& [k, v] : kv) {
    if (k == "quick")
      o.quick = v == "1" || v == "true" || v == "yes";
    else
      throw std::invalid_argument("unknown bandwidth option '" + k + "'");
  }
  return o;
}

void run_bandwidth(Device& dev, const BandwidthOptions&, Progress&, const std::atomic<bool>&,
              BandwidthProbeResult& out) {
  if (!dev.bandwidth()) {
    out.status = {"unsupported", "the " + dev.info().backend + " backend has no bandwidth kernels yet"};
    return;
  }
  out.status = {"unsupported", "not implemented yet"};
}

}  // namespace gd
