// The memory probe on the CPU: its plans, estimates and verdict on synthetic curves, and the
// whole probe against a fake backend whose caches are known (an L1 of 256 KiB less the shared
// carve-out, a read-only cache private to each partition, 32-byte L1 and 64-byte L2 fetches,
// a 2 KiB constant L1 in front of a level larger than the bank).
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <iterator>
#include <map>
#include <set>
#include <sstream>

#include "fake_device.hpp"
#include "figure_ids_check.hpp"
#include "gpudissect/chain.hpp"
#include "gpudissect/compare.hpp"
#include "gpudissect/progress.hpp"
#include "gpudissect/result.hpp"
#include "latency/run.hpp"
#include "memory/memory.hpp"
#include "memory/run.hpp"
#include "probe_report.hpp"
#include "registry.hpp"
#include "report.hpp"
#include "run_probe.hpp"
#include "sections.hpp"

namespace gd {
namespace {

// The memory probe's report half, registered beside the probe by probe_registry().
const report::ProbeReport* memory_report() {
  probe_registry();
  return report::probe_reports().find("memory");
}

constexpr uint64_t KiB = 1024, MiB = 1024 * KiB;

DeviceInfo h100_like() {
  DeviceInfo i;
  i.backend = "fake";
  i.id = "fake:0";
  i.name = "fake";
  i.compute_units = 2;
  i.compute_capability = "9.0";
  i.l2_bytes = 1 << 20;
  return i;
}

MemPoint pt(uint64_t f, double c) {
  MemPoint p;
  p.footprint_bytes = f;
  p.cycles = single_value(c);
  return p;
}

// ---- plans ----

TEST(MemoryPlan, CarveoutsOfHopper) {
  const auto plan = carveout_plan(h100_like());
  ASSERT_EQ(plan.size(), 11u);
  EXPECT_EQ(plan[0].label(), "driver default");
  EXPECT_EQ(plan[0].percent, -1);
  EXPECT_FALSE(plan[0].predicted_l1_bytes);
  const std::vector<int> shared = {0, 8, 16, 32, 64, 100, 132, 164, 196, 228};
  const std::vector<int> percent = {0, 3, 7, 14, 28, 43, 57, 71, 85, 100};
  for (std::size_t i = 0; i < shared.size(); ++i) {
    const auto& p = plan[i + 1];
    EXPECT_EQ(p.shared_kib, shared[i]);
    EXPECT_EQ(p.percent, percent[i]);
    // floor(percent x 228 KiB) lies below the split and above the one under it, so rounding
    // up lands on it.
    const double asked = p.percent / 100.0 * 228;
    EXPECT_LE(asked, shared[i] + 1e-9);
    if (i > 0) EXPECT_GT(asked, shared[i - 1]);
    EXPECT_EQ(*p.predicted_l1_bytes, (256u - shared[i]) * KiB);
    EXPECT_EQ(p.dynamic_shared_bytes, shared[i] ? (shared[i] - 1) * KiB : 0);
  }
  EXPECT_EQ(plan.back().label(), "228 KiB shared");
  // With hints: each split above 0 also as its preference alone, just before the forced one.
  const auto both = carveout_plan(h100_like(), 0, true);
  ASSERT_EQ(both.size(), 20u);
  EXPECT_FALSE(both[1].preference_only);  // 0 KiB: nothing to force, one row
  EXPECT_TRUE(both[2].preference_only);
  EXPECT_EQ(both[2].dynamic_shared_bytes, 0u);
  EXPECT_EQ(both[2].percent, 3);
  EXPECT_EQ(both[2].key(), "8.hint");
  EXPECT_EQ(both[2].label(), "8 KiB shared, preference only");
  EXPECT_EQ(both[3].key(), "8");
  EXPECT_EQ(both[3].dynamic_shared_bytes, 7 * KiB);
  // The kernel's own shared memory comes off the forcing request.
  EXPECT_EQ(carveout_plan(h100_like(), 512).back().dynamic_shared_bytes, 227 * KiB - 512);
}

TEST(MemoryPlan, UnknownDeviceGetsPercentagesWithoutPredictions) {
  DeviceInfo i = h100_like();
  i.compute_capability = "12.0";
  const auto plan = carveout_plan(i);
  ASSERT_EQ(plan.size(), 6u);
  for (std::size_t k = 1; k < plan.size(); ++k) {
    EXPECT_EQ(plan[k].shared_kib, -1);
    EXPECT_EQ(plan[k].dynamic_shared_bytes, 0u);
    EXPECT_FALSE(plan[k].predicted_l1_bytes);
  }
  EXPECT_EQ(plan[3].percent, 50);
  EXPECT_EQ(plan[3].label(), "50 % carveout");
  EXPECT_EQ(*unified_l1_bytes("8.0"), 192 * KiB);
  EXPECT_FALSE(unified_l1_bytes("12.0"));
}

TEST(MemoryPlan, SplitsReadBackFromTheL1) {
  // Today's latency map on the H200: L1 plateau to 220416 bytes, next point 230144.
  EXPECT_EQ(splits_for_l1("9.0", 220416, 230144), (std::vector<int>{32}));
  // 256 vs 248 KiB cannot be told apart when the bracket spans both.
  EXPECT_EQ(splits_for_l1("9.0", 246 * KiB, 258 * KiB), (std::vector<int>{0, 8}));
  EXPECT_EQ(splits_for_l1("9.0", 27 * KiB, 29 * KiB), (std::vector<int>{228}));
  EXPECT_TRUE(splits_for_l1("9.0", 162 * KiB, 164 * KiB).empty());  // between 64 and 100
  // What the H200 and H100 measured under forced splits (capacity, next edge): each reads
  // back as the split that was set, although the L1 is 2-7 KiB under 256 KiB - split.
  EXPECT_EQ(splits_for_l1("9.0", 181 * KiB, 186 * KiB), (std::vector<int>{64}));
  EXPECT_EQ(splits_for_l1("9.0", 149 * KiB, 152 * KiB), (std::vector<int>{100}));
  EXPECT_EQ(splits_for_l1("9.0", 116 * KiB, 119 * KiB), (std::vector<int>{132}));
  EXPECT_EQ(splits_for_l1("9.0", 84 * KiB, 87 * KiB), (std::vector<int>{164}));
  EXPECT_EQ(splits_for_l1("9.0", 52 * KiB, 54 * KiB), (std::vector<int>{196}));
  EXPECT_EQ(splits_for_l1("9.0", 20 * KiB, 21 * KiB + 100), (std::vector<int>{228}));
  EXPECT_TRUE(splits_for_l1("12.0", 100 * KiB, 110 * KiB).empty());
}

TEST(MemoryPlan, Footprints) {
  const auto f = capacity_footprints(8 * KiB, 384 * KiB, 4, 128);
  ASSERT_GE(f.size(), 20u);
  EXPECT_EQ(f.front(), 8 * KiB);
  EXPECT_EQ(f.back(), 384 * KiB);
  for (std::size_t i = 1; i < f.size(); ++i) {
    EXPECT_GT(f[i], f[i - 1]);
    EXPECT_EQ(f[i] % 128, 0u);
    EXPECT_LE(static_cast<double>(f[i]) / f[i - 1], 1.2);
  }
  const auto r = refine_footprints(200 * KiB, 240 * KiB, 4, 128, {208 * KiB});
  ASSERT_EQ(r.size(), 3u);  // 208 KiB is already measured
  for (uint64_t x : r) {
    EXPECT_GT(x, 200 * KiB);
    EXPECT_LT(x, 240 * KiB);
    EXPECT_EQ(x % 128, 0u);
  }
  EXPECT_TRUE(refine_footprints(1024, 1024 + 128, 4, 128, {}).empty());
}

TEST(MemoryPlan, DisjointChainsAreOneCycleEachInTheirOwnLines) {
  const uint32_t lines = 37;
  const auto next = disjoint_chains(lines, 3);
  ASSERT_EQ(next.size(), 3u * lines);
  for (uint32_t w = 0; w < 3; ++w) {
    std::vector<uint32_t> sub;
    for (uint32_t i = 0; i < lines; ++i) {
      const uint32_t n = next[w * lines + i];
      ASSERT_GE(n, w * lines);
      ASSERT_LT(n, (w + 1) * lines);
      sub.push_back(n - w * lines);
    }
    EXPECT_TRUE(is_single_cycle(sub));
  }
  const auto s = sequential_chain(5);
  EXPECT_EQ(s, (std::vector<uint32_t>{1, 2, 3, 4, 0}));
}

// ---- estimates ----

TEST(MemoryEstimate, CapacityAtTheEdgeIgnoringOneSpike) {
  std::vector<MemPoint> c;
  for (uint64_t f : {16, 32, 64, 96, 128, 160, 192, 200, 208})
    c.push_back(pt(f * KiB, f == 96 ? 60 : 33));  // one spike at 96 KiB
  for (uint64_t f : {216, 224, 256, 320}) c.push_back(pt(f * KiB, 290));
  const auto e = estimate_capacity(c);
  ASSERT_TRUE(e.capacity_bytes);
  EXPECT_EQ(*e.capacity_bytes, 208 * KiB);
  EXPECT_EQ(*e.next_bytes, 216 * KiB);
  EXPECT_DOUBLE_EQ(*e.plateau_cycles, 33);
  EXPECT_DOUBLE_EQ(*e.beyond_cycles, 290);
}

TEST(MemoryEstimate, NoEdgeAndNoPlateauSayWhy) {
  std::vector<MemPoint> flat;
  for (uint64_t f : {1, 2, 4, 8}) flat.push_back(pt(f * KiB, 99));
  const auto a = estimate_capacity(flat);
  EXPECT_FALSE(a.capacity_bytes);
  EXPECT_DOUBLE_EQ(*a.plateau_cycles, 99);
  EXPECT_NE(a.note.find("never left"), std::string::npos);
  std::vector<MemPoint> rising = {pt(1024, 30), pt(2048, 300), pt(4096, 310), pt(8192, 300)};
  const auto b = estimate_capacity(rising);
  EXPECT_FALSE(b.capacity_bytes);
  EXPECT_FALSE(b.plateau_cycles);
  EXPECT_NE(b.note.find("rises"), std::string::npos);
  EXPECT_FALSE(estimate_capacity({pt(1024, 3)}).plateau_cycles);
  // The level after a first edge: the constant L1 and the level behind it.
  std::vector<MemPoint> k;
  for (uint64_t f : {1, 2}) k.push_back(pt(f * KiB, 29));
  k.push_back(pt(1536, 29));
  for (uint64_t f : {3, 4, 8, 16, 32, 64}) k.push_back(pt(f * KiB, 99));
  std::sort(k.begin(), k.end(),
            [](auto& x, auto& y) { return x.footprint_bytes < y.footprint_bytes; });
  const auto first = estimate_capacity(k);
  EXPECT_EQ(*first.capacity_bytes, 2 * KiB);
  const auto second = next_level(k, first);
  EXPECT_FALSE(second.capacity_bytes);
  EXPECT_DOUBLE_EQ(*second.plateau_cycles, 99);
}

TEST(MemoryEstimate, Granularity) {
  std::vector<MemPoint> c;
  for (uint64_t s : {8, 16, 32, 64, 128, 256})
    c.push_back(pt(s, 30 + 270 * std::min(1.0, s / 32.0)));
  auto g = estimate_granularity(c);
  ASSERT_TRUE(g.bytes);
  EXPECT_EQ(*g.bytes, 32u);
  EXPECT_DOUBLE_EQ(*g.hit_cycles, 30 + 270 / 4.0);
  std::vector<MemPoint> flat;
  for (uint64_t s : {8, 16, 32, 64}) flat.push_back(pt(s, 300));
  g = estimate_granularity(flat);
  EXPECT_FALSE(g.bytes);
  EXPECT_NE(g.note.find("does not rise"), std::string::npos);
}

TEST(MemoryEstimate, LineFromCapacityByStride) {
  const uint64_t c = 256 * KiB;
  auto e = estimate_line({{32, c}, {64, c - 4096}, {128, c}, {256, 2 * c}, {512, 4 * c}});
  ASSERT_TRUE(e.bytes);
  EXPECT_EQ(*e.bytes, 128u);
  e = estimate_line({{32, c}, {64, c}, {128, c}, {256, c}, {512, c}});
  EXPECT_FALSE(e.bytes);
  EXPECT_NE(e.note.find("did not grow"), std::string::npos);
  e = estimate_line({{32, c}, {64, std::nullopt}});
  EXPECT_FALSE(e.bytes);
  // The L2's three strides: constant to the line, then doubling per doubling.
  const uint64_t l2 = 27 * MiB;
  e = estimate_line({{64, l2}, {128, l2 + MiB}, {256, 2 * l2}});
  ASSERT_TRUE(e.bytes) << e.note;
  EXPECT_EQ(*e.bytes, 128u);
  e = estimate_line({{64, l2}, {128, 2 * l2}, {256, 4 * l2 - MiB}});
  ASSERT_TRUE(e.bytes) << e.note;
  EXPECT_EQ(*e.bytes, 64u);
  // Growing, but not as any line's: 1.5x at 128 then 2x at 256, or 3x at 256 after 1x.
  for (const auto& bad : {std::vector<std::pair<uint64_t, std::optional<uint64_t>>>{
                              {64, l2}, {128, l2 * 3 / 2}, {256, 2 * l2}},
                          std::vector<std::pair<uint64_t, std::optional<uint64_t>>>{
                              {64, l2}, {128, l2}, {256, 3 * l2}}}) {
    e = estimate_line(bad);
    EXPECT_FALSE(e.bytes) << *e.bytes;
    EXPECT_NE(e.note.find("do not follow one line size"), std::string::npos) << e.note;
  }
  // The L1 as measured on the H200: 215/215/215/430/861 KiB.
  e = estimate_line(
      {{32, 215 * KiB}, {64, 215 * KiB}, {128, 215 * KiB}, {256, 430 * KiB}, {512, 861 * KiB}});
  ASSERT_TRUE(e.bytes) << e.note;
  EXPECT_EQ(*e.bytes, 128u);
}

TEST(MemoryEstimate, WaysFromConflictChains) {
  const uint64_t st = 256 * KiB;
  std::vector<MemPoint> c;
  for (int n : conflict_counts()) c.push_back(pt(n * st, n <= 4 ? 33 : 280));
  auto w = estimate_ways(c, st);
  ASSERT_TRUE(w.ways);
  EXPECT_EQ(*w.ways, 4);
  std::vector<MemPoint> flat;
  for (int n : conflict_counts()) flat.push_back(pt(n * st, 33));
  w = estimate_ways(flat, st);
  EXPECT_FALSE(w.ways);
  EXPECT_NE(w.note.find("no conflict step up to 128 lines"), std::string::npos) << w.note;
  EXPECT_EQ(conflict_counts().front(), 1);
  EXPECT_EQ(conflict_counts().back(), 128);
}

TEST(MemoryEstimate, PartitionVerdict) {
  const uint64_t c = 200 * KiB;
  auto v = partition_verdict({c, c / 2, c / 3 + 1000, c / 4});
  EXPECT_EQ(v.verdict, "per SM");
  ASSERT_EQ(v.total_ratio.size(), 4u);
  EXPECT_NEAR(*v.total_ratio[3], 1.0, 0.01);
  v = partition_verdict({c, c, c - 4000, c});
  EXPECT_EQ(v.verdict, "per partition");
  EXPECT_NEAR(*v.total_ratio[1], 2.0, 0.01);
  v = partition_verdict({c, c / 2, c});
  EXPECT_EQ(v.verdict, "unclear");
  v = partition_verdict({std::nullopt, c});
  EXPECT_EQ(v.verdict, "");
  v = partition_verdict({c});
  EXPECT_EQ(v.verdict, "");
}

// ---- the probe on a fake backend ----

class FakeMemory : public MemoryKernels {
 public:
  bool corrupt = false;      // return a wrong end position from chains of several lines
  bool corrupt_all = false;  // ... and from the one-line carve-out launch too
  // Past the shared L1, only the last warp misses (it fell behind and lost its lines) while
  // the others keep hitting: the cache is still one per SM.
  bool last_warp_takes_the_misses = false;
  struct Seen {
    MemLoad load;
    uint64_t stride, hops;
    bool l2_prefetch, sequential;
    int warps = 1;
    uint64_t hops_per_warp = 0;  // warm-up + timed, each warp
    double cycles = 0;           // per hop
  };
  std::vector<Seen> seen;  // every launch's request, in order
  int launches = 0;

