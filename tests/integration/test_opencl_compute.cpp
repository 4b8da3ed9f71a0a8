// The real compute probe through the OpenCL backend (PoCL on the CPU in CI): a few ops run
// end to end, their figures are sane, FMA counts 2 flops the same way everywhere, the host
// reference of the FMA chains matches, and what the device lacks is unsupported with a reason.
#include <gtest/gtest.h>

#include <atomic>
#include <cmath>

#include "../unit/figure_ids_check.hpp"
#include "compute/run.hpp"
#include "opencl_backend.hpp"
#include "opencl_first_device.hpp"

namespace gd {
namespace {

TEST(OpenCLCompute, ProbeMeasuresAFewOps) {
  GD_OPEN_OPENCL_DEVICE(dev);
  NullProgress progress;
  std::atomic<bool> stop{false};
  ComputeProbeResult out;
  // fp16x2 and the sub-group shuffle are absent on PoCL's CPU device (no cl_khr_fp16, no
  // sub-groups): they must come back unsupported, with the reason.
  const ComputeOptions opt = parse_compute_options(
      {{"repeats", "2"},
       {"ms", "0.5"},
       {"ops", "fp32.fma,fp64.fma,int32.mad,int32.add,sfu.rsqrt,fp16x2.fma,warp.shfl_idx"}});
  run_compute(*dev, opt, progress, stop, out);
  {  // every figure the run gives carries an id its probe declares
    gd::RunResult ids_run;
    ids_run.put(out);
    gd::expect_figure_ids_declared(ids_run);
  }
  ASSERT_TRUE(dev->kernels<gd::ComputeKernels>());
  EXPECT_TRUE(out.status.ok()) << out.status.reason;
  EXPECT_EQ(out.language, "opencl");
  ASSERT_EQ(out.table.size(), 7u);
  int measured = 0;
  for (const auto& f : out.table) {
    SCOPED_TRACE(f.op);
    if (f.status.code == StatusCode::unsupported) {
      EXPECT_FALSE(f.status.reason.empty());
      EXPECT_FALSE(f.ops_per_s);
      continue;
    }
    // FP32/FP64 fma carry a host reference: ok means the device's chain matched it.
    ASSERT_TRUE(f.status.ok()) << f.status.reason;
    ++measured;
    ASSERT_TRUE(f.ops_per_s && f.ops_per_clk_sm && f.latency_cycles);
    EXPECT_GT(f.ops_per_s->median, 1e6);
    EXPECT_TRUE(std::isfinite(f.ops_per_s->median));
    EXPECT_GT(f.ops_per_clk_sm->median, 0);
    EXPECT_TRUE(std::isfinite(f.ops_per_clk_sm->median));
    EXPECT_GT(f.latency_cycles->median, 0);
    // No clock on OpenCL: per-clock figures rest on the reported clock and say so.
    EXPECT_EQ(f.clock_source, "reported");
    EXPECT_TRUE(f.opcodes.empty());  // no SASS to read here
  }
  EXPECT_GE(measured, 4);
  EXPECT_EQ(out.clock_source, "reported");
  for (const char* fma : {"fp32.fma", "fp64.fma", "int32.mad"}) {
    const ComputeFigure* f = nullptr;
    for (const auto& e : out.table)
      if (e.op == fma) f = &e;
    ASSERT_TRUE(f) << fma;
    if (f->status.code == StatusCode::unsupported) continue;
    EXPECT_DOUBLE_EQ(f->flops_per_op.value_or(0), 2.0) << fma;
  }
}

// Every op with an OpenCL C version, built and run on the device (PoCL in CI) at quick sizes:
// each is measured and passes the host check (every work-group wrote the same words, and
// the FP64 fma forms match the host's replay), or is unsupported naming the extension the
// device lacks; ops OpenCL C cannot state name the limit, never "yet".
TEST(OpenCLCompute, EveryOpenCLOpIsMeasuredOrNamesItsLimit) {
  GD_OPEN_OPENCL_DEVICE(dev);
  NullProgress progress;
  std::atomic<bool> stop{false};
  ComputeProbeResult out;
  const ComputeOptions opt = parse_compute_options(
      {{"repeats", "1"},
       {"ms", "0.1"},
       {"tensor", "0"},
       {"ops", "fp32.max,fp64,fp16,int32,int64,sfu.sqrt,sfu.cos,precise,conv,warp"}});
  run_compute(*dev, opt, progress, stop, out);
  ASSERT_TRUE(out.status.ok()) << out.status.reason;
  int measured = 0;
  for (const auto& f : out.table) {
    SCOPED_TRACE(f.op);
    const ComputeOp& op = *find_compute_op(f.op);
    EXPECT_EQ(f.status.reason.find("yet"), std::string::npos) << f.status.reason;
    if (op.cl_step.empty()) {
      EXPECT_EQ(f.status.name(), "unsupported");
      EXPECT_NE(f.status.reason.find("OpenCL C"), std::string::npos) << f.status.reason;
      continue;
    }
    if (f.status.code == StatusCode::unsupported) {
      // Only a missing extension (or PoCL's broken sub-group kernels) or a device without
      // correctly rounded divide and sqrt stops an op that has an OpenCL version.
      const bool ext =
          !op.cl_ext.empty() && (f.status.reason.find(op.cl_ext) != std::string::npos ||
                                 f.status.reason.find("cl_khr_subgroups") != std::string::npos ||
                                 f.status.reason.find("PoCL") != std::string::npos);
      const bool ieee = !op.cl_options.empty() &&
                        f.status.reason.find("CL_FP_CORRECTLY_ROUNDED") != std::string::npos;
      EXPECT_TRUE(ext || ieee) << f.status.reason;
      continue;
    }
    ASSERT_TRUE(f.status.ok()) << f.status.reason;
    ++measured;
    ASSERT_TRUE(f.ops_per_s && f.latency_cycles);
    EXPECT_GT(f.ops_per_s->median, 1e5);
    EXPECT_TRUE(std::isfinite(f.ops_per_s->median));
    EXPECT_GT(f.latency_cycles->median, 0.5);
  }
  // PoCL's CPU device has cl_khr_fp64 and correctly rounded divide: at least the FP32/FP64,
  // INT32/INT64, SFU, precise and conversion ops without an fp16 or sub-group extension run.
  EXPECT_GE(measured, 20);
}

// The ops outside the table: the __local pointer chase (for mixed pairs) and the work-group
// barrier run, and every work-group folds the same words.
TEST(OpenCLCompute, SharedChaseAndBarrierRun) {
  GD_OPEN_OPENCL_DEVICE(dev);
  auto* k = dev->kernels<ComputeKernels>();
  ASSERT_TRUE(k);
  for (int ilp : {1, 8}) {
    SCOPED_TRACE(ilp);
    ComputeLaunch l{"lds.chase", "", ilp};
    l.iters = 3;
    const ComputeTiming t = k->run(l);
    EXPECT_TRUE(t.check_ok) << t.check;
    EXPECT_GT(t.span_ns, 0);
  }
  ComputeLaunch bar{"sync.bar", "", 1};
  bar.latency = true;
  bar.block_threads = 8;
  bar.iters = 2;
  const ComputeTiming t = k->run(bar);
  EXPECT_TRUE(t.check_ok) << t.check;
  EXPECT_EQ(t.threads, 8u);
}

TEST(OpenCLCompute, HostReferenceCatchesAWrongChain) {
  // The reference replays a = fma(a, b, c): a chain that ran one step fewer differs.
  const auto& op = *find_compute_op("fp32.fma");
  EXPECT_NE(reference_checksum(op, 8, 256), reference_checksum(op, 8, 255));
  EXPECT_NE(reference_checksum(*find_compute_op("fp64.fma"), 4, 64),
            reference_checksum(*find_compute_op("fp64.fma_rrr"), 4, 64));
  EXPECT_FALSE(reference_checksum(*find_compute_op("int32.mad"), 1, 10));
}

}  // namespace
}  // namespace gd
