// The host memory probe's result: how fast the CPU's threads read, write and copy memory
// against footprint. It tells GPU users the bound of pageable transfers, and it is the
// reference an OpenCL CPU device (PoCL) is held against.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "bandwidth/bandwidth.hpp"
#include "gpudissect/status.hpp"

namespace gd {

struct HostMemoryResult {
  static constexpr const char* kProbe = "host";
  Status status;
  double wall_seconds = 0;
  int threads = 0;
  std::string cpu;  // model name, where the OS says
  // Caches as the OS describes them (/sys/devices/system/cpu/cpu0/cache): "L1d 48 KiB" ...
  std::vector<std::string> caches;
  // read, write, write_streaming (non-temporal stores, x86-64), copy: GB/s (1e9 bytes/s,
  // read + write bytes) against total footprint.
  std::map<std::string, BandwidthCurve> curves;
  // "memory read", "memory write", "memory write, non-temporal", "memory copy": the largest
  // footprint measured, once it is past 4x the largest cache the OS reports (else absent).
  std::vector<BandwidthFigure> figures;
};

void to_json(nlohmann::json& j, const HostMemoryResult& r);
void from_json(const nlohmann::json& j, HostMemoryResult& r);

}  // namespace gd
