// The links probe's measurement, shared by its files: run.cpp holds the peer-to-peer part,
// the options and the run; run_parts.cpp the host-link and NCCL parts.
#pragma once

#include <atomic>
#include <chrono>
#include <string>

#include "links/run.hpp"

namespace gd::links_run {

using Clock = std::chrono::steady_clock;
inline constexpr const char* kName = "links";

struct Ctx {
  LinksKernels& k;
  const LinksOptions& opt;
  Progress& progress;
  const std::atomic<bool>& stop;
  LinksProbeResult& out;
  int errors = 0;
  std::string first_error;
  void error(const std::string& where, const std::string& why) {
    if (errors++ == 0) first_error = where + ": " + why;
  }
};

void host_part(Ctx& c);
void nccl_part(Ctx& c);

}  // namespace gd::links_run
