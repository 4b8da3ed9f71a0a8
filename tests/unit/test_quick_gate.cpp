// A --quick run gated against a full run of the same H200 (tests/fixtures/quick_gate, both cut
// from one call's two runs): what the gate flags there, and why. Every GPU figure it moved
// past the tolerance was one the quick profile measured another way (a mean over fewer flag
// locations or target placements, DRAM at 1 GiB a launch), or a link figure; the host-side
// ones are left out. The quick profile now measures those atomics and DRAM figures as a full
// run does (test_atomics.cpp checks the options).
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <string>

#include "atomics/atomics.hpp"
#include "bandwidth/bandwidth.hpp"
#include "gpudissect/compare.hpp"
#include "gpudissect/result.hpp"
#include "registry.hpp"

namespace gd {
// probes/atomics/figures.cpp: a mean over placements' step from one process to the next
// (Figure::resolution), its standard error times Student's t, relative to the mean.
std::optional<double> placement_step(const std::optional<PlacementSpread>& s);

namespace {

namespace fs = std::filesystem;
const fs::path kDir = fs::path(GD_FIXTURES) / "quick_gate";

CompareInput load(const std::string& name) {
  std::ifstream in(kDir / (name + ".json"));
  EXPECT_TRUE(in) << kDir / (name + ".json");
  return input_from_result(run_result_from_json(nlohmann::json::parse(in), probe_registry()), name);
}

std::map<std::string, std::string> where_by_id(const CompareInput& in) {
  std::map<std::string, std::string> m;
  for (const Figure& f : in.figures) m[f.id] = f.where;
  return m;
}

TEST(QuickGate, OnlyFiguresMeasuredAnotherWayMoved) {
  const CompareInput full = load("full"), quick = load("quick");
  ASSERT_GT(full.figures.size(), 30u);
  const auto full_where = where_by_id(full), quick_where = where_by_id(quick);
  const BaselineReport r = compare_baseline(full, quick, 0.03, true);
  std::set<std::string> moved, host;
  for (const BaselineItem& it : r.items) {
    if (it.verdict == Verdict::not_gated) host.insert(it.id);
    if (it.verdict != Verdict::regressed && it.verdict != Verdict::improved) continue;
    moved.insert(it.id);
    if (it.id.rfind("links.", 0) == 0) continue;  // another probe's links, noisy by nature
    // Anything else the gate moved was measured another way by the quick profile.
    EXPECT_NE(full_where.at(it.id), quick_where.at(it.id)) << it.id;
  }
  // The atomics means over 16 flag locations (quick: 8) and 4 placements (quick: 2).
  for (const char* id : {"atomics.global.cas_pingpong", "atomics.global.exch_pingpong",
                         "atomics.global.add_i32.distinct"})
    EXPECT_TRUE(moved.count(id)) << id;
  EXPECT_NE(full_where.at("atomics.global.cas_pingpong").find("16 flag locations"),
            std::string::npos);
  EXPECT_NE(quick_where.at("atomics.global.cas_pingpong").find("8 flag locations"),
            std::string::npos);
  // Measured alike, within the tolerance: the L1 latency, the FP32 rate, block dispatch.
  for (const char* id :
       {"latency.global.L1", "compute.fp32.fma", "frontend.dispatch.blocks_per_us"}) {
    EXPECT_FALSE(moved.count(id)) << id;
    EXPECT_EQ(full_where.at(id), quick_where.at(id)) << id;
  }
  // Host memory, pageable copies and launches are not a GPU gate's business.
  for (const char* id : {"host.memory.copy", "bandwidth.host.h2d_pageable", "frontend.launch.api"})
    EXPECT_TRUE(host.count(id)) << id;
}

// The full run against itself with the quick run's host-side figures (host memory -14 to
// -20 %, pageable copies, launches): no regression, as a quick run that measured every GPU
// figure as the full one did; one GPU figure 5 % worse is one regression.
TEST(QuickGate, HostNoiseAloneDoesNotFire) {
  const CompareInput full = load("full"), quick = load("quick");
  std::map<std::string, Figure> quick_by_id;
  for (const Figure& f : quick.figures) quick_by_id[f.id] = f;
  CompareInput noisy = full;
  int host = 0;
  for (Figure& f : noisy.figures)
    if (is_host_figure(f.id) && quick_by_id.count(f.id)) {
      f = quick_by_id.at(f.id);
      ++host;
    }
  ASSERT_GE(host, 8);
  EXPECT_EQ(compare_baseline(full, noisy, 0.03, true).regressions(), 0);
  for (Figure& f : noisy.figures)
    if (f.id == "compute.fp32.fma") f.value->median *= 0.95;
  const BaselineReport r = compare_baseline(full, noisy, 0.03, true);
  ASSERT_EQ(r.regressions(), 1);
  for (const BaselineItem& it : r.items)
    if (is_regression(it.verdict)) EXPECT_EQ(it.id, "compute.fp32.fma");
}

// A mean over flag locations or target placements differs between two processes by where
// they land: its figure carries the standard error of two such means' difference (sqrt(2)
// of one mean's) times Student's t (3.182 for 4 values) as its step, and the gate takes the
// baseline's as noise (the full H200 run's CAS ping-pong: 16 locations spread 14.5 %; two full runs
// read 168.1 and 176.8 ns).
TEST(QuickGate, APlacementMeanIsJudgedByItsOwnSpread) {
  PlacementSpread s;
  s.values = {100, 120, 100, 120};
  s.mean = 110;
  const auto step = placement_step(s);
  ASSERT_TRUE(step);
  EXPECT_NEAR(*step, 3.182 * std::sqrt(400.0 / 3) / 110 / 2 * std::sqrt(2.0), 1e-12);
  EXPECT_FALSE(placement_step(std::nullopt));
  PlacementSpread one;
  one.values = {100};
  one.mean = 100;
  EXPECT_FALSE(placement_step(one));

  AtomicsProbeResult r;
  AtomicLatency l;
  l.round_trips = 250;
  l.locations = 4;
  l.ns = summarize({110.0, 110.1, 109.9});
  l.placement_ns = s;
  r.latency["global.cas_pingpong"] = l;
  const auto figs = atomics_figures(r, DeviceInfo{});
  ASSERT_EQ(figs.size(), 1u);
  ASSERT_TRUE(figs[0].resolution);
  EXPECT_NEAR(*figs[0].resolution, *step, 1e-12);
  // 22 % slower: within the baseline's 23.6 % step; 25 % slower: a regression.
  for (const auto& [factor, regressions] : {std::pair<double, int>{1.22, 0}, {1.25, 1}}) {
    CompareInput base, now;
    base.figures = figs;
    now.figures = figs;
    now.figures[0].value->median *= factor;
    now.figures[0].resolution.reset();  // the judged file's own step counts for nothing
    EXPECT_EQ(compare_baseline(base, now, 0.03).regressions(), regressions) << factor;
  }
}

// A global throughput figure over placements: all placements have been seen to move
// together between processes by up to 13.6 %, which its own spread (here under 1 %) cannot
// show; its band is at least 14 %. A shared-memory figure has no placements and no band.
TEST(QuickGate, AGlobalAtomicsMeanKeepsTheShiftBetweenProcesses) {
  AtomicsProbeResult r;
  AtomicThroughput g;
  g.space = "global";
  g.op = "add";
  g.type = "i32";
  g.contention = "distinct";
  g.gops = summarize({457.0, 457.2, 456.8});
  PlacementSpread s;
  s.values = {455, 457, 459, 457};
  s.mean = 457;
  g.placement_gops = s;
  AtomicThroughput sh = g;
  sh.space = "shared";
  sh.placement_gops.reset();
  r.throughput["global.add_i32.distinct"] = g;
  r.throughput["shared.add_i32.distinct"] = sh;
  const auto figs = atomics_figures(r, DeviceInfo{});
  ASSERT_EQ(figs.size(), 2u);
  for (const Figure& f : figs) {
    if (f.id.find(".global.") != std::string::npos) {
      ASSERT_TRUE(f.resolution) << f.id;
      EXPECT_DOUBLE_EQ(*f.resolution, 0.14) << f.id;
      // The full run against a quick one 10.2 % lower (483.0 against 433.9 GOP/s): inside the
      // band; 18 % lower: a regression.
      for (const auto& [factor, regressions] : {std::pair<double, int>{0.898, 0}, {0.82, 1}}) {
        CompareInput base, now;
        base.figures = {f};
        now.figures = {f};
        now.figures[0].value->median *= factor;
        now.figures[0].resolution.reset();
        EXPECT_EQ(compare_baseline(base, now, 0.03).regressions(), regressions) << factor;
      }
    } else {
      EXPECT_FALSE(f.resolution) << f.id;
    }
  }
}

// The best point of the L2 read curve at footprints the SMs share is one point's luck: its
// lead over the curve's next-best point is its resolution (an H200's full run: 18105 GB/s,
// the next 15343; a quick run then read 16397, -9.4 %, inside that 15.3 %).
TEST(QuickGate, ABestPointIsJudgedByItsLeadOverTheNext) {
  auto point = [](double x, double gbps) {
    BandwidthPoint q;
    q.x = x;
    q.gbps = summarize({gbps});
    return q;
  };
  BandwidthProbeResult b;
  BandwidthCurve& c = b.footprint["read_l2"];
  c.points = {point(376832, 18105), point(737280, 15343), point(8 << 20, 8600)};
  BandwidthFigure best;
  best.name = "L2 read, best footprint";
  best.gbps = summarize({18105});
  best.where = "read_l2 at 368 KiB, lines may be shared by SMs";
  b.figures.push_back(best);
  RunResult r;
  r.put(b);
  const std::vector<Figure> figs = probe_registry().find("bandwidth")->figures(r);
  ASSERT_EQ(figs.size(), 1u);
  ASSERT_TRUE(figs[0].resolution);
  EXPECT_NEAR(*figs[0].resolution, (18105.0 - 15343.0) / 18105.0, 1e-12);
  for (const auto& [value, regressions] : {std::pair<double, int>{16397, 0}, {15000, 1}}) {
    CompareInput base, now;
    base.figures = figs;
    now.figures = figs;
    now.figures[0].value->median = value;
    now.figures[0].resolution.reset();
    EXPECT_EQ(compare_baseline(base, now, 0.03).regressions(), regressions) << value;
  }
  // A figure that is not its curve's best point (the curve changed under it) gets no band.
  b.footprint["read_l2"].points[0] = point(376832, 17000);
  RunResult r2;
  r2.put(b);
  EXPECT_FALSE(probe_registry().find("bandwidth")->figures(r2).at(0).resolution);
}

}  // namespace
}  // namespace gd
