// The footprint sweeps: one curve of bandwidth against the bytes a kernel reads or writes.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <functional>
#include <sstream>
#include <stdexcept>

#include "bandwidth/bandwidth.hpp"
#include "bandwidth/run_internal.hpp"
#include "gpudissect/budget.hpp"
#include "gpudissect/head_start.hpp"
#include "gpudissect/levels.hpp"
#include "gpudissect/probe.hpp"  // ProbeError
#include "gpudissect/stats.hpp"
#include "gpudissect/stopwatch.hpp"
#include "gpudissect/sweep.hpp"
#include "gpudissect/units.hpp"

namespace gd::bandwidth_run {

// Where a curve itself shows device memory (find_memory_plateau) well below the cache size
// the sweeps assumed (its last cached point under half of it), that is where memory starts
// for the rest of the probe: later curves sweep to 8x the last cache the curve showed, and
// device-memory figures are read past 4x it. Why not the API: a VM's CPU through PoCL
// reports its host's 480 MiB L3, so memory was read past 1.9 GiB, points a 2-core CPU
// reaches for one curve at most in its budget. On the H100 and H200 the read
// curve's cache ends at 58 MiB against the API's 50 and 60 MiB: nothing changes there.
// A plateau that starts below 1/kApiCacheShare of the reported cache is a lower cache's, not
// memory: the same VM's read curve is flat at 57 GB/s from 8 to 32 MiB (its L3 share past
// the 2 MiB L2), which the rule alone took for memory; a 2-core VM with a 32 MiB L3 would
// show its L3 from 1-2 MiB. Only slow devices (CPUs through OpenCL) adopt: a GPU's API
// reports the L2 its loads see, and its L1s together can be a large part of it (the H100's
// 132 x 256 KiB against 50 MiB), so a step there must not end a sweep. Without a reported
// cache size nothing is adopted: no size says how far below it a plateau may be memory.
// What remains possible: a bare-metal CPU whose L2s together are 1/8 to 1/2 of its L3 and
// whose read rate falls 1.5x past them would have its L3 taken for memory; the terminal
// names the curve and the footprints whenever this rule decides.
void adopt_memory_plateau(Ctx& c, const std::string& name, const BandwidthCurve& curve) {
  std::vector<FootprintRate> pts;
  for (const BandwidthPoint& p : curve.points)
    if (p.status.ok() && p.gbps && p.gbps->median > 0) pts.push_back({p.x, p.gbps->median});
  const std::optional<MemoryPlateau> m = find_memory_plateau(pts);
  if (!m) return;
  const std::optional<uint64_t> assumed = c.info.l2_bytes;
  // Memory from the plateau's first point on; the cache ends below half of it at most, even
  // where a point 1.5x faster lies further down (the 16-core VM's read: 142 GB/s at 64 MiB,
  // 107-112 at 128-256 MiB from its L3, memory 65-82 from 512 MiB).
  const double cache = std::max(m->last_cached_bytes, m->first_bytes / 2);
  if (!slow_device(c) || !assumed || cache >= 0.5 * double(*assumed) ||
      m->first_bytes < double(*assumed) / kApiCacheShare)
    return;
  c.info.l2_bytes = uint64_t(cache);
  c.memory_known = true;
  c.memory_curve = name;
  c.out.last_cache_bytes = c.info.l2_bytes;
  c.out.last_cache_source = name + " curve: " + format_fixed(m->gbps, 1) + " GB/s and flat from " +
                            format_bytes(m->first_bytes) + " to " +
                            format_bytes(pts.back().footprint_bytes) + ", cached up to " +
                            format_bytes(cache) + "; the " + format_bytes(double(*assumed)) +
                            " cache the API reports is not what this device's loads see";
  c.progress.note("bandwidth: device memory past 4x " + format_bytes(cache) + ", from the " +
                  c.out.last_cache_source);
}

namespace {

// One footprint curve as planned: the kernel it times and the footprints it sweeps.
struct Sweep {
  BwOp op;
  BwLoad load;
  bool streaming;
  Variant v;
  uint64_t chunk = 0, l2 = 0, lo = 0, hi = 0;
  bool slow = false;
  uint64_t in_cache_target = 0;
  std::vector<uint64_t> grid;
  uint64_t buffer(uint64_t fp) const { return op == BwOp::copy ? fp / 2 : fp; }
};

StreamLayout sweep_layout(const Ctx& c, const Sweep& s, uint64_t buffer) {
  return s.v.flat ? stream_layout_flat(buffer, s.chunk)
                  : stream_layout(buffer, uint64_t(c.k.stream_blocks()), s.chunk);
}

// Cache-resident points run long enough (~8 GB moved) to dwarf the launch; beyond the
// L2 a few GB do, the large point moves its buffer once. --quick moves as much as a full run
// on a fast device, so that its device-memory figures are the full run's (at 1 GiB a launch
// an H200's copy read 2-3 % low: the launch's fixed cost, and a gate against a full run
// fired on it); only a slow device's quick points move 1 GiB.
uint64_t target_bytes(const Ctx& c, const Sweep& s, const StreamLayout& l) {
  return stream_footprint(s.op, l) <= 2 * s.l2
             ? s.in_cache_target
             : (c.opt.quick && s.slow ? kQuickMemoryTargetBytes : kMemoryTargetBytes);
}

// Nothing measured yet: one short calibration launch (16 MiB read once) so that the
// first point is not planned blind (8 GB per launch is 2 ms on an H200, 2 s on a CPU).
void calibrate(Ctx& c) {
  StreamRequest cal;
  cal.op = BwOp::read;
  cal.load = BwLoad::cached;
  cal.buffer_bytes = 16ull << 20;
  cal.passes = 1;
  cal.repeats = 1;
  try {
    c.k.stream(cal);  // the first call builds the program (seconds on PoCL): not timed
    // The rate the bytes a launch moves add, not the call's: a Vulkan call spends ~5 ms on
    // the host around one 16 MiB read (dispatch round trips, the check), which read as
    // 2.9 GB/s on the H200, and the planner, which scales a rate by the ~8 GB a launch moves,
    // skipped every point of the read curve. The same buffer read 64 times
    // against once gives the part that grows with the bytes; never above the rate inside
    // the launch (GPU timestamps), which the host clock cannot beat.
    StreamRequest many = cal;
    many.passes = 64;
    auto timed_call = [&](const StreamRequest& r, StreamTiming* out) {
      const auto tc = Clock::now();
      *out = c.k.stream(r);
      return seconds_since(tc);
    };
    StreamTiming t, t64;
    const double s = timed_call(cal, &t);
    const double s64 = timed_call(many, &t64);
    const double bytes = double(stream_traffic(BwOp::read, t.layout, 1).total());
    const double bytes64 = double(stream_traffic(BwOp::read, t64.layout, 64).total());
    if (!t64.seconds.empty() && median(t64.seconds) > 0)
      c.launch_rate = bytes64 / median(t64.seconds);
    if (s64 > s && bytes64 > bytes)
      c.rate = (bytes64 - bytes) / (s64 - s);
    else if (s64 > 0)
      c.rate = bytes64 / s64;
    if (c.rate && c.launch_rate) c.rate = std::min(*c.rate, *c.launch_rate);
  } catch (const std::exception&) {
    // the sweep's first point will say what is wrong
  }
}

// The curve's kernel, its timed instruction and the footprints it sweeps; calibrates the
// rate first where nothing was measured yet.
Sweep plan_sweep(Ctx& c, BwOp op, BwLoad load, bool streaming, Variant v, BandwidthCurve& curve,
                 const std::string& name) {
  Sweep s{op, load, streaming, v};
  const std::string kind =
      (op == BwOp::write ? "write" : to_string(op) + "." + to_string(load)) +
      (v.prefetch_256 ? ".l2_256" : "") + (streaming ? ".streaming" : "") +
      (v.flat ? ".flat" + std::to_string(v.unroll == 1 || v.unroll == 2 ? v.unroll : 4) +
                    (v.threads ? ".t" + std::to_string(v.threads) : "")
              : (op == BwOp::read && v.unroll == 1 ? ".rot" : ""));
  curve.timed_instruction = c.k.instruction(kind);
  StreamRequest probe_req;
  probe_req.op = op;
  probe_req.load = load;
  probe_req.flat = v.flat;
  probe_req.unroll = v.unroll;
  probe_req.prefetch_256 = v.prefetch_256;
  probe_req.threads = v.threads;
  s.chunk = c.k.stream_chunk_bytes(probe_req);
  if (op == BwOp::read) c.own_bytes[name] = double(c.k.stream_blocks()) * double(s.chunk);
  s.l2 = c.info.l2_bytes.value_or(4ull << 20);
  s.lo = std::max(s.chunk, c.opt.min_footprint);
  if (v.flat) {
    // Past 2x the L2: device memory only, where flat grids are what the peers run.
    s.lo = std::max(s.lo, 2 * s.l2);
    curve.note = "non-persistent grid (one " + format_bytes(double(s.chunk)) +
                 " chunk per block); B/clk/SM at the probe's median SM clock (no block lives long "
                 "enough to read it)";
  }
  s.hi = c.opt.max_footprint.value_or(std::max<uint64_t>(8 * s.l2, 512ull << 20));
  if (c.opt.quick) s.hi = c.opt.max_footprint.value_or(std::max<uint64_t>(4 * s.l2, 64ull << 20));
  if (!c.rate) calibrate(c);
  // A slow device (a CPU through PoCL: a few GB/s) cannot afford 2 points per doubling in
  // its budget and still reach device memory: setup and launches cost ~0.25 s a point, so it
  // gets one point per doubling (the rate is the calibration's or the previous curve's).
  int ppd = c.opt.points_per_doubling;
  s.slow = slow_device(c);  // known from here on: the calibration is done
  if (!c.opt.points_per_doubling_set && s.slow) ppd = 1;
  // --quick's 20 s are the H200's (its 15 s target); a CPU through PoCL has a minute, and in
  // 20 s its read curve stopped at 128 MiB, short of the memory plateau that tells where its
  // memory starts (1.7 s a curve).
  if (c.opt.quick && !c.opt.budget_set && s.slow) c.budget_seconds = 2 * c.opt.budget_seconds;
  // Cached points move 8 GB a launch, enough to dwarf a GPU's launch; a CPU's move 1 GB
  // (10-20 ms a launch at its cache speed, far above the event clock's resolution). With
  // 8 GB a CPU VM's --quick read curve spent its share by 128 MiB, and a 16-core VM's write
  // curve spent all of its 5.4 s on its first point: 16 KiB written at 9 GB/s (the passes
  // were planned at the previous curve's 58 GB/s).
  s.in_cache_target = s.slow ? kQuickMemoryTargetBytes : kInCacheTargetBytes;
  s.grid = log_spaced_footprints(s.lo, std::max(s.lo, s.hi), ppd, s.chunk);
  if (c.opt.large_bytes > s.hi) s.grid.push_back(c.opt.large_bytes * (op == BwOp::copy ? 2 : 1));
  return s;
}

// Skip this point (and every larger one) when even its planned launches would take
// the curve past its budget at the speed seen so far.
BudgetVerdict admit_point(Ctx& c, const Sweep& s, SweepPlanner& plan, uint64_t fp, int n) {
  const StreamLayout l0 = sweep_layout(c, s, s.buffer(fp));
  const uint64_t per_pass0 = std::max<uint64_t>(1, stream_traffic(s.op, l0, 1).total());
  const uint64_t target0 = target_bytes(c, s, l0);
  const int points_left = int(s.grid.size()) - n + 1;
  const double bytes0 =
      double(plan.passes(target0, per_pass0, points_left, c.opt.repeats + 1)) * double(per_pass0);
  // The largest regular footprint (the device-memory figure) is kept in the budget:
  // smaller points give way to it. Not on a slow device while where its memory starts
  // is the API's word only: there the top is 8x a cache size a VM may not get (a CPU's
  // 480 MiB L3, 3.75 GiB reads that took the whole budget), so the sweep runs in order
  // and ends where the curve itself reaches device memory (adopt_memory_plateau).
  uint64_t top = 0;
  for (uint64_t g : s.grid)
    if (g <= std::max(s.lo, s.hi)) top = std::max(top, g);
  if (s.slow && !c.memory_known && !s.v.flat) top = 0;
  if (fp >= top) return plan.admit(bytes0, c.opt.repeats + 1, double(fp));
  const StreamLayout lt = sweep_layout(c, s, s.buffer(top));
  const uint64_t per_pass_t = std::max<uint64_t>(1, stream_traffic(s.op, lt, 1).total());
  const uint64_t target_t = target_bytes(c, s, lt);
  double bytes_t =
      double(plan.passes(target_t, per_pass_t, 1, c.opt.repeats + 1)) * double(per_pass_t);
  // The planner times the top at the rate seen so far, a cache's on the way up; on a
  // slow device it is kept at the memory rate the last curve saw there instead: the
  // CPU VM's write curve had spent its budget by 128 MiB, planning its 512 MiB top at
  // 50 GB/s, and ran it at 17.
  if (s.slow && c.memory_rate && plan.launch_rate() && *plan.launch_rate() > *c.memory_rate)
    bytes_t *= *plan.launch_rate() / *c.memory_rate;
  return plan.admit_keeping(bytes0, c.opt.repeats + 1, bytes_t, c.opt.repeats + 1, double(fp),
                            double(top));
}

// Why a footprint is left out for lack of device memory; empty where it fits.
std::string memory_skip(const Ctx& c, uint64_t fp, const std::optional<uint64_t>& free) {
  // Without a free-memory figure (OpenCL), the device's memory size bounds the footprint:
  // PoCL's 5.5 GiB "device" is the host's RAM, and an 8 GiB copy there pages (1.2 GB/s
  // against the 5 GB/s plateau below it, and the summary took that largest point).
  if (!free && c.info.memory_bytes && double(fp) > 0.75 * double(*c.info.memory_bytes))
    return "footprint " + format_bytes(double(fp)) + " exceeds 75% of the device memory (" +
           format_bytes(double(*c.info.memory_bytes)) + ") and its free part is unknown";
  if (free && double(fp) > 0.9 * double(*free))
    return "footprint " + format_bytes(double(fp)) + " exceeds 90% of the free device memory (" +
           format_bytes(double(*free)) + ")";
  return {};
}

// One point of the curve: launches until the stopping rule is met, then its figures.
void measure_point(Ctx& c, const Sweep& s, SweepPlanner& plan, BandwidthCurve& curve, uint64_t fp,
                   int n) {
  const uint64_t buffer = s.buffer(fp);
  StreamRequest r;
  r.op = s.op;
  r.load = s.load;
  r.streaming_stores = s.streaming;
  r.flat = s.v.flat;
  r.unroll = s.v.unroll;
  r.prefetch_256 = s.v.prefetch_256;
  r.threads = s.v.threads;
  r.buffer_bytes = buffer;
  r.repeats = c.opt.repeats;
  const StreamLayout l = sweep_layout(c, s, buffer);
  const uint64_t per_pass = stream_traffic(s.op, l, 1).total();
  const uint64_t target = target_bytes(c, s, l);
  r.passes = plan.passes(target, per_pass, int(s.grid.size()) - n + 1, r.repeats + 1);
  const auto tp = Clock::now();
  // Repeats stop by the stopping rule: 3 launches, more (up to bandwidth.repeats) only
  // while they spread over 1 %. Each further call has its own untimed warm-up launch.
  const StoppingRule rule{std::size_t(std::min(3, c.opt.repeats)), std::size_t(c.opt.repeats),
                          0.01};
  r.repeats = int(rule.min_samples);
  StreamTiming t = c.k.stream(r);
  int launches = r.repeats + 1;
  while (t.check_error.empty() && int(t.seconds.size()) < c.opt.repeats && !rule.done(t.seconds) &&
         !c.stop) {
    r.repeats = c.opt.repeats - int(t.seconds.size());
    const StreamTiming more = c.k.stream(r);
    launches += r.repeats + 1;
    t.seconds.insert(t.seconds.end(), more.seconds.begin(), more.seconds.end());
    t.clock_mhz.insert(t.clock_mhz.end(), more.clock_mhz.begin(), more.clock_mhz.end());
    t.check_error = more.check_error;
  }
  std::optional<double> launch_s;
  if (!t.seconds.empty()) launch_s = median(t.seconds);
  plan.record(double(per_pass) * double(r.passes), launches, seconds_since(tp), launch_s,
              double(fp));
  if (plan.rate()) c.rate = plan.rate();
  BandwidthPoint p;
  p.x = double(stream_footprint(s.op, t.layout));
  if (!t.check_error.empty()) {
    p.status = {StatusCode::error, t.check_error};
  } else {
    std::vector<double> clocks = t.clock_mhz;
    if (clocks.empty() && s.v.flat)
      if (const std::optional<double> m = probe_clock(c.out)) clocks.push_back(*m);
    fill_figures(p, stream_traffic(s.op, t.layout, r.passes), t.seconds, clocks,
                 c.info.compute_units);
  }
  insert_sorted(curve, std::move(p));
}

// After the sweep: the memory rate later curves plan with, the curve's levels, its line.
void finish_curve(Ctx& c, const Sweep& s, BandwidthCurve& curve, const std::string& name,
                  Clock::time_point t0) {
  for (const BandwidthPoint& q : curve.points)
    if (q.status.ok() && q.gbps && q.x >= 4.0 * double(c.info.l2_bytes.value_or(0)) &&
        c.info.l2_bytes) {
      c.memory_rate = q.gbps->median * 1e9;
      // A curve that reached past 4x the API's cache without a plateau below it: the API's
      // size stands, and later curves keep their largest point in budget again (a 16-core
      // VM's write curves, swept in order, had no device-memory point left).
      if (!s.v.flat) c.memory_known = true;
    }
  assign_bandwidth_levels(curve, s.load == BwLoad::l2_only || s.load == BwLoad::no_allocate ? 2 : 1,
                          c.info.l2_bytes);
  // The device-memory plateau is read where the summary's figure comes from (past 4x the
  // L2, make_figures) when it has points there: below, a level found late can still hold
  // partly cached footprints (PoCL's copy: "device memory 5.4 GB/s" from 32-64 MiB points
  // against 2.0 at 128 MiB in the table).
  if (!curve.levels.empty() && curve.levels.back().name == "device memory") {
    std::vector<double> g;
    for (const BandwidthPoint& p : curve.points)
      if (p.status.ok() && p.gbps && p.x >= 4.0 * double(s.l2)) g.push_back(p.gbps->median);
    if (!g.empty()) curve.levels.back().gbps = median(g);
  }
  // A flat sweep starts past 2x the L2: its one plateau is device memory, not "L1".
  if (s.v.flat)
    for (BandwidthLevel& l : curve.levels) l.name = "device memory";
  if (c.stop)
    curve.status = {StatusCode::interrupted, "stopped by the user before the sweep finished"};
  curve.wall_seconds = seconds_since(t0);
  c.footprint_spent += curve.wall_seconds;
  --c.footprint_curves_left;
  std::string line = "bandwidth " + name + ": " + std::to_string(curve.points.size()) +
                     " points in " + format_fixed(curve.wall_seconds, 1) + " s" +
                     (curve.timed_instruction ? " (" + *curve.timed_instruction + ")" : "") + ";";
  for (const BandwidthLevel& l : curve.levels)
    line += " " + l.name + " " + format_fixed(l.gbps, 0) + " GB/s";
  c.progress.note(line);
}

}  // namespace

void footprint_curve(Ctx& c, BwOp op, BwLoad load, const std::string& name, bool streaming,
                     Variant v) {
  BandwidthCurve& curve = c.out.footprint[name];
  curve.x_unit = "footprint_bytes";
  Support sup = c.k.supports(op, load);
  if (sup.ok && streaming && op != BwOp::read) sup = c.k.supports_streaming_stores();
  if (!sup.ok) {
    curve.status = {StatusCode::unsupported, sup.reason};
    c.progress.note("bandwidth " + name + ": unsupported (" + sup.reason + ")");
    --c.footprint_curves_left;  // its share of the budget goes to the curves after it
    return;
  }
  const auto t0 = Clock::now();
  const Sweep s = plan_sweep(c, op, load, streaming, v, curve, name);
  const std::optional<uint64_t> free = c.dev.free_memory();
  // This curve's share of the probe's footprint budget (gpudissect/budget.hpp). On a slow
  // device whose memory is not known yet, the read curve (the first) gets two shares: it
  // must reach two doublings into memory for the others to know where memory starts.
  double share = budget_share(kFootprintShare * c.budget_seconds, c.footprint_spent,
                              std::max(1, c.footprint_curves_left));
  if (s.slow && !c.memory_known && op == BwOp::read && load == BwLoad::cached && !v.flat)
    share = std::min(2 * share, kFootprintShare * c.budget_seconds - c.footprint_spent);
  SweepPlanner plan(share);
  if (c.rate) plan.assume_rate(*c.rate, c.launch_rate);
  int n = 0;
  std::string past_memory;  // why the points left are not measured, once memory is read
  for (uint64_t fp : s.grid) {
    if (c.stop) break;
    if (!past_memory.empty()) {
      insert_skipped(curve, double(fp), past_memory);
      continue;
    }
    c.progress.time_left("bandwidth", std::max(0.0, c.budget_seconds - c.footprint_spent -
                                                        plan.spent() - c.other_spent));
    c.progress.step("bandwidth", name, ++n, int(s.grid.size()), fp_label(double(fp)));
    if (const BudgetVerdict bv = admit_point(c, s, plan, fp, n); !bv.run) {
      insert_skipped(curve, double(fp), bv.reason);
      continue;
    }
    if (std::string why = memory_skip(c, fp, free); !why.empty()) {
      insert_skipped(curve, double(fp), std::move(why));
      continue;
    }
    guarded_point(curve, name, double(fp), [&] { measure_point(c, s, plan, curve, fp, n); });
    if (!v.flat && !c.memory_known) adopt_memory_plateau(c, name, curve);
    if (c.memory_curve == name && c.out.last_cache_bytes) {
      // This curve showed where memory starts: its points past 4x the last cache are the
      // figure; larger ones would read the same plateau again.
      const double from = 4.0 * double(*c.out.last_cache_bytes);
      for (const BandwidthPoint& q : curve.points)
        if (q.status.ok() && q.x >= from)
          past_memory = "past device memory's plateau, which this curve reached at " +
                        format_bytes(q.x) + " (" + c.out.last_cache_source + ")";
    }
  }
  finish_curve(c, s, curve, name, t0);
}

}  // namespace gd::bandwidth_run
