// The constant path's chase through the constant bank. NVIDIA's OpenCL keeps a `__constant`
// kernel argument in global memory and reads it with LDG.E.CONSTANT (through the L1 data
// cache: 41 cycles a hop on an H200, as a global load), but places a program-scope
// `__constant` array in the constant bank, read with LDC as CUDA's `__constant__` chase is
// (29 cycles at its L1, 99 past it). So each chain becomes the initializer of such an
// array, in a program of its own: one build per chain, the last one kept.
#pragma once

#include <CL/cl.h>

#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "opencl_internal.hpp"

namespace gd::opencl {

// The program's source (after nv_clock.cl): `gd_chain`, the words as a program-scope
// `__constant uint` array, and `chase_constant_bank(uint start, ulong hops, __global uint*
// out)`, which walks it by byte offsets from `start` and writes what it reached to out[0]
// and, built with GD_NV_CLOCK, the loop's cycles and ns to ulongs 1 and 2 (as chase.cl's
// kernels do).
std::string constant_chain_source(const std::vector<uint32_t>& words);

// GD_TEST_CONSTANT_BANK=1: the bank chase on any platform (the tests' way to run it on PoCL).
inline bool constant_bank_forced() {
  const char* v = std::getenv("GD_TEST_CONSTANT_BANK");
  return v && std::string(v) == "1";
}

class ConstantBankChase {
 public:
  ConstantBankChase(cl_context ctx, cl_device_id dev, std::string options)
      : ctx_(ctx), dev_(dev), options_(std::move(options)) {}

  // The kernel over these words, built unless they are the last ones'; throws BackendError
  // with the build log where the program does not build.
  cl_kernel kernel_for(const std::vector<uint32_t>& words);
  // The last program built (for its machine code); null before the first.
  cl_program program() const { return program_.get(); }
  // Whether any chain has built (a later failure is then that chain's size).
  bool built_once() const { return built_once_; }

 private:
  cl_context ctx_;
  cl_device_id dev_;
  std::string options_;
  std::vector<uint32_t> words_;
  detail::Program program_;
  detail::Kernel kernel_;
  bool built_once_ = false;
};

}  // namespace gd::opencl
