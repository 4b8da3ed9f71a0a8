// Where device memory starts, as the bandwidth curves show it: find_memory_plateau on
// measured curves, the probe adopting it on a fake CPU-like device whose API reports a cache
// its loads do not see, and the plateau lines agreeing with the summary's figures.
#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include "bandwidth/bandwidth.hpp"
#include "bandwidth/run.hpp"
#include "fake_device.hpp"
#include "figure_ids_check.hpp"
#include "gpudissect/budget.hpp"
#include "gpudissect/progress.hpp"

namespace gd {
namespace {

constexpr double MiB = 1024.0 * 1024.0;

std::vector<FootprintRate> rates(const std::vector<std::pair<double, double>>& mib_gbps) {
  std::vector<FootprintRate> v;
  for (const auto& [mib, gbps] : mib_gbps) v.push_back({mib * MiB, gbps});
  return v;
}

// PoCL's read curve on a 2-vCPU VM (the API says 480 MiB of L3): 57 GB/s to 32 MiB, 49 at
// 64 MiB, 28-24 from 128 MiB to 512 MiB.
TEST(MemoryPlateau, CpuVmReadCurve) {
  const auto m = find_memory_plateau(rates({{1, 91.7},
                                            {2, 105.5},
                                            {4, 84.5},
                                            {8, 57.4},
                                            {16, 57.7},
                                            {32, 57.5},
                                            {64, 49.0},
                                            {128, 28.1},
                                            {256, 26.1},
                                            {512, 24.2}}));
  ASSERT_TRUE(m);
  EXPECT_EQ(m->first_bytes, 128 * MiB);
  EXPECT_EQ(m->last_cached_bytes, 64 * MiB);
  EXPECT_NEAR(m->gbps, 26.1, 0.01);
  EXPECT_EQ(m->points, 3u);
}

// The H100's committed read curve (results/nvidia-h100): memory from 82.5 MiB, the L2's
// last point at 57.8 MiB, near the API's 50 MiB.
TEST(MemoryPlateau, H100ReadCurve) {
  const auto m = find_memory_plateau(rates({{8, 32141},
                                            {16.5, 27047},
                                            {24.8, 31153},
                                            {41.2, 26885},
                                            {57.8, 11019},
                                            {82.5, 3147},
                                            {124, 3132},
                                            {173, 3119},
                                            {256, 3109},
                                            {355, 3105},
                                            {512, 3101},
                                            {4096, 3102}}));
  ASSERT_TRUE(m);
  EXPECT_EQ(m->first_bytes, 82.5 * MiB);
  EXPECT_EQ(m->last_cached_bytes, 57.8 * MiB);
}

// A 16-core VM's read curve (ppd 1): its L3 still serves 128-256 MiB (107-112 GB/s, flat over
// one doubling); memory reads 65-82 GB/s from 512 MiB. Two points over one doubling are not a
// plateau; three over two are, from 512 MiB (flat within 20 %).
TEST(MemoryPlateau, TwoDoublingsNotOne) {
  EXPECT_FALSE(
      find_memory_plateau(rates({{16, 186}, {32, 134}, {64, 142}, {128, 107}, {256, 112}})));
  const auto m = find_memory_plateau(
      rates({{32, 171}, {64, 150}, {128, 136}, {256, 91}, {512, 70}, {1024, 79}, {2048, 76}}));
  ASSERT_TRUE(m);
  EXPECT_EQ(m->first_bytes, 512 * MiB);
  EXPECT_EQ(m->last_cached_bytes, 128 * MiB);  // 136 >= 1.5 x 76; the probe takes 256 (512 / 2)
}

TEST(MemoryPlateau, NoneWithoutAStepOrAFlatEnd) {
  // The H100's write curve: a hump in the L2, no point 1.5x above the memory plateau.
  EXPECT_FALSE(find_memory_plateau(rates({{8, 3967},
                                          {16.5, 4081},
                                          {41.2, 4229},
                                          {57.8, 3731},
                                          {82.5, 3404},
                                          {256, 3219},
                                          {512, 3125}})));
  // Flat from end to end: no cache seen.
  EXPECT_FALSE(find_memory_plateau(rates({{1, 20}, {4, 21}, {16, 20}, {64, 21}})));
  // Still falling: not flat over two doublings.
  EXPECT_FALSE(
      find_memory_plateau(rates({{16, 57}, {32, 57}, {64, 49}, {128, 40}, {256, 31}, {512, 24}})));
  // One or two points past the step are not a plateau (the VM's copy: 256 MiB and 3.75 GiB).
  EXPECT_FALSE(find_memory_plateau(rates({{32, 58}, {64, 55}, {128, 24}})));
  EXPECT_FALSE(find_memory_plateau(rates({{32, 58}, {64, 55}, {128, 24}, {256, 24}})));
  EXPECT_FALSE(
      find_memory_plateau(rates({{32, 58.5}, {64, 54.7}, {128, 29.6}, {256, 23.8}, {3840, 24.0}})));
  // The step must be near the plateau: a fast point 32x below it is another level's.
  EXPECT_FALSE(
      find_memory_plateau(rates({{0.5, 100}, {8, 40}, {16, 30}, {32, 28}, {64, 27}, {128, 26}})));
  EXPECT_TRUE(
      find_memory_plateau(rates({{1, 100}, {8, 40}, {16, 30}, {32, 28}, {64, 27}, {128, 26}})));
  EXPECT_FALSE(find_memory_plateau({}));
}

// A device through a fake backend, instant (the planner sees no time spent): streams run at
// `inner` GB/s up to `inner_cache` bytes, `fast` up to `cache` and at memory speed beyond.
class FakeStreams final : public BandwidthKernels {
 public:
  FakeStreams(double cache, double fast, double slow, double inner_cache = 0, double inner = 0)
      : cache_(cache), fast_(fast), slow_(slow), inner_cache_(inner_cache), inner_(inner) {}
  uint64_t stream_chunk_bytes(const StreamRequest&) const override { return 4096; }
  int stream_blocks() const override { return 2; }
  Support supports(BwOp, BwLoad load) const override {
    return load == BwLoad::cached ? Support::yes() : Support::no("fake: plain loads only");
  }
  StreamTiming stream(const StreamRequest& r) override {
    StreamTiming t;
    t.layout =
        r.flat ? stream_layout_flat(r.buffer_bytes, 4096) : stream_layout(r.buffer_bytes, 2, 4096);
    const double fp = double(stream_footprint(r.op, t.layout));
    // Twice the cache: a little of it still hit (the VM's 128 MiB read: 28 against 24-26).
    const double rate = fp <= inner_cache_ ? inner_
                        : fp <= cache_     ? fast_
                        : fp <= 2 * cache_ ? 1.12 * slow_
                                           : slow_;
    const double bytes = double(stream_traffic(r.op, t.layout, r.passes).total());
    for (int k = 0; k < r.repeats; ++k)  // +-30 % from noisy_from on: an unstable point
      t.seconds.push_back(bytes / (rate * 1e9) * (fp >= noisy_from ? 1.0 + 0.3 * (k % 3 - 1) : 1));
    largest = std::max(largest, fp);
    return t;
  }
  Support supports_host(bool) const override { return Support::no("fake"); }
  HostTiming host(const HostRequest&) override { throw BackendError("fake: no host link"); }
  double largest = 0;
  double noisy_from = 1e30;

