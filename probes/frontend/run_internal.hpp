// The front-end probe's measurement, shared by its files: run.cpp holds the instruction
// cache parts, the options and the run; run_parts.cpp the launch, dispatch and occupancy
// parts.
#pragma once

#include <atomic>
#include <exception>

#include "frontend/run.hpp"

namespace gd::frontend_run {

// Runs fn, recording an exception in `st` (and, through the caller, the probe's status).
template <class F>
bool guarded(Status& st, F&& fn) {
  try {
    fn();
    return true;
  } catch (const AllocationFailed& e) {
    st = {StatusCode::skipped, e.what()};
  } catch (const std::exception& e) {
    st = {StatusCode::error, e.what()};
  }
  return false;
}

void launch_part(FrontendKernels& k, const FrontendOptions& opt, Progress& progress,
                 const std::atomic<bool>& stop, FrontendProbeResult& out);
void dispatch_part(FrontendKernels& k, const FrontendOptions& opt, Progress& progress,
                   FrontendProbeResult& out);
void refill_part(FrontendKernels& k, const FrontendOptions& opt, Progress& progress,
                 FrontendProbeResult& out);
void occupancy_part(FrontendKernels& k, const DeviceInfo& info, const FrontendOptions& opt,
                    Progress& progress, const std::atomic<bool>& stop, FrontendProbeResult& out);

}  // namespace gd::frontend_run
