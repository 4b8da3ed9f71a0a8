#include "opencl_constant_chase.hpp"

#include <string>

#include "gpudissect/units.hpp"
#include "opencl_kernels.hpp"

namespace gd::opencl {

std::string constant_chain_source(const std::vector<uint32_t>& words) {
  std::string s =
      "__constant uint gd_chain[" + std::to_string(words.empty() ? 1 : words.size()) + "] = {";
  for (std::size_t i = 0; i < words.size(); ++i) {
    if (i % 16 == 0) s += "\n";
    s += std::to_string(words[i]) + "u,";
  }
  if (words.empty()) s += "0u";
  s += R"CL(
};

__kernel void chase_constant_bank(uint start, ulong hops, __global uint* out) {
  uint off = start;
  ulong c0, t0, c1, t1;
  GD_GLOBALTIMER(t0);
  GD_CLOCK64(c0);
  for (ulong h = 0; h < hops; ++h)
    off = *(__constant const uint*)((__constant const uchar*)gd_chain + off);
  out[0] = off;
  GD_CLOCK64(c1);
  GD_GLOBALTIMER(t1);
  ((__global ulong*)out)[1] = c1 - c0;
  ((__global ulong*)out)[2] = t1 - t0;
}
)CL";
  return s;
}

cl_kernel ConstantBankChase::kernel_for(const std::vector<uint32_t>& words) {
  if (kernel_ && words == words_) return kernel_.get();
  kernel_.reset();
  program_.reset();
  words_.clear();
  const std::string body = constant_chain_source(words);
  const char* src[] = {kernels::nv_clock, body.c_str()};
  cl_int err = CL_SUCCESS;
  detail::Program p(clCreateProgramWithSource(ctx_, 2, src, nullptr, &err));
  check(err, "clCreateProgramWithSource (constant chain)");
  err = clBuildProgram(p.get(), 1, &dev_, options_.c_str(), nullptr, nullptr);
  if (err != CL_SUCCESS) {
    const std::string log = trim(program_build_log(p.get(), dev_));
    throw BackendError(describe("clBuildProgram", err) + " for a " +
                       std::to_string(words.size() * 4) + "-byte constant chain" +
                       (log.empty() ? std::string() : ": " + log.substr(0, 400)));
  }
  detail::Kernel k(clCreateKernel(p.get(), "chase_constant_bank", &err));
  check(err, "clCreateKernel (chase_constant_bank)");
  program_ = std::move(p);
  kernel_ = std::move(k);
  words_ = words;
  built_once_ = true;
  return kernel_.get();
}

}  // namespace gd::opencl
