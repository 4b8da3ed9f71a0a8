// The frontend probe's generated CUDA kernels compile with NVRTC (no GPU needed) and their
// PTX holds the loop body asked for: one fma.rn.f32 per generated instruction, per region.
// The disabled test times NVRTC on the default sweep (run it with
// --gtest_also_run_disabled_tests to size the sweep against the 60 s budget).
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <future>

#include "cuda_util.hpp"
#include "frontend/run.hpp"
#include "frontend/frontend.hpp"

namespace {

int count(const std::string& s, const std::string& what) {
  int n = 0;
  for (std::size_t p = s.find(what); p != std::string::npos; p = s.find(what, p + what.size())) ++n;
  return n;
}

TEST(CudaFrontendCompile, LoopBodyInPtx) {
  for (const gd::IcacheKernelSpec spec : {gd::IcacheKernelSpec{1024, 1}, gd::IcacheKernelSpec{264, 4}}) {
    const std::string src = gd::generate_icache_cuda(spec);
    std::string ptx;
    ASSERT_NO_THROW(ptx = gd::cuda::nvrtc_compile(src, "compute_90", false).image) << src.substr(0, 2000);
    EXPECT_EQ(count(ptx, "fma.rn.f32"), spec.body_instructions * spec.regions);
    EXPECT_NE(ptx.find(gd::icache_kernel_name()), std::string::npos);
    EXPECT_NE(ptx.find("%globaltimer"), std::string::npos);
  }
}

TEST(CudaFrontendCompile, OccupancyKernelsAtEveryRegisterCount) {
  for (int regs : {32, 64, 128, 255}) {
    SCOPED_TRACE(regs);
    const std::string src = gd::generate_occupancy_cuda(regs);
    // 1024-thread bounds would cap ptxas at 64 registers and flatten the staircase.
    EXPECT_NE(src.find("__launch_bounds__(128)"), std::string::npos);
    gd::cuda::Compiled c;
    ASSERT_NO_THROW(c = gd::cuda::nvrtc_compile(src, "sm_90", true,
                                                {"--maxrregcount=" + std::to_string(regs)}))
        << src;
    EXPECT_GT(c.image.size(), 0u);
    const std::string ptx = gd::cuda::nvrtc_compile(src, "compute_90", false).image;
    EXPECT_NE(ptx.find("gd_occ"), std::string::npos);
    EXPECT_NE(ptx.find("%smid"), std::string::npos);
    EXPECT_NE(ptx.find("%warpid"), std::string::npos);
  }
}

TEST(CudaFrontendCompile, CubinForSm90) {
  const auto c = gd::cuda::nvrtc_compile(gd::generate_icache_cuda({512, 1}), "sm_90", true);
  EXPECT_GT(c.image.size(), 512u * 16);
}

TEST(CudaFrontendCompile, DISABLED_SweepCompileTime) {
  const auto sizes = gd::icache_sizes(1024, 131072, 2);
  std::vector<std::future<double>> fs;
  const auto t0 = std::chrono::steady_clock::now();
  for (int n : sizes)
    fs.push_back(std::async(std::launch::async, [n] {
      const auto a = std::chrono::steady_clock::now();
      gd::cuda::nvrtc_compile(gd::generate_icache_cuda({n, 1}), "sm_90", true);
      return std::chrono::duration<double>(std::chrono::steady_clock::now() - a).count();
    }));
  for (std::size_t i = 0; i < sizes.size(); ++i)
    std::printf("%7d instructions: %.2f s\n", sizes[i], fs[i].get());
  std::printf("sweep, all in parallel: %.2f s wall\n",
              std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
}

}  // namespace
