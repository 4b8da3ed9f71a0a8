// The in-kernel clock of the OpenCL kernels, per vendor, GPU-free: which platform's compiler
// offers which counter, and the OpenCL C that reads it. The counters serve the measurement
// only (cycles around the loop, a wall clock, the compute unit's id), never the op under
// test. NVIDIA's path (inline PTX) is measured on this project's GPUs; AMD's (clang's
// amdgcn builtins) is compiled in CI only: no AMD GPU was lent to this project, so its
// output says so. Intel's compiler documents no counter behind an extension a device
// reports: Intel stays generic (docs/backends.md).
#pragma once

#include <string>

#include "compute/compute.hpp"

namespace gd {

// OpenCLClock (none, nvidia, amd) is declared in compute.hpp, beside the generator.

// The counter an OpenCL platform's GPU compiler offers: NVIDIA's platform (its compiler
// takes inline PTX), AMD's ROCm platform ("AMD Accelerated Parallel Processing", whose
// compiler is clang for amdgcn) where the device is a GPU. Mesa's platforms (clover,
// rusticl) and PoCL compile through other front ends: none.
OpenCLClock opencl_clock_for(const std::string& platform_name, const std::string& platform_vendor,
                             bool gpu);

// OpenCLClockCode and opencl_clock_code() (the OpenCL C of each counter) are in compute.hpp.

// What a run on `clock` says about its counter: for AMD "cycle counter: ..., not
// validated on AMD hardware by this project"; empty for NVIDIA (measured here) and none.
std::string opencl_clock_note(OpenCLClock clock);

// "none", "nvidia", "amd" (a tool's argument); parse returns false for another word.
const char* to_string(OpenCLClock clock);
bool parse_opencl_clock(const std::string& word, OpenCLClock& out);

}  // namespace gd
