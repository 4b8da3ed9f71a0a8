// Every generated CUDA compute kernel compiles with NVRTC (no GPU needed) and its PTX holds
// the instruction it is meant to time.
#include <gtest/gtest.h>

#include <future>
#include <vector>

#include "compute/compute.hpp"
#include "cuda_probes.hpp"
#include "cuda_util.hpp"

namespace {

std::string arch(const gd::ComputeOp& op) { return op.sm90a ? "compute_90a" : "compute_90"; }

void expect_compiles(const gd::ComputeOp& op, const gd::ComputeOp* mix) {
  const std::vector<int> ilps = op.warpgroup ? std::vector<int>{1} : std::vector<int>{1, 2, 4, 8};
  const std::string src = gd::generate_cuda_source(op, ilps, mix);
  std::string ptx;
  ASSERT_NO_THROW(ptx = gd::cuda::compile_to_ptx(src, arch(op))) << op.name << "\n" << src;
  EXPECT_NE(ptx.find(op.ptx_expect), std::string::npos) << op.name << " lacks " << op.ptx_expect;
  if (mix) EXPECT_NE(ptx.find(mix->ptx_expect), std::string::npos) << mix->ptx_expect;
  for (int ilp : ilps)
    EXPECT_NE(ptx.find(gd::compute_kernel_name(ilp)), std::string::npos) << op.name;
}

}  // namespace

TEST(CudaCompile, EveryGeneratedKernelHoldsItsInstruction) {
  // NVRTC compiles concurrently, as the probe does on the GPU machine.
  std::vector<std::future<void>> fs;
  for (const auto& op : gd::compute_ops())
    fs.push_back(std::async(std::launch::async, [&op] { expect_compiles(op, nullptr); }));
  for (auto& f : fs) f.get();
}

TEST(CudaCompile, MixedPairs) {
  const char* pairs[][2] = {{"fp32.fma", "int32.mad"},
                            {"fp32.fma", "sfu.ex2"},
                            {"fp32.fma", "fp16x2.fma"},
                            {"fp32.fma", "lds.chase"},
                            {"fp32.fma", "fp64.fma"}};
  for (auto& p : pairs) expect_compiles(*gd::find_compute_op(p[0]), gd::find_compute_op(p[1]));
}

TEST(CudaCompile, BadSourceThrowsWithLog) {
  EXPECT_THROW(gd::cuda::compile_to_ptx("extern \"C\" __global__ void k() { nope; }", "compute_90"),
               gd::BackendError);
}
