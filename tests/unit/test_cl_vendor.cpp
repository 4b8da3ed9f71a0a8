// The OpenCL kernels' clock per vendor without a GPU: which platform gets which counter, and
// the AMD source (clang's amdgcn builtins) writing the record NVIDIA's inline PTX writes.
// That source is built for amdgcn by tests/vendor/vendor_cl.cpp where clang is installed.
#include <gtest/gtest.h>

#include <string>

#include "compute/cl_vendor.hpp"
#include "compute/compute.hpp"

namespace {

using gd::OpenCLClock;

std::size_t count(const std::string& s, const std::string& what) {
  std::size_t n = 0;
  for (std::size_t p = s.find(what); p != std::string::npos; p = s.find(what, p + 1)) ++n;
  return n;
}

TEST(OpenCLVendorClock, ChosenByPlatform) {
  EXPECT_EQ(gd::opencl_clock_for("NVIDIA CUDA", "NVIDIA Corporation", true), OpenCLClock::nvidia);
  EXPECT_EQ(gd::opencl_clock_for("AMD Accelerated Parallel Processing",
                                 "Advanced Micro Devices, Inc.", true),
            OpenCLClock::amd);
  // AMD's platform on a CPU device, Mesa's compilers on AMD GPUs, Intel, PoCL: no counter.
  EXPECT_EQ(gd::opencl_clock_for("AMD Accelerated Parallel Processing",
                                 "Advanced Micro Devices, Inc.", false),
            OpenCLClock::none);
  EXPECT_EQ(gd::opencl_clock_for("Clover", "Mesa", true), OpenCLClock::none);
  EXPECT_EQ(gd::opencl_clock_for("rusticl", "Mesa/X.org", true), OpenCLClock::none);
  EXPECT_EQ(gd::opencl_clock_for("Intel(R) OpenCL Graphics", "Intel(R) Corporation", true),
            OpenCLClock::none);
  EXPECT_EQ(gd::opencl_clock_for("Portable Computing Language", "The pocl project", false),
            OpenCLClock::none);
}

TEST(OpenCLVendorClock, AmdSourceWritesNvidiasRecord) {
  const auto& op = *gd::find_compute_op("fp32.fma");
  gd::OpenCLSourceOptions amd, nv;
  amd.clock = OpenCLClock::amd;
  nv.nv_clock = true;
  const std::string a = gd::generate_opencl_source(op, {1, 8}, amd);
  const std::string n = gd::generate_opencl_source(op, {1, 8}, nv);
  // The macros once, before the first kernel; no inline PTX.
  EXPECT_EQ(count(a, "#define GD_AMD_CLOCKED 1"), 1u);
  EXPECT_LT(a.find("__builtin_amdgcn_s_memtime()"), a.find("__kernel"));
  EXPECT_LT(a.find("__builtin_amdgcn_s_memrealtime()"), a.find("__kernel"));
  EXPECT_EQ(count(a, "__builtin_amdgcn_s_getreg(4 | (31 << 11))"), 1u);   // HW_ID, gfx9
  EXPECT_EQ(count(a, "__builtin_amdgcn_s_getreg(23 | (31 << 11))"), 1u);  // HW_ID1, gfx10
  EXPECT_EQ(a.find("__asm__"), std::string::npos);
  // Per kernel: ns then cycles before the loop, cycles then ns after it, the CU once.
  for (const char* w : {"gd_t0 = GD_AMD_NS();\n  gd_c0 = GD_AMD_CYCLES();\n#pragma unroll 1\n",
                        "  }\n  gd_c1 = GD_AMD_CYCLES();\n  gd_t1 = GD_AMD_NS();\n",
                        "const uint gd_sm = GD_AMD_CU(gd_hw);"})
    EXPECT_EQ(count(a, w), 2u) << w;
  // The same record and the same loop as NVIDIA's: from the loop to the end, the two
  // sources differ only in how the counters are read.
  for (const char* w :
       {"tim[4 * gd_g] = gd_c1 - gd_c0;", "tim[4 * gd_g + 1] = gd_t0;",
        "tim[4 * gd_g + 2] = gd_t1;",
        "tim[4 * gd_g + 3] = ((ulong)gd_sm << 48) | (gd_c0 & 0xFFFFFFFFFFFFUL);", "fma(a"})
    EXPECT_EQ(count(a, w), count(n, w)) << w;
  EXPECT_EQ(a.find("tim[0] = (ulong)iters;"), std::string::npos);
}

TEST(OpenCLVendorClock, EveryOpenCLOpTakesAmdsClock) {
  gd::OpenCLSourceOptions o;
  o.clock = OpenCLClock::amd;
  for (const auto& op : gd::compute_ops()) {
    if (op.cl_step.empty()) continue;
    const std::string src = gd::generate_opencl_source(op, {1}, o);
    EXPECT_EQ(count(src, "= GD_AMD_CYCLES();"), 2u) << op.name;
    const std::size_t loop = src.find("for (int it = 0;");
    // Nothing of the clock inside the loop: the first read after it is the end's.
    EXPECT_EQ(src.find("GD_AMD", loop), src.find("gd_c1 = GD_AMD_CYCLES();") + 8) << op.name;
  }
}

TEST(OpenCLVendorClock, NvidiaWinsAndNoneIsPlain) {
  const auto& op = *gd::find_compute_op("int32.add");
  gd::OpenCLSourceOptions both, nv, none;
  both.nv_clock = nv.nv_clock = true;
  both.clock = OpenCLClock::amd;
  EXPECT_EQ(gd::generate_opencl_source(op, {1}, both), gd::generate_opencl_source(op, {1}, nv));
  none.clock = OpenCLClock::none;
  EXPECT_EQ(gd::generate_opencl_source(op, {1}, none), gd::generate_opencl_source(op, {1}));
  EXPECT_TRUE(gd::opencl_clock_code(OpenCLClock::none).start.empty());
}

TEST(OpenCLVendorClock, AmdSaysItWasNotValidated) {
  const std::string note = gd::opencl_clock_note(OpenCLClock::amd);
  EXPECT_NE(note.find("cycle counter: __builtin_amdgcn_s_memtime"), std::string::npos);
  EXPECT_NE(note.find("not validated on AMD hardware by this project"), std::string::npos);
  EXPECT_TRUE(gd::opencl_clock_note(OpenCLClock::nvidia).empty());
  EXPECT_TRUE(gd::opencl_clock_note(OpenCLClock::none).empty());
}

TEST(OpenCLVendorClock, NamesRoundTrip) {
  for (OpenCLClock c : {OpenCLClock::none, OpenCLClock::nvidia, OpenCLClock::amd}) {
    OpenCLClock back = OpenCLClock::none;
    ASSERT_TRUE(gd::parse_opencl_clock(gd::to_string(c), back));
    EXPECT_EQ(back, c);
  }
  OpenCLClock x = OpenCLClock::amd;
  EXPECT_FALSE(gd::parse_opencl_clock("intel", x));
  EXPECT_FALSE(gd::parse_opencl_clock("", x));
  EXPECT_EQ(x, OpenCLClock::amd);
}

}  // namespace
