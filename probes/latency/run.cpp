#include "latency/run.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>

#include "gpudissect/budget.hpp"
#include "gpudissect/chain.hpp"
#include "gpudissect/levels.hpp"
#include "gpudissect/stats.hpp"
#include "gpudissect/stopwatch.hpp"
#include "gpudissect/units.hpp"

namespace gd {

namespace {

using Clock = std::chrono::steady_clock;

bool is_cuda(const DeviceInfo& info) { return info.backend == "cuda"; }

uint64_t default_stride(MemPath p, const DeviceInfo& info) {
  if (p == MemPath::constant) return 64;
  if (info.backend == "opencl" && info.l1_or_cacheline_bytes && *info.l1_or_cacheline_bytes >= 32)
    return *info.l1_or_cacheline_bytes;
  return 128;
}

// A CPU device (PoCL and the like): its caches are physically indexed behind 4 KiB pages.
bool is_cpu(const DeviceInfo& info) {
  auto t = info.extra.find("device_type");
  return t != info.extra.end() && t->second.find("CPU") != std::string::npos;
}

// On a CPU the cache paths chase page-grouped chains: every line of a 64 KiB group (16 pages)
// in random order before the next group, groups in random order. A fully random chain misses
// the first-level TLB on almost every load once the footprint passes its reach (~400 KiB on a
// Zen 5 VM), and those page walks read as cache levels (47 KiB, 512 KiB, 861 KiB, 4 MiB, 16
// MiB through PoCL). Why 64 KiB and not 4 KiB (measured through PoCL, results/NOTES.md,
// "Caches without TLB confusion on PoCL"): with a single page per group the page's lines come
// in a dense burst that the spatial prefetchers learn, so the L2 plateau read 2.6 ns instead
// of 4.0 ns, memory 70 ns instead of 140 ns, and the L1 edge sometimes smeared down to 28
// KiB; over 16 pages the burst is sparse enough that the curve matches the random chain's
// (4.0 ns) while the group still needs only 16 TLB entries, far inside any L1 TLB. GPUs keep
// fully random chains: the H200 and H100 show no TLB step within 60 GiB, so there is nothing
// to remove there, and grouping would change what the GPU's L2 hashing and sector prefetch
// see, which cannot be checked without a GPU.
constexpr uint64_t kCpuGroupBytes = 64 << 10;
uint64_t default_page_bytes(const DeviceInfo& info) { return is_cpu(info) ? kCpuGroupBytes : 0; }

// The TLB sweep of a device: one line per page, so that every hop needs a translation of
// its own. GPUs: strides of 2 MiB and up (their pages are 2 MiB or larger), footprints from
// 2 MiB to most of the memory. CPUs: 4 KiB pages; the stride is a page and a line, so that
// line k sits k lines into its page and the lines spread over every set of the caches (a
// stride of exactly 4 KiB puts every line in one L1 set, and the L1's 12 ways would read as
// a 48 KiB "TLB"). From 16 pages to 64 MiB, 4x the reach of a 4096-entry L2 TLB.
constexpr uint64_t kCpuPageBytes = 4096;
constexpr uint64_t kCpuTlbMaxFootprint = 64ull << 20;
struct TlbPlan {
  std::vector<uint64_t> strides;
  uint64_t max_footprint = 0;
  std::optional<uint64_t> min_bytes;
  uint64_t min_pages = 1;
  uint64_t min_footprint(uint64_t stride) const {
    return min_bytes ? *min_bytes : min_pages * stride;
  }
};

TlbPlan tlb_plan(const LatencyOptions& opt, const DeviceInfo& info) {
  TlbPlan p;
  if (is_cpu(info)) {
    p.strides = {kCpuPageBytes + default_stride(MemPath::global, info)};
    p.max_footprint = opt.tlb_max_footprint.value_or(kCpuTlbMaxFootprint);
    p.min_pages = 16;
  } else {
    p.strides = {2ull << 20, 32ull << 20, 512ull << 20, 2ull << 30};
    p.max_footprint = opt.tlb_max_footprint.value_or(160ull << 30);
    p.min_bytes = 2ull << 20;
  }
  if (!opt.tlb_strides.empty()) p.strides = opt.tlb_strides;
  if (opt.tlb_min_footprint) p.min_bytes = opt.tlb_min_footprint;
  return p;
}

// What the level names of a path are made of.
struct PathKind {
  std::string kind;     // cache | constant | scratch
  int first_level = 1;  // the l2 path starts at L2: it bypasses L1
  std::string scratch_name = "on-chip";
};

PathKind path_kind(MemPath p) {
  switch (p) {
    case MemPath::l2:
      return {"cache", 2};
    case MemPath::constant:
      return {"constant", 1};
    case MemPath::shared:
      return {"scratch", 1, "shared"};
    case MemPath::local:
      return {"scratch", 1, "local"};
    default:
      return {"cache", 1};
  }
}

// One curve being measured: its points kept sorted by footprint.
class CurveSweep {
 public:
  // page_bytes > stride: chains visit a page's lines together (page_grouped_cycle).
  CurveSweep(Device& dev, MemPath path, uint64_t stride, const ChaseBudget& budget,
             CurveResult& out, uint64_t page_bytes = 0)
      : dev_(dev),
        path_(path),
        stride_(stride),
        budget_(budget),
        out_(out),
        lines_per_page_(page_bytes > stride ? uint32_t(page_bytes / stride) : 0) {
    out_.stride_bytes = stride;
  }

