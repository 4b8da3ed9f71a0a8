// The memory probe through the Vulkan backend (lavapipe on the CPU in CI): every part the API
// can state with loads runs for real at small sizes, each walk's end checked against the
// host's walk of its chain; the parts it cannot state (the carve-out, the read-only path, the
// chunk-mapped TLB) say which limit stops them. Without a shader clock (lavapipe) the
// latencies and the latency figures are in ns.
#include <gtest/gtest.h>

#include <atomic>
#include <sstream>

#include "../unit/figure_ids_check.hpp"
#include "gpudissect/chain.hpp"
#include "gpudissect/result.hpp"
#include "memory/run.hpp"
#include "probe_report.hpp"
#include "registry.hpp"
#include "sections.hpp"
#include "vulkan_first_device.hpp"

namespace gd {
namespace {

// Every point of a curve measured, or skipped with the reason (a chain past the API's
// buffer limit), and in the curve's unit.
void expect_measured(const MemCurve& c, const std::string& unit) {
  EXPECT_FALSE(c.points.empty()) << c.key;
  EXPECT_EQ(c.unit, unit) << c.key;
  int measured = 0;
  for (const MemPoint& p : c.points) {
    if (p.status.code == StatusCode::skipped) {
      EXPECT_FALSE(p.status.reason.empty()) << c.key;
      continue;
    }
    EXPECT_TRUE(p.status.ok()) << c.key << " at " << p.footprint_bytes << ": " << p.status.reason;
    ASSERT_TRUE(p.cycles) << c.key;
    EXPECT_GT(p.cycles->median, 0) << c.key;
    ++measured;
  }
  EXPECT_GT(measured, 0) << c.key;
}

MemoryOptions small_options() {
  MemoryOptions o;
  o.quick = true;
  o.points_per_doubling = 1;
  o.refine = 0;
  o.repeats = 2;
  o.hops = 256;
  o.min_footprint = 1024;
  o.max_footprint = 8 * 1024;
  o.max_warps = 2;
  o.l2_line = true;  // skipped: Vulkan reports no L2 size to plan from
  o.l2_ways = false;
  o.tlb = true;
  o.tlb_max_footprint = 8ull << 20;
  o.budget = 60;
  return o;
}

// shape: one run, then each part's outcome in the order the probe runs them
TEST(VulkanMemory, PartsThatLoadsCanStateRunAndTheOthersSayWhy) {
  GD_REQUIRE_DEVICE(dev);
  NullProgress progress;
  std::atomic<bool> stop{false};
  MemoryProbeResult out;
  run_memory(*dev, small_options(), progress, stop, out);
  ASSERT_TRUE(out.status.ok()) << out.status.reason;
  auto* k = dev->kernels<MemoryKernels>();
  ASSERT_NE(k, nullptr);
  // Cycles where the shader clock is used, ns otherwise (lavapipe's is not: facts say why).
  ASSERT_FALSE(out.partitions.empty());
  ASSERT_FALSE(out.partitions[0].by_warps.empty());
  const std::string unit = out.partitions[0].by_warps[0].unit;
  const bool clock = dev->info().extra.at("shader_clock").rfind("no ", 0) != 0;
  EXPECT_EQ(unit, clock ? "cycles" : "ns");

  EXPECT_EQ(out.carveout_status.name(), "unsupported");
  EXPECT_NE(out.carveout_status.reason.find("carve-out"), std::string::npos);
  EXPECT_TRUE(out.carveouts.empty());

  EXPECT_TRUE(out.partition_status.ok()) << out.partition_status.reason;
  ASSERT_EQ(out.partitions.size(), 3u);
  EXPECT_EQ(out.partitions[0].path, "global");
  ASSERT_EQ(out.partitions[0].by_warps.size(), 2u);
  for (const MemCurve& c : out.partitions[0].by_warps) expect_measured(c, unit);
  EXPECT_EQ(out.partitions[0].by_warps[1].warps, 2);
  EXPECT_EQ(out.partitions[1].status.name(), "unsupported");
  EXPECT_NE(out.partitions[1].status.reason.find("read-only"), std::string::npos);
  if (k->supports("partition.texture").ok)
    for (const MemCurve& c : out.partitions[2].by_warps) expect_measured(c, unit);
  else
    EXPECT_FALSE(out.partitions[2].status.reason.empty());

  EXPECT_TRUE(out.granularity_status.ok()) << out.granularity_status.reason;
  ASSERT_EQ(out.granularity.size(), 2u);
  for (const GranularityResult& g : out.granularity) {
    EXPECT_EQ(g.curve.points.size(), 7u) << g.level;
    expect_measured(g.curve, unit);
  }
  EXPECT_EQ(out.granularity[1].curve.load, MemLoad::cg);
  EXPECT_EQ(out.l1_line.by_stride.size(), 5u);
  for (const MemCurve& c : out.l1_line.by_stride) expect_measured(c, unit);
  EXPECT_EQ(out.l1_ways.by_stride.size(), 2u);

  EXPECT_EQ(out.l2_line.status.name(), "skipped");
  EXPECT_NE(out.l2_line.status.reason.find("L2 size"), std::string::npos);

  EXPECT_TRUE(out.constant_status.ok()) << out.constant_status.reason;
  ASSERT_TRUE(out.constant);
  ASSERT_TRUE(out.constant_bank_bytes);
  EXPECT_EQ(*out.constant_bank_bytes, k->constant_bank_bytes());
  expect_measured(*out.constant, unit);
  EXPECT_EQ(out.constant->points.back().footprint_bytes, *out.constant_bank_bytes);

  EXPECT_TRUE(out.tlb_status.ok()) << out.tlb_status.reason;
  ASSERT_EQ(out.tlb.size(), 2u);
  EXPECT_EQ(out.tlb[0].status.name(), "unsupported");
  EXPECT_NE(out.tlb[0].status.reason.find("2 MiB"), std::string::npos);
  expect_measured(out.tlb[1].curve, unit);

  // Figures: every id declared, every latency in the curves' unit; the JSON keeps the unit.
  RunResult rr;
  rr.put(out);
  expect_figure_ids_declared(rr);
  for (const Figure& f : probe_registry().find("memory")->figures(rr))
    if (f.id.find("latency") != std::string::npos) EXPECT_EQ(f.unit, unit) << f.id;
  nlohmann::json j = out;
  const MemoryProbeResult back = j.get<MemoryProbeResult>();
  EXPECT_EQ(back.partitions[0].by_warps[0].unit, unit);
  const report::ProbeReport* rep = report::probe_reports().find("memory");
  ASSERT_NE(rep, nullptr);
  std::ostringstream os;
  rep->print_summary(os, rr);
  EXPECT_NE(os.str().find("unsupported"), std::string::npos);
}

// One chase straight through the kernels: each walker's end is the host's, for every load;
// a load or a request the backend cannot do is refused, not run.
TEST(VulkanMemory, ChasesEndWhereTheHostWalkEnds) {
  GD_REQUIRE_DEVICE(dev);
  auto* k = dev->kernels<MemoryKernels>();
  ASSERT_NE(k, nullptr);
  const auto next = disjoint_chains(40, 3);
  for (MemLoad load : {MemLoad::ca, MemLoad::cg, MemLoad::constant, MemLoad::texture}) {
    if (load == MemLoad::texture && !k->supports("partition.texture").ok) continue;
    MemChaseRequest r;
    r.load = load;
    r.warps = 3;
    r.next = &next;
    r.starts = {0, 40, 80};
    r.stride_bytes = 64;
    r.warmup_hops = 17;
    r.hops_per_repeat = 45;
    r.repeats = 2;
    r.l2_prefetch = load == MemLoad::ca;  // its sum is checked inside the chase
    const MemChaseTiming t = k->chase(r);
    ASSERT_EQ(t.end_lines.size(), 3u) << to_string(load);
    ASSERT_EQ(t.cycles_per_hop.size(), 3u);
    for (int w = 0; w < 3; ++w) {
      EXPECT_EQ(t.end_lines[w], walk(next, r.starts[w], 17 + 2 * 45)) << to_string(load);
      EXPECT_EQ(t.cycles_per_hop[w].size(), 2u);
    }
    EXPECT_FALSE(t.instruction.empty());
  }
  MemChaseRequest bad;
  bad.next = &next;
  bad.warps = 1;
  bad.starts = {0};
  bad.hops_per_repeat = 4;
  bad.load = MemLoad::nc;
  EXPECT_THROW(k->chase(bad), BackendError);
  bad.load = MemLoad::ca;
  bad.starts = {120};  // past the chain's 120 lines
  EXPECT_THROW(k->chase(bad), BackendError);
  bad.starts = {0};
  bad.chunk_bytes = 2 << 20;
  EXPECT_THROW(k->chase(bad), BackendError);
  EXPECT_FALSE(k->supports("carveout").ok);
  EXPECT_FALSE(k->supports("tlb.chunks").ok);
  EXPECT_TRUE(k->supports("tlb.malloc").ok);
}

}  // namespace
}  // namespace gd
