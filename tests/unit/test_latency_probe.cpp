// The latency probe against a fake device whose latency curve is known exactly: level
// finding, refinement to 1/8 of a doubling, naming, and every way a point or path can fail.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <functional>
#include <list>
#include <thread>
#include <unordered_map>

#include "fake_device.hpp"
#include "figure_ids_check.hpp"
#include "gpudissect/chain.hpp"
#include "gpudissect/sweep.hpp"
#include "latency/latency.hpp"
#include "latency/run.hpp"
#include "registry.hpp"
#include "run_probe.hpp"

namespace {

using namespace gd;
constexpr uint64_t KiB = 1024, MiB = 1024 * KiB, GiB = 1024 * MiB;

// An H200-like hierarchy scaled down: L1 64 KiB, L2 near 2 MiB, L2 far 4 MiB (the API
// reports 4 MiB of L2), memory beyond. Cycles at 1500 MHz.
double staircase(uint64_t footprint) {
  if (footprint <= 64 * KiB) return 30;
  if (footprint <= 2 * MiB) return 200;
  if (footprint <= 4 * MiB) return 400;
  return 600;
}

// The one fake device with a pointer chase of its own: every memory path, a clock.
class FakeDevice final : public fakes::FakeDevice {
 public:
  FakeDevice() {
    info_.backend = "cuda";
    info_.id = "cuda:0";
    info_.name = "Fake GPU";
    info_.compute_units = 4;
    info_.l2_bytes = 4 * MiB;
    info_.memory_bytes = 64 * GiB;
  }
  Support supports(MemPath p) const override {
    if (p == MemPath::texture) return Support::no("no textures on the fake");
    return Support::yes();
  }
  uint64_t max_footprint(MemPath p) const override {
    return p == MemPath::shared ? 128 * KiB : 32 * GiB;
  }
  // A CPU device through OpenCL (no clock): the device type is what the probe looks at.
  void make_cpu(uint64_t reported_cache) {
    info_.backend = "opencl";
    info_.id = "opencl:0.0";
    info_.name = "Fake CPU";
    info_.extra["device_type"] = "CPU";
    info_.l1_or_cacheline_bytes = 64;
    info_.l2_bytes = reported_cache;
  }
  // A GPU through Vulkan, whose l2 path is a coherent load that may or may not skip L1.
  void make_vulkan() {
    info_.backend = "vulkan";
    info_.id = "vulkan:0";
  }
  const ChaseRequest* last_request = nullptr;  // valid inside latency_of only

  ChaseTiming chase(const ChaseRequest& req) override {
    ++chases;
    if (fail_at_chase && chases == fail_at_chase) throw BackendError("illegal address (fake)");
    if (stop_after && chases >= stop_after) *stop = true;
    const uint64_t fp = req.footprint_bytes();
    if (fp > alloc_limit) throw AllocationFailed("fake: out of memory");
    ChaseTiming t;
    last_request = &req;
    const double cyc = latency_of ? latency_of(req) : latency(fp);
    for (int r = 0; r < req.repeats; ++r) {
      t.cycles_per_hop.push_back(cyc);
      t.ns_per_hop.push_back(cyc / 1.5);
    }
    t.clock_mhz = 1500;
    t.end_line = walk(*req.next, 0, req.warmup_hops + req.hops_per_repeat * req.repeats);
    if (lose_loads) t.end_line = (t.end_line + 1) % req.next->size();
    return t;
  }
  std::optional<ClockSample> sample_clock() override { return ClockSample{1500, 1000}; }
  void release_memory() override { ++releases; }
  int releases = 0;

