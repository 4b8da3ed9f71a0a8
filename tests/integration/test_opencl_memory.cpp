// The memory probe through the OpenCL backend (PoCL on the CPU in CI): every chase kernel runs
// and its walk is checked against the host's; the parts a CPU can run (partition by global
// loads and images, L1 granularity, line and ways, constant) run at small sizes with checked
// points; the others (carve-out, L1-bypassing loads, the read-only path, chunk mapping) say
// which API or device limit stops them; the figures are declared and every writer copes.
#include <gtest/gtest.h>

#include <atomic>
#include <memory>
#include <sstream>

#include "../unit/figure_ids_check.hpp"
#include "gpudissect/chain.hpp"
#include "gpudissect/result.hpp"
#include "memory/run.hpp"
#include "opencl_backend.hpp"
#include "probe_report.hpp"
#include "registry.hpp"
#include "sections.hpp"

namespace gd {
namespace {

std::unique_ptr<Device> first_device() {
  std::string why;
  if (opencl::enumerate(&why).empty()) return nullptr;
  return opencl::open(0, 0);
}

bool is_cpu(const Device& d) {
  auto it = d.info().extra.find("device_type");
  return it != d.info().extra.end() && it->second.find("CPU") != std::string::npos;
}

void expect_reason(const Status& s, const std::string& names) {
  EXPECT_EQ(s.name(), "unsupported") << s.reason;
  EXPECT_NE(s.reason.find(names), std::string::npos) << s.reason;
  EXPECT_EQ(s.reason.find("yet"), std::string::npos) << s.reason;
}

// Each load's kernel, two walkers on disjoint chains: the ends are the host's, and every
// repeat has a time per hop.
TEST(OpenCLMemory, EveryChaseKernelWalksItsChains) {
  auto dev = first_device();
  if (!dev) GTEST_SKIP() << "no OpenCL device";
  MemoryKernels* k = dev->kernels<MemoryKernels>();
  ASSERT_NE(k, nullptr);
  const std::vector<uint32_t> next = disjoint_chains(64, 2);
  for (MemLoad load :
       {MemLoad::ca, MemLoad::cg, MemLoad::nc, MemLoad::constant, MemLoad::texture}) {
    if (load == MemLoad::texture && !k->supports("partition.texture").ok) continue;
    MemChaseRequest r;
    r.load = load;
    r.warps = 2;
    r.next = &next;
    r.starts = {0, 64};
    r.stride_bytes = 64;
    r.warmup_hops = 100;
    r.hops_per_repeat = 300;
    r.repeats = 3;
    r.l2_prefetch = load == MemLoad::ca;
    const MemChaseTiming t = k->chase(r);
    ASSERT_EQ(t.end_lines.size(), 2u) << to_string(load);
    ASSERT_EQ(t.cycles_per_hop.size(), 2u) << to_string(load);
    const uint64_t hops = r.warmup_hops + r.hops_per_repeat * r.repeats;
    for (int w = 0; w < 2; ++w) {
      EXPECT_EQ(t.end_lines[w], walk(next, r.starts[w], hops)) << to_string(load) << " warp " << w;
      ASSERT_EQ(t.cycles_per_hop[w].size(), 3u) << to_string(load);
      for (double c : t.cycles_per_hop[w]) EXPECT_GT(c, 0) << to_string(load);
    }
    // A CPU has no cycle counter the kernel can read: its hops are timed in ns.
    if (is_cpu(*dev)) EXPECT_EQ(t.unit, "ns");
  }
  // A chunk-mapped chain cannot be had through OpenCL.
  MemChaseRequest r;
  r.next = &next;
  r.warps = 1;
  r.starts = {0};
  r.chunk_bytes = 2 << 20;
  EXPECT_THROW(k->chase(r), BackendError);
}

MemoryOptions small_options() {
  MemoryOptions o;
  o.repeats = 2;
  o.points_per_doubling = 1;
  o.refine = 0;
  o.min_footprint = 8 * 1024;
  o.max_footprint = 64 * 1024;
  o.max_warps = 2;
  o.hops = 64;
  o.budget = 15;
  o.tlb_max_footprint = 16 << 20;
  return o;
}

// shape: one run, then each part's outcome read in turn
TEST(OpenCLMemory, CpuPartsRunCheckedAndTheRestSayWhy) {
  auto dev = first_device();
  if (!dev) GTEST_SKIP() << "no OpenCL device";
  if (!is_cpu(*dev)) GTEST_SKIP() << "the parts' outcomes below are a CPU's";
  NullProgress progress;
  std::atomic<bool> stop{false};
  MemoryProbeResult out;
  run_memory(*dev, small_options(), progress, stop, out);
  EXPECT_TRUE(out.status.ok()) << out.status.reason;
  expect_reason(out.carveout_status, "carve-out");
  EXPECT_TRUE(out.carveouts.empty());

  EXPECT_TRUE(out.partition_status.ok()) << out.partition_status.reason;
  ASSERT_EQ(out.partitions.size(), 3u);
  EXPECT_EQ(out.partitions[0].path, "global");
  EXPECT_EQ(out.partitions[0].by_warps.size(), 2u);
  expect_reason(out.partitions[1].status, "read-only");
  int ok_points = 0;
  for (const PartitionResult& p : out.partitions)
    for (const MemCurve& c : p.by_warps) {
      EXPECT_EQ(c.unit, "ns") << c.key;
      for (const MemPoint& pt : c.points) {
        EXPECT_NE(pt.status.code, StatusCode::error) << c.key << ": " << pt.status.reason;
        ok_points += pt.status.ok() && pt.cycles && pt.cycles->median > 0;
      }
    }
  EXPECT_GT(ok_points, 4);

  EXPECT_TRUE(out.granularity_status.ok()) << out.granularity_status.reason;
  ASSERT_EQ(out.granularity.size(), 2u);
  EXPECT_TRUE(out.granularity[0].status.ok());
  EXPECT_EQ(out.granularity[0].curve.points.size(), 7u);
  for (const MemPoint& p : out.granularity[0].curve.points)
    EXPECT_TRUE(p.status.ok()) << p.status.reason;
  expect_reason(out.granularity[1].status, "CPU");
  EXPECT_EQ(out.l1_line.by_stride.size(), 5u);
  EXPECT_EQ(out.l1_ways.by_stride.size(), 2u);
  expect_reason(out.l2_line.status, "CPU");
  expect_reason(out.l2_ways.status, "CPU");

  EXPECT_TRUE(out.constant_status.ok()) << out.constant_status.reason;
  ASSERT_TRUE(out.constant);
  ASSERT_TRUE(out.constant_bank_bytes);
  EXPECT_FALSE(out.constant->points.empty());
  for (const MemPoint& p : out.constant->points) EXPECT_TRUE(p.status.ok()) << p.status.reason;
  EXPECT_LE(out.constant->points.back().footprint_bytes, *out.constant_bank_bytes);

  ASSERT_EQ(out.tlb.size(), 2u);
  expect_reason(out.tlb[0].status, "physical-memory mapping");
  expect_reason(out.tlb[1].status, "CPU");

  RunResult rr;
  rr.device = dev->info();
  rr.put(out);
  expect_figure_ids_declared(rr);
  const Probe* p = probe_registry().find("memory");
  for (const Figure& f : p->figures(rr)) EXPECT_NE(f.unit, "cycles") << f.id;
  const report::ProbeReport* rep = report::probe_reports().find("memory");
  ASSERT_NE(rep, nullptr);
  std::ostringstream os;
  rep->print_summary(os, rr);
  EXPECT_NE(os.str().find("unsupported"), std::string::npos);
  report::SectionContext ctx;
  EXPECT_FALSE(rep->html_section(rr, ctx).empty());
}

}  // namespace
}  // namespace gd