 private:
  double cache_, fast_, slow_, inner_cache_, inner_;
};

BandwidthProbeResult run_fake(FakeStreams& k, std::optional<uint64_t> api_cache, bool quick,
                              bool cpu = false) {
  DeviceInfo info;
  info.backend = "opencl";
  info.id = "fake:0";
  info.name = "fake";
  info.compute_units = 2;
  info.memory_bytes = 16ull << 30;
  info.l2_bytes = api_cache;
  if (cpu) info.extra["device_type"] = "CPU";
  fakes::OneKernelSetDevice<BandwidthKernels> dev(&k, info);
  std::map<std::string, std::string> kv = {{"parts", "footprint"}, {"large", "0"}};
  if (quick) kv["quick"] = "1";
  const BandwidthOptions opt = parse_bandwidth_options(kv);
  NullProgress progress;
  std::atomic<bool> stop{false};
  BandwidthProbeResult out;
  run_bandwidth(dev, opt, progress, stop, out);
  return out;
}

const BandwidthFigure* figure(const BandwidthProbeResult& r, const std::string& name) {
  for (const BandwidthFigure& f : r.figures)
    if (f.name == name) return &f;
  return nullptr;
}

// The CPU VM: the API reports 480 MiB, reads run at 100 GB/s to 2 MiB (L2), 57 to 64 MiB
// (its share of the L3) and see memory past that. The read curve passes the L3 plateau
// (flat over 4x, but starting below 480 MiB / 8), finds memory from 128 MiB (flat to 512
// MiB), and every curve after sweeps to 8x 64 MiB (the quick run to 4x): each curve
// has a device-memory figure at memory speed, and its plateau line says the same.
TEST(MemoryPlateauProbe, SlowDeviceFindsMemoryBelowTheApiCache) {
  for (bool quick : {false, true}) {
    SCOPED_TRACE(quick ? "quick" : "full");
    FakeStreams k(64 * MiB, 57, 25, 2 * MiB, 100);
    const BandwidthProbeResult r = run_fake(k, uint64_t(480 * MiB), quick);
    ASSERT_TRUE(r.status.ok()) << r.status.reason;
    ASSERT_TRUE(r.last_cache_bytes);
    EXPECT_EQ(*r.last_cache_bytes, uint64_t(64 * MiB));
    EXPECT_EQ(r.last_cache_source.rfind("read curve", 0), 0u) << r.last_cache_source;
    EXPECT_NE(r.last_cache_source.find("480 MiB"), std::string::npos) << r.last_cache_source;
    // Nothing near the API's 8x 480 MiB was read.
    EXPECT_LE(k.largest, 512 * MiB);
    for (const char* op : {"read", "write", "copy"}) {
      const BandwidthFigure* f = figure(r, std::string("device memory ") + op);
      ASSERT_TRUE(f) << op;
      EXPECT_NEAR(f->gbps.median, 25, 0.5) << op;
      const BandwidthCurve& c = r.footprint.at(op);
      ASSERT_FALSE(c.levels.empty()) << op;
      EXPECT_EQ(c.levels.back().name, "device memory") << op;
      EXPECT_NEAR(c.levels.back().gbps, 25, 0.5) << op;
    }
    // The read curve's points past its plateau are skipped with the reason.
    bool skipped_past = false;
    for (const BandwidthPoint& p : r.footprint.at("read").points)
      if (p.status.code == StatusCode::skipped &&
          p.status.reason.find("past device memory's plateau") == 0)
        skipped_past = true;
    EXPECT_TRUE(skipped_past);
  }
}

// A GPU-like device whose API cache is right (50 MiB, memory past it): nothing is adopted
// and the sweeps reach 8x the API's cache as before. Nor without a reported cache size.
TEST(MemoryPlateauProbe, ApiCacheThatHoldsIsKept) {
  FakeStreams k(50 * MiB, 10000, 3000);
  const BandwidthProbeResult r = run_fake(k, uint64_t(50 * MiB), false);
  ASSERT_TRUE(r.status.ok()) << r.status.reason;
  EXPECT_FALSE(r.last_cache_bytes);
  EXPECT_GE(k.largest, 400 * MiB);
  const BandwidthFigure* f = figure(r, "device memory read");
  ASSERT_TRUE(f);
  EXPECT_EQ(f->where, "read at 512 MiB");
  EXPECT_NEAR(f->gbps.median, 3000, 1);
  FakeStreams slow(64 * MiB, 57, 25, 2 * MiB, 100);
  EXPECT_FALSE(run_fake(slow, std::nullopt, true).last_cache_bytes);
  // A fast (GPU-like) device keeps its API's cache even where a curve steps below it: its
  // L1s together are a large part of its L2, and its API reports the L2 its loads see.
  FakeStreams gpu(64 * MiB, 10000, 3000);
  EXPECT_FALSE(run_fake(gpu, uint64_t(480 * MiB), true).last_cache_bytes);
}

// A device-memory figure comes from a curve's largest stable point past 4x the last cache:
// the VM's non-temporal write read 42 GB/s +-23 % at 512 MiB, 48.5 +-1 % at 256 MiB.
TEST(MemoryPlateauProbe, FiguresPreferTheLargestStablePoint) {
  FakeStreams k(64 * MiB, 57, 25, 2 * MiB, 100);
  k.noisy_from = 400 * MiB;
  const BandwidthProbeResult r = run_fake(k, uint64_t(480 * MiB), false);
  const BandwidthFigure* f = figure(r, "device memory write");
  ASSERT_TRUE(f);
  EXPECT_EQ(f->where, "write at 256 MiB");
  EXPECT_FALSE(is_unstable(f->gbps));
  RunResult rr;
  rr.put(r);
  EXPECT_GT(expect_figure_ids_declared(rr), 0);
  bool measured_512 = false;  // the noisy point was measured, and passed over
  for (const BandwidthPoint& p : r.footprint.at("write").points)
    measured_512 |= p.status.ok() && p.x == 512 * MiB && p.gbps && is_unstable(*p.gbps);
  EXPECT_TRUE(measured_512);
}

// An OpenCL device of CPU type is planned as a slow device whatever its speed (a 16-core VM
// read 200 GB/s in cache): one point per doubling, and its own memory plateau is believed.
TEST(MemoryPlateauProbe, ACpuDeviceIsPlannedAsSlowAtAnySpeed) {
  FakeStreams fast_cpu(64 * MiB, 200, 60, 2 * MiB, 400);
  const BandwidthProbeResult r = run_fake(fast_cpu, uint64_t(480 * MiB), false, true);
  ASSERT_TRUE(r.last_cache_bytes);
  EXPECT_EQ(*r.last_cache_bytes, uint64_t(64 * MiB));
  for (const BandwidthPoint& p : r.footprint.at("write").points)  // powers of two only
    EXPECT_EQ(p.x, std::exp2(std::round(std::log2(p.x)))) << p.x;
  // The same speeds without the type: a GPU-like plan (two points per doubling, API kept).
  FakeStreams fast(64 * MiB, 200, 60, 2 * MiB, 400);
  const BandwidthProbeResult g = run_fake(fast, uint64_t(480 * MiB), false, false);
  EXPECT_FALSE(g.last_cache_bytes);
}

// The plateau lines agree with the figures: a curve with points past 4x the last cache but
// no device-memory level gets one; "<cache> to device memory (no step)" is split.
TEST(MemoryPlateauProbe, DeviceMemoryLevelsAgreeWithTheFigures) {
  BandwidthProbeResult bw;
  auto curve = [](std::vector<std::pair<double, double>> mib_gbps) {
    BandwidthCurve c;
    for (const auto& [mib, g] : mib_gbps) {
      BandwidthPoint p;
      p.x = mib * MiB;
      p.gbps = Summary{g, g, g, g, g, 3};
      c.points.push_back(p);
    }
    return c;
  };
  const auto pts = std::vector<std::pair<double, double>>{{1, 100},  {16, 57},  {64, 49},
                                                          {128, 28}, {256, 26}, {512, 24}};
  bw.footprint["read"] = curve(pts);  // no level found
  bw.footprint["copy"] = curve(pts);
  BandwidthLevel no_step;
  no_step.name = "L3 to device memory (no step)";
  no_step.gbps = 60;
  bw.footprint["copy"].levels = {no_step};
  bw.footprint["write"] = curve(pts);
  BandwidthLevel l3, memory;
  l3.name = "L3";
  l3.gbps = 57;
  memory.name = "device memory";
  memory.gbps = 27;  // the median from 128 MiB: partly cached points
  bw.footprint["write"].levels = {l3, memory};
  bw.footprint["write_flat"] = curve({{128, 20}, {512, 21}});
  // The VM's streaming copy: a plateau to 128 MiB named device memory by the latency map.
  bw.footprint["copy_streaming"] = curve(pts);
  BandwidthLevel early = memory, late = memory;
  early.capacity_lo_bytes = uint64_t(128 * MiB);
  late.name = "device memory (2)";
  bw.footprint["copy_streaming"].levels = {l3, early, late};
  device_memory_levels(bw, uint64_t(64 * MiB));

  auto names = [](const BandwidthCurve& c) {
    std::vector<std::string> v;
    for (const auto& l : c.levels) v.push_back(l.name);
    return v;
  };
  using V = std::vector<std::string>;
  EXPECT_EQ(names(bw.footprint["read"]), V{"device memory"});
  EXPECT_DOUBLE_EQ(bw.footprint["read"].levels[0].gbps, 25);  // 256 and 512 MiB
  EXPECT_EQ(names(bw.footprint["copy"]), (V{"L3", "device memory"}));
  EXPECT_DOUBLE_EQ(bw.footprint["copy"].levels[0].gbps, 53);  // 1 to 128 MiB: 100, 57, 49, 28
  EXPECT_EQ(names(bw.footprint["write"]), (V{"L3", "device memory"}));
  EXPECT_DOUBLE_EQ(bw.footprint["write"].levels[1].gbps, 25);
  EXPECT_TRUE(bw.footprint["write_flat"].levels.empty());
  EXPECT_EQ(names(bw.footprint["copy_streaming"]), (V{"L3", "partly cached", "device memory"}));
  EXPECT_DOUBLE_EQ(bw.footprint["copy_streaming"].levels[2].gbps, 25);
  // Without a last cache nothing changes.
  BandwidthProbeResult same = bw;
  same.footprint["read"].levels.clear();
  device_memory_levels(same, std::nullopt);
  EXPECT_TRUE(same.footprint["read"].levels.empty());
}

}  // namespace
}  // namespace gd