  std::function<double(uint64_t)> latency = staircase;
  // Where set, the latency of a whole request (it sees the chain), instead of `latency`.
  std::function<double(const ChaseRequest&)> latency_of;
  uint64_t alloc_limit = UINT64_MAX;
  int fail_at_chase = 0;
  int stop_after = 0;
  std::atomic<bool>* stop = nullptr;
  bool lose_loads = false;
  int chases = 0;
};

LatencyOptions small(std::vector<MemPath> paths) {
  LatencyOptions o;
  o.paths = std::move(paths);
  o.max_footprint = 64 * MiB;
  o.budget.hops_per_repeat = 64;
  o.budget.repeats = 3;
  o.tlb = false;
  return o;
}

// The shared path, then the TLB sweep at a 2 MiB stride up to `max_footprint`.
LatencyProbeResult run_tlb_sweep(FakeDevice& dev, uint64_t max_footprint) {
  auto o = small({MemPath::shared});
  o.tlb = true;
  o.tlb_strides = {2 * MiB};
  o.tlb_max_footprint = max_footprint;
  LatencyProbeResult out;
  fakes::run_probe(run_latency, dev, o, out);
  return out;
}

const Level* level(const CurveResult& c, const std::string& name) {
  for (const auto& l : c.levels)
    if (l.name == name) return &l;
  return nullptr;
}

TEST(LatencyProbe, FindsNamesAndLocatesEveryLevel) {
  FakeDevice dev;
  LatencyProbeResult out;
  fakes::run_probe(run_latency, dev, small({MemPath::global}), out);
  ASSERT_TRUE(out.status.ok()) << out.status.reason;
  const CurveResult& c = out.paths.at("global");
  ASSERT_EQ(c.levels.size(), 4u);
  EXPECT_EQ(c.levels[0].name, "L1");
  EXPECT_EQ(c.levels[1].name, "L2 near");
  EXPECT_EQ(c.levels[2].name, "L2 far");
  EXPECT_EQ(c.levels[3].name, "device memory");
  const double expect_cycles[] = {30, 200, 400, 600};
  const uint64_t capacity[] = {64 * KiB, 2 * MiB, 4 * MiB};
  for (int k = 0; k < 4; ++k) {
    ASSERT_TRUE(c.levels[k].latency_cycles);
    EXPECT_DOUBLE_EQ(*c.levels[k].latency_cycles, expect_cycles[k]);
    EXPECT_DOUBLE_EQ(*c.levels[k].latency_ns, expect_cycles[k] / 1.5);
    if (k == 3) {
      EXPECT_FALSE(c.levels[k].capacity_bytes);
      continue;
    }
    // The bracket holds the true capacity and is refined to 1/8 of a doubling.
    ASSERT_TRUE(c.levels[k].capacity_lo_bytes && c.levels[k].capacity_hi_bytes);
    EXPECT_LE(*c.levels[k].capacity_lo_bytes, capacity[k]);
    EXPECT_GT(*c.levels[k].capacity_hi_bytes, capacity[k]);
    EXPECT_LE(double(*c.levels[k].capacity_hi_bytes) / double(*c.levels[k].capacity_lo_bytes),
              kCapacityResolution * 1.001);
  }
  ASSERT_TRUE(c.dram_minus_last_cache_cycles);
  EXPECT_DOUBLE_EQ(*c.dram_minus_last_cache_cycles, 200);
  // The sweep runs from 1 KiB to the maximum, in order.
  EXPECT_EQ(c.points.front().footprint_bytes, 1 * KiB);
  EXPECT_EQ(c.points.back().footprint_bytes, 64 * MiB);
  for (std::size_t i = 1; i < c.points.size(); ++i)
    EXPECT_LT(c.points[i - 1].footprint_bytes, c.points[i].footprint_bytes);
  ASSERT_TRUE(out.clock_mhz_measured);
  EXPECT_DOUBLE_EQ(*out.clock_mhz_measured, 1500);
  // The memory the sweep kept is given back for the probes after it.
  EXPECT_EQ(dev.releases, 1);
  EXPECT_GT(out.wall_seconds, 0);
  // Each capacity figure carries its bracket's width as its step (what compare --baseline
  // allows it to move by), the other figures none.
  RunResult r;
  r.probes["latency"] = out;
  EXPECT_GT(expect_figure_ids_declared(r), 0);
  int capacities = 0;
  for (const Figure& f : collect_figures(r, probe_registry())) {
    if (f.id.rfind("latency.global.", 0) != 0) continue;
    if (f.unit == "bytes") {
      ++capacities;
      ASSERT_TRUE(f.resolution) << f.id;
      // At least one step: 2^(1/32) at the last cache's far edge (add_far_edge_points).
      EXPECT_GE(*f.resolution, std::exp2(1.0 / 32) - 1.001) << f.id;
      EXPECT_LE(*f.resolution, kCapacityResolution * 1.001 - 1) << f.id;
    } else {
      EXPECT_FALSE(f.resolution) << f.id;
    }
  }
  EXPECT_EQ(capacities, 3);
}

TEST(LatencyProbe, ThePathThatSkipsL1StartsAtL2) {
  FakeDevice dev;
  dev.latency = [](uint64_t fp) { return fp <= 64 * KiB ? 200.0 : staircase(fp); };
  LatencyProbeResult out;
  fakes::run_probe(run_latency, dev, small({MemPath::l2}), out);
  const CurveResult& c = out.paths.at("l2");
  ASSERT_EQ(c.levels.size(), 3u);
  EXPECT_EQ(c.levels[0].name, "L2 near");
  EXPECT_EQ(c.levels[2].name, "device memory");
}

// Vulkan's l2 path (a coherent load) is checked against the global path at its smallest
// footprint: where it skips L1 its levels start at L2, as CUDA's.
TEST(LatencyProbe, AnL2PathThatSkipsL1IsCheckedAndStartsAtL2) {
  FakeDevice dev;
  dev.make_vulkan();
  dev.latency_of = [](const ChaseRequest& r) {
    const uint64_t fp = r.footprint_bytes();
    return r.path == MemPath::l2 && fp <= 64 * KiB ? 200.0 : staircase(fp);
  };
  for (auto paths : {std::vector<MemPath>{MemPath::global, MemPath::l2}, {MemPath::l2}}) {
    LatencyProbeResult out;
    fakes::run_probe(run_latency, dev, small(paths), out);
    const CurveResult& c = out.paths.at("l2");
    ASSERT_EQ(c.levels.size(), 3u) << paths.size();
    EXPECT_EQ(c.levels[0].name, "L2 near");
    EXPECT_EQ(c.note.find("skip L1"), std::string::npos) << c.note;
  }
}

// ... and where its loads hit L1 (a CPU driver keeps `coherent` with its coherent L1), its
// levels are numbered from L1 and the note says why: never an L1 labelled L2. The check
// times both paths again at the smallest footprint, so it needs no global path in the run.
TEST(LatencyProbe, AnL2PathThatHitsL1IsNumberedFromL1) {
  FakeDevice dev;
  dev.make_vulkan();
  for (auto paths : {std::vector<MemPath>{MemPath::global, MemPath::l2}, {MemPath::l2}}) {
    dev.chases = 0;
    LatencyProbeResult out;
    fakes::run_probe(run_latency, dev, small(paths), out);
    const CurveResult& c = out.paths.at("l2");
    EXPECT_TRUE(c.status.ok()) << c.status.reason;
    ASSERT_EQ(c.levels.size(), 4u) << paths.size();
    EXPECT_EQ(c.levels[0].name, "L1");
    EXPECT_EQ(c.levels[1].name, "L2 near");
    EXPECT_EQ(c.levels[3].name, "device memory");
    EXPECT_NE(c.note.find("do not skip L1"), std::string::npos) << c.note;
    EXPECT_NE(c.note.find("20.0 ns against 20.0 ns"), std::string::npos) << c.note;
  }
}

TEST(LatencyProbe, UnsupportedPathSaysWhyAndTheRunGoesOn) {
  FakeDevice dev;
  LatencyProbeResult out;
  fakes::run_probe(run_latency, dev, small({MemPath::texture, MemPath::shared}), out);
  EXPECT_EQ(out.paths.at("texture").status.name(), "unsupported");
  EXPECT_EQ(out.paths.at("texture").status.reason, "no textures on the fake");
  EXPECT_TRUE(out.paths.at("texture").points.empty());
  const CurveResult& shared = out.paths.at("shared");
  EXPECT_TRUE(shared.status.ok());
  // Shared memory stops at what one block may hold.
  EXPECT_EQ(shared.points.back().footprint_bytes, 128 * KiB);
  ASSERT_FALSE(shared.levels.empty());
  EXPECT_EQ(shared.levels[0].name, "shared");
}

TEST(LatencyProbe, PointsThatCannotBeAllocatedAreSkippedWithTheReason) {
  FakeDevice dev;
  dev.alloc_limit = 16 * MiB;
  LatencyProbeResult out;
  fakes::run_probe(run_latency, dev, small({MemPath::global}), out);
  const CurveResult& c = out.paths.at("global");
  int skipped = 0;
  for (const auto& p : c.points) {
    if (p.footprint_bytes > 16 * MiB) {
      EXPECT_EQ(p.status.code, StatusCode::skipped);
      EXPECT_NE(p.status.reason.find("out of memory"), std::string::npos);
      EXPECT_FALSE(p.cycles);
      ++skipped;
    } else {
      EXPECT_TRUE(p.status.ok());
    }
  }
  EXPECT_GT(skipped, 0);
  EXPECT_NE(level(c, "device memory"), nullptr);
}

TEST(LatencyProbe, BackendErrorNamesProbePathAndPointAndKeepsWhatWasMeasured) {
  FakeDevice dev;
  dev.fail_at_chase = 5;
  LatencyProbeResult out;
  try {
    fakes::run_probe(run_latency, dev, small({MemPath::global, MemPath::l2}), out);
    FAIL() << "expected a ProbeError";
  } catch (const ProbeError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("latency probe"), std::string::npos) << what;
    EXPECT_NE(what.find("path global"), std::string::npos) << what;
    EXPECT_NE(what.find("point 5"), std::string::npos) << what;
    EXPECT_NE(what.find("illegal address"), std::string::npos) << what;
  }
  EXPECT_EQ(out.status.name(), "error");
  EXPECT_EQ(dev.releases, 1);  // also after an error
  EXPECT_EQ(out.paths.at("global").status.name(), "error");
  EXPECT_EQ(out.paths.at("global").points.size(), 4u);
}