  // The L2 behind ld.global.cg: lines of l2_line bytes; a near half of 46 % of the L2 (the
  // H200: an edge at 26.9-29.3 MiB of 60), then the far half to 92 %, then device memory
  // (280, 512, 658 cycles as the H200's latency map). Its slices and sets hashed (no conflict
  // step) unless l2_plain_ways: then lines 1 MiB apart (any multiple of 64 KiB) share a set
  // of that many ways. l2_flat: every cg chase at device-memory latency (no edge anywhere).
  uint64_t l2_line = 128;
  double l2_extra_at_256 = 0;  // cycles added to every cg chase at a 256-byte stride
  int l2_plain_ways = 0;
  bool l2_flat = false;
  bool no_l2 = false;  // no "l2_line"/"l2_ways" support
  uint64_t l2_bytes = 1 << 20;

  Support supports(const std::string& part) override {
    if ((part == "l2_line" || part == "l2_ways") && no_l2)
      return Support::no("no L1-bypassing load here");
    if (part == "partition.readonly" && no_readonly) return Support::no("no read-only path here");
    if (part == "tlb.chunks" && no_chunks) return Support::no("no virtual-memory API here");
    return Support::yes();
  }
  uint64_t constant_bank_bytes() const override { return 95 * KiB; }
  bool no_readonly = false;
  bool no_chunks = false;
  int tlb_releases = 0;
  void release_tlb_buffers() override { ++tlb_releases; }

