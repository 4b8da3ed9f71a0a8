// Counting conventions that keep the compute figures of CUDA, OpenCL and Vulkan on one GPU
// comparable (docs/backends.md, "Differences left, and why"): what counts as the op in a
// loop's SASS, which loop's SASS scales a latency, and chains no compiler can shorten.
#include <gtest/gtest.h>

#include <stdexcept>

#include "compute/compute.hpp"
#include "compute/run.hpp"

namespace {

// A kernel set whose only behaviour is the SASS of the loop asked for.
class SassOnly final : public gd::ComputeKernels {
 public:
  gd::LoopSass ilp1, ilp8;
  bool throws = false;
  std::string language() const override { return "cuda"; }
  gd::Support supports(const gd::ComputeOp&) override { return gd::Support::yes(); }
  gd::ComputeTiming run(const gd::ComputeLaunch&) override { return {}; }
  gd::LoopSass sass(const gd::ComputeLaunch& l) override {
    if (throws) throw std::runtime_error("no SASS");
    return l.ilp == 1 ? ilp1 : ilp8;
  }
};

gd::LoopSass loop(std::map<std::string, int> opcodes) {
  gd::LoopSass s;
  s.read = true;
  s.opcodes = std::move(opcodes);
  for (const auto& [op, n] : s.opcodes) s.loop_instructions += n;
  return s;
}

}  // namespace

// ptxas splits INT32 adds between IADD3 and IMAD.IADD (the H200's CUDA loop: 258 + 254 of
// 512): both are the add, so the loop holds one per counted op, not 0.5 (which doubled the
// chain's latency to 10.1 cycles).
TEST(ComputeAgree, IntegerAddCountsBothPipes) {
  const gd::ComputeOp& add = *gd::find_compute_op("int32.add");
  const gd::LoopSass s = loop({{"IMAD.IADD", 258}, {"IADD3", 254}, {"BRA", 1}});
  EXPECT_EQ(gd::count_opcodes(s, add.sass_expect), 512);
  // An IMAD that is a multiply-add is not an add.
  EXPECT_EQ(gd::count_opcodes(loop({{"IMAD", 512}}), add.sass_expect), 0);
}

// The latency is scaled by the latency loop's own SASS (ILP 1), never by the throughput
// loop's: at ILP 8 ptxas packs two scalar FP16 chains into one HFMA2 (0.5 per op), which one
// chain cannot.
TEST(ComputeAgree, LatencyScaleComesFromTheLatencyLoop) {
  SassOnly k;
  k.ilp8 = loop({{"HFMA2", 256}, {"BRA", 1}});
  k.ilp1 = loop({{"HFMA2", 512}, {"BRA", 1}});
  gd::ComputeLaunch l{"fp16.fma", "", 1};
  l.latency = true;
  const auto per = gd::latency_sass_per_op(k, l);
  ASSERT_TRUE(per);
  EXPECT_DOUBLE_EQ(*per, 1.0);
  // A loop that did fuse: half the counted ops, so the latency doubles per instruction.
  k.ilp1 = loop({{"HFMA2", 256}, {"BRA", 1}});
  EXPECT_DOUBLE_EQ(gd::latency_sass_per_op(k, l).value_or(0), 0.5);
  // No machine code (Vulkan), or none readable: no scale.
  k.ilp1 = {};
  EXPECT_FALSE(gd::latency_sass_per_op(k, l));
  k.throws = true;
  EXPECT_FALSE(gd::latency_sass_per_op(k, l));
}

// With its SASS read (CUDA, OpenCL on NVIDIA), an INT32 add up to twice the integer pipe's
// peak is the two-pipe split too: the fraction goes, the figure and its peak stay, and the
// note says why.
TEST(ComputeAgree, TwoPipeAddWithSassKeepsItsPeak) {
  gd::ComputeFigure f;
  f.op = "int32.add";
  f.opcodes = {"IMAD.IADD x258", "IADD3 x254"};
  f.peak_per_clk_sm = 64;
  f.fraction_of_peak = 126.4 / 64;
  f.ops_per_s = gd::Summary{33e12, 33e12, 33e12, 33e12, 33e12, 3};
  gd::withhold_impossible(f);
  EXPECT_TRUE(f.status.ok()) << f.status.reason;
  EXPECT_FALSE(f.fraction_of_peak);
  EXPECT_TRUE(f.peak_per_clk_sm);
  EXPECT_NE(f.note.find("IMAD.IADD"), std::string::npos);
}

// INT64 chains are a Fibonacci step and a product of the chain's last two values on every
// backend: CUDA's a + K let ptxas merge two adds of K into one three-input IADD3 (2.1 cycles
// a step on an H200, against 4.3 through OpenCL and 4.7 through Vulkan).
TEST(ComputeAgree, Int64ChainsTakeTheirPreviousValue) {
  for (const char* n : {"int64.add", "int64.mul"}) {
    SCOPED_TRACE(n);
    const gd::ComputeOp& op = *gd::find_compute_op(n);
    const std::string src = gd::generate_cuda_source(op, {1});
    EXPECT_NE(src.find(": \"l\"(p0)); p0 = t; }"), std::string::npos) << src;
    EXPECT_EQ(src.find("\"l\"(ub64)"), std::string::npos);
    EXPECT_NE(src.find(op.ptx_expect), std::string::npos);
    EXPECT_NE(op.cl_step.find("p{i} = t"), std::string::npos);
  }
}