TEST(LatencyProbe, LostLoadsMarkThePointInError) {
  FakeDevice dev;
  dev.lose_loads = true;
  LatencyProbeResult out;
  auto o = small({MemPath::global});
  o.max_footprint = 64 * KiB;
  fakes::run_probe(run_latency, dev, o, out);
  const CurveResult& c = out.paths.at("global");
  ASSERT_FALSE(c.points.empty());
  for (const auto& p : c.points) {
    if (p.footprint_bytes < 256) continue;  // one line: every walk ends where it started
    EXPECT_EQ(p.status.code, StatusCode::error) << p.footprint_bytes;
    EXPECT_NE(p.status.reason.find("lost"), std::string::npos);
    EXPECT_FALSE(p.cycles);
  }
}

// A point holding a one-time stall (a driver compiling a kernel on its first launch, behind
// the run's background compiles) sets no rate, the path's first or a later one: the rest of
// the sweep runs. Timed by that point (0.6 s of a 1 s budget), every later point would have
// been skipped.
class StalledPoint : public ::testing::TestWithParam<int> {};

TEST_P(StalledPoint, DoesNotSkipTheRestOfTheSweep) {
  FakeDevice dev;
  const int stalled = GetParam();
  dev.latency_of = [&](const ChaseRequest& req) {
    if (dev.chases == stalled) std::this_thread::sleep_for(std::chrono::milliseconds(600));
    return staircase(req.footprint_bytes());
  };
  auto o = small({MemPath::global});
  o.max_footprint = 8 * MiB;
  o.path_budget_seconds = 1;
  LatencyProbeResult out;
  fakes::run_probe(run_latency, dev, o, out);
  const CurveResult& c = out.paths.at("global");
  ASSERT_TRUE(c.status.ok()) << c.status.reason;
  int skipped = 0;
  for (const auto& p : c.points) skipped += p.status.code == StatusCode::skipped;
  EXPECT_EQ(skipped, 0);
  EXPECT_EQ(c.levels.size(), 4u);
}

