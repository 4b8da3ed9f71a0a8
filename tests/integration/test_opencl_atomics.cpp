// The atomics probe through the real OpenCL backend (PoCL on the CPU in CI): local and
// global atomic_add / atomic_cmpxchg throughput and the CAS ping-pong run their real
// kernels, every result is checked exactly by the host, and the figures must be sane.
#include <CL/cl.h>
#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <string>

#include "../unit/figure_ids_check.hpp"
#include "atomics/run.hpp"
#include "opencl_backend.hpp"
#include "opencl_first_device.hpp"

namespace gd {
namespace {

TEST(OpenCLAtomics, ThroughputIsCheckedAndSane) {
  GD_OPEN_OPENCL_DEVICE(dev);
  auto* k = dev->kernels<AtomicsKernels>();
  ASSERT_NE(k, nullptr);
  EXPECT_FALSE(k->has_clock());
  for (AtomicSpace space : {AtomicSpace::shared, AtomicSpace::global})
    for (AtomicOp op : {AtomicOp::add, AtomicOp::cas})
      for (Contention c :
           {Contention::distinct, Contention::same_per_warp, Contention::same_per_block}) {
        ThroughputRequest r;
        r.space = space;
        r.op = op;
        r.contention = c;
        r.iterations = 64;
        r.repeats = 2;
        const std::string key = r.key();
        ASSERT_TRUE(k->supports(r).ok) << key << ": " << k->supports(r).reason;
        const ThroughputTiming t = k->throughput(r);
        EXPECT_EQ(t.check_error, "") << key;
        ASSERT_EQ(t.seconds.size(), 2u) << key;
        EXPECT_EQ(t.layout.iterations, 64u) << key;
        for (double s : t.seconds) {
          EXPECT_GT(s, 0) << key;
          const double gops = double(t.layout.ops()) / s / 1e9;
          EXPECT_GT(gops, 1e-4) << key;
          EXPECT_LT(gops, 1e4) << key;
        }
      }
  // A bank-conflict pattern in local memory, and what OpenCL cannot do.
  ThroughputRequest conflict;
  conflict.space = AtomicSpace::shared;
  conflict.contention = Contention::bank_conflict;
  conflict.ways = 8;
  conflict.iterations = 32;
  conflict.repeats = 1;
  EXPECT_EQ(k->throughput(conflict).check_error, "");
  ThroughputRequest f32;
  f32.type = AtomicType::f32;
  EXPECT_FALSE(k->supports(f32).ok);
  ThroughputRequest red;
  red.use_return = false;
  EXPECT_FALSE(k->supports(red).ok);
}

// One throughput request, run for real and checked exactly by the host (gd::throughput_check:
// every word must hold the count of adds, or the extreme min / max operand, its layout says).
void expect_checked(AtomicsKernels& k, ThroughputRequest r) {
  const std::string key = r.key();
  r.iterations = 64;
  r.repeats = 1;
  ASSERT_TRUE(k.supports(r).ok) << key << ": " << k.supports(r).reason;
  const ThroughputTiming t = k.throughput(r);
  EXPECT_EQ(t.check_error, "") << key;
  EXPECT_EQ(t.layout.iterations, 64u) << key;
  ASSERT_EQ(t.seconds.size(), 1u) << key;
  EXPECT_GT(t.seconds[0], 0) << key;
}

// Whether device 0 of platform 0 (what open_opencl_device opens) lists the extension.
bool first_device_has(const std::string& extension) {
  cl_platform_id platform = nullptr;
  cl_device_id device = nullptr;
  if (clGetPlatformIDs(1, &platform, nullptr) != CL_SUCCESS ||
      clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 1, &device, nullptr) != CL_SUCCESS)
    return false;
  std::size_t n = 0;
  clGetDeviceInfo(device, CL_DEVICE_EXTENSIONS, 0, nullptr, &n);
  std::string ext(n, '\0');
  clGetDeviceInfo(device, CL_DEVICE_EXTENSIONS, n, ext.data(), nullptr);
  return (" " + std::string(ext.c_str()) + " ").find(" " + extension + " ") != std::string::npos;
}

// atomic_min / atomic_max (core OpenCL C 1.2), 64-bit atom_add where the device lists
// cl_khr_int64_base_atomics (PoCL does), the add at work-group scope where the device builds
// OpenCL C 2.0 or 3.0; float adds only with cl_ext_float_atomics; each one the device cannot
// do names the extension or limit that stops it.
TEST(OpenCLAtomics, MinMaxInt64ScopeAndFloatAreCheckedOrNameTheirLimit) {
  GD_OPEN_OPENCL_DEVICE(dev);
  auto* k = dev->kernels<AtomicsKernels>();
  ASSERT_NE(k, nullptr);
  for (AtomicOp op : {AtomicOp::min, AtomicOp::max})
    for (Contention c : {Contention::distinct, Contention::same_per_warp, Contention::same_gpu}) {
      ThroughputRequest r;
      r.op = op;
      r.contention = c;
      expect_checked(*k, r);
    }
  ThroughputRequest u64;
  u64.type = AtomicType::u64;
  for (Contention c : {Contention::distinct, Contention::same_per_block}) {
    u64.contention = c;
    const Support s = k->supports(u64);
    if (s.ok || first_device_has("cl_khr_int64_base_atomics"))
      expect_checked(*k, u64);
    else
      EXPECT_NE(s.reason.find("cl_khr_int64_base_atomics"), std::string::npos) << s.reason;
  }
  for (AtomicSpace space : {AtomicSpace::global, AtomicSpace::shared})
    for (AtomicType type : {AtomicType::f32, AtomicType::f64}) {
      if (space == AtomicSpace::shared && type == AtomicType::f64) continue;  // not planned
      ThroughputRequest f;
      f.space = space;
      f.type = type;
      const Support s = k->supports(f);
      if (s.ok)
        expect_checked(*k, f);
      else
        EXPECT_NE(s.reason.find("cl_ext_float_atomics"), std::string::npos) << s.reason;
    }
  // Work-group scope (CUDA's cta) through OpenCL C 2.0 / 3.0 where the device builds it (PoCL
  // does); the system scope names why OpenCL's widest scope is no system scope here.
  ThroughputRequest cta;
  cta.scope = AtomicScope::cta;
  for (Contention c : {Contention::distinct, Contention::same_per_block}) {
    cta.contention = c;
    const Support s = k->supports(cta);
    if (s.ok || dev->info().extra.at("platform").find("Portable") != std::string::npos)
      expect_checked(*k, cta);
    else
      EXPECT_NE(s.reason.find("no scopes"), std::string::npos) << s.reason;
  }
  ThroughputRequest sys;
  sys.scope = AtomicScope::sys;
  EXPECT_NE(k->supports(sys).reason.find("memory_scope_all_svm_devices"), std::string::npos);
  ThroughputRequest half;
  half.type = AtomicType::f16x2;
  EXPECT_NE(k->supports(half).reason.find("packed"), std::string::npos);
  ThroughputRequest local_min;  // not part of the plan: no kernel, said so
  local_min.space = AtomicSpace::shared;
  local_min.op = AtomicOp::min;
  EXPECT_NE(k->supports(local_min).reason.find("not part of the plan"), std::string::npos);
}

// Global figures at CUDA's placements (gd::placement_stride apart in one buffer): every repeat
// (3 at most with placements) visits every placement and each placement's memory (and CAS
// successes) is checked exactly; local memory has one placement; a count outside 1..16 is
// refused.
TEST(OpenCLAtomics, GlobalTargetsAtEveryPlacementAreChecked) {
  GD_OPEN_OPENCL_DEVICE(dev);
  auto* k = dev->kernels<AtomicsKernels>();
  ASSERT_NE(k, nullptr);
  for (AtomicOp op : {AtomicOp::add, AtomicOp::cas, AtomicOp::max}) {
    ThroughputRequest r;
    r.op = op;
    r.iterations = 64;
    r.repeats = 5;  // at most kPlacedRepeats (3) with placements
    r.placements = 4;
    const std::string key = r.key();
    const ThroughputTiming t = k->throughput(r);
    EXPECT_EQ(t.check_error, "") << key;
    EXPECT_EQ(t.seconds.size(), 12u) << key;
    ASSERT_EQ(t.seconds_by_placement.size(), 4u) << key;
    for (const auto& p : t.seconds_by_placement) {
      ASSERT_EQ(p.size(), 3u) << key;
      for (double s : p) EXPECT_GT(s, 0) << key;
    }
  }
  ThroughputRequest local;
  local.space = AtomicSpace::shared;
  local.iterations = 64;
  local.repeats = 2;
  local.placements = 4;
  const ThroughputTiming t = k->throughput(local);
  EXPECT_EQ(t.check_error, "");
  EXPECT_TRUE(t.seconds_by_placement.empty());
  EXPECT_EQ(t.seconds.size(), 2u);
  ThroughputRequest bad;
  bad.iterations = 64;
  bad.placements = kMaxPlacements + 1;
  EXPECT_THROW(k->throughput(bad), BackendError);
  bad.placements = 0;
  EXPECT_THROW(k->throughput(bad), BackendError);
}

TEST(OpenCLAtomics, GlobalPingPongIsCheckedAndNeverHangs) {
  GD_OPEN_OPENCL_DEVICE(dev);
  auto* k = dev->kernels<AtomicsKernels>();
  ASSERT_NE(k, nullptr);
  ASSERT_TRUE(k->supports(PingPong::global_cas).ok);
  PingPongRequest r;
  r.kind = PingPong::global_cas;
  r.round_trips = 300;  // two CPU threads hand over slowly on a loaded CI machine
  r.repeats = 3;
  const PingPongTiming t = k->ping_pong(r);
  // Two work-groups on a CPU runtime may not run at once: then the bounded spin reports a
  // timeout (and the check says so) instead of hanging. Either way the outcome is checked.
  const std::string err = pingpong_check(t.outcome, t.total_round_trips);
  if (!err.empty()) {
    EXPECT_GT(t.outcome.timeouts, 0u) << err;  // the only acceptable failure
    GTEST_SKIP() << "the two work-groups did not run concurrently here: " << err;
  }
  EXPECT_EQ(t.total_round_trips, 600u);
  EXPECT_EQ(t.outcome.final_value, 1200u);
  ASSERT_EQ(t.ns_per_handoff.size(), 3u);
  EXPECT_TRUE(t.cycles_per_handoff.empty());
  for (double ns : t.ns_per_handoff) {
    EXPECT_GT(ns, 1.0);  // a hand-over through memory is not free
    // nor 50 ms (a unit error): on a loaded 2-core CI machine, where the two CPU threads lose
    // their time slices to other tests, a hand-over was seen to take 1.3 ms.
    EXPECT_LT(ns, 5e7);
  }
  EXPECT_TRUE(t.ns_by_location.empty());  // one location asked for
  // CUDA's flag locations (gd::kLocationStride apart): every repeat visits each, every game
  // checked; each location keeps its own samples.
  r.round_trips = 32;  // the count is what is tested here, not the latency
  r.repeats = 2;
  r.locations = 3;
  const PingPongTiming u = k->ping_pong(r);
  const std::string uerr = pingpong_check(u.outcome, u.total_round_trips);
  if (!uerr.empty()) {
    EXPECT_GT(u.outcome.timeouts, 0u) << uerr;
    GTEST_SKIP() << "the two work-groups did not run concurrently here: " << uerr;
  }
  EXPECT_EQ(u.total_round_trips, 64u);
  EXPECT_EQ(u.ns_per_handoff.size(), 6u);
  ASSERT_EQ(u.ns_by_location.size(), 3u);
  for (const auto& l : u.ns_by_location) EXPECT_EQ(l.size(), 2u);
  r.locations = kMaxLocations + 1;
  EXPECT_THROW(k->ping_pong(r), BackendError);
}

TEST(OpenCLAtomics, LocalPingPongUnsupportedOnCpuWithReason) {
  GD_OPEN_OPENCL_DEVICE(dev);
  auto* k = dev->kernels<AtomicsKernels>();
  ASSERT_NE(k, nullptr);
  const Support s = k->supports(PingPong::shared_cas);
  if (s.ok) {
    PingPongRequest r;
    r.kind = PingPong::shared_cas;
    r.round_trips = 500;
    r.repeats = 2;
    const PingPongTiming t = k->ping_pong(r);
    EXPECT_EQ(pingpong_check(t.outcome, t.total_round_trips), "");
  } else {
    EXPECT_NE(s.reason.find("serialize"), std::string::npos) << s.reason;
  }
  EXPECT_FALSE(k->supports(PingPong::host).ok);
}

TEST(OpenCLAtomics, RealProbeQuick) {
  GD_OPEN_OPENCL_DEVICE(dev);
  NullProgress progress;
  std::atomic<bool> stop{false};
  AtomicsProbeResult out;
  // 4 placements and flag locations of 32 round trips (CUDA's 16 of 250 cost CI time, not
  // coverage: two CPU threads hand over in milliseconds on a loaded machine).
  run_atomics(*dev,
              parse_atomics_options({{"quick", "1"},
                                     {"repeats", "2"},
                                     {"placements", "4"},
                                     {"locations", "4"},
                                     {"round_trips", "256"}}),
              progress, stop, out);
  {  // every figure the run gives carries an id its probe declares
    gd::RunResult ids_run;
    ids_run.put(out);
    gd::expect_figure_ids_declared(ids_run);
  }
  EXPECT_FALSE(out.clock_mhz_measured);
  const AtomicThroughput& sh = out.throughput.at("shared.add_i32.distinct");
  ASSERT_TRUE(sh.status.ok()) << sh.status.reason;
  ASSERT_TRUE(sh.gops);
  EXPECT_FALSE(sh.ops_per_clk_sm);  // no clock, no per-clock figure
  EXPECT_GT(sh.ops_per_launch, 0u);
  const AtomicThroughput& gl = out.throughput.at("global.add_i32.distinct");
  ASSERT_TRUE(gl.status.ok()) << gl.status.reason;
  // Global figures are means over the placements asked for, with CUDA's placement summary
  // and its text in the figure's `where`; local ones have one placement.
  EXPECT_EQ(gl.placements, 4);
  ASSERT_TRUE(gl.placement_gops);
  EXPECT_EQ(gl.placement_gops->values.size(), 4u);
  EXPECT_EQ(sh.placements, 1);
  EXPECT_FALSE(sh.placement_gops);
  bool where_seen = false;
  for (const Figure& f : atomics_figures(out, dev->info()))
    if (f.id == "atomics.global.add_i32.distinct") {
      where_seen = true;
      EXPECT_NE(f.where.find("over 4 target placements"), std::string::npos) << f.where;
    }
  EXPECT_TRUE(where_seen);
  const AtomicLatency& pp = out.latency.at("global.cas_pingpong");
  if (pp.status.ok()) {
    EXPECT_EQ(pp.locations, 4);
    ASSERT_TRUE(pp.placement_ns);
    EXPECT_EQ(pp.placement_ns->values.size(), 4u);
  }
  EXPECT_EQ(out.throughput.at("global.red_i32.distinct").status.name(), "unsupported");
  EXPECT_EQ(out.latency.at("host.pingpong").status.name(), "unsupported");
  ASSERT_TRUE(out.matrix);
  EXPECT_EQ(out.matrix->status.name(), "unsupported");
  // Every figure that ran is either ok or failed only because the two work-groups of the
  // global ping-pong could not run at once on this runtime.
  for (const auto& [n, l] : out.latency)
    if (l.status.code == StatusCode::error)
      EXPECT_NE(l.status.reason.find("bound"), std::string::npos) << n << ": " << l.status.reason;
  for (const auto& [n, t] : out.throughput)
    EXPECT_TRUE(t.status.ok() || t.status.code == StatusCode::unsupported)
        << n << ": " << t.status.reason;
}

}  // namespace
}  // namespace gd
