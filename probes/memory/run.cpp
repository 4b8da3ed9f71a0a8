#include "memory/run.hpp"

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
#include "memory/run_internal.hpp"

namespace gd {

namespace memory_run {

// One chase: every warp's chain built, walked, its end checked against the host's walk.
MemPoint measure(Ctx& c, MemChaseRequest req, const std::vector<uint32_t>& next, uint64_t footprint,
                 MemCurve& curve) {
  MemPoint p;
  p.footprint_bytes = footprint;
  req.next = &next;
  const MemChaseTiming t = c.k.chase(req);
  if (t.clock_mhz) {
    c.clocks.push_back(*t.clock_mhz);
    if (!curve.clock_mhz) curve.clock_mhz = t.clock_mhz;
  }
  if (curve.instruction.empty()) curve.instruction = t.instruction;
  curve.unit = t.unit;
  if (t.cycles_per_hop.size() != static_cast<std::size_t>(req.warps) ||
      t.end_lines.size() != static_cast<std::size_t>(req.warps))
    throw BackendError("the chase returned " + std::to_string(t.cycles_per_hop.size()) +
                       " warps' timings for " + std::to_string(req.warps) + " warps");
  const uint64_t hops = req.warmup_hops + req.hops_per_repeat * static_cast<uint64_t>(req.repeats);
  for (int w = 0; w < req.warps; ++w) {
    const uint32_t want = walk(next, req.starts[w], hops);
    if (t.end_lines[w] != want) {
      p.status = {StatusCode::error, "warp " + std::to_string(w) + " ended at line " +
                                         std::to_string(t.end_lines[w]) + ", the chain says " +
                                         std::to_string(want)};
      return p;
    }
  }
  // Per repeat, the mean over the warps: the cost of a load over all n chains together, so the
  // curve leaves the plateau when the n chains' total outgrows a cache they share, even where
  // some warps still hit (a median over 2 or 4 warps would follow the ones that hit).
  std::vector<double> per_repeat;
  for (int r = 0; r < req.repeats; ++r) {
    double sum = 0;
    int n = 0;
    for (int w = 0; w < req.warps; ++w)
      if (r < static_cast<int>(t.cycles_per_hop[w].size())) {
        sum += t.cycles_per_hop[w][r];
        ++n;
      }
    if (n) per_repeat.push_back(sum / n);
  }
  for (int w = 0; w < req.warps; ++w)
    if (!t.cycles_per_hop[w].empty()) p.warp_cycles.push_back(median(t.cycles_per_hop[w]));
  if (per_repeat.empty()) {
    p.status = {StatusCode::error, "no timing came back"};
    return p;
  }
  p.cycles = summarize(per_repeat);
  return p;
}

// A random-chain point at `footprint` bytes per warp.
MemPoint capacity_point(Ctx& c, const MemChaseRequest& base, uint64_t footprint, MemCurve& curve) {
  const uint32_t lines =
      static_cast<uint32_t>(std::max<uint64_t>(1, footprint / base.stride_bytes));
  const auto next = disjoint_chains(lines, base.warps);
  MemChaseRequest req = base;
  req.starts.clear();
  for (int w = 0; w < base.warps; ++w) req.starts.push_back(static_cast<uint32_t>(w) * lines);
  // Two passes over the chain fill the cache (and settle its replacement); each timed repeat
  // walks at least the whole chain, so every line is in every repeat.
  req.warmup_hops = 2ULL * lines;
  req.hops_per_repeat = std::max<uint64_t>(c.opt.hops, lines);
  req.repeats = c.opt.repeats;
  return measure(c, req, next, footprint, curve);
}

// The capacity sweep: a coarse geometric grid that stops a few points past the first edge,
// then evenly spaced points inside the edge's bracket.
void capacity_curve(Ctx& c, const MemChaseRequest& base, uint64_t lo, uint64_t hi,
                    const std::string& what, MemCurve& curve) {
  curve.load = base.load;
  curve.warps = base.warps;
  curve.stride_bytes = base.stride_bytes;
  const auto grid = capacity_footprints(lo, hi, c.opt.points_per_doubling, base.stride_bytes);
  std::vector<uint64_t> have;
  int past = 0;
  int i = 0;
  for (uint64_t f : grid) {
    if (c.stop) return;
    if (c.over_budget()) {
      curve.points.push_back(
          {f, std::nullopt, {}, {StatusCode::skipped, "over the probe's time budget"}});
      continue;
    }
    c.progress.step("memory", what, ++i, static_cast<int>(grid.size()),
                    std::to_string(f / KiB) + " KiB");
    curve.points.push_back(guarded_point(f, [&] { return capacity_point(c, base, f, curve); }));
    have.push_back(f);
    if (curve.points.back().status.code == StatusCode::error) {
      curve.status = {StatusCode::error, curve.points.back().status.reason};
      return;
    }
    // Three points past the edge settle it: the rest of the grid would only measure the next
    // level, which the latency probe maps.
    const CapacityEstimate e = estimate_capacity(curve.points);
    if (e.capacity_bytes && ++past >= 3) break;
    if (!e.capacity_bytes) past = 0;
  }
  CapacityEstimate e = estimate_capacity(curve.points);
  if (e.capacity_bytes && e.next_bytes && c.opt.refine > 0 && !c.stop && !c.over_budget()) {
    const auto extra =
        refine_footprints(*e.capacity_bytes, *e.next_bytes, c.opt.refine, base.stride_bytes, have);
    int j = 0;
    for (uint64_t f : extra) {
      if (c.stop || c.over_budget()) break;
      c.progress.step("memory", what + " (edge)", ++j, static_cast<int>(extra.size()),
                      std::to_string(f / KiB) + " KiB");
      curve.points.push_back(guarded_point(f, [&] { return capacity_point(c, base, f, curve); }));
      if (curve.points.back().status.code == StatusCode::error) {
        curve.status = {StatusCode::error, curve.points.back().status.reason};
        break;
      }
    }
    std::sort(curve.points.begin(), curve.points.end(), [](const MemPoint& a, const MemPoint& b) {
      return a.footprint_bytes < b.footprint_bytes;
    });
    e = estimate_capacity(curve.points);
  }
  curve.capacity = e;
}

}  // namespace memory_run

using namespace memory_run;

namespace {

template <class F>
void part(Status& st, const std::atomic<bool>& stop, F&& fn) {
  try {
    fn();
    if (stop && st.ok()) st = {StatusCode::interrupted, "stopped by the user"};
  } catch (const ProbeError& e) {
    st = {StatusCode::error, e.what()};
    throw;
  } catch (const AllocationFailed& e) {
    st = {StatusCode::skipped, e.what()};
  } catch (const BackendError& e) {
    st = {StatusCode::error, e.what()};
    throw ProbeError(std::string("memory: ") + e.what());
  }
}

}  // namespace

std::vector<OptionSpec> memory_option_specs() {
  return {
      {"quick", "0", "fewer carve-outs and warp counts, 2 points per doubling, 3 repeats"},
      {"carveout", "1", "L1 capacity and latency under each shared-memory carve-out"},
      {"partition", "1",
       "1..max_warps warps of one block, one chain each: per-SM or per-partition caches"},
      {"granularity", "1", "L1 and L2 fetch granularity (sector) by a stride sweep"},
      {"l2_line", "1",
       "L2 line (tag) size: capacity through ld.global.cg at strides of 64, 128 and 256 bytes, "
       "8 warps of one block (off with quick)"},
      {"l2_ways", "1",
       "L2 associativity: conflict chains of lines 1 MiB and 4 MiB apart through ld.global.cg "
       "(off with quick)"},
      {"constant", "1",
       "constant memory past its first level (a 64 KiB bank, then 31 KiB of kernel parameters)"},
      {"tlb", "1",
       "TLB reach and miss cost: one line per 2 MiB over memory mapped from separate 2 MiB "
       "chunks, and over one allocation beside it (off with quick)"},
      {"tlb_max_footprint", "16G", "largest footprint of the TLB sweeps"},
      {"repeats", "5", "timed repeats per point"},
      {"points_per_doubling", "4", "footprints per doubling of the capacity sweeps"},
      {"refine", "6", "points added inside each capacity edge"},
      {"min_footprint", "8K", "smallest footprint of the L1 sweeps"},
      {"max_footprint", "384K", "largest footprint of the L1 sweeps (per warp)"},
      {"max_warps", "4", "warps of the partition test"},
      {"hops", "4096", "timed hops per repeat (at least the chain's lines)"},
      {"budget", "60", "seconds; points past it are skipped"},
  };
}

MemoryOptions parse_memory_options(const OptionValues& kv, const std::vector<OptionSpec>& specs) {
  MemoryOptions o;
  auto it = kv.find("quick");
  if (it != kv.end() && options::flag("memory", "quick", it->second)) {
    o.quick = true;
    o.points_per_doubling = 2;
    o.repeats = 3;
    o.refine = 4;
    o.budget = 20;
    o.tlb = false;
    o.l2_line = false;
    o.l2_ways = false;
  }
  for (const auto& [k, v] : kv) {
    if (k == "quick") continue;
    if (k == "carveout")
      o.carveout = options::flag("memory", k, v);
    else if (k == "partition")
      o.partition = options::flag("memory", k, v);
    else if (k == "granularity")
      o.granularity = options::flag("memory", k, v);
    else if (k == "l2_line")
      o.l2_line = options::flag("memory", k, v);
    else if (k == "l2_ways")
      o.l2_ways = options::flag("memory", k, v);
    else if (k == "constant")
      o.constant = options::flag("memory", k, v);
    else if (k == "tlb")
      o.tlb = options::flag("memory", k, v);
    else if (k == "tlb_max_footprint")
      o.tlb_max_footprint = options::bytes("memory", k, v);
    else if (k == "repeats")
      o.repeats = options::integer("memory", k, v, 1, 50);
    else if (k == "points_per_doubling")
      o.points_per_doubling = options::integer("memory", k, v, 1, 16);
    else if (k == "refine")
      o.refine = options::integer("memory", k, v, 0, 32);
    else if (k == "min_footprint")
      o.min_footprint = options::bytes("memory", k, v);
    else if (k == "max_footprint")
      o.max_footprint = options::bytes("memory", k, v);
    else if (k == "max_warps")
      o.max_warps = options::integer("memory", k, v, 1, 32);
    else if (k == "hops")
      o.hops = static_cast<uint64_t>(options::integer("memory", k, v, 64, 1 << 20));
    else if (k == "budget")
      o.budget = options::integer("memory", k, v, 1, 3600);
    else
      options::unknown_key("memory", k, specs);
  }
  if (o.min_footprint < 1024 || o.max_footprint <= o.min_footprint)
    throw std::invalid_argument(
        "memory.min_footprint must be >= 1K and below memory.max_footprint");
  return o;
}

void run_memory(Device& dev, const MemoryOptions& opt, Progress& progress,
                const std::atomic<bool>& stop, MemoryProbeResult& out) {
  const auto t0 = Clock::now();
  MemoryKernels* k = dev.kernels<MemoryKernels>();
  if (!k) {
    const std::string why = "the " + dev.info().backend +
                            " backend has no memory-probe kernels (no carve-out control, cache "
                            "operators or per-warp chase there)";
    out.status = {StatusCode::unsupported, why};
    for (Status* s :
         {&out.carveout_status, &out.partition_status, &out.granularity_status, &out.l2_line.status,
          &out.l2_ways.status, &out.constant_status, &out.tlb_status})
      *s = {StatusCode::unsupported, why};
    return;
  }
  Ctx c{*k, opt, progress, stop, t0, {}};
  auto finish = [&] {
    out.wall_seconds = seconds_since(t0);
    if (!c.clocks.empty()) out.clock_mhz = median(c.clocks);
  };
  auto run_part = [&](bool on, const char* name, Status& st, auto&& fn) {
    if (stop) return;
    if (!on) {
      st = {StatusCode::skipped, std::string("memory.") + name + "=0"};
      return;
    }
    const Support s = k->supports(name);
    if (!s.ok) {
      st = {StatusCode::unsupported, s.reason};
      return;
    }
    try {
      part(st, stop, fn);
    } catch (...) {
      out.status = st;
      finish();
      throw;
    }
  };
  run_part(opt.carveout, "carveout", out.carveout_status,
           [&] { carveout_part(c, dev.info(), out); });
  run_part(opt.partition, "partition", out.partition_status, [&] { partition_part(c, out); });
  run_part(opt.granularity, "granularity", out.granularity_status, [&] {
    granularity_part(c, out);
    line_part(c, out);
    ways_part(c, out);
  });
  run_part(opt.l2_line, "l2_line", out.l2_line.status, [&] { l2_line_part(c, dev.info(), out); });
  run_part(opt.l2_ways, "l2_ways", out.l2_ways.status, [&] { l2_ways_part(c, dev.info(), out); });
  run_part(opt.constant, "constant", out.constant_status, [&] { constant_part(c, out); });
  run_part(opt.tlb, "tlb", out.tlb_status, [&] { tlb_part(c, out); });
  if (stop) out.status = {StatusCode::interrupted, "stopped by the user"};
  finish();
}

}  // namespace gd