INSTANTIATE_TEST_SUITE_P(LatencyProbe, StalledPoint, ::testing::Values(1, 12));

TEST(LatencyProbe, StopKeepsWhatWasMeasuredAndSaysInterrupted) {
  FakeDevice dev;
  std::atomic<bool> stop{false};
  dev.stop = &stop;
  dev.stop_after = 6;
  NullProgress progress;
  LatencyProbeResult out;
  run_latency(dev, small({MemPath::global, MemPath::l2}), progress, stop, out);
  EXPECT_EQ(out.status.name(), "interrupted");
  EXPECT_EQ(out.paths.at("global").status.name(), "interrupted");
  EXPECT_EQ(out.paths.at("global").points.size(), 6u);
  EXPECT_EQ(out.paths.at("l2").status.name(), "skipped");
}

TEST(LatencyProbe, TlbSweepFindsReachAndMissCost) {
  FakeDevice dev;
  // 300 cycles while the pages fit a 1 GiB reach, 360 beyond.
  dev.latency = [](uint64_t fp) { return fp <= 1 * GiB ? 300.0 : 360.0; };
  const LatencyProbeResult out = run_tlb_sweep(dev, 8 * GiB);
  const CurveResult& t = out.tlb.at("stride_2097152");
  ASSERT_EQ(t.levels.size(), 2u);
  EXPECT_EQ(t.levels[0].name, "L1 TLB");
  EXPECT_EQ(t.levels[1].name, "page walk");
  ASSERT_TRUE(t.levels[0].capacity_lo_bytes && t.levels[0].capacity_hi_bytes);
  EXPECT_LE(*t.levels[0].capacity_lo_bytes, 1 * GiB);
  EXPECT_GT(*t.levels[0].capacity_hi_bytes, 1 * GiB);
  ASSERT_TRUE(t.levels[1].step_cycles);
  EXPECT_DOUBLE_EQ(*t.levels[1].step_cycles, 60);
  EXPECT_TRUE(t.note.empty());
}