  // The split a launch gets: the preference rounded up to a split, raised to fit the block;
  // the default 32 KiB.
  bool ignore_preference = false;  // a driver that keeps its 32 KiB default unless forced
  uint64_t shared_of(const MemChaseRequest& r) const {
    static const std::vector<uint64_t> splits = {0, 8, 16, 32, 64, 100, 132, 164, 196, 228};
    uint64_t want = r.carveout_percent < 0 || ignore_preference ? 32 : 0;
    if (r.carveout_percent >= 0 && !ignore_preference) {
      const double k = r.carveout_percent / 100.0 * 228;
      want = *std::lower_bound(splits.begin(), splits.end(),
                               static_cast<uint64_t>(std::ceil(k - 1e-9)));
    }
    const uint64_t need =
        r.dynamic_shared_bytes ? (r.dynamic_shared_bytes + KiB + KiB - 1) / KiB : 0;
    const uint64_t kib = *std::lower_bound(splits.begin(), splits.end(), std::max(want, need));
    return kib * KiB;
  }

  MemChaseTiming chase(const MemChaseRequest& r) override {
    ++launches;
    MemChaseTiming t;
    const uint64_t shared = shared_of(r);
    t.api_probe_blocks = static_cast<int>(shared / (8 * KiB));
    t.reserved_per_block = KiB;
    t.clock_mhz = 1800;
    t.instruction = r.load == MemLoad::constant ? "LDC" : "LDG.E.64.STRONG.SM";
    const uint64_t lines = r.next->size() / r.warps;
    const uint64_t per_warp = lines * r.stride_bytes;
    const bool sequential = r.next->size() > 4 && (*r.next)[0] == 1 && (*r.next)[1] == 2 &&
                            (*r.next)[2] == 3 && (*r.next)[3] == 4;
    double cyc = 0;
    if (r.chunk_bytes) {
      // Chunk-mapped: an L1 TLB of 16 entries (32 MiB of 2 MiB pages), an L2 TLB of 2048
      // (4 GiB), then page walks. One line per page, all in L2 (300 cycles).
      const uint64_t pages = r.next->size();
      cyc = pages <= 16 ? 300 : pages <= 2048 ? 400 : 900;
    } else if (r.load == MemLoad::cg && r.stride_bytes == (2u << 20)) {
      cyc = 300;  // one big allocation: pages far larger than 2 MiB, no step
    } else if (r.load == MemLoad::cg && !sequential) {
      const uint64_t used = per_warp * r.warps * l2_line / std::max(l2_line, r.stride_bytes);
      cyc = used <= l2_bytes * 46 / 100 ? 280 : used <= l2_bytes * 92 / 100 ? 512 : 658;
      if (l2_plain_ways && r.stride_bytes % (64 * KiB) == 0)
        cyc = lines <= static_cast<uint64_t>(l2_plain_ways) ? 280 : 658;
      if (l2_flat) cyc = 658;
      if (r.stride_bytes == 256) cyc += l2_extra_at_256;
    } else if (r.load == MemLoad::constant) {
      cyc = per_warp <= 2 * KiB ? 29 : 99;
    } else if (sequential) {
      const double s = static_cast<double>(r.stride_bytes);
      cyc = r.load == MemLoad::cg ? 300 + 400 * std::min(1.0, s / 64)
                                  : 33 + 267 * std::min(1.0, s / 32);
    } else if (r.load == MemLoad::nc) {
      cyc = per_warp <= 16 * KiB ? 33 : 290;  // one 16 KiB cache per partition
    } else {
      // One cache per SM of 128-byte lines: past a 128-byte stride each line holds one element.
      // 4 KiB under 256 KiB - split, as the H200 and H100 measured (2-7 KiB under).
      const uint64_t l1 = 256 * KiB - shared - 4 * KiB;
      const uint64_t used = per_warp * r.warps * 128 / std::max<uint64_t>(128, r.stride_bytes);
      cyc = used <= l1 ? 33 : 290;
      // 8 ways, a plain set index with a 32 KiB set stride: lines 32 KiB apart share a set.
      if (r.stride_bytes >= 32 * KiB) cyc = lines <= 8 ? 33 : 290;
    }
    const uint64_t hops = r.warmup_hops + r.hops_per_repeat * r.repeats;
    seen.push_back(
        {r.load, r.stride_bytes, r.hops_per_repeat, r.l2_prefetch, sequential, r.warps, hops, cyc});
    for (int w = 0; w < r.warps; ++w) {
      std::vector<double> v;
      double c = cyc;
      if (last_warp_takes_the_misses && r.load == MemLoad::ca && !sequential && cyc > 33 &&
          r.stride_bytes < 32 * KiB)
        c = w == r.warps - 1 ? 290 * r.warps : 33;  // the same misses, all on one warp
      for (int k = 0; k < r.repeats; ++k) v.push_back(c * (1 + 0.001 * k));
      t.cycles_per_hop.push_back(v);
      const bool wrong = corrupt_all || (corrupt && r.next->size() > 1);
      // Every chain the probe builds is one cycle per warp of size / warps lines, so the walk
      // ends where hops modulo that length ends (the probe's own check walks every hop).
      const uint64_t cycle = std::max<uint64_t>(1, r.next->size() / r.warps);
      t.end_lines.push_back(walk(*r.next, r.starts[w], hops % cycle) + (wrong ? 1 : 0));
    }
    return t;
  }
};

class FakeDevice final : public fakes::OneKernelSetDevice<MemoryKernels> {
 public:
  explicit FakeDevice(MemoryKernels* k, DeviceInfo info = h100_like())
      : OneKernelSetDevice(k, std::move(info)) {}
};

MemoryProbeResult run_fake(FakeMemory& k, const MemoryOptions& opt = {},
                           DeviceInfo info = h100_like()) {
  k.l2_bytes = info.l2_bytes.value_or(k.l2_bytes);
  FakeDevice dev(&k, info);
  MemoryProbeResult out;
  fakes::run_probe(run_memory, dev, opt, out);
  return out;
}

// The memory probe's figures of `out` on the H100-like device, by id; every id well formed.
std::map<std::string, Figure> figures_by_id(const MemoryProbeResult& out) {
  RunResult rr;
  rr.device = h100_like();
  rr.put(out);
  std::map<std::string, Figure> by_id;
  for (const auto& f : probe_registry().find("memory")->figures(rr)) {
    EXPECT_TRUE(well_formed_figure_id(f.id)) << f.id;
    by_id[f.id] = f;
  }
  return by_id;
}

// The carve-outs part alone (no partitions, granularity or constant cache).
MemoryOptions carveouts_only() {
  MemoryOptions o;
  o.partition = o.granularity = o.constant = false;
  return o;
}

// The carve-outs part alone on `k`, which must fail loudly: the probe throws ProbeError.
MemoryProbeResult run_carveouts_expecting_error(FakeMemory& k) {
  FakeDevice dev(&k);
  MemoryProbeResult out;
  EXPECT_THROW(fakes::run_probe(run_memory, dev, carveouts_only(), out), ProbeError);
  return out;
}

TEST(MemoryProbe, CarveoutsReadBackAndAgree) {
  FakeMemory k;
  const auto out = run_fake(k, carveouts_only());
  EXPECT_TRUE(out.status.ok()) << out.status.reason;
  EXPECT_TRUE(out.carveout_status.ok()) << out.carveout_status.reason;
  if (std::getenv("GD_SHOW")) {
    RunResult rr;
    rr.put(out);
    memory_report()->print_summary(std::cout, rr);
  }
  ASSERT_EQ(out.carveouts.size(), 20u);  // default, 0, then each split as a hint and forced
  EXPECT_EQ(out.carveouts[2].curve.key, "carveout.8.hint");
  EXPECT_EQ(out.carveouts[3].curve.key, "carveout.8");
  for (const auto& c : out.carveouts) {
    ASSERT_TRUE(c.curve.capacity.capacity_bytes) << c.curve.key << " " << c.curve.capacity.note;
    const uint64_t shared = c.point.shared_kib >= 0 ? c.point.shared_kib * KiB : 32 * KiB;
    const uint64_t l1 = 256 * KiB - shared - 4 * KiB;  // the fake's L1 (see above)
    // The edge is bracketed: capacity <= L1 < next point, within a refinement step.
    EXPECT_LE(*c.curve.capacity.capacity_bytes, l1) << c.curve.key;
    EXPECT_GT(*c.curve.capacity.next_bytes, l1) << c.curve.key;
    EXPECT_LE(*c.curve.capacity.next_bytes - *c.curve.capacity.capacity_bytes, l1 / 8)
        << c.curve.key;
    EXPECT_DOUBLE_EQ(std::round(*c.curve.capacity.plateau_cycles), 33);
    EXPECT_EQ(*c.api_shared_bytes, shared / (8 * KiB) * 8 * KiB);
    if (c.point.shared_kib >= 0) EXPECT_EQ(c.agreement, "agrees") << c.curve.key;
  }
  EXPECT_EQ(out.carveouts[0].curve.key, "carveout.default");
  {
    const auto ids = figures_by_id(out);
    for (const char* id :
         {"memory.carveout.228.hint.l1_capacity", "memory.carveout.228.l1_capacity",
          "memory.carveout.8.hint.l1_latency", "memory.carveout.default.shared_bytes"})
      EXPECT_TRUE(ids.count(id)) << id;
    const nlohmann::json j = out;
    EXPECT_EQ(nlohmann::json(j.get<MemoryProbeResult>()), j);
  }
  // 256 KiB - the L1 found: the default's 32 KiB plus the L1's shortfall and the edge's step.
  EXPECT_GE(*out.carveouts[0].implied_shared_bytes, 32 * KiB);
  EXPECT_LT(*out.carveouts[0].implied_shared_bytes, 48 * KiB);
  EXPECT_EQ(out.carveouts[0].agreement, "the L1 implies a 32 KiB split");
  EXPECT_GT(out.wall_seconds, 0);
  EXPECT_DOUBLE_EQ(*out.clock_mhz, 1800);
}

TEST(MemoryProbe, PartitionsGranularityConstant) {
  FakeMemory k;
  MemoryOptions opt;
  opt.carveout = false;
  const auto out = run_fake(k, opt);
  EXPECT_TRUE(out.status.ok()) << out.status.reason;
  ASSERT_EQ(out.partitions.size(), 3u);
  EXPECT_EQ(out.partitions[0].path, "global");
  EXPECT_EQ(out.partitions[2].path, "texture");
  EXPECT_EQ(out.partitions[2].verdict.verdict, "per SM") << out.partitions[2].verdict.note;
  ASSERT_EQ(out.partitions[0].by_warps.size(), 4u);
  EXPECT_EQ(out.partitions[0].verdict.verdict, "per SM") << out.partitions[0].verdict.note;
  EXPECT_EQ(out.partitions[1].verdict.verdict, "per partition") << out.partitions[1].verdict.note;
  ASSERT_EQ(out.granularity.size(), 2u);
  EXPECT_EQ(*out.granularity[0].estimate.bytes, 32u);
  EXPECT_EQ(*out.granularity[1].estimate.bytes, 64u);
  ASSERT_TRUE(out.constant);
  EXPECT_EQ(*out.constant->capacity.capacity_bytes, 2 * KiB);
  EXPECT_EQ(*out.constant_bank_bytes, 95 * KiB);
  EXPECT_EQ(out.constant->points.back().footprint_bytes, 95 * KiB);
  ASSERT_EQ(out.l1_line.by_stride.size(), 5u);
  ASSERT_TRUE(out.l1_line.estimate.bytes) << out.l1_line.estimate.note;
  EXPECT_EQ(*out.l1_line.estimate.bytes, 128u);
  ASSERT_EQ(out.l1_ways.estimates.size(), 2u);
  for (const auto& e : out.l1_ways.estimates) {
    ASSERT_TRUE(e.ways) << e.note;
    EXPECT_EQ(*e.ways, 8);
  }

  // Figures, JSON both ways, every writer.
  RunResult rr;
  rr.put(out);
  const Probe* p = probe_registry().find("memory");
  ASSERT_NE(p, nullptr);
  EXPECT_GT(expect_figure_ids_declared(rr), 0);
  std::set<std::string> ids;
  const auto& units = known_units();
  for (const auto& f : p->figures(rr)) {
    ids.insert(f.id);
    EXPECT_TRUE(f.value) << f.id;
    // A result, not marked unstable: the walk through L2 gives one answer
    // (results/NOTES-memory.md).
    if (f.id == "memory.l1.sector_bytes") EXPECT_TRUE(f.status.ok()) << f.status.reason;
    EXPECT_FALSE(f.instruction.empty()) << f.id;
    // What compare, baselines and fleets accept.
    EXPECT_TRUE(well_formed_figure_id(f.id)) << f.id;
    EXPECT_NE(std::find(units.begin(), units.end(), f.unit), units.end()) << f.id << " " << f.unit;
  }
  for (const char* id :
       {"memory.partition.global.capacity_1warps", "memory.partition.global.capacity_4warps",
        "memory.partition.readonly.capacity_2warps", "memory.partition.texture.capacity_3warps",
        "memory.l1.sector_bytes", "memory.l1.line_bytes", "memory.l2.sector_bytes",
        "memory.constant.L1.capacity", "memory.constant.L1_5.capacity_min",
        "memory.constant.L1_5.latency"})
    EXPECT_TRUE(ids.count(id)) << id;
  const nlohmann::json j = p->to_json(rr.probes.at("memory"));
  const std::any back = p->from_json(j);
  EXPECT_EQ(p->to_json(back), j);
  std::ostringstream os;
  memory_report()->print_summary(os, rr);
  EXPECT_NE(os.str().find("per partition"), std::string::npos);
  if (std::getenv("GD_SHOW")) std::cout << os.str();  // GD_SHOW=<folder>: the summary too
  report::SectionContext ctx;
  const std::string html = memory_report()->html_section(rr, ctx);
  EXPECT_NE(html.find("id=\"memory\""), std::string::npos);
  EXPECT_NE(html.find("per SM"), std::string::npos);
  // With gnuplot, every chart of the section renders (no failure note) and is inlined.
  std::string why;
  if (report::gnuplot_available(&why)) {
    report::SectionContext charts;
    charts.charts = true;
    if (const char* show = std::getenv("GD_SHOW")) {  // PNGs to look at, in that folder
      charts.png = true;
      charts.png_dir = show;
    }
    const std::string with = memory_report()->html_section(rr, charts);
    EXPECT_TRUE(charts.notes.empty()) << charts.notes.front();
    std::size_t svgs = 0;
    for (std::size_t at = with.find("<svg"); at != std::string::npos;
         at = with.find("<svg", at + 1))
      ++svgs;
    // 3 partition paths, granularity, L1 line, L1 ways, L2 line, L2 ways, constant, TLB
    EXPECT_EQ(svgs, 3u + 1 + 1 + 1 + 1 + 1 + 1 + 1);
  }
  const auto dir = std::filesystem::temp_directory_path() / "gd_memory_csv";
  std::filesystem::create_directories(dir);
  const auto files = memory_report()->write_csv(dir, rr);
  ASSERT_EQ(files.size(), 1u);
  EXPECT_TRUE(std::filesystem::file_size(files[0]) > 100);
}

TEST(MemoryProbe, L1GranularityWalksTheSameBytesFromL2AtEveryStride) {
  FakeMemory k;
  MemoryOptions opt;
  opt.carveout = false;
  const auto out = run_fake(k, opt);
  ASSERT_TRUE(out.status.ok()) << out.status.reason;
  int l1 = 0, l2 = 0;
  for (const auto& s : k.seen) {
    if (!s.sequential) {
      EXPECT_FALSE(s.l2_prefetch);  // the random chains: no change
      continue;
    }
    if (s.load == MemLoad::ca) {
      ++l1;
      EXPECT_TRUE(s.l2_prefetch) << "stride " << s.stride;
      EXPECT_EQ(s.hops * s.stride, 256 * KiB) << "stride " << s.stride;
    } else if (s.load == MemLoad::cg) {
      ++l2;
      EXPECT_FALSE(s.l2_prefetch);  // the L2 walk misses to device memory on purpose
    }
  }
  EXPECT_EQ(l1, 7);
  EXPECT_EQ(l2, 7);
}

// A creep under 10 % of the hit latency is not a TLB level (an H200's chunk-mapped curve
// can creep 261 -> 290 cycles over 4 MiB..5 GiB on one machine and stay flat at 287 on
// another); a 100-cycle step is.
TEST(MemoryTlb, ARiseUnderTenPercentIsNotALevel) {
  auto curve = [](double step) {
    std::vector<MemPoint> v;
    for (uint64_t mib = 4; mib <= 4096; mib *= 2) {
      MemPoint p;
      p.footprint_bytes = mib * MiB;
      const double c = mib <= 64 ? 268 : 268 + step;
      p.cycles = Summary{c, c, c, c, c, 5};
      v.push_back(p);
    }
    return v;
  };
  EXPECT_EQ(tlb_levels(curve(20)).size(), 1u);  // +7 %: one level, no reach
  // Such an H200 chunk-mapped curve (MiB, cycles): a creep, cut at 38-108 MiB (+19
  // cycles) by the level finder alone.
  const std::vector<std::pair<uint64_t, double>> h200 = {
      {4, 261},    {6, 258},    {8, 260},    {10, 265},   {12, 264},   {14, 268},   {16, 270},
      {20, 270},   {22, 270},   {26, 269},   {32, 272},   {38, 272},   {46, 274},   {54, 273},
      {64, 276},   {76, 277},   {90, 278},   {108, 281},  {128, 282},  {152, 283},  {182, 283},
      {216, 282},  {256, 281},  {304, 283},  {362, 285},  {430, 286},  {512, 286},  {608, 286},
      {724, 286},  {862, 288},  {1024, 287}, {1218, 288}, {1448, 288}, {1722, 288}, {2048, 288},
      {2436, 288}, {2896, 289}, {3444, 289}, {4096, 289}, {4870, 290}};
  std::vector<MemPoint> seen;
  for (auto [mib, c] : h200) {
    MemPoint p;
    p.footprint_bytes = mib * MiB;
    p.cycles = Summary{c, c, c, c, c, 5};
    seen.push_back(p);
  }
  EXPECT_EQ(tlb_levels(seen).size(), 1u);
  const auto two = tlb_levels(curve(100));  // +37 %: a level reaching 64-128 MiB
  ASSERT_EQ(two.size(), 2u);
  EXPECT_EQ(*two[0].reach_lo_bytes, 64 * MiB);
  EXPECT_NEAR(*two[1].step_cycles, 100, 1);
}

TEST(MemoryProbe, TlbReachAndMissCostBehindChunkMappedMemory) {
  FakeMemory k;
  MemoryOptions opt;
  opt.carveout = opt.partition = opt.granularity = opt.constant = false;
  const auto out = run_fake(k, opt);
  ASSERT_TRUE(out.status.ok()) << out.status.reason;
  ASSERT_TRUE(out.tlb_status.ok()) << out.tlb_status.reason;
  ASSERT_EQ(out.tlb.size(), 2u);
  const TlbResult& ch = out.tlb[0];
  EXPECT_EQ(ch.mapping, "chunks");
  ASSERT_EQ(ch.levels.size(), 3u) << ch.note;
  // Reaches bracketed within a step of 32 MiB and 4 GiB; miss costs 100 and 500 cycles.
  EXPECT_LE(*ch.levels[0].reach_lo_bytes, 32 * MiB);
  EXPECT_GT(*ch.levels[0].reach_hi_bytes, 32 * MiB);
  EXPECT_LE(*ch.levels[1].reach_lo_bytes, 4096 * MiB);
  EXPECT_GT(*ch.levels[1].reach_hi_bytes, 4096 * MiB);
  EXPECT_FALSE(ch.levels[2].reach_lo_bytes);
  EXPECT_NEAR(ch.levels[0].cycles, 300, 1);
  EXPECT_NEAR(*ch.levels[1].step_cycles, 100, 1);
  EXPECT_NEAR(*ch.levels[2].step_cycles, 500, 1);
  EXPECT_EQ(ch.curve.points.back().footprint_bytes, 16384 * MiB);
  // The control: one allocation, no step, said in words.
  const TlbResult& ml = out.tlb[1];
  EXPECT_EQ(ml.mapping, "malloc");
  EXPECT_EQ(ml.levels.size(), 1u);
  EXPECT_NE(ml.note.find("no step up to 16 GiB"), std::string::npos) << ml.note;
  EXPECT_EQ(k.tlb_releases, 1);  // the part's buffers are given back after it
  // Figures, and the JSON both ways.
  RunResult rr;
  rr.device = h100_like();
  rr.put(out);
  if (std::getenv("GD_SHOW")) memory_report()->print_summary(std::cout, rr);
  std::map<std::string, double> fig;
  for (const Figure& f : probe_registry().find("memory")->figures(rr))
    if (f.value) fig[f.id] = f.value->median;
  EXPECT_NEAR(fig.at("memory.tlb.L1.reach"), 32 * MiB, 4 * MiB);
  EXPECT_NEAR(fig.at("memory.tlb.L2.reach"), 4096 * MiB, 512 * MiB);
  EXPECT_NEAR(fig.at("memory.tlb.L1.miss_cycles"), 100, 1);
  EXPECT_NEAR(fig.at("memory.tlb.L2.miss_cycles"), 500, 1);
  const MemoryProbeResult back = nlohmann::json(out).get<MemoryProbeResult>();
  ASSERT_EQ(back.tlb.size(), 2u);
  EXPECT_EQ(back.tlb[0].levels.size(), 3u);
  EXPECT_EQ(*back.tlb[0].levels[1].reach_hi_bytes, *ch.levels[1].reach_hi_bytes);
  EXPECT_EQ(back.tlb[1].note, ml.note);
  EXPECT_TRUE(back.tlb_status.ok());
  // Quick leaves the part out; a backend without the mapping says why.
  OptionValues q{{"quick", "1"}};
  EXPECT_FALSE(parse_memory_options(q, memory_option_specs()).tlb);
  FakeMemory k2;
  k2.no_chunks = true;
  const auto out2 = run_fake(k2, opt);
  ASSERT_EQ(out2.tlb.size(), 2u);
  EXPECT_EQ(out2.tlb[0].status.name(), "unsupported");
  EXPECT_NE(out2.tlb[0].status.reason.find("virtual-memory"), std::string::npos);
  EXPECT_TRUE(out2.tlb[1].status.ok());
}

MemoryOptions l2_only() {
  MemoryOptions o;
  o.carveout = o.partition = o.granularity = o.constant = o.tlb = false;
  return o;
}

TEST(MemoryProbe, L2LineAndWaysOnAFakeL2) {
  FakeMemory k;  // 128-byte lines, hashed slices and sets, a 1 MiB L2
  const auto out = run_fake(k, l2_only());
  ASSERT_TRUE(out.status.ok()) << out.status.reason;
  ASSERT_TRUE(out.l2_line.status.ok()) << out.l2_line.status.reason;
  ASSERT_EQ(out.l2_line.by_stride.size(), 3u);
  std::vector<uint64_t> totals;
  for (const MemCurve& c : out.l2_line.by_stride) {
    EXPECT_EQ(c.load, MemLoad::cg) << c.key;
    EXPECT_EQ(c.warps, 8) << c.key;
    const CapacityEstimate t = total_capacity(c);
    ASSERT_TRUE(t.capacity_bytes) << c.key << " " << c.capacity.note;
    EXPECT_EQ(*t.capacity_bytes, 8 * *c.capacity.capacity_bytes);
    totals.push_back(*t.capacity_bytes);
  }
  EXPECT_EQ(out.l2_line.by_stride[0].key, "line.l2.64");
  EXPECT_EQ(out.l2_line.by_stride[2].stride_bytes, 256u);
  // The near half's edge (46 % of 1 MiB = 482 KiB of lines), bracketed, at every stride.
  const double near = 0.46 * MiB;
  for (int i : {0, 1}) EXPECT_NEAR(double(totals[i]), near, 0.06 * near) << i;
  EXPECT_NEAR(double(totals[2]), 2 * near, 0.12 * near);
  ASSERT_TRUE(out.l2_line.estimate.bytes) << out.l2_line.estimate.note;
  EXPECT_EQ(*out.l2_line.estimate.bytes, 128u);
  // Hashed: no conflict step at either distance, and the reason said.
  ASSERT_TRUE(out.l2_ways.status.ok()) << out.l2_ways.status.reason;
  ASSERT_EQ(out.l2_ways.estimates.size(), 2u);
  EXPECT_EQ(out.l2_ways.by_stride[0].key, "ways.l2.1M");
  EXPECT_EQ(out.l2_ways.by_stride[1].key, "ways.l2.4M");
  EXPECT_EQ(out.l2_ways.by_stride[1].load, MemLoad::cg);
  for (const WaysEstimate& e : out.l2_ways.estimates) {
    EXPECT_FALSE(e.ways);
    EXPECT_NE(e.note.find("no conflict step up to 128 lines"), std::string::npos) << e.note;
    EXPECT_NE(e.note.find("hashed set index"), std::string::npos) << e.note;
  }
  // Every L2 chase bypasses L1; the line sweeps run 8 warps, the conflict chains one.
  int line_launches = 0, ways_launches = 0;
  for (const auto& s : k.seen) {
    ASSERT_EQ(s.load, MemLoad::cg);
    if (s.stride >= MiB) {
      ++ways_launches;
      EXPECT_EQ(s.warps, 1);
    } else {
      ++line_launches;
      EXPECT_EQ(s.warps, 8);
    }
  }
  EXPECT_EQ(ways_launches, 2 * static_cast<int>(conflict_counts().size()));
  EXPECT_GT(line_launches, 3 * 6);

  // Figures, summary, HTML, CSV and the JSON both ways.
  RunResult rr;
  rr.device = h100_like();
  rr.put(out);
  const Probe* p = probe_registry().find("memory");
  std::map<std::string, Figure> fig;
  for (const Figure& f : p->figures(rr)) fig[f.id] = f;
  ASSERT_TRUE(fig.count("memory.l2.line_bytes"));
  EXPECT_EQ(fig.at("memory.l2.line_bytes").value->median, 128);
  EXPECT_EQ(fig.at("memory.l2.line_bytes").unit, "bytes");
  EXPECT_TRUE(well_formed_figure_id("memory.l2.line_bytes"));
  std::ostringstream os;
  memory_report()->print_summary(os, rr);
  if (std::getenv("GD_SHOW")) std::cout << os.str();
  EXPECT_NE(os.str().find("L2 line (total capacity over 8 warps by stride, through L2 only: 64 B "),
            std::string::npos)
      << os.str();
  EXPECT_NE(os.str().find("): 128 B"), std::string::npos) << os.str();
  EXPECT_NE(os.str().find("near half"), std::string::npos) << os.str();
  EXPECT_NE(os.str().find("L2 associativity (conflict chains through L2 only): 1 MiB apart: "
                          "undetermined (no conflict step"),
            std::string::npos)
      << os.str();
  report::SectionContext ctx;
  const std::string html = memory_report()->html_section(rr, ctx);
  EXPECT_NE(html.find("L2 line and associativity"), std::string::npos);
  EXPECT_NE(html.find("line: <b>128 B</b>"), std::string::npos);
  const auto dir = std::filesystem::temp_directory_path() / "gd_memory_l2_csv";
  std::filesystem::create_directories(dir);
  const auto files = memory_report()->write_csv(dir, rr);
  ASSERT_EQ(files.size(), 1u);
  std::ifstream csv(files[0]);
  const std::string text((std::istreambuf_iterator<char>(csv)), std::istreambuf_iterator<char>());
  EXPECT_NE(text.find("l2_line,line.l2.128,cg,8,"), std::string::npos);
  EXPECT_NE(text.find("l2_ways,ways.l2.4M,cg,1,"), std::string::npos);
  const nlohmann::json j = out;
  ASSERT_TRUE(j.contains("l2_line"));
  EXPECT_EQ(j["l2_line"]["bytes"], 128);
  EXPECT_EQ(j["l2_line"]["by_stride"][1]["warps"], 8);
  const MemoryProbeResult back = j.get<MemoryProbeResult>();
  EXPECT_EQ(nlohmann::json(back), j);
  ASSERT_EQ(back.l2_line.by_stride.size(), 3u);
  EXPECT_EQ(*back.l2_line.estimate.bytes, 128u);
  EXPECT_EQ(back.l2_line.by_stride[2].warps, 8);
  EXPECT_EQ(back.l2_line.by_stride[2].load, MemLoad::cg);
  ASSERT_EQ(back.l2_ways.estimates.size(), 2u);
  EXPECT_EQ(back.l2_ways.estimates[1].note, out.l2_ways.estimates[1].note);
  EXPECT_FALSE(back.l2_ways.estimates[1].ways);
  // A file from before the L2 parts reads back with neither, and no L2 section.
  nlohmann::json old = j;
  old.erase("l2_line");
  old.erase("l2_ways");
  const MemoryProbeResult before = old.get<MemoryProbeResult>();
  EXPECT_TRUE(before.l2_line.by_stride.empty());
  RunResult rb;
  rb.put(before);
  report::SectionContext ctx2;
  EXPECT_EQ(memory_report()->html_section(rb, ctx2).find("L2 line and associativity"),
            std::string::npos);
}

TEST(MemoryProbe, L2LineOfOtherSizesAndPlainWays) {
  // 64-byte lines: the capacity doubles from 64 to 128 and again to 256.
  FakeMemory k64;
  k64.l2_line = 64;
  auto out = run_fake(k64, l2_only());
  ASSERT_TRUE(out.l2_line.estimate.bytes) << out.l2_line.estimate.note;
  EXPECT_EQ(*out.l2_line.estimate.bytes, 64u);
  // 256-byte lines: no growth up to the largest stride, said so.
  FakeMemory k256;
  k256.l2_line = 256;
  out = run_fake(k256, l2_only());
  EXPECT_FALSE(out.l2_line.estimate.bytes);
  EXPECT_NE(out.l2_line.estimate.note.find("did not grow up to a 256-byte stride"),
            std::string::npos)
      << out.l2_line.estimate.note;
  // The edge at 256 B after a plateau of another level: not compared, said so.
  FakeMemory kl;
  kl.l2_extra_at_256 = 200;
  out = run_fake(kl, l2_only());
  EXPECT_FALSE(out.l2_line.estimate.bytes);
  EXPECT_NE(out.l2_line.estimate.note.find("not one level's"), std::string::npos)
      << out.l2_line.estimate.note;
  EXPECT_NE(out.l2_line.estimate.note.find("256 B 48"), std::string::npos)
      << out.l2_line.estimate.note;
  // A plain set index of 16 ways: the step shows at both distances.
  FakeMemory kw;
  kw.l2_plain_ways = 16;
  out = run_fake(kw, l2_only());
  ASSERT_EQ(out.l2_ways.estimates.size(), 2u);
  for (const WaysEstimate& e : out.l2_ways.estimates) {
    ASSERT_TRUE(e.ways) << e.note;
    EXPECT_EQ(*e.ways, 16);
  }
  // No edge anywhere: each sweep runs to its end, and the line is undetermined with the reason.
  FakeMemory kf;
  kf.l2_flat = true;
  out = run_fake(kf, l2_only());
  EXPECT_FALSE(out.l2_line.estimate.bytes);
  EXPECT_NE(out.l2_line.estimate.note.find("fewer than 2 strides with a capacity"),
            std::string::npos)
      << out.l2_line.estimate.note;
  ASSERT_EQ(out.l2_line.by_stride.size(), 3u);
  // The last point: 3 x the L2 x stride / 128 in all, per warp an eighth of it.
  EXPECT_EQ(out.l2_line.by_stride[2].points.back().footprint_bytes * 8, 6 * MiB);
}

TEST(MemoryProbe, L2PartsOffWithQuickByOptionAndWithoutSupport) {
  const auto specs = memory_option_specs();
  MemoryOptions q = parse_memory_options({{"quick", "1"}}, specs);
  EXPECT_FALSE(q.l2_line);
  EXPECT_FALSE(q.l2_ways);
  q.carveout = q.partition = q.granularity = q.constant = false;
  FakeMemory k;
  auto out = run_fake(k, q);
  EXPECT_EQ(out.l2_line.status.name(), "skipped");
  EXPECT_EQ(out.l2_line.status.reason, "memory.l2_line=0");
  EXPECT_EQ(out.l2_ways.status.name(), "skipped");
  EXPECT_TRUE(out.l2_line.by_stride.empty());
  EXPECT_EQ(k.launches, 0);
  // Quick with the part asked for by name: it runs.
  MemoryOptions qa = parse_memory_options({{"quick", "1"}, {"l2_line", "1"}}, specs);
  EXPECT_TRUE(qa.l2_line);
  EXPECT_FALSE(qa.l2_ways);
  // Off by option, the other on.
  MemoryOptions o = parse_memory_options({{"l2_line", "0"}}, specs);
  EXPECT_FALSE(o.l2_line);
  EXPECT_TRUE(o.l2_ways);
  o.carveout = o.partition = o.granularity = o.constant = o.tlb = false;
  FakeMemory k1;
  out = run_fake(k1, o);
  EXPECT_EQ(out.l2_line.status.name(), "skipped");
  EXPECT_TRUE(out.l2_line.by_stride.empty());
  EXPECT_EQ(out.l2_ways.by_stride.size(), 2u);
  RunResult rr;
  rr.put(out);
  std::ostringstream os;
  memory_report()->print_summary(os, rr);
  EXPECT_NE(os.str().find("L2 line: skipped: memory.l2_line=0"), std::string::npos) << os.str();
  // A backend without the loads or warps it needs: unsupported, with its reason.
  FakeMemory k2;
  k2.no_l2 = true;
  out = run_fake(k2, l2_only());
  EXPECT_EQ(out.l2_line.status.name(), "unsupported");
  EXPECT_EQ(out.l2_line.status.reason, "no L1-bypassing load here");
  EXPECT_EQ(out.l2_ways.status.name(), "unsupported");
  EXPECT_EQ(k2.launches, 0);
  // No L2 size from the API: nothing to plan the sweep from.
  FakeMemory k3;
  DeviceInfo no_l2 = h100_like();
  no_l2.l2_bytes.reset();
  out = run_fake(k3, l2_only(), no_l2);
  EXPECT_EQ(out.l2_line.status.name(), "skipped");
  EXPECT_NE(out.l2_line.status.reason.find("no L2 size"), std::string::npos);
  // A backend with no memory kernels at all: both say why.
  FakeDevice none(nullptr);
  MemoryProbeResult r;
  fakes::run_probe(run_memory, none, MemoryOptions{}, r);
  EXPECT_EQ(r.l2_line.status.name(), "unsupported");
  EXPECT_EQ(r.l2_ways.status.name(), "unsupported");
}

// The L2 parts on an H200-sized L2 (60 MiB; near half to 27.6 MiB at 280 cycles, far half to
// 55 MiB at 512, memory at 658; 1980 MHz): the device time the plan would take there, from
// the hops each launch walks (the warps of one launch walk side by side).
double modeled_seconds(const FakeMemory& k, bool line) {
  double s = 0;
  for (const auto& x : k.seen)
    if (x.load == MemLoad::cg && (x.stride < MiB) == line)
      s += double(x.hops_per_warp) * x.cycles / 1980e6;
  return s;
}

TEST(MemoryProbe, L2PartsFitTheirTimeOnAnH200SizedL2) {
  DeviceInfo h200 = h100_like();
  h200.l2_bytes = 60 * MiB;
  FakeMemory k;
  const auto out = run_fake(k, l2_only(), h200);
  ASSERT_TRUE(out.status.ok()) << out.status.reason;
  ASSERT_TRUE(out.l2_line.estimate.bytes) << out.l2_line.estimate.note;
  EXPECT_EQ(*out.l2_line.estimate.bytes, 128u);
  // The near half's edge, compared at every stride.
  const auto cap = [&](int i) {
    return double(*total_capacity(out.l2_line.by_stride[i]).capacity_bytes);
  };
  EXPECT_NEAR(cap(0), 0.46 * 60 * MiB, 1.5 * MiB);
  EXPECT_NEAR(cap(1), 0.46 * 60 * MiB, 1.5 * MiB);
  EXPECT_NEAR(cap(2), 2 * 0.46 * 60 * MiB, 3 * MiB);
  for (const WaysEstimate& e : out.l2_ways.estimates)
    EXPECT_NE(e.note.find("60 MiB) is no power of two"), std::string::npos) << e.note;
  if (std::getenv("GD_SHOW")) {
    RunResult rr;
    rr.put(out);
    memory_report()->print_summary(std::cout, rr);
  }
  const double line_s = modeled_seconds(k, true), ways_s = modeled_seconds(k, false);
  std::cout << "[ modeled H200 time ] L2 line " << line_s << " s, L2 ways " << ways_s << " s\n";
  EXPECT_LT(line_s, 4.0);
  EXPECT_LT(ways_s, 0.5);
  // Where no edge shows, every sweep runs to its end, still inside the part's 15 s.
  FakeMemory flat;
  flat.l2_flat = true;
  MemoryOptions o = l2_only();
  o.l2_ways = false;
  run_fake(flat, o, h200);
  const double flat_s = modeled_seconds(flat, true);
  std::cout << "[ modeled H200 time ] L2 line, no edge " << flat_s << " s\n";
  EXPECT_LT(flat_s, 15.0);
}

TEST(MemoryProbe, PartitionCurveCountsEveryWarpsMisses) {
  // One cache per SM whose misses all land on one warp of n: the curve is the mean over the
  // warps, so it still leaves the plateau where the n chains outgrow the cache (a median
  // over 3 or 4 warps would follow the warps that hit and call the cache per partition).
  FakeMemory k;
  k.last_warp_takes_the_misses = true;
  MemoryOptions opt;
  opt.carveout = false;
  const auto out = run_fake(k, opt);
  ASSERT_TRUE(out.status.ok()) << out.status.reason;
  ASSERT_EQ(out.partitions[0].path, "global");
  ASSERT_EQ(out.partitions[0].by_warps.size(), 4u);
  EXPECT_EQ(out.partitions[0].verdict.verdict, "per SM") << out.partitions[0].verdict.note;
  const auto& four = out.partitions[0].by_warps[3];
  ASSERT_TRUE(four.capacity.capacity_bytes);
  EXPECT_LT(*four.capacity.capacity_bytes, 80 * KiB);
}

TEST(MemoryProbe, CarveoutFiguresAndJson) {
  FakeMemory k;
  MemoryOptions opt;
  opt.quick = true;
  opt.partition = opt.granularity = opt.constant = false;
  opt.points_per_doubling = 2;
  const auto out = run_fake(k, opt);
  ASSERT_EQ(out.carveouts.size(), 4u);  // default, 0, the middle, 228 KiB
  const auto ids = figures_by_id(out);
  ASSERT_TRUE(ids.count("memory.carveout.default.shared_bytes"));
  EXPECT_EQ(ids.at("memory.carveout.default.shared_bytes").value->median, 32 * 1024);
  for (const char* id : {"memory.carveout.default.l1_capacity", "memory.carveout.0.l1_latency",
                         "memory.carveout.228.l1_capacity"})
    EXPECT_TRUE(ids.count(id)) << id;
  const nlohmann::json j = out;
  EXPECT_EQ(nlohmann::json(j.get<MemoryProbeResult>()), j);
  EXPECT_FALSE(j["carveouts"][0].contains("predicted_l1_bytes"));  // absent, never null
}

TEST(MemoryProbe, WrongEndPositionFailsLoudly) {
  FakeMemory k;
  k.corrupt = true;
  const auto out = run_carveouts_expecting_error(k);
  EXPECT_EQ(out.status.name(), "error");
  EXPECT_EQ(out.carveout_status.name(), "error");
  ASSERT_FALSE(out.carveouts.empty());
  EXPECT_NE(out.carveouts[0].curve.status.reason.find("ended at line"), std::string::npos);
}

TEST(MemoryProbe, APreferenceTheDriverIgnoresIsCaught) {
  FakeMemory k;
  k.ignore_preference = true;
  const auto out = run_fake(k, carveouts_only());
  for (const auto& c : out.carveouts) {
    if (c.point.shared_kib <= 32) continue;
    SCOPED_TRACE(c.curve.key);
    if (c.point.preference_only)
      EXPECT_EQ(c.agreement.rfind("differs: the L1 implies a 32 KiB split", 0), 0u) << c.agreement;
    else
      EXPECT_EQ(c.agreement, "agrees");
  }
  // Their figures say the split was not applied (no value); the forced rows stay ok.
  const auto by_id = figures_by_id(out);
  const Figure& hint = by_id.at("memory.carveout.64.hint.l1_capacity");
  EXPECT_EQ(hint.status.name(), "unsupported");
  EXPECT_FALSE(hint.value.has_value());
  EXPECT_EQ(hint.status.reason.rfind("the driver did not apply the split asked for (64 KiB "
                                     "shared, preference only): the L1 implies a 32 KiB split",
                                     0),
            0u)
      << hint.status.reason;
  EXPECT_EQ(by_id.at("memory.carveout.64.hint.l1_latency").status.name(), "unsupported");
  // Below the default too: the 8 and 16 KiB hints and the 0 KiB row (no block can force a
  // split under the default) ran with the default's L1, so none of them is ok.
  for (const char* id :
       {"memory.carveout.8.hint.l1_capacity", "memory.carveout.16.hint.l1_capacity",
        "memory.carveout.0.l1_capacity", "memory.carveout.0.l1_latency"}) {
    EXPECT_EQ(by_id.at(id).status.name(), "unsupported") << id;
    EXPECT_FALSE(by_id.at(id).value.has_value()) << id;
  }
  EXPECT_TRUE(by_id.at("memory.carveout.64.l1_capacity").status.ok());
  EXPECT_TRUE(by_id.at("memory.carveout.64.l1_capacity").value.has_value());
  EXPECT_TRUE(by_id.at("memory.carveout.default.l1_capacity").status.ok());
}

TEST(MemoryProbe, CarveoutLaunchThatDoesNotWalkFails) {
  FakeMemory k;
  k.corrupt_all = true;
  const auto out = run_carveouts_expecting_error(k);
  EXPECT_EQ(out.carveout_status.name(), "error");
  ASSERT_EQ(out.carveouts.size(), 1u);
  EXPECT_NE(out.carveouts[0].curve.status.reason.find("did not walk"), std::string::npos);
}

TEST(MemoryProbe, UnsupportedPathsAndBackends) {
  FakeMemory k;
  k.no_readonly = true;
  MemoryOptions opt;
  opt.carveout = opt.granularity = opt.constant = false;
  opt.max_warps = 2;
  const auto out = run_fake(k, opt);
  ASSERT_EQ(out.partitions.size(), 3u);
  EXPECT_EQ(out.partitions[1].status.name(), "unsupported");
  EXPECT_TRUE(out.partitions[2].status.ok());
  EXPECT_EQ(out.partitions[2].by_warps.size(), 2u);
  EXPECT_EQ(out.granularity_status.name(), "skipped");

  FakeDevice none(nullptr);
  MemoryProbeResult r;
  fakes::run_probe(run_memory, none, MemoryOptions{}, r);
  EXPECT_EQ(r.status.name(), "unsupported");
  EXPECT_EQ(r.constant_status.name(), "unsupported");
  RunResult rr;
  rr.put(r);
  EXPECT_TRUE(probe_registry().find("memory")->figures(rr).empty());
}

TEST(MemoryProbe, StopInterrupts) {
  FakeMemory k;
  FakeDevice dev(&k);
  NullProgress progress;
  std::atomic<bool> stop{true};
  MemoryProbeResult out;
  run_memory(dev, MemoryOptions{}, progress, stop, out);
  EXPECT_EQ(out.status.name(), "interrupted");
  EXPECT_EQ(k.launches, 0);
}

TEST(MemoryOptions, ParseAndReject) {
  const auto specs = memory_option_specs();
  auto o = parse_memory_options({{"quick", "1"}, {"repeats", "7"}}, specs);
  EXPECT_TRUE(o.quick);
  EXPECT_EQ(o.repeats, 7);  // an explicit key wins over quick's
  EXPECT_EQ(o.points_per_doubling, 2);
  o = parse_memory_options({{"max_footprint", "512K"}, {"partition", "0"}}, specs);
  EXPECT_EQ(o.max_footprint, 512 * KiB);
  EXPECT_FALSE(o.partition);
  EXPECT_THROW(parse_memory_options({{"nosuch", "1"}}, specs), std::invalid_argument);
  EXPECT_THROW(parse_memory_options({{"min_footprint", "1M"}}, specs), std::invalid_argument);
}

}  // namespace
}  // namespace gd