  // Measures one footprint and inserts it in order. Throws BackendError on API errors.
  // A point left out by the time budget, with the reason.
  void skip(uint64_t footprint, const std::string& reason) {
    LatencyPoint pt;
    pt.footprint_bytes = footprint;
    pt.stride_bytes = stride_;
    pt.status = {StatusCode::skipped, reason};
    insert(std::move(pt));
  }
  void measure(uint64_t footprint) {
    LatencyPoint pt;
    pt.footprint_bytes = footprint;
    pt.stride_bytes = stride_;
    const uint64_t lines64 = footprint / stride_;
    if (lines64 == 0 || lines64 > UINT32_MAX) {
      pt.status = {StatusCode::skipped, "footprint not a usable number of lines at this stride"};
      insert(std::move(pt));
      return;
    }
    const auto lines = static_cast<uint32_t>(lines64);
    const std::vector<uint32_t> next =
        lines_per_page_ ? page_grouped_cycle(lines, lines_per_page_, 0x5eed0000ULL ^ lines)
                        : sattolo_cycle(lines, 0x5eed0000ULL ^ lines);
    const ChasePlan plan = plan_chase(lines, stride_, budget_);
    ChaseRequest req;
    req.path = path_;
    req.next = &next;
    req.stride_bytes = stride_;
    req.warmup_hops = plan.warmup_hops;
    req.hops_per_repeat = plan.hops_per_repeat;
    req.repeats = plan.repeats;
    try {
      const ChaseTiming t = dev_.chase(req);
      const uint64_t walked =
          t.hops_walked ? t.hops_walked : req.warmup_hops + req.hops_per_repeat * req.repeats;
      const uint32_t expect = walk(next, 0, walked);
      if (t.end_line != expect) {
        pt.status = {StatusCode::error, "chase ended on line " + std::to_string(t.end_line) +
                                            ", expected " + std::to_string(expect) +
                                            ": loads were lost or the chain was corrupted"};
      } else if (t.ns_per_hop.empty()) {
        pt.status = {StatusCode::error, "backend returned no timings"};
      } else {
        pt.ns = summarize(t.ns_per_hop);
        if (!t.cycles_per_hop.empty()) pt.cycles = summarize(t.cycles_per_hop);
        pt.clock_mhz = t.clock_mhz;
      }
    } catch (const AllocationFailed& e) {
      pt.status = {StatusCode::skipped, e.what()};
    }
    insert(std::move(pt));
  }

  // The measured curve in the form level detection takes (ok points only) and the indices
  // of those points in out_.points.
  std::vector<CurvePoint> curve(std::vector<std::size_t>* index = nullptr) const {
    std::vector<CurvePoint> c;
    for (std::size_t i = 0; i < out_.points.size(); ++i) {
      const LatencyPoint& p = out_.points[i];
      const std::optional<Summary>& s = p.cycles ? p.cycles : p.ns;
      if (!p.status.ok() || !s || s->median <= 0) continue;
      c.push_back({double(p.footprint_bytes), s->median, s->relative_spread()});
      if (index) index->push_back(i);
    }
    return c;
  }

  bool has(uint64_t footprint) const {
    return std::any_of(out_.points.begin(), out_.points.end(),
                       [&](const LatencyPoint& p) { return p.footprint_bytes == footprint; });
  }