// A least-recently-used set of pages: true on a hit.
class LruPages {
 public:
  explicit LruPages(std::size_t n) : n_(n) {}
  bool touch(uint64_t page) {
    auto it = where_.find(page);
    const bool hit = it != where_.end();
    if (hit) order_.erase(it->second);
    order_.push_front(page);
    where_[page] = order_.begin();
    if (order_.size() > n_) where_.erase(order_.back()), order_.pop_back();
    return hit;
  }

 private:
  std::size_t n_;
  std::list<uint64_t> order_;
  std::unordered_map<uint64_t, std::list<uint64_t>::iterator> where_;
};

// A CPU behind 4 KiB pages, in ns: L1 48 KiB (1.3), L2 1 MiB (4), memory (140) by the lines'
// own footprint (64 B each, whatever the stride), plus what translation costs, from LRU
// TLBs walked along the chain: 96 entries (free), 4096 entries (2 ns), else a walk (30 ns).
// A fully random chain misses the small TLB on almost every hop past 96 pages; a grouped
// one only when it enters a group.
double cpu_latency(const ChaseRequest& r) {
  const auto& next = *r.next;
  const uint64_t lines = next.size();
  const double line_fp = double(lines) * 64;
  const double cache = line_fp <= 48 * KiB ? 1.3 : line_fp <= 1 * MiB ? 4.0 : 140.0;
  LruPages l1(96), l2(4096);
  const uint64_t hops = std::min<uint64_t>(lines, 1 << 16);
  double walks = 0;
  uint32_t at = 0;
  for (int lap = 0; lap < 2; ++lap)
    for (uint64_t h = 0; h < hops; ++h, at = next[at]) {
      const uint64_t page = uint64_t(at) * r.stride_bytes / 4096;
      const bool hit1 = l1.touch(page), hit2 = l2.touch(page);
      if (lap == 1 && !hit1) walks += hit2 ? 2 : 30;
    }
  return cache + walks / double(hops);
}

TEST(LatencyProbeCpu, GroupedChainsShowTheCachesAloneAndTlbLevelsApart) {
  FakeDevice dev;
  dev.make_cpu(1 * MiB);
  dev.latency_of = cpu_latency;
  LatencyProbeResult out;
  auto o = small({MemPath::global});
  o.max_footprint = 8 * MiB;
  o.tlb.reset();  // the CPU default: on
  fakes::run_probe(run_latency, dev, o, out);
  ASSERT_TRUE(out.status.ok()) << out.status.reason;
  const CurveResult& c = out.paths.at("global");
  ASSERT_EQ(c.levels.size(), 3u);
  EXPECT_EQ(c.levels[0].name, "L1");
  EXPECT_EQ(c.levels[1].name, "L2");
  EXPECT_EQ(c.levels[2].name, "device memory");
  const uint64_t capacity[] = {48 * KiB, 1 * MiB};
  for (int k = 0; k < 2; ++k) {
    ASSERT_TRUE(c.levels[k].capacity_lo_bytes && c.levels[k].capacity_hi_bytes);
    EXPECT_LE(*c.levels[k].capacity_lo_bytes, capacity[k]);
    EXPECT_GT(*c.levels[k].capacity_hi_bytes, capacity[k]);
  }
  // The TLB sweep: a page and a line per hop, 16 pages to 64 MiB. Its lines pass the L1 at
  // 768 pages (3 MiB): that step is named as the L1's, and the TLB levels around it keep
  // their numbers.
  ASSERT_EQ(out.tlb.size(), 1u);
  const CurveResult& t = out.tlb.at("stride_4160");
  EXPECT_EQ(t.points.front().footprint_bytes, 16 * 4160u);
  EXPECT_LE(t.points.back().footprint_bytes, 64 * MiB);
  ASSERT_EQ(t.levels.size(), 4u);
  EXPECT_EQ(t.levels[0].name, "L1 TLB");
  EXPECT_EQ(t.levels[1].name, "L2 TLB");
  EXPECT_EQ(t.levels[2].name, "L2 TLB (L1 missed)");
  EXPECT_EQ(t.levels[3].name, "page walk (L1 missed)");
  ASSERT_TRUE(t.levels[0].capacity_bytes);
  EXPECT_LE(*t.levels[0].capacity_lo_bytes, 96 * 4160u);
  EXPECT_GT(*t.levels[0].capacity_hi_bytes, 96 * 4160u);
  EXPECT_FALSE(t.levels[1].capacity_bytes);  // ended by the L1 cache, not by a TLB
  ASSERT_TRUE(t.levels[2].capacity_bytes);
  EXPECT_LE(*t.levels[2].capacity_lo_bytes, 4096 * 4160u);
  EXPECT_GT(*t.levels[2].capacity_hi_bytes, 4096 * 4160u);
  EXPECT_NE(t.note.find("not a TLB"), std::string::npos) << t.note;
}

