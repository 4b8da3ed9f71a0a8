// The memory probe's parts: L1 under each carve-out, partitions, granularity and lines,
// ways, the L2's line and ways, the constant cache, the TLB.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <stdexcept>

#include "gpudissect/chain.hpp"
#include "gpudissect/options.hpp"
#include "gpudissect/stats.hpp"
#include "gpudissect/stopwatch.hpp"
#include "gpudissect/units.hpp"
#include "latency/run.hpp"
#include "memory/run.hpp"
#include "memory/run_internal.hpp"

namespace gd::memory_run {

// shape: each carve-out set, swept and checked the same way, then compared
void carveout_part(Ctx& c, const DeviceInfo& info, MemoryProbeResult& out) {
  // The preference alone beside each forced split, except in quick mode.
  auto plan = carveout_plan(info, 0, !c.opt.quick);
  if (c.opt.quick) {
    // The default, the largest L1, an even split and the largest shared: the ends and the middle.
    std::vector<CarveoutPoint> q;
    for (std::size_t i = 0; i < plan.size(); ++i)
      if (i == 0 || i == 1 || i == plan.size() / 2 + 1 || i + 1 == plan.size())
        q.push_back(plan[i]);
    plan = q;
  }
  const auto unified = unified_l1_bytes(info.compute_capability);
  for (const CarveoutPoint& pt : plan) {
    if (c.stop) return;
    CarveoutResult r;
    r.point = pt;
    r.curve.key = "carveout." + pt.key();
    MemChaseRequest base;
    base.load = MemLoad::ca;
    base.carveout_percent = pt.percent;
    base.dynamic_shared_bytes = pt.dynamic_shared_bytes;
    base.stride_bytes = 128;
    base.warps = 1;
    // The API's view of the split, read once per point with this point's settings.
    try {
      std::vector<uint32_t> one{0};
      MemChaseRequest probe = base;
      probe.next = &one;
      probe.starts = {0};
      probe.hops_per_repeat = 1;
      probe.repeats = 1;
      const MemChaseTiming t = c.k.chase(probe);
      // One line that points at itself: the walk must end where it began.
      if (t.end_lines.size() != 1 || t.end_lines[0] != 0) {
        r.curve.status = {StatusCode::error, "the carve-out launch of " + pt.label() +
                                                 " did not walk its one-line chain"};
        out.carveouts.push_back(r);
        throw ProbeError("memory: " + r.curve.key + ": " + r.curve.status.reason);
      }
      r.api_probe_blocks = t.api_probe_blocks;
      r.attr_carveout_percent = t.attr_carveout_percent;
      if (t.api_probe_blocks)
        r.api_shared_bytes = static_cast<uint64_t>(*t.api_probe_blocks) *
                             (kCarveoutProbeBlockBytes + t.reserved_per_block.value_or(KiB));
    } catch (const AllocationFailed& e) {
      r.curve.status = {StatusCode::skipped, e.what()};
      out.carveouts.push_back(r);
      continue;
    }
    capacity_curve(c, base, c.opt.min_footprint, c.opt.max_footprint, "L1 at " + pt.label(),
                   r.curve);
    if (unified && r.curve.capacity.capacity_bytes) {
      // Capacity brackets the L1 from below: the split is at most unified - capacity, at least
      // unified - next point.
      r.implied_shared_bytes = *unified - std::min(*unified, *r.curve.capacity.capacity_bytes);
      const std::vector<int> fits =
          splits_for_l1(info.compute_capability, *r.curve.capacity.capacity_bytes,
                        r.curve.capacity.next_bytes.value_or(*r.curve.capacity.capacity_bytes));
      std::string l1_says;
      for (std::size_t i = 0; i < fits.size(); ++i)
        l1_says += (i ? (i + 1 == fits.size() ? " or " : ", ") : "") + std::to_string(fits[i]);
      l1_says = fits.empty() ? "no split the device offers" : "a " + l1_says + " KiB split";
      if (pt.shared_kib < 0) {
        r.agreement = "the L1 implies " + l1_says;
      } else {
        const uint64_t aim = static_cast<uint64_t>(pt.shared_kib) * KiB;
        const bool l1_ok = std::find(fits.begin(), fits.end(), pt.shared_kib) != fits.end();
        const bool api_ok = !r.api_shared_bytes ||
                            (*r.api_shared_bytes <= aim && aim < *r.api_shared_bytes + 8 * KiB);
        r.agreement = l1_ok && api_ok ? "agrees" : "differs:";
        if (!l1_ok) r.agreement += " the L1 implies " + l1_says + ";";
        if (!api_ok)
          r.agreement +=
              " the occupancy API implies " + std::to_string(*r.api_shared_bytes / KiB) + " KiB;";
      }
    }
    out.carveouts.push_back(r);
    if (r.curve.status.code == StatusCode::error)
      throw ProbeError("memory: " + r.curve.key + ": " + r.curve.status.reason);
  }
}

void partition_part(Ctx& c, MemoryProbeResult& out) {
  const int max_warps = c.opt.quick ? std::min(2, c.opt.max_warps) : c.opt.max_warps;
  for (const auto& [path, load] : {std::pair<std::string, MemLoad>{"global", MemLoad::ca},
                                   std::pair<std::string, MemLoad>{"readonly", MemLoad::nc},
                                   std::pair<std::string, MemLoad>{"texture", MemLoad::texture}}) {
    if (c.stop) return;
    PartitionResult pr;
    pr.path = path;
    const Support s = c.k.supports("partition." + path);
    if (!s.ok) {
      pr.status = {StatusCode::unsupported, s.reason};
      out.partitions.push_back(pr);
      continue;
    }
    std::vector<std::optional<uint64_t>> caps;
    for (int n = 1; n <= max_warps && !c.stop; ++n) {
      MemCurve curve;
      curve.key = "partition." + path + "." + std::to_string(n);
      MemChaseRequest base;
      base.load = load;
      base.carveout_percent = 0;  // the largest L1 the SM offers
      base.warps = n;
      base.stride_bytes = 128;
      capacity_curve(c, base, c.opt.min_footprint / 2, c.opt.max_footprint,
                     path + ", " + std::to_string(n) + " warps", curve);
      caps.push_back(curve.capacity.capacity_bytes);
      pr.by_warps.push_back(curve);
      if (curve.status.code == StatusCode::error) {
        pr.status = curve.status;
        out.partitions.push_back(pr);
        throw ProbeError("memory: " + curve.key + ": " + curve.status.reason);
      }
    }
    pr.verdict = partition_verdict(caps);
    out.partitions.push_back(pr);
  }
}

// Bytes each timed repeat of the L1 granularity walk covers, at every stride.
constexpr uint64_t kGranularityRepeatBytes = 256 * KiB;

// A sequential walk at each stride, every hop on memory this launch has not touched yet (the
// warm-up walks a region ahead of it, and L2 is flushed where L2 is the level measured).
void granularity_part(Ctx& c, MemoryProbeResult& out) {
  for (const std::string level : {"l1", "l2"}) {
    if (c.stop) return;
    GranularityResult g;
    g.level = level;
    g.curve.key = "granularity." + level;
    const Support s = c.k.supports("granularity." + level);
    if (!s.ok) {
      g.status = {StatusCode::unsupported, s.reason};
      out.granularity.push_back(g);
      continue;
    }
    MemChaseRequest base;
    base.load = level == "l1" ? MemLoad::ca : MemLoad::cg;
    base.carveout_percent = 0;
    base.flush_l2 = level == "l2";
    base.repeats = c.opt.repeats;
    base.hops_per_repeat = c.opt.hops;
    g.curve.load = base.load;
    const std::vector<uint64_t> strides = {8, 16, 32, 64, 128, 256, 512};
    int i = 0;
    for (uint64_t st : strides) {
      if (c.stop) return;
      if (c.over_budget()) {
        g.curve.points.push_back(
            {st, std::nullopt, {}, {StatusCode::skipped, "over the probe's time budget"}});
        continue;
      }
      c.progress.step("memory", level + " fetch granularity", ++i, static_cast<int>(strides.size()),
                      "stride " + std::to_string(st) + " B");
      MemChaseRequest req = base;
      req.stride_bytes = st;
      // L1: the warm-up walks 512 KiB (twice the largest L1) ahead of the timed part, so no
      // line the chain's writer left in this SM's L1 is still there. L2 is flushed instead.
      req.warmup_hops = level == "l1" ? (512 * KiB) / st : 64;
      if (level == "l1") {
        // Every L1 miss an L2 hit: the whole chain read through L2 first, and each repeat over
        // the same 256 KiB whatever the stride (a fixed hop count spanned 160 KiB at 8 B and
        // 10 MiB at 512 B, so the misses of large strides went further: three H200 runs read
        // 256, 32 and 64 B).
        req.l2_prefetch = true;
        req.hops_per_repeat = std::max<uint64_t>(64, kGranularityRepeatBytes / st);
      }
      const uint64_t lines = req.warmup_hops + req.hops_per_repeat * req.repeats + 1;
      const auto next = sequential_chain(static_cast<uint32_t>(lines));
      req.starts = {0};
      g.curve.points.push_back(
          guarded_point(st, [&] { return measure(c, req, next, st, g.curve); }));
      if (g.curve.points.back().status.code == StatusCode::error) {
        g.status = {StatusCode::error, g.curve.points.back().status.reason};
        out.granularity.push_back(g);
        throw ProbeError("memory: " + g.curve.key + ": " + g.status.reason);
      }
    }
    g.estimate = estimate_granularity(g.curve.points);
    out.granularity.push_back(g);
  }
}

// The L1's line (tag) size: the capacity a random chain sees at strides of 32 to 512 bytes
// (largest L1: carve-out 0). The sweep reaches 4x the largest L1, where a 512-byte stride
// over 2048 lines of 128 bytes would end.
void line_part(Ctx& c, MemoryProbeResult& out) {
  LineResult& lr = out.l1_line;
  std::vector<std::pair<uint64_t, std::optional<uint64_t>>> caps;
  for (uint64_t st : {32, 64, 128, 256, 512}) {
    if (c.stop) return;
    MemCurve curve;
    curve.key = "line.l1." + std::to_string(st);
    MemChaseRequest base;
    base.load = MemLoad::ca;
    base.carveout_percent = 0;
    base.stride_bytes = st;
    capacity_curve(c, base, std::max<uint64_t>(c.opt.min_footprint, 8 * st),
                   4 * c.opt.max_footprint, "L1 line, stride " + std::to_string(st) + " B", curve);
    caps.push_back({st, curve.capacity.capacity_bytes});
    lr.by_stride.push_back(curve);
    if (curve.status.code == StatusCode::error) {
      lr.status = curve.status;
      throw ProbeError("memory: " + curve.key + ": " + curve.status.reason);
    }
  }
  lr.estimate = estimate_line(caps);
}

// "256K", "4M": a conflict distance in a curve key.
std::string distance_key(uint64_t st) {
  return st % MiB == 0 ? std::to_string(st / MiB) + "M" : std::to_string(st / KiB) + "K";
}

// Conflict chains: N = conflict_counts() lines `st` bytes apart, one warp, at each distance.
void conflict_sweep(Ctx& c, WaysResult& wr, MemLoad load, int carveout_percent,
                    const std::vector<uint64_t>& distances, const std::string& level) {
  for (uint64_t st : distances) {
    MemCurve curve;
    curve.key = "ways." + level + "." + distance_key(st);
    curve.load = load;
    curve.stride_bytes = st;
    MemChaseRequest base;
    base.load = load;
    base.carveout_percent = carveout_percent;
    base.stride_bytes = st;
    const auto counts = conflict_counts();
    int i = 0;
    for (int n : counts) {
      if (c.stop) return;
      const uint64_t f = static_cast<uint64_t>(n) * st;
      if (c.over_budget()) {
        curve.points.push_back(
            {f, std::nullopt, {}, {StatusCode::skipped, "over the probe's time budget"}});
        continue;
      }
      c.progress.step("memory",
                      (level == "l1" ? "L1" : "L2") + std::string(" conflict chain, ") +
                          format_bytes(double(st)) + " apart",
                      ++i, static_cast<int>(counts.size()), std::to_string(n) + " lines");
      curve.points.push_back(guarded_point(f, [&] { return capacity_point(c, base, f, curve); }));
      if (curve.points.back().status.code == StatusCode::error) {
        wr.status = {StatusCode::error, curve.points.back().status.reason};
        wr.by_stride.push_back(curve);
        throw ProbeError("memory: " + curve.key + ": " + wr.status.reason);
      }
    }
    curve.capacity = estimate_capacity(curve.points);
    wr.estimates.push_back(estimate_ways(curve.points, st));
    wr.by_stride.push_back(curve);
  }
}

// L1 associativity: N lines 256 KiB apart (the largest L1, carve-out 0: with a plain set
// index every multiple of the set stride lands in one set) and 32 KiB apart.
void ways_part(Ctx& c, MemoryProbeResult& out) {
  conflict_sweep(c, out.l1_ways, MemLoad::ca, 0, {256 * KiB, 32 * KiB}, "l1");
}

// Warps of one block in the L2 line part, each on its own disjoint chain: a dependent L2 hop
// costs 140-260 ns on the H200 (280-512 cycles at 1980 MHz), so one warp over 60 MiB at a
// 128-byte stride (491K lines, 2 warm-up passes + 5 timed) costs ~1.4 s per point; n warps
// walk n chains of 1/n of the footprint side by side, ~n times faster.
constexpr int kL2Warps = 8;

// The L2's line (tag) size: the total capacity 8 warps' random chains see through L2 only
// (ld.global.cg, no L1) at strides of 64, 128 and 256 bytes, from a quarter of the L2 the API
// reports to 3 x L2 x stride / 128 in all (l2_line_range; each warp walks 1/8 of it), then
// estimate_line as for the L1. The first edge each sweep finds is compared across strides:
// on Hopper that may be the near half of the L2 (the H200's latency map steps at 26.9-29.3 MiB
// to the far half's 512 cycles), which is the same cache at every stride, so its edge moves
// with the line as the whole L2's would; the plateaus before the edges must agree.
//
// Wall time on the H200, from its latency map (near L2 280 cycles to ~27 MiB, far L2 512 to
// ~55 MiB, memory 658; 1980 MHz): each point costs 7 passes (2 warm-up + 5 timed) over each
// warp's chain of F / 8 / stride lines, i.e. 7 F / (8 stride) hops per warp at 141-332 ns, the
// 8 warps side by side. The sweep stops 3 points past its first edge and adds 6 inside it: at
// 64 and 128 B, 15 to 42 MiB (7 grid points) + 6 near 27 MiB; at 256 B, 15 to 85 MiB (11
// points) + 6 near 55 MiB. That is ~2.1 s of chasing (the unit test
// MemoryProbe.L2PartsFitTheirTimeOnAnH200SizedL2 adds it up on a fake of those latencies) and
// ~0.5 s of host work (chains, uploads, the end checks): ~3 s for the part. Where no edge
// shows, each sweep runs to its end (90, 180, 360 MiB) at up to device-memory latency: 8.2 s
// of chasing, ~10 s in all, still under 15 s. Points past the probe's budget (memory.budget)
// are skipped with the reason.
void l2_line_part(Ctx& c, const DeviceInfo& info, MemoryProbeResult& out) {
  LineResult& lr = out.l2_line;
  if (!info.l2_bytes || *info.l2_bytes == 0) {
    lr.status = {StatusCode::skipped, "the device reports no L2 size to plan the sweep from"};
    return;
  }
  std::vector<std::pair<uint64_t, std::optional<uint64_t>>> caps;
  for (uint64_t st : {64, 128, 256}) {
    if (c.stop) return;
    MemCurve curve;
    curve.key = "line.l2." + std::to_string(st);
    MemChaseRequest base;
    base.load = MemLoad::cg;
    base.stride_bytes = st;
    base.warps = kL2Warps;
    const auto [lo, hi] = l2_line_range(*info.l2_bytes, st);
    capacity_curve(
        c, base, lo / kL2Warps, hi / kL2Warps,
        "L2 line, stride " + std::to_string(st) + " B, " + std::to_string(kL2Warps) + " warps",
        curve);
    caps.push_back({st, total_capacity(curve).capacity_bytes});
    lr.by_stride.push_back(curve);
    if (curve.status.code == StatusCode::error) {
      lr.status = curve.status;
      throw ProbeError("memory: " + curve.key + ": " + curve.status.reason);
    }
  }
  lr.estimate = estimate_line(caps);
  // The edges compared must be one level's (the near half's at every stride, say): the
  // plateaus before them within 25 % of each other.
  double lo_cyc = 0, hi_cyc = 0;
  std::string plateaus;
  for (const MemCurve& cv : lr.by_stride)
    if (cv.capacity.capacity_bytes && cv.capacity.plateau_cycles) {
      const double p = *cv.capacity.plateau_cycles;
      lo_cyc = lo_cyc == 0 ? p : std::min(lo_cyc, p);
      hi_cyc = std::max(hi_cyc, p);
      plateaus += (plateaus.empty() ? "" : ", ") + std::to_string(cv.stride_bytes) + " B " +
                  std::to_string(static_cast<int>(std::lround(p)));
    }
  if (lr.estimate.bytes && hi_cyc > 1.25 * lo_cyc) {
    lr.estimate.bytes.reset();
    lr.estimate.note = "the edges compared are not one level's: the plateaus before them differ (" +
                       plateaus + " cycles)";
  }
}

// L2 associativity: conflict chains through L2 only, lines 1 MiB and 4 MiB apart (one warp,
// at most 128 lines, 5 x 4096 timed hops per point: 0.2 s for both on the H200 at 280 cycles
// a hop, 0.4 s at device-memory latency). With a plain set index N lines a multiple
// of the set stride apart share one set; Hopper's L2 spreads addresses over its slices by a
// hash (60 MiB is no power of two), so no step is expected and the ways come out undetermined
// with that reason.
void l2_ways_part(Ctx& c, const DeviceInfo& info, MemoryProbeResult& out) {
  WaysResult& wr = out.l2_ways;
  conflict_sweep(c, wr, MemLoad::cg, -1, {1 * MiB, 4 * MiB}, "l2");
  const uint64_t l2 = info.l2_bytes.value_or(0);
  if (l2 && (l2 & (l2 - 1)) != 0)
    for (WaysEstimate& e : wr.estimates)
      if (!e.ways && !e.note.empty())
        e.note += "; the L2 the device reports (" + format_bytes(double(l2)) +
                  ") is no power of two, so its slices are not picked by plain address bits";
}

void constant_part(Ctx& c, MemoryProbeResult& out) {
  const Support s = c.k.supports("constant");
  if (!s.ok) {
    out.constant_status = {StatusCode::unsupported, s.reason};
    return;
  }
  const uint64_t bank = c.k.constant_bank_bytes();
  out.constant_bank_bytes = bank;
  MemCurve curve;
  curve.key = "constant";
  MemChaseRequest base;
  base.load = MemLoad::constant;
  base.stride_bytes = 64;
  // No early stop: past the 2 KiB constant L1 the next level is the one sought, so the sweep
  // runs to the end of the bank (the estimate then finds the 2 KiB edge; the level after it
  // is read from the points past it).
  const auto grid =
      capacity_footprints(1 * KiB, bank, c.opt.quick ? 2 : c.opt.points_per_doubling, 64);
  int i = 0;
  for (uint64_t f : grid) {
    if (c.stop) break;
    c.progress.step("memory", "constant", ++i, static_cast<int>(grid.size()),
                    std::to_string(f / KiB) + " KiB");
    curve.points.push_back(guarded_point(f, [&] { return capacity_point(c, base, f, curve); }));
    if (curve.points.back().status.code == StatusCode::error) {
      curve.status = {StatusCode::error, curve.points.back().status.reason};
      out.constant = curve;
      throw ProbeError("memory: constant: " + curve.status.reason);
    }
  }
  curve.load = MemLoad::constant;
  curve.stride_bytes = 64;
  curve.capacity = estimate_capacity(curve.points);
  out.constant = curve;
}

// The TLB (issue 9 part 4). The latency map's TLB sweep over one big allocation finds no step
// to 70 GiB on the H200 at any stride (results/NOTES.md): the driver maps a big allocation
// with pages far larger than 2 MiB. Here the memory is mapped from separate 2 MiB physical
// chunks (the smallest granularity Hopper's virtual-memory API gives), so a translation can
// cover one chunk at most, and one line per chunk is chased, in random order, through L2 only
// (all lines fit the L2: a rise is translation, not data). The same sweep over one ordinary
// allocation runs beside it as the control.
void tlb_part(Ctx& c, MemoryProbeResult& out) {
  constexpr uint64_t kChunk = 2ull << 20;
  struct Release {
    MemoryKernels& k;
    ~Release() { k.release_tlb_buffers(); }
  } release{c.k};
  for (const std::string mapping : {"chunks", "malloc"}) {
    if (c.stop) return;
    TlbResult t;
    t.mapping = mapping;
    t.curve.key = "tlb." + mapping;
    const Support s = c.k.supports("tlb." + mapping);
    if (!s.ok) {
      t.status = {StatusCode::unsupported, s.reason};
      out.tlb.push_back(t);
      continue;
    }
    MemChaseRequest base;
    base.load = MemLoad::cg;
    base.stride_bytes = kChunk;
    base.chunk_bytes = mapping == "chunks" ? kChunk : 0;
    base.repeats = c.opt.repeats;
    t.curve.load = base.load;
    t.curve.stride_bytes = kChunk;
    const auto grid = capacity_footprints(2 * kChunk, std::max(2 * kChunk, c.opt.tlb_max_footprint),
                                          c.opt.points_per_doubling, kChunk);
    int i = 0;
    for (uint64_t f : grid) {
      if (c.stop) break;
      if (c.over_budget()) {
        t.curve.points.push_back(
            {f, std::nullopt, {}, {StatusCode::skipped, "over the probe's time budget"}});
        continue;
      }
      c.progress.step("memory", "TLB, " + mapping, ++i, static_cast<int>(grid.size()),
                      format_bytes(double(f)));
      const auto pages = static_cast<uint32_t>(f / kChunk);
      const auto next = sattolo_cycle(pages, 0x7b1ULL ^ pages);
      MemChaseRequest req = base;
      req.starts = {0};
      // One pass loads every translation the TLBs can hold; each repeat visits every page.
      req.warmup_hops = std::max<uint64_t>(2ULL * pages, 256);
      req.hops_per_repeat = std::max<uint64_t>(c.opt.hops, pages);
      t.curve.points.push_back(guarded_point(f, [&] { return measure(c, req, next, f, t.curve); }));
      if (t.curve.points.back().status.code == StatusCode::error) {
        t.status = {StatusCode::error, t.curve.points.back().status.reason};
        out.tlb.push_back(t);
        throw ProbeError("memory: " + t.curve.key + ": " + t.status.reason);
      }
    }
    t.levels = tlb_levels(t.curve.points);
    if (t.levels.size() <= 1 && !t.curve.points.empty()) {
      double lo = 0, hi = 0;
      for (const MemPoint& p : t.curve.points)
        if (p.status.ok() && p.cycles) {
          lo = lo > 0 ? std::min(lo, p.cycles->median) : p.cycles->median;
          hi = std::max(hi, p.cycles->median);
        }
      t.note = "no step up to " + format_bytes(double(t.curve.points.back().footprint_bytes)) +
               " (one line per 2 MiB): every TLB level reaches further, covers more than "
               "2 MiB per entry, or misses for less than " +
               format_fixed(100 * kTlbMinStep, 0) + " % of a hit";
      if (hi > 0)
        t.note += "; every hop " + format_fixed(lo, 0) + " to " + format_fixed(hi, 0) + " " +
                  t.curve.unit;
    }
    out.tlb.push_back(t);
  }
}

}  // namespace gd::memory_run