 private:
  void insert(LatencyPoint pt) {
    auto it =
        std::lower_bound(out_.points.begin(), out_.points.end(), pt.footprint_bytes,
                         [](const LatencyPoint& p, uint64_t f) { return p.footprint_bytes < f; });
    out_.points.insert(it, std::move(pt));
  }

  Device& dev_;
  MemPath path_;
  uint64_t stride_;
  ChaseBudget budget_;
  CurveResult& out_;
  uint32_t lines_per_page_ = 0;
};

// Footprints that would narrow a level's capacity bracket to the resolution asked for.
std::vector<uint64_t> refinement_points(const CurveResult& c, uint64_t stride) {
  std::vector<uint64_t> out;
  for (const Level& l : c.levels) {
    if (!l.capacity_lo_bytes || !l.capacity_hi_bytes) continue;
    if (auto mid =
            refine_between(*l.capacity_lo_bytes, *l.capacity_hi_bytes, stride, kCapacityResolution))
      out.push_back(*mid);
  }
  return out;
}

// The edges the global path found, for the paths after it (thin_footprints): a curve that
// is not ok (its levels withheld or never found) guides nothing.
std::vector<EdgeBracket> known_edges(const CurveResult& global) {
  std::vector<EdgeBracket> out;
  if (!global.status.ok()) return out;
  for (const Level& l : global.levels)
    if (l.capacity_lo_bytes && l.capacity_hi_bytes)
      out.push_back({*l.capacity_lo_bytes, *l.capacity_hi_bytes});
  return out;
}

// Within three grid steps (3/4 of a doubling) of a known edge a secondary path keeps the
// full grid, so that a level between two close edges keeps all its points. Replayed through
// assign_levels without refinement, the H200's l2, readonly, texture and image curves thinned
// so kept every level name, latencies within 0.7 %, capacities but one (OpenCL l2's near L2
// a grid step lower, where refinement then adds points); with half a doubling, Vulkan's far
// L2 half was one point short of a plateau and merged.
constexpr double kEdgeGuard = 1.6817928305074290;  // 2^(3/4)

std::string point_label(uint64_t footprint) { return format_bytes(double(footprint)); }

// Sweeps one curve: the log-spaced grid, then refinement around each level's edge.
void sweep_curve(Device& dev, MemPath path, uint64_t stride, const std::vector<uint64_t>& grid,
                 const LatencyOptions& opt, const std::string& part, const PathKind& kind,
                 std::optional<uint64_t> largest_cache, Progress& progress,
                 const std::atomic<bool>& stop, CurveResult& out) {
  const auto t0 = Clock::now();
  // Page-grouped chains on the cache paths only: a TLB sweep walks one line per page.
  const uint64_t page = kind.kind == "tlb" ? 0 : opt.page_bytes.value_or(0);
  CurveSweep sweep(dev, path, stride, opt.budget, out, page);
  int n = 0;
  int total = static_cast<int>(grid.size());
  auto measure = [&](uint64_t fp) {
    progress.step("latency", part, ++n, total, point_label(fp));
    try {
      sweep.measure(fp);
    } catch (const std::exception& e) {
      out.status = {StatusCode::error, std::string(e.what())};
      out.wall_seconds = seconds_since(t0);
      throw ProbeError("latency probe, path " + part + ", point " + std::to_string(n) + " (" +
                       point_label(fp) + "): " + e.what());
    }
  };
  // The path's time budget: a point's cost grows with its footprint (the chain is built and
  // copied, then walked), so the estimate is the wall time per footprint byte seen so far.
  // The TLB sweep is not limited (it runs on CUDA only, where it is the point).
  SweepPlanner plan(kind.kind == "tlb" ? 1e9 : opt.path_budget_seconds);
  const bool check_levels = !is_cpu(dev.info());  // see assign_levels
  // One-time stalls count against the budget but set no rate: a kernel's first launch, which
  // a driver may compile then, behind the run's background compiles (NVIDIA's OpenCL l2 path
  // stalled 6.3 s on its 1 KiB point in one run and 5.7 s on its 512 KiB point in the next,
  // and at either "rate" every later point was skipped). So the path's first point sets no
  // rate, nor does a point that took over 8x (and 0.5 s more than) what the rate before it
  // predicted; the points after it do.
  bool first = true;
  auto timed = [&](uint64_t fp) {
    const std::optional<double> predicted = plan.estimate(double(fp), 1);
    const auto tp = Clock::now();
    measure(fp);
    const double took = seconds_since(tp);
    if (first || (predicted && took > 8 * *predicted + 0.5))
      plan.spend(took);
    else
      plan.record(double(fp), 1, took);
    first = false;
  };
  for (std::size_t i = 0; i < grid.size(); ++i) {
    const uint64_t fp = grid[i];
    if (stop) break;
    if (kind.kind != "tlb" && plan.rate()) {
      std::vector<std::pair<double, int>> rest;
      for (std::size_t j = i; j < grid.size(); ++j) rest.emplace_back(double(grid[j]), 1);
      progress.time_left("latency", plan.time_left(rest));
    }
    const BudgetVerdict v = plan.admit(double(fp), 1);
    if (!v.run) {
      sweep.skip(fp, v.reason);
      continue;
    }
    timed(fp);
  }
  assign_levels(out, kind.kind, kind.first_level, largest_cache, kind.scratch_name, check_levels);
  for (int round = 0; round < opt.max_refine_rounds && !stop; ++round) {
    std::vector<uint64_t> more;
    for (uint64_t fp : refinement_points(out, stride))
      if (!sweep.has(fp)) more.push_back(fp);
    if (more.empty()) break;
    total += static_cast<int>(more.size());
    for (uint64_t fp : more) {
      if (stop) break;
      const std::optional<double> e = plan.estimate(double(fp), 1);
      if (e && *e > plan.left()) continue;  // refinement only as far as the budget goes
      timed(fp);
    }
    assign_levels(out, kind.kind, kind.first_level, largest_cache, kind.scratch_name, check_levels);
  }
  if (stop) out.status = {StatusCode::interrupted, "stopped by the user before the sweep finished"};
  // Asked last: on CUDA the answer comes from the binary's own SASS, read while the sweep ran.
  out.timed_instruction = dev.timed_instruction(path);
  out.wall_seconds = seconds_since(t0);
}

// The l2 path's loads must skip L1 for its levels to start at L2. CUDA's ld.global.cg is
// defined to cache in L2 only; other backends' l2 path is a coherent load, a memory-model
// promise a driver may keep with a coherent L1. A CPU's caches are all coherent, so there it
// hits L1 whatever it costs (lavapipe's coherent loads take 4-7 ns a hop against 0.3-4 for
// plain ones: its code, not a cache). On a GPU the path's smallest footprint is timed again
// beside the global path's, kL1Rounds times in turn (a busy host slows both alike): unless
// the l2 path is kL2OverL1 times slower (an H200: ~6x), it hits L1 too. Either way its levels
// are then numbered from L1, and the note says why.
constexpr double kL2OverL1 = 1.5;
constexpr int kL1Rounds = 3;

// The least disturbed repeat of a point in ns (preemption only adds time).
std::optional<double> fastest(const LatencyPoint& p) {
  if (!p.status.ok() || !p.ns || !(p.ns->min > 0)) return std::nullopt;
  return p.ns->min;
}

void number_from_l1(CurveResult& l2, const std::string& why, bool check_levels,
                    const std::optional<uint64_t>& largest_cache) {
  assign_levels(l2, "cache", 1, largest_cache, "on-chip", check_levels);
  l2.note = (l2.note.empty() ? "" : l2.note + "; ") + why +
            ": this path's loads do not skip L1, so its levels are numbered from L1";
}

void check_l1_bypass(Device& dev, const LatencyOptions& opt, CurveResult& l2,
                     const std::optional<uint64_t>& largest_cache) {
  if (is_cuda(dev.info()) || l2.levels.empty() || !l2.status.ok()) return;
  if (is_cpu(dev.info()))
    return number_from_l1(l2, "a CPU's caches are coherent, L1 included", false, largest_cache);
  auto first = std::find_if(l2.points.begin(), l2.points.end(),
                            [](const LatencyPoint& p) { return fastest(p).has_value(); });
  if (first == l2.points.end()) return;
  const uint64_t fp = first->footprint_bytes;
  // The fastest of each path's rounds (both paths run at one clock).
  std::optional<double> best[2];
  try {
    for (int r = 0; r < kL1Rounds; ++r)
      for (int k = 0; k < 2; ++k) {
        CurveResult scratch;
        CurveSweep(dev, k == 0 ? MemPath::global : MemPath::l2, l2.stride_bytes, opt.budget,
                   scratch, opt.page_bytes.value_or(0))
            .measure(fp);
        const LatencyPoint& p = scratch.points.front();
        if (const auto t = fastest(p)) best[k] = std::min(best[k].value_or(*t), *t);
      }
  } catch (const std::exception&) {
    best[0].reset();
  }
  if (!best[0] || !best[1]) {  // without the check the names could be wrong: none then
    l2.status = {StatusCode::error, "the global path could not be timed at " +
                                        format_bytes(double(fp)) +
                                        " to check that this path's loads skip L1"};
    l2.levels.clear();
    return;
  }
  if (*best[1] >= kL2OverL1 * *best[0]) return;
  number_from_l1(l2,
                 "at " + format_bytes(double(fp)) + " they take " + format_fixed(*best[1], 1) +
                     " ns against " + format_fixed(*best[0], 1) + " ns through the global path",
                 true, largest_cache);
}

}  // namespace

std::vector<MemPath> default_paths(const DeviceInfo& info) {
  if (is_cuda(info))
    return {MemPath::global,  MemPath::l2,       MemPath::readonly,
            MemPath::texture, MemPath::constant, MemPath::shared};
  if (info.backend == "vulkan")  // workgroup memory is GLSL's `shared`; l2: a coherent buffer
    return {MemPath::global, MemPath::l2, MemPath::constant, MemPath::shared, MemPath::image};
  // OpenCL: l2 is a volatile load; shared is the local path under CUDA's name (the same
  // __local chase), so that the figure has CUDA's id; local keeps its own.
  return {MemPath::global, MemPath::l2,    MemPath::constant,
          MemPath::shared, MemPath::local, MemPath::image};
}

// shape: the probe's paths and TLB sweeps in their order, each guarded with its own status
void run_latency(Device& dev, const LatencyOptions& opt, Progress& progress,
                 const std::atomic<bool>& stop, LatencyProbeResult& out) {
  const auto t0 = Clock::now();
  const DeviceInfo& info = dev.info();
  out.status = {};
  out.telemetry_before = dev.telemetry();
  const std::vector<MemPath> paths = opt.paths.empty() ? default_paths(info) : opt.paths;
  const std::optional<uint64_t> largest_cache = info.l2_bytes;
  std::vector<double> clocks;
  std::vector<EdgeBracket> edges;  // the global path's, once measured

  auto finish = [&] {
    for (const auto& [name, c] : out.paths)
      for (const LatencyPoint& p : c.points)
        if (p.clock_mhz) clocks.push_back(*p.clock_mhz);
    if (!clocks.empty()) out.clock_mhz_measured = median(clocks);
    dev.release_memory();  // the TLB sweep's buffer can hold most of the memory
    out.telemetry_after = dev.telemetry();
    out.wall_seconds = seconds_since(t0);
  };

  try {
    for (MemPath path : paths) {
      const std::string name = to_string(path);
      CurveResult& curve = out.paths[name];
      const Support s = dev.supports(path);
      if (!s.ok) {
        curve.status = {StatusCode::unsupported, s.reason};
        progress.note("latency " + name + ": unsupported (" + s.reason + ")");
        continue;
      }
      if (stop) {
        curve.status = {StatusCode::skipped, "interrupted before this path"};
        continue;
      }
      const uint64_t stride = opt.stride.value_or(default_stride(path, info));
      const uint64_t path_max = dev.max_footprint(path);
      uint64_t hi = opt.max_footprint.value_or(sweep_upper_bound(
          largest_cache.value_or(0), opt.default_floor, UINT64_MAX, opt.cache_multiple));
      hi = std::min(hi, path_max);
      if (hi < std::max(stride, opt.min_footprint)) {
        curve.status = {StatusCode::unsupported,
                        "the path holds only " + format_bytes(double(path_max))};
        continue;
      }
      auto grid = log_spaced_footprints(std::min(opt.min_footprint, hi), hi,
                                        opt.points_per_doubling, stride);
      // Not on a CPU device: its curves carry the host's noise and its paths' levels are not
      // the global path's (lavapipe's image path, thinned, found none of its five levels).
      if (path != MemPath::global && path_kind(path).kind == "cache" && !is_cpu(info))
        grid = thin_footprints(grid, opt.points_per_doubling / opt.secondary_points_per_doubling,
                               edges, kEdgeGuard);
      // After thinning, which keeps every n-th point by index. On the global and L2-only
      // paths, the two every backend has and compares: the others keep their thinned grids
      // (the whole Vulkan run went past its 60 s with all four). Not on a CPU device: its last
      // cache's edge is not the hashed GPU L2's ramp, and its sweeps are slow.
      if ((path == MemPath::global || path == MemPath::l2) && largest_cache && !is_cpu(info))
        grid = add_far_edge_points(grid, std::min(opt.min_footprint, hi), hi,
                                   opt.points_per_doubling, stride, *largest_cache);
      ChaseBudget budget = opt.budget;
      if (largest_cache) budget.largest_cache_bytes = *largest_cache;
      LatencyOptions o = opt;
      o.budget = budget;
      if (!o.page_bytes) o.page_bytes = default_page_bytes(info);
      sweep_curve(dev, path, stride, grid, o, name, path_kind(path), largest_cache, progress, stop,
                  curve);
      if (path == MemPath::l2 && !stop) check_l1_bypass(dev, o, curve, largest_cache);
      if (path == MemPath::global) edges = known_edges(curve);
      std::string line = "latency " + name + ": " + std::to_string(curve.points.size()) +
                         " points in " + format_fixed(curve.wall_seconds, 1) + " s" +
                         (curve.timed_instruction ? " (" + *curve.timed_instruction + ")" : "") +
                         ";";
      for (const Level& l : curve.levels)
        line += " " + l.name + " " +
                (l.latency_cycles ? format_fixed(*l.latency_cycles, 1) + " cyc"
                                  : format_fixed(l.latency_ns.value_or(NAN), 1) + " ns");
      progress.note(line);
    }

    const bool cpu = is_cpu(info);
    const bool tlb = opt.tlb.value_or(is_cuda(info) || cpu);
    if (tlb && !stop) {
      // A CPU's volatile loads (OpenCL's l2 path) hit its caches as plain ones do.
      const MemPath path = !cpu && dev.supports(MemPath::l2).ok ? MemPath::l2 : MemPath::global;
      const TlbPlan tp = tlb_plan(opt, info);
      // Sized once, before the first stride: the buffer it takes stays allocated and
      // would shrink the free memory seen by the strides after it.
      uint64_t tlb_hi = std::min(tp.max_footprint, dev.max_footprint(path));
      if (auto free = dev.free_memory())
        tlb_hi = std::min(tlb_hi, *free > opt.tlb_free_margin ? *free - opt.tlb_free_margin : 0);
      for (uint64_t stride : tp.strides) {
        const std::string key = "stride_" + std::to_string(stride);
        CurveResult& curve = out.tlb[key];
        const uint64_t hi = tlb_hi;
        if (hi < 4 * stride) {
          curve.status = {StatusCode::skipped, "not enough memory for a TLB sweep at this stride"};
          continue;
        }
        const auto grid = log_spaced_footprints(std::max(stride, tp.min_footprint(stride)), hi,
                                                opt.points_per_doubling, stride);
        LatencyOptions o = opt;
        o.budget.largest_cache_bytes = 1ull
                                       << 40;  // every line fits the caches: always a full pass
        sweep_curve(dev, path, stride, grid, o, "tlb " + format_bytes(double(stride)),
                    {"tlb", 1, ""}, std::nullopt, progress, stop, curve);
        // On a CPU one line per page soon outgrows the L1 cache as well as the L1 TLB
        // (768 lines of a 48 KiB L1 at 3 MiB), and that step must not read as a TLB level.
        auto global = out.paths.find(to_string(MemPath::global));
        if (cpu && global != out.paths.end())
          name_tlb_levels_by_lines(curve, default_stride(MemPath::global, info),
                                   global->second.levels);
        progress.note("latency tlb stride " + format_bytes(double(stride)) + ": " +
                      std::to_string(curve.levels.size()) + " levels in " +
                      format_fixed(curve.wall_seconds, 1) + " s");
      }
    } else if (!tlb) {
      out.tlb.clear();
    }
  } catch (const ProbeError& e) {
    out.status = {StatusCode::error, e.what()};
    finish();
    throw;
  }
  if (stop)
    out.status = {StatusCode::interrupted, "stopped by the user; what was measured is kept"};
  finish();
}

}  // namespace gd