TEST(LatencyProbeCpu, FullyRandomChainsEndTheL2PlateauAtTheTlbReach) {
  // The failure the grouping removes: with latency.page=0 the L1 TLB's reach (384 KiB)
  // ends the L2 plateau long before the L2 is full.
  FakeDevice dev;
  dev.make_cpu(1 * MiB);
  dev.latency_of = cpu_latency;
  LatencyProbeResult out;
  auto o = small({MemPath::global});
  o.max_footprint = 8 * MiB;
  o.page_bytes = 0;
  fakes::run_probe(run_latency, dev, o, out);
  const CurveResult& c = out.paths.at("global");
  ASSERT_GE(c.levels.size(), 3u);
  ASSERT_TRUE(c.levels[1].capacity_lo_bytes);
  EXPECT_LT(*c.levels[1].capacity_lo_bytes, 512 * KiB);
}

TEST(LatencyProbeCpu, GpusKeepFullyRandomChainsAndTheirTlbStrides) {
  FakeDevice dev;  // a CUDA device
  bool grouped = false;
  dev.latency_of = [&](const ChaseRequest& r) {
    // A grouped chain's first hop stays inside its 64 KiB group far more often than chance.
    if (r.next->size() >= 4096) {
      uint32_t same = 0;
      for (uint32_t i = 0; i < 4096; ++i)
        same += uint64_t((*r.next)[i]) * r.stride_bytes / (64 * KiB) ==
                uint64_t(i) * r.stride_bytes / (64 * KiB);
      grouped = grouped || same > 2048;
    }
    return staircase(r.footprint_bytes());
  };
  LatencyProbeResult out;
  auto o = small({MemPath::global});
  o.tlb.reset();
  o.tlb_max_footprint = 64 * MiB;
  fakes::run_probe(run_latency, dev, o, out);
  EXPECT_FALSE(grouped);
  EXPECT_EQ(out.tlb.size(), 4u);
  EXPECT_TRUE(out.tlb.count("stride_2097152"));
}

TEST(LatencyProbe, FlatTlbCurveSaysTheReachExceedsTheSweep) {
  FakeDevice dev;
  dev.latency = [](uint64_t) { return 300.0; };
  const LatencyProbeResult out = run_tlb_sweep(dev, 4 * GiB);
  const CurveResult& t = out.tlb.at("stride_2097152");
  ASSERT_EQ(t.levels.size(), 1u);
  EXPECT_EQ(t.levels[0].name, "TLB hit");
  EXPECT_NE(t.note.find("exceeds 4 GiB"), std::string::npos) << t.note;
}

// The one path order of the figure ids and every report: the MemPath order, then the rest.
TEST(LatencyPathOrder, MemPathOrderThenOthers) {
  LatencyProbeResult r;
  for (const char* n : {"zz_other", "shared", "global", "constant", "l2"}) r.paths[n];
  EXPECT_EQ(path_order(r),
            (std::vector<std::string>{"global", "l2", "constant", "shared", "zz_other"}));
  EXPECT_TRUE(path_order(LatencyProbeResult{}).empty());
}

