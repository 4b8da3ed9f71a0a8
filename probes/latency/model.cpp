#include <algorithm>

#include "gpudissect/device.hpp"
#include "latency/latency.hpp"

namespace gd {

std::vector<std::string> path_order(const LatencyProbeResult& p) {
  std::vector<std::string> out;
  for (MemPath m : all_mem_paths()) {
    const std::string n = to_string(m);
    if (p.paths.count(n)) out.push_back(n);
  }
  for (const auto& [name, c] : p.paths)
    if (std::find(out.begin(), out.end(), name) == out.end()) out.push_back(name);
  return out;
}

}  // namespace gd