// The H200's grid (1 KiB to 256 MiB, 4 per doubling, 128-byte stride, 60 MiB L2): between its
// points 53.8 and 64 MiB, 32 per doubling from 53.8 to 61.3 MiB, where the far L2 edge ramps;
// the grid's own points kept, nothing added elsewhere.
TEST(LatencyGrid, FarEdgePointsAre32PerDoublingAroundTheLastCache) {
  const uint64_t lo = 1 * KiB, hi = 256 * MiB, stride = 128, l2 = 60 * MiB;
  const std::vector<uint64_t> grid = log_spaced_footprints(lo, hi, 4, stride);
  const std::vector<uint64_t> dense = add_far_edge_points(grid, lo, hi, 4, stride, l2);
  for (uint64_t g : grid) EXPECT_TRUE(std::count(dense.begin(), dense.end(), g)) << g;
  for (std::size_t i = 1; i < dense.size(); ++i) EXPECT_LT(dense[i - 1], dense[i]);
  std::vector<uint64_t> added;
  for (uint64_t d : dense)
    if (!std::count(grid.begin(), grid.end(), d)) added.push_back(d);
  // 55.0, 56.2, 57.4, 58.7, 60.0, 61.3 MiB: the capacity bytes the H200 runs bracket with
  // (58.7 MiB = 61539072, 61.3 MiB = 64263680) among them.
  ASSERT_EQ(added.size(), 6u);
  const double mib = double(MiB);
  const double want[] = {55.0, 56.2, 57.4, 58.7, 60.0, 61.3};
  for (int k = 0; k < 6; ++k) EXPECT_NEAR(double(added[k]) / mib, want[k], 0.05) << k;
  EXPECT_TRUE(std::count(added.begin(), added.end(), uint64_t(61539072)));
  EXPECT_TRUE(std::count(added.begin(), added.end(), uint64_t(64263680)));
  // 53.8 MiB (56431616) is the grid's own point; the steps there are 2^(1/32).
  const auto at = std::find(dense.begin(), dense.end(), uint64_t(56431616));
  ASSERT_NE(at, dense.end());
  for (auto it = at; it + 1 != dense.end() && *(it + 1) <= 64263680; ++it)
    EXPECT_NEAR(double(*(it + 1)) / double(*it), std::exp2(1.0 / 32), 1e-4);
  // Nothing without a cache size, and nothing beyond the sweep's bounds.
  EXPECT_EQ(add_far_edge_points(grid, lo, hi, 4, stride, 0), grid);
  EXPECT_EQ(add_far_edge_points(log_spaced_footprints(lo, 32 * MiB, 4, stride), lo, 32 * MiB, 4,
                                stride, l2),
            log_spaced_footprints(lo, 32 * MiB, 4, stride));
}

// Through the probe: a GPU's global and L2-only paths get the points at its reported L2's edge,
// its other paths and a CPU device's do not (its sweeps are slow and its last cache no hashed GPU
// L2).
TEST(LatencyGrid, TheProbeSweepsThemOnAGpuOnly) {
  auto count_near = [](const CurveResult& c, uint64_t cache) {
    int n = 0;
    for (const LatencyPoint& p : c.points)
      if (double(p.footprint_bytes) >= double(cache) * std::exp2(-5.0 / 32) * 0.999 &&
          double(p.footprint_bytes) <= double(cache) * std::exp2(1.0 / 32) * 1.001)
        ++n;
    return n;
  };
  FakeDevice gpu;
  LatencyProbeResult out;
  fakes::run_probe(run_latency, gpu, small({MemPath::global, MemPath::l2, MemPath::readonly}), out);
  ASSERT_TRUE(out.status.ok()) << out.status.reason;
  // 3.6 .. 4.1 MiB at 2^(1/32): 7 points on the global and L2-only paths, not on the others.
  EXPECT_EQ(count_near(out.paths.at("global"), 4 * MiB), 7);
  EXPECT_EQ(count_near(out.paths.at("l2"), 4 * MiB), 7);
  EXPECT_LT(count_near(out.paths.at("readonly"), 4 * MiB), 7);
  FakeDevice cpu;
  cpu.make_cpu(4 * MiB);
  LatencyProbeResult cpu_out;
  fakes::run_probe(run_latency, cpu, small({MemPath::global}), cpu_out);
  EXPECT_LT(count_near(cpu_out.paths.at("global"), 4 * MiB), 7);
}

}  // namespace
