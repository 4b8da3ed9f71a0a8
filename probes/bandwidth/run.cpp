#include "bandwidth/run.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <functional>
#include <sstream>
#include <stdexcept>

#include "bandwidth/bandwidth.hpp"
#include "gpudissect/budget.hpp"
#include "gpudissect/head_start.hpp"
#include "gpudissect/levels.hpp"
#include "gpudissect/stats.hpp"
#include "gpudissect/stopwatch.hpp"
#include "gpudissect/sweep.hpp"
#include "gpudissect/units.hpp"
#include "gpudissect/probe.hpp"  // ProbeError

namespace gd {

namespace {

using Clock = std::chrono::steady_clock;

bool truthy(const std::string& v) { return v == "1" || v == "true" || v == "yes" || v == "on"; }

uint64_t bytes_option(const std::string& k, const std::string& v) {
  if (auto b = parse_bytes(v)) return *b;
  throw std::invalid_argument("bandwidth option '" + k + "': '" + v + "' is not a size (e.g. 4G)");
}

int int_option(const std::string& k, const std::string& v, int lo, int hi) {
  try {
    std::size_t used = 0;
    const int n = std::stoi(v, &used);
    if (used == v.size() && n >= lo && n <= hi) return n;
  } catch (const std::exception&) {
  }
  throw std::invalid_argument("bandwidth option '" + k + "': '" + v +
                              "' is not a whole number in " + std::to_string(lo) + ".." +
                              std::to_string(hi));
}

// A point's figures from its launch times: GB/s of read + write, and bytes per cycle per
// SM at the clock the kernel itself saw.
void fill_figures(BandwidthPoint& p, const Traffic& t, const std::vector<double>& seconds,
                  const std::vector<double>& clock_mhz, int sms) {
  p.read_bytes = t.read_bytes;
  p.write_bytes = t.write_bytes;
  p.sms = sms;
  std::vector<double> gbps, bpc;
  for (double s : seconds)
    if (s > 0) gbps.push_back(double(t.total()) / s / 1e9);
  if (gbps.empty()) {
    p.status = "error";
    p.reason = "no timings";
    return;
  }
  p.seconds = summarize(seconds);
  p.gbps = summarize(gbps);
  if (!clock_mhz.empty()) {
    p.clock_mhz = median(clock_mhz);
    if (sms > 0)
      for (double g : gbps) bpc.push_back(g * 1e9 / (*p.clock_mhz * 1e6) / sms);
    if (!bpc.empty()) p.bytes_per_clk_sm = summarize(bpc);
  }
}

std::string fp_label(double bytes) { return format_bytes(bytes); }

void insert_sorted(BandwidthCurve& c, BandwidthPoint p) {
  auto it = std::lower_bound(c.points.begin(), c.points.end(), p.x,
                             [](const BandwidthPoint& a, double x) { return a.x < x; });
  if (it != c.points.end() && it->x == p.x)
    *it = std::move(p);
  else
    c.points.insert(it, std::move(p));
}

// A point left out (no memory for it, or over the sweep's time budget), with the reason.
void insert_skipped(BandwidthCurve& c, double x, std::string reason) {
  BandwidthPoint p;
  p.x = x;
  p.status = "skipped";
  p.reason = std::move(reason);
  insert_sorted(c, std::move(p));
}

// Tells the sweep's planner how long a point took when it goes out of scope, also when the
// point failed, so the time left stays right.
struct PointTimer {
  SweepPlanner& plan;
  double work;
  int launches;
  Clock::time_point t0 = Clock::now();
  ~PointTimer() { plan.record(work, launches, seconds_since(t0)); }
};

// Wraps one measurement: allocation failures skip the point, other errors mark the curve
// and stop the probe with the point named.
template <class F>
void guarded_point(BandwidthCurve& curve, const std::string& part, double x, F&& body) {
  try {
    body();
  } catch (const AllocationFailed& e) {
    insert_skipped(curve, x, e.what());
  } catch (const std::exception& e) {
    curve.status = {"error", e.what()};
    throw ProbeError("bandwidth probe, " + part + " at " + format_fixed(x, 0) + ": " + e.what());
  }
}

const BandwidthPoint* best_point(const BandwidthCurve& c, double lo, double hi) {
  const BandwidthPoint* best = nullptr;
  for (const BandwidthPoint& p : c.points)
    if (p.status == "ok" && p.gbps && p.x >= lo && p.x <= hi &&
        (!best || p.gbps->median > best->gbps->median))
      best = &p;
  return best;
}

void add_figure(BandwidthProbeResult& out, const std::string& name, const BandwidthCurve& c,
                const BandwidthPoint* p, const std::string& where) {
  if (!p || !p->gbps) return;
  BandwidthFigure f;
  f.name = name;
  f.gbps = *p->gbps;
  f.bytes_per_clk_sm = p->bytes_per_clk_sm;
  f.clock_mhz = p->clock_mhz;
  f.timed_instruction = c.timed_instruction;
  f.where = where;
  out.figures.push_back(std::move(f));
}

// ---- the parts ----

// How the probe's time budget (bandwidth.budget) is split: footprint sweeps, shared-memory
// strides, host link. An H200 spends ~5, ~1 and ~2 s on them.
constexpr double kFootprintShare = 0.6, kSharedShare = 0.15, kHostShare = 0.25;
// Below this rate (bytes per second within a launch, the calibration's) a device is planned
// as slow (slow_device: one point per doubling unless points_per_doubling was set, and the
// rest); an H200 moves ~1000x more. A CPU device is slow whatever its rate.
constexpr double kSlowDeviceBytesPerSecond = 100e9;
// A curve's memory plateau (or the latency map's memory) is believed below the API's cache
// size only where it starts past this fraction of it (adopt_memory_plateau, last_cache).
constexpr double kApiCacheShare = 8;
// Bytes one timed launch moves. A launch has ~6 us of fixed cost on an H200 (the event, the
// grid's ramp-up and tail): at 32 TB/s from L1, 1 GiB per launch (40 us) reads 16 % low, so
// points inside the caches move 8 GiB (~270 us) in every mode; they are cheap on a GPU, and
// the budget planner trims them on a slow device. Device-memory points: 4 GiB (~0.9 ms); 1
// GiB with --quick (~0.23 ms, under 3 % of fixed cost).
constexpr uint64_t kInCacheTargetBytes = 8ull << 30;
constexpr uint64_t kMemoryTargetBytes = 4ull << 30;
constexpr uint64_t kQuickMemoryTargetBytes = 1ull << 30;

struct Ctx {
  Device& dev;
  BandwidthKernels& k;
  const BandwidthOptions& opt;
  Progress& progress;
  const std::atomic<bool>& stop;
  BandwidthProbeResult& out;
  // The device as the sweeps see it; its l2_bytes becomes the last cache a curve itself
  // showed (adopt_memory_plateau) when that contradicts the API.
  DeviceInfo& info;
  // Where device memory starts is known (from the latency map or a curve's own plateau), not
  // only the API's cache size: a slow device's sweeps then keep their largest point in budget.
  bool memory_known = false;
  std::string memory_curve;  // the curve that showed it, if one did
  // An OpenCL device of CPU type (PoCL): planned as a slow device whatever its speed.
  bool cpu_device = false;
  // Per read curve: blocks x chunk, the footprint from which every block reads its own data.
  std::map<std::string, double> own_bytes = {};
  // The footprint sweeps' time budget: seconds spent so far, curves still to run, and the
  // rate the last point moved data at (the next curve's first launches are planned from it).
  double footprint_spent = 0;
  int footprint_curves_left = 1;
  double other_spent = 0;  // shared and host parts
  std::optional<double> rate = {};
  std::optional<double> launch_rate = {};  // the calibration's, within its launch
  // The probe's time budget: the option's, doubled for --quick on a slow device (below).
  double budget_seconds = opt.budget_seconds;
  // Within a launch, at the last curve's largest footprint past 4x the last cache.
  std::optional<double> memory_rate = {};
};

// A CPU (by its type, or by a calibration rate below kSlowDeviceBytesPerSecond): one point
// per doubling, sweeps in order until a curve shows where memory starts, and the planning
// below that says "slow device". A CPU's type decides too, not only its speed: a 16-core
// CPU through PoCL reads 200 GB/s from its caches, and planned like a GPU it gets 34 points
// a curve and its read curve ends short of the 4x its reported L3 asks for.
bool slow_device(const Ctx& c) {
  return c.cpu_device || (c.launch_rate && *c.launch_rate < kSlowDeviceBytesPerSecond);
}

// The median SM clock the probe's kernels have measured so far.
std::optional<double> probe_clock(const BandwidthProbeResult& out) {
  std::vector<double> clocks;
  for (const auto* m : {&out.footprint, &out.scaling, &out.shared, &out.other})
    for (const auto& [name, c] : *m)
      for (const BandwidthPoint& p : c.points)
        if (p.clock_mhz && c.note.find("probe's median SM clock") == std::string::npos)
          clocks.push_back(*p.clock_mhz);
  if (clocks.empty()) return std::nullopt;
  return median(clocks);
}

// A variant of a stream kernel: non-persistent grid, vectors per thread, and where its
// sweep starts (flat grids only run where chunks far outnumber resident blocks).
struct Variant {
  bool flat = false;
  int unroll = 0;  // reads, persistent grid: 1 = one vector per chunk, chunks rotated
  bool prefetch_256 = false;
  int threads = 0;  // flat grids: threads per block (0: the backend's default)
};

// Where a curve itself shows device memory (find_memory_plateau) well below the cache size
// the sweeps assumed (its last cached point under half of it), that is where memory starts
// for the rest of the probe: later curves sweep to 8x the last cache the curve showed, and
// device-memory figures are read past 4x it. Why not the API: a VM's CPU through PoCL can
// report its host's L3 (480 MiB), so memory would be read past 1.9 GiB, points a 2-core CPU
// reaches for one curve at most in its budget. On the H100 and H200 the read curve's cache
// ends at 58 MiB against the API's 50 and 60 MiB: nothing changes there. A plateau that
// starts below 1/kApiCacheShare of the reported cache is a lower cache's, not memory: the
// same VM's read curve is flat at 57 GB/s from 8 to 32 MiB (its L3 share past the 2 MiB L2),
// which the rule alone took for memory; a 2-core VM with a 32 MiB L3 would show its L3 from
// 1-2 MiB. Only slow devices (CPUs through OpenCL) adopt: a GPU's API reports the L2 its
// loads see, and its L1s together can be a large part of it (the H100's 132 x 256 KiB
// against 50 MiB), so a step there must not end a sweep. Without a reported cache size
// nothing is adopted: no size says how far below it a plateau may be memory. What remains
// possible: a bare-metal CPU whose L2s together are 1/8 to 1/2 of its L3 and whose read rate
// falls 1.5x past them would have its L3 taken for memory; the terminal names the curve and
// the footprints whenever this rule decides.
void adopt_memory_plateau(Ctx& c, const std::string& name, const BandwidthCurve& curve) {
  std::vector<FootprintRate> pts;
  for (const BandwidthPoint& p : curve.points)
    if (p.status == "ok" && p.gbps && p.gbps->median > 0) pts.push_back({p.x, p.gbps->median});
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

void footprint_curve(Ctx& c, BwOp op, BwLoad load, const std::string& name, bool streaming = false,
                     Variant v = {}) {
  BandwidthCurve& curve = c.out.footprint[name];
  curve.x_unit = "footprint_bytes";
  Support s = c.k.supports(op, load);
  if (s.ok && streaming && op != BwOp::read) s = c.k.supports_streaming_stores();
  if (!s.ok) {
    curve.status = {"unsupported", s.reason};
    c.progress.note("bandwidth " + name + ": unsupported (" + s.reason + ")");
    --c.footprint_curves_left;  // its share of the budget goes to the curves after it
    return;
  }
  const auto t0 = Clock::now();
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
  const uint64_t chunk = c.k.stream_chunk_bytes(probe_req);
  if (op == BwOp::read) c.own_bytes[name] = double(c.k.stream_blocks()) * double(chunk);
  const uint64_t l2 = c.info.l2_bytes.value_or(4ull << 20);
  uint64_t lo = std::max(chunk, c.opt.min_footprint);
  if (v.flat) {
    // Past 2x the L2: device memory only, where flat grids are what the peers run.
    lo = std::max(lo, 2 * l2);
    curve.note = "non-persistent grid (one " + format_bytes(double(chunk)) +
                 " chunk per block); B/clk/SM at the probe's median SM clock (no block lives long "
                 "enough to read it)";
  }
  uint64_t hi = c.opt.max_footprint.value_or(std::max<uint64_t>(8 * l2, 512ull << 20));
  if (c.opt.quick) hi = c.opt.max_footprint.value_or(std::max<uint64_t>(4 * l2, 64ull << 20));
  if (!c.rate) {
    // Nothing measured yet: one short calibration launch (16 MiB read once) so that the
    // first point is not planned blind (8 GB per launch is 2 ms on an H200, 2 s on a CPU).
    StreamRequest cal;
    cal.op = BwOp::read;
    cal.load = BwLoad::cached;
    cal.buffer_bytes = 16ull << 20;
    cal.passes = 1;
    cal.repeats = 1;
    try {
      c.k.stream(cal);  // the first call builds the program (seconds on PoCL): not timed
      // The rate the bytes a launch moves add, not the call's: a Vulkan call spends ~5 ms on
      // the host around one 16 MiB read (dispatch round trips, the check), which reads as 2.9
      // GB/s on an H200, and the planner, which scales a rate by the ~8 GB a launch moves,
      // would skip every point of the read curve. The same buffer read 64 times against once
      // gives the part that grows with the bytes; never above the rate inside the launch (GPU
      // timestamps), which the host clock cannot beat.
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
  // A slow device (a CPU through PoCL: a few GB/s) cannot afford 2 points per doubling in
  // its budget and still reach device memory: setup and launches cost ~0.25 s a point, so it
  // gets one point per doubling (the rate is the calibration's or the previous curve's).
  int ppd = c.opt.points_per_doubling;
  const bool slow = slow_device(c);  // known from here on: the calibration is done
  if (!c.opt.points_per_doubling_set && slow) ppd = 1;
  // --quick's 20 s are sized for a GPU; a CPU through PoCL gets twice that: in 20 s (1.7 s a
  // curve) a 2-core CPU's read curve stops at 128 MiB, short of the memory plateau that
  // tells where its memory starts.
  if (c.opt.quick && !c.opt.budget_set && slow) c.budget_seconds = 2 * c.opt.budget_seconds;
  // Cached points move 8 GB a launch, enough to dwarf a GPU's launch; a CPU's move 1 GB
  // (10-20 ms a launch at its cache speed, far above the event clock's resolution). With 8
  // GB a slow device spends a curve's share on its first points: a 16 KiB write at 9 GB/s,
  // its passes planned at the previous curve's 58 GB/s, can take a whole 5 s share.
  const uint64_t in_cache_target = slow ? kQuickMemoryTargetBytes : kInCacheTargetBytes;
  std::vector<uint64_t> grid = log_spaced_footprints(lo, std::max(lo, hi), ppd, chunk);
  if (c.opt.large_bytes > hi) grid.push_back(c.opt.large_bytes * (op == BwOp::copy ? 2 : 1));
  const std::optional<uint64_t> free = c.dev.free_memory();
  // This curve's share of the probe's footprint budget (gpudissect/budget.hpp). On a slow
  // device whose memory is not known yet, the read curve (the first) gets two shares: it
  // must reach two doublings into memory for the others to know where memory starts.
  double share = budget_share(kFootprintShare * c.budget_seconds, c.footprint_spent,
                              std::max(1, c.footprint_curves_left));
  if (slow && !c.memory_known && op == BwOp::read && load == BwLoad::cached && !v.flat)
    share = std::min(2 * share, kFootprintShare * c.budget_seconds - c.footprint_spent);
  SweepPlanner plan(share);
  if (c.rate) plan.assume_rate(*c.rate, c.launch_rate);
  int n = 0;
  std::string past_memory;  // why the points left are not measured, once memory is read
  for (uint64_t fp : grid) {
    if (c.stop) break;
    if (!past_memory.empty()) {
      insert_skipped(curve, double(fp), past_memory);
      continue;
    }
    c.progress.time_left("bandwidth", std::max(0.0, c.budget_seconds - c.footprint_spent -
                                                        plan.spent() - c.other_spent));
    c.progress.step("bandwidth", name, ++n, int(grid.size()), fp_label(double(fp)));
    const uint64_t buffer = op == BwOp::copy ? fp / 2 : fp;
    {
      // Skip this point (and every larger one) when even its planned launches would take
      // the curve past its budget at the speed seen so far.
      const StreamLayout l0 = v.flat ? stream_layout_flat(buffer, chunk)
                                     : stream_layout(buffer, uint64_t(c.k.stream_blocks()), chunk);
      const uint64_t per_pass0 = std::max<uint64_t>(1, stream_traffic(op, l0, 1).total());
      const uint64_t target0 = stream_footprint(op, l0) <= 2 * l2
                                   ? in_cache_target
                                   : (c.opt.quick ? kQuickMemoryTargetBytes : kMemoryTargetBytes);
      const int points_left = int(grid.size()) - n + 1;
      const double bytes0 =
          double(plan.passes(target0, per_pass0, points_left, c.opt.repeats + 1)) *
          double(per_pass0);
      // The largest regular footprint (the device-memory figure) is kept in the budget:
      // smaller points give way to it. Not on a slow device while where its memory starts
      // is the API's word only: there the top is 8x a cache size a VM may not get (a CPU's
      // 480 MiB L3, 3.75 GiB reads that took the whole budget), so the sweep runs in order
      // and ends where the curve itself reaches device memory (adopt_memory_plateau).
      uint64_t top = 0;
      for (uint64_t g : grid)
        if (g <= std::max(lo, hi)) top = std::max(top, g);
      if (slow && !c.memory_known && !v.flat) top = 0;
      BudgetVerdict bv;
      if (fp < top) {
        const uint64_t tbuf = op == BwOp::copy ? top / 2 : top;
        const StreamLayout lt = v.flat ? stream_layout_flat(tbuf, chunk)
                                       : stream_layout(tbuf, uint64_t(c.k.stream_blocks()), chunk);
        const uint64_t per_pass_t = std::max<uint64_t>(1, stream_traffic(op, lt, 1).total());
        const uint64_t target_t =
            stream_footprint(op, lt) <= 2 * l2
                ? in_cache_target
                : (c.opt.quick ? kQuickMemoryTargetBytes : kMemoryTargetBytes);
        double bytes_t =
            double(plan.passes(target_t, per_pass_t, 1, c.opt.repeats + 1)) * double(per_pass_t);
        // The planner times the top at the rate seen so far, a cache's on the way up; on a
        // slow device it is kept at the memory rate the last curve saw there instead:
        // planned at its caches' 50 GB/s, a CPU's 512 MiB write point runs at 17 and takes
        // the budget of every point above 128 MiB.
        if (slow && c.memory_rate && plan.launch_rate() && *plan.launch_rate() > *c.memory_rate)
          bytes_t *= *plan.launch_rate() / *c.memory_rate;
        bv = plan.admit_keeping(bytes0, c.opt.repeats + 1, bytes_t, c.opt.repeats + 1, double(fp),
                                double(top));
      } else {
        bv = plan.admit(bytes0, c.opt.repeats + 1, double(fp));
      }
      if (!bv.run) {
        insert_skipped(curve, double(fp), bv.reason);
        continue;
      }
    }
    // Without a free-memory figure (OpenCL), the device's memory size bounds the footprint:
    // PoCL's 5.5 GiB "device" is the host's RAM, and an 8 GiB copy there pages (1.2 GB/s
    // against the 5 GB/s plateau below it, and the summary took that largest point).
    if (!free && c.info.memory_bytes && double(fp) > 0.75 * double(*c.info.memory_bytes)) {
      insert_skipped(
          curve, double(fp),
          "footprint " + format_bytes(double(fp)) + " exceeds 75% of the device memory (" +
              format_bytes(double(*c.info.memory_bytes)) + ") and its free part is unknown");
      continue;
    }
    if (free && double(fp) > 0.9 * double(*free)) {
      insert_skipped(curve, double(fp),
                     "footprint " + format_bytes(double(fp)) +
                         " exceeds 90% of the free device memory (" + format_bytes(double(*free)) +
                         ")");
      continue;
    }
    guarded_point(curve, name, double(fp), [&] {
      StreamRequest r;
      r.op = op;
      r.load = load;
      r.streaming_stores = streaming;
      r.flat = v.flat;
      r.unroll = v.unroll;
      r.prefetch_256 = v.prefetch_256;
      r.threads = v.threads;
      r.buffer_bytes = buffer;
      r.repeats = c.opt.repeats;
      const StreamLayout l = v.flat ? stream_layout_flat(buffer, chunk)
                                    : stream_layout(buffer, uint64_t(c.k.stream_blocks()), chunk);
      const uint64_t per_pass = stream_traffic(op, l, 1).total();
      // Cache-resident points run long enough (~8 GB moved) to dwarf the launch; beyond the
      // L2 a few GB do, the large point moves its buffer once.
      const uint64_t target = stream_footprint(op, l) <= 2 * l2
                                  ? in_cache_target
                                  : (c.opt.quick ? kQuickMemoryTargetBytes : kMemoryTargetBytes);
      r.passes = plan.passes(target, per_pass, int(grid.size()) - n + 1, r.repeats + 1);
      const auto tp = Clock::now();
      // Repeats stop by the stopping rule: 3 launches, more (up to bandwidth.repeats) only
      // while they spread over 1 %. Each further call has its own untimed warm-up launch.
      const StoppingRule rule{std::size_t(std::min(3, c.opt.repeats)), std::size_t(c.opt.repeats),
                              0.01};
      r.repeats = int(rule.min_samples);
      StreamTiming t = c.k.stream(r);
      int launches = r.repeats + 1;
      while (t.check_error.empty() && int(t.seconds.size()) < c.opt.repeats &&
             !rule.done(t.seconds) && !c.stop) {
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
      p.x = double(stream_footprint(op, t.layout));
      if (!t.check_error.empty()) {
        p.status = "error";
        p.reason = t.check_error;
      } else {
        std::vector<double> clocks = t.clock_mhz;
        if (clocks.empty() && v.flat)
          if (const std::optional<double> m = probe_clock(c.out)) clocks.push_back(*m);
        fill_figures(p, stream_traffic(op, t.layout, r.passes), t.seconds, clocks,
                     c.info.compute_units);
      }
      insert_sorted(curve, std::move(p));
    });
    if (!v.flat && !c.memory_known) adopt_memory_plateau(c, name, curve);
    if (c.memory_curve == name && c.out.last_cache_bytes) {
      // This curve showed where memory starts: its points past 4x the last cache are the
      // figure; larger ones would read the same plateau again.
      const double from = 4.0 * double(*c.out.last_cache_bytes);
      for (const BandwidthPoint& q : curve.points)
        if (q.status == "ok" && q.x >= from)
          past_memory = "past device memory's plateau, which this curve reached at " +
                        format_bytes(q.x) + " (" + c.out.last_cache_source + ")";
    }
  }
  for (const BandwidthPoint& q : curve.points)
    if (q.status == "ok" && q.gbps && q.x >= 4.0 * double(c.info.l2_bytes.value_or(0)) &&
        c.info.l2_bytes) {
      c.memory_rate = q.gbps->median * 1e9;
      // A curve that reached past 4x the API's cache without a plateau below it: the API's
      // size stands, and later curves keep their largest point in budget again (otherwise
      // a slow device's write curves, swept in order, have no device-memory point left).
      if (!v.flat) c.memory_known = true;
    }
  assign_bandwidth_levels(curve, load == BwLoad::l2_only || load == BwLoad::no_allocate ? 2 : 1,
                          c.info.l2_bytes);
  // The device-memory plateau is read where the summary's figure comes from (past 4x the
  // L2, make_figures) when it has points there: below, a level found late can still hold
  // partly cached footprints (PoCL's copy: "device memory 5.4 GB/s" from 32-64 MiB points
  // against 2.0 at 128 MiB in the table).
  if (!curve.levels.empty() && curve.levels.back().name == "device memory") {
    std::vector<double> g;
    for (const BandwidthPoint& p : curve.points)
      if (p.status == "ok" && p.gbps && p.x >= 4.0 * double(l2)) g.push_back(p.gbps->median);
    if (!g.empty()) curve.levels.back().gbps = median(g);
  }
  // A flat sweep starts past 2x the L2: its one plateau is device memory, not "L1".
  if (v.flat)
    for (BandwidthLevel& l : curve.levels) l.name = "device memory";
  if (c.stop) curve.status = {"interrupted", "stopped by the user before the sweep finished"};
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

void scaling_curve(Ctx& c, const std::string& name, BwLoad load, bool dram) {
  BandwidthCurve& curve = c.out.scaling[name];
  curve.x_unit = "active_sms";
  const auto t0 = Clock::now();
  curve.timed_instruction = c.k.instruction(std::string("scale.") + to_string(load));
  const int sms = c.info.compute_units;
  std::vector<int> counts;
  for (int k = 1; k < sms; k = k < 8 ? k * 2 : k + std::max(8, sms / 10)) counts.push_back(k);
  counts.push_back(sms);
  if (c.opt.quick && counts.size() > 4) counts = {1, std::max(1, sms / 2), sms};
  int n = 0;
  for (int k : counts) {
    if (c.stop) break;
    c.progress.step("bandwidth", "scaling " + name, ++n, int(counts.size()),
                    std::to_string(k) + " SMs");
    guarded_point(curve, "scaling " + name, k, [&] {
      StreamRequest r;
      r.op = BwOp::read;
      r.load = load;
      r.blocks = k;
      r.repeats = std::min(c.opt.repeats, 3);
      const uint64_t chunk = c.k.stream_chunk_bytes(r);
      if (dram) {
        // Each SM streams its own 32 MiB once, from memory: the caches are flushed before
        // every launch so even one SM's 32 MiB is not found in the L2.
        r.buffer_bytes = uint64_t(k) * (c.opt.quick ? 4ull << 20 : 32ull << 20);
        r.passes = 1;
        r.flush_l2 = true;
      } else {
        // A region well inside the L2, re-read: the more SMs, the more passes, so each
        // launch lasts about as long.
        r.buffer_bytes = std::min<uint64_t>(c.info.l2_bytes.value_or(8u << 20) / 4, 16ull << 20);
        r.passes = uint64_t(4) * k;
      }
      r.buffer_bytes = std::max(r.buffer_bytes, chunk * uint64_t(k));
      const StreamTiming t = c.k.stream(r);
      BandwidthPoint p;
      p.x = k;
      const int used = t.distinct_sms ? t.distinct_sms : k;
      if (!t.check_error.empty()) {
        p.status = "error";
        p.reason = t.check_error;
      } else {
        fill_figures(p, stream_traffic(BwOp::read, t.layout, r.passes), t.seconds, t.clock_mhz,
                     used);
        if (t.distinct_sms && t.distinct_sms != k)
          p.reason =
              std::to_string(k) + " blocks ran on " + std::to_string(t.distinct_sms) + " SMs";
      }
      insert_sorted(curve, std::move(p));
    });
  }
  // Where the shared level saturates: the fewest SMs reaching 90% of the best.
  if (const BandwidthPoint* best = best_point(curve, 0, 1e9)) {
    const BandwidthPoint* first = nullptr;
    for (const BandwidthPoint& p : curve.points)
      if (p.gbps && p.gbps->median >= 0.9 * best->gbps->median) {
        first = &p;
        break;
      }
    const BandwidthPoint* one = best_point(curve, 1, 1);
    std::ostringstream note;
    if (one && one->bytes_per_clk_sm)
      note << "one SM: " << format_fixed(one->gbps->median, 1) << " GB/s ("
           << format_fixed(one->bytes_per_clk_sm->median, 1) << " B/clk); ";
    note << "90% of the best (" << format_fixed(best->gbps->median, 0) << " GB/s) from "
         << format_fixed(first->x, 0) << " SMs";
    curve.note = note.str();
  }
  if (c.stop) curve.status = {"interrupted", "stopped by the user before the sweep finished"};
  curve.wall_seconds = seconds_since(t0);
  c.progress.note("bandwidth scaling " + name + ": " + curve.note);
}

void shared_curves(Ctx& c) {
  const Support s = c.k.supports_shared();
  for (uint32_t width : {4u, 8u, 16u}) {
    const std::string name = std::to_string(width * 8) + "bit";
    BandwidthCurve& curve = c.out.shared[name];
    curve.x_unit = "stride";
    if (!s.ok) {
      curve.status = {"unsupported", s.reason};
      continue;
    }
    const auto t0 = Clock::now();
    curve.timed_instruction = c.k.instruction("shared." + std::to_string(width));
    std::vector<uint32_t> strides;
    for (uint32_t st = 1; st <= 32; ++st)
      if (!c.opt.quick || st == 1 || st == 2 || st == 4 || st == 32) strides.push_back(st);
    int n = 0;
    // This width's share of the budget; a stride point costs about what the last one did.
    SweepPlanner plan(kSharedShare * c.budget_seconds / 3);
    for (uint32_t st : strides) {
      if (c.stop) break;
      c.progress.step("bandwidth", "shared " + name, ++n, int(strides.size()),
                      "stride " + std::to_string(st));
      if (const BudgetVerdict bv = plan.admit(1, 1); !bv.run) {
        insert_skipped(curve, st, bv.reason);
        continue;
      }
      const PointTimer timer{plan, 1, 1};
      guarded_point(curve, "shared " + name, st, [&] {
        SharedRequest r;
        r.width_bytes = width;
        r.stride = st;
        // Stride 1 is the headline: full length and repeats. Conflicting strides run up to
        // 32x slower, so they get fewer iterations.
        r.iterations = st == 1 ? 0 : 256 * 16 / width;
        if (c.opt.quick && st != 1) r.iterations = 64;  // stride 1, the headline, stays full length
        r.repeats = st == 1 ? c.opt.repeats : 3;
        const SharedTiming t = c.k.shared(r);
        BandwidthPoint p;
        p.x = st;
        if (!t.check_error.empty()) {
          p.status = "error";
          p.reason = t.check_error;
        } else {
          fill_figures(p, {shared_bytes(t.layout), 0}, t.seconds, t.clock_mhz,
                       c.info.compute_units);
          if (p.bytes_per_clk_sm)
            if (std::string why = shared_plausibility(p.bytes_per_clk_sm->median); !why.empty()) {
              p.status = "error";
              p.reason = why;
            }
        }
        insert_sorted(curve, std::move(p));
      });
    }
    curve.wall_seconds = seconds_since(t0);
    c.other_spent += curve.wall_seconds;
    if (const BandwidthPoint* p = best_point(curve, 1, 1); p && p->bytes_per_clk_sm)
      c.progress.note("bandwidth shared " + name + ": stride 1 " +
                      format_fixed(p->gbps->median, 0) + " GB/s, " +
                      format_fixed(p->bytes_per_clk_sm->median, 1) + " B/clk/SM" +
                      (curve.timed_instruction ? " (" + *curve.timed_instruction + ")" : ""));
  }
}

void constant_point(Ctx& c) {
  BandwidthCurve& curve = c.out.other["constant_broadcast"];
  curve.x_unit = "none";
  const Support s = c.k.supports_constant();
  if (!s.ok) {
    curve.status = {"unsupported", s.reason};
    return;
  }
  const auto t0 = Clock::now();
  curve.timed_instruction = c.k.instruction("constant");
  curve.note = "bytes delivered to registers: every thread of a warp reads the same word";
  guarded_point(curve, "constant", 0, [&] {
    const ConstantTiming t = c.k.constant(c.opt.repeats);
    BandwidthPoint p;
    if (!t.check_error.empty()) {
      p.status = "error";
      p.reason = t.check_error;
    } else {
      fill_figures(p, {t.bytes_delivered, 0}, t.seconds, t.clock_mhz, c.info.compute_units);
    }
    insert_sorted(curve, std::move(p));
  });
  curve.wall_seconds = seconds_since(t0);
}

void host_curves(Ctx& c) {
  // Pageable transfers are the CPU's copies: the run's background compiles (HeadStart) would
  // take its cores and memory bandwidth from them, so they finish first.
  if (const double waited = HeadStart::wait_for_current(); waited > 0.05)
    c.progress.note("bandwidth host: waited " + format_fixed(waited, 1) +
                    " s for the background kernel compiles to end");
  const std::vector<uint64_t> sizes = host_transfer_sizes(c.opt.quick, c.opt.host_max_bytes);
  for (bool pinned : {true, false})
    for (HostDir d : {HostDir::to_device, HostDir::to_host, HostDir::both}) {
      const std::string name = to_string(d) + (pinned ? "_pinned" : "_pageable");
      BandwidthCurve& curve = c.out.host[name];
      curve.x_unit = "transfer_bytes";
      const Support s = c.k.supports_host(d, pinned);
      if (!s.ok) {
        curve.status = {"unsupported", s.reason};
        continue;
      }
      const auto t0 = Clock::now();
      int n = 0;
      // Six curves share the host part of the budget.
      SweepPlanner plan(kHostShare * c.budget_seconds / 6);
      for (uint64_t b : sizes) {
        if (c.stop) break;
        c.progress.step("bandwidth", "host " + name, ++n, int(sizes.size()), fp_label(double(b)));
        const int launches = b >= (256ull << 20) ? 3
                             : b <= (1ull << 20) ? 2 * c.opt.repeats
                                                 : c.opt.repeats;
        if (const BudgetVerdict bv = plan.admit(double(b), launches); !bv.run) {
          insert_skipped(curve, double(b), bv.reason);
          continue;
        }
        const PointTimer timer{plan, double(b), launches};
        guarded_point(curve, "host " + name, double(b), [&] {
          HostRequest r;
          r.dir = d;
          r.pinned = pinned;
          r.bytes = b;
          r.repeats = b >= (256ull << 20) ? 3
                      : b <= (1ull << 20) ? 2 * c.opt.repeats
                                          : c.opt.repeats;
          const HostTiming t = c.k.host(r);
          if (!t.note.empty()) curve.note = t.note;
          BandwidthPoint p;
          p.x = double(b);
          if (!t.check_error.empty()) {
            p.status = "error";
            p.reason = t.check_error;
          } else {
            const Traffic tr = d == HostDir::to_device ? Traffic{b, 0}
                               : d == HostDir::to_host ? Traffic{0, b}
                                                       : Traffic{b, b};
            fill_figures(p, tr, t.seconds, {}, 0);
            if (pinned && d == HostDir::to_device && b == 4096 && p.seconds) {
              Summary us = *p.seconds;
              for (double* v : {&us.median, &us.q1, &us.q3, &us.min, &us.max}) *v *= 1e6;
              c.out.host_latency_us = us;
            }
          }
          insert_sorted(curve, std::move(p));
        });
      }
      if (c.stop) curve.status = {"interrupted", "stopped by the user"};
      curve.wall_seconds = seconds_since(t0);
      c.other_spent += curve.wall_seconds;
      if (const BandwidthPoint* p = best_point(curve, 0, 1e30))
        c.progress.note("bandwidth host " + name + ": best " + format_fixed(p->gbps->median, 1) +
                        " GB/s at " + format_bytes(p->x));
    }
}

// Headline figures from the curves, in a fixed order.
// own_bytes: the smallest footprint at which every block of the persistent stream grid
// reads chunks of its own (blocks x chunk; 528 x 16 KiB on an H200).
void make_figures(BandwidthProbeResult& out, const DeviceInfo& info,
                  const std::map<std::string, double>& own_bytes) {
  out.figures.clear();
  const double l2 = double(info.l2_bytes.value_or(0));
  auto level_best = [&](const std::string& curve, const std::string& level,
                        const std::string& fig) {
    auto it = out.footprint.find(curve);
    if (it == out.footprint.end()) return;
    const BandwidthCurve& c = it->second;
    for (const BandwidthLevel& l : c.levels)
      if (l.name == level) {
        // The level's best point: its points lie from the previous capacity to its own.
        double lo = 0, hi = l.capacity_lo_bytes ? double(*l.capacity_lo_bytes) : 1e30;
        for (const BandwidthLevel& prev : c.levels) {
          if (&prev == &l) break;
          if (prev.capacity_hi_bytes) lo = double(*prev.capacity_hi_bytes);
        }
        const BandwidthPoint* p = best_point(c, lo, hi);
        if (p) add_figure(out, fig, c, p, curve + " at " + format_bytes(p->x));
        return;
      }
  };
  level_best("read", "L1", "L1 read");
  // A curve too noisy for its first plateau to be named still has a best read: say which.
  if (out.figures.empty())
    if (auto it = out.footprint.find("read"); it != out.footprint.end())
      if (const BandwidthPoint* p = best_point(it->second, 0, 1e30))
        add_figure(out, "read, best footprint (no L1 plateau found)", it->second, p,
                   "read at " + format_bytes(p->x));
  if (l2 > 0) {
    // The L2 figures come from the read_l2* curves (loads that skip L1), where every block
    // reads data of its own, spread over all slices, and the whole footprint fits the near
    // partition: from blocks x chunk (below it many SMs re-read the same few lines, whose
    // slices are hot or idle by the luck of the address hash: 9-18 TB/s point to point) to
    // half the L2. "L2 read": the best such point of any variant; "plateau median": the
    // median point of the variant with the best median.
    const BandwidthPoint *best = nullptr, *best_mid = nullptr, *shared = nullptr;
    const BandwidthCurve *best_c = nullptr, *mid_c = nullptr, *shared_c = nullptr;
    std::string best_name, mid_name, shared_name, mid_where;
    for (const auto& [name, c] : out.footprint) {
      if (name.rfind("read_l2", 0) != 0) continue;
      auto o = own_bytes.find(name);
      if (o == own_bytes.end()) continue;
      const double own = o->second;
      std::vector<const BandwidthPoint*> in;
      for (const BandwidthPoint& q : c.points)
        if (q.status == "ok" && q.gbps && q.x >= own && q.x <= l2 / 2) in.push_back(&q);
      if (!in.empty()) {
        std::sort(in.begin(), in.end(),
                  [](auto* a, auto* b) { return a->gbps->median < b->gbps->median; });
        const BandwidthPoint* mid = in[in.size() / 2];
        if (!best || in.back()->gbps->median > best->gbps->median) {
          best = in.back();
          best_c = &c;
          best_name = name;
        }
        if (!best_mid || mid->gbps->median > best_mid->gbps->median) {
          best_mid = mid;
          mid_c = &c;
          mid_name = name;
          mid_where = name + " plateau " + format_bytes(own) + "-" + format_bytes(l2 / 2) +
                      ", median point " + format_bytes(mid->x) + " of " + std::to_string(in.size());
        }
      }
      if (const BandwidthPoint* p = best_point(c, 0, l2);
          p && (!shared || p->gbps->median > shared->gbps->median)) {
        shared = p;
        shared_c = &c;
        shared_name = name;
      }
    }
    if (best)
      add_figure(out, "L2 read", *best_c, best,
                 best_name + " at " + format_bytes(best->x) + ", every block reads its own data");
    if (best_mid) add_figure(out, "L2 read, plateau median", *mid_c, best_mid, mid_where);
    if (shared)
      add_figure(out, "L2 read, best footprint", *shared_c, shared,
                 shared_name + " at " + format_bytes(shared->x) + ", lines may be shared by SMs");
  }
  for (const std::string op : {"read", "write", "copy"}) {
    // Device memory: each variant's largest footprint, well past the L2 (its largest stable
    // one: the CPU VM's non-temporal write read 42 GB/s +-23 % at 512 MiB and 48.5 +-1 % at
    // 256 MiB); the best variant.
    const BandwidthPoint* p = nullptr;
    const BandwidthCurve* from = nullptr;
    std::string where;
    for (const auto& [name, curve] : out.footprint) {
      // Not the read-only or image paths: a texture unit's rate is not the memory's (PoCL's
      // image reads ran at 4.8 GB/s against 20 for plain loads, and were the only read
      // curve to reach memory in one --quick run).
      if (name.rfind(op, 0) != 0 || name.find("readonly") != std::string::npos ||
          name.find("image") != std::string::npos || name == "read_l2" || l2 <= 0)
        continue;
      const BandwidthPoint* last = nullptr;
      const BandwidthPoint* last_stable = nullptr;
      for (const BandwidthPoint& q : curve.points)
        if (q.status == "ok" && q.gbps && q.x >= 4 * l2) {
          last = &q;
          if (!is_unstable(*q.gbps)) last_stable = &q;
        }
      if (last_stable) last = last_stable;
      if (last && (!p || last->gbps->median > p->gbps->median)) {
        p = last;
        from = &curve;
        where = name + " at " + format_bytes(last->x);
      }
    }
    if (p) add_figure(out, "device memory " + op, *from, p, where);
  }
  if (auto it = out.shared.find("128bit"); it != out.shared.end())
    add_figure(out, "shared 128-bit", it->second, best_point(it->second, 1, 1), "stride 1");
  if (auto it = out.other.find("constant_broadcast"); it != out.other.end())
    add_figure(out, "constant broadcast", it->second, best_point(it->second, 0, 0),
               "uniform index");
  for (const char* h :
       {"h2d_pinned", "d2h_pinned", "both_pinned", "h2d_pageable", "d2h_pageable"}) {
    auto it = out.host.find(h);
    if (it == out.host.end() || it->second.points.empty()) continue;
    const BandwidthPoint* p = best_point(it->second, 0, 1e30);
    std::string n = h;
    n = (n.rfind("h2d", 0) == 0   ? "host->device "
         : n.rfind("d2h", 0) == 0 ? "device->host "
                                  : "both ways ") +
        n.substr(n.find('_') + 1);
    if (p) add_figure(out, n, it->second, p, std::string(h) + " at " + format_bytes(p->x));
  }
}

}  // namespace

BandwidthOptions parse_bandwidth_options(const std::map<std::string, std::string>& kv) {
  BandwidthOptions o;
  for (const auto& [k, v] : kv) {
    if (k == "quick")
      o.quick = truthy(v);
    else if (k == "points_per_doubling") {
      o.points_per_doubling = int_option(k, v, 1, 16);
      o.points_per_doubling_set = true;
    } else if (k == "repeats")
      o.repeats = int_option(k, v, 1, 50);
    else if (k == "min_footprint")
      o.min_footprint = bytes_option(k, v);
    else if (k == "max_footprint")
      o.max_footprint = bytes_option(k, v);
    else if (k == "large")
      o.large_bytes = v == "0" ? 0 : bytes_option(k, v);  // 0: no large point
    else if (k == "host_max")
      o.host_max_bytes = bytes_option(k, v);
    else if (k == "budget") {
      o.budget_seconds = int_option(k, v, 1, 100000);
      o.budget_set = true;
    } else if (k == "parts") {
      o.parts.clear();
      std::stringstream ss(v);
      std::string part;
      while (std::getline(ss, part, ',')) {
        if (part != "footprint" && part != "scaling" && part != "shared" && part != "constant" &&
            part != "host")
          throw std::invalid_argument("bandwidth option 'parts': unknown part '" + part +
                                      "' (footprint, scaling, shared, constant, host)");
        o.parts.insert(part);
      }
    } else {
      throw std::invalid_argument("unknown bandwidth option '" + k +
                                  "' (quick, points_per_doubling, repeats, min_footprint, "
                                  "max_footprint, large, host_max, budget, parts)");
    }
  }
  if (o.quick && !kv.count("large")) o.large_bytes = 0;
  if (o.quick && !kv.count("repeats")) o.repeats = 3;
  if (o.quick && !kv.count("budget")) o.budget_seconds = 20;
  return o;
}

namespace {

// " (2)", " (3)" on names met again in one curve.
void dedupe_level_names(std::vector<BandwidthLevel>& levels) {
  std::map<std::string, int> seen;
  for (BandwidthLevel& l : levels) {
    const int n = ++seen[l.name];
    if (n > 1) l.name += " (" + std::to_string(n) + ")";
  }
}

bool starts_with(const std::string& s, const char* p) { return s.rfind(p, 0) == 0; }

}  // namespace

LastCache last_cache(std::optional<uint64_t> api_bytes, const std::vector<Level>* levels) {
  LastCache api{api_bytes, api_bytes ? "API" : ""};
  if (!levels || levels->size() < 2) return api;
  const Level& memory = levels->back();
  const Level& cache = (*levels)[levels->size() - 2];
  if (memory.capacity_bytes || !cache.capacity_hi_bytes) return api;  // memory not reached
  if (memory.confidence < 0.5 || cache.confidence < 0.5) return api;
  const uint64_t edge = *cache.capacity_hi_bytes;
  if (api_bytes && double(edge) >= 0.5 * double(*api_bytes)) return api;
  // Nor far below it (under 1/8, kApiCacheShare, as for a bandwidth curve's plateau): a CPU's
  // map can step where its 4 KiB pages outrun the TLB (4.2 MiB on a 2-vCPU VM) while its
  // reads run at cache speed to 64 MiB.
  if (api_bytes && double(edge) < double(*api_bytes) / kApiCacheShare) return api;
  LastCache measured{edge, "the latency map's last cache (" + cache.name + ", edge at " +
                               format_bytes(double(edge)) + ")"};
  if (api_bytes)
    measured.source += ": the API's " + format_bytes(double(*api_bytes)) +
                       " is not what this device's loads see (its map reached device memory "
                       "below half of it)";
  return measured;
}

void assign_bandwidth_levels(BandwidthCurve& curve, int first_cache_level,
                             std::optional<uint64_t> l2_bytes) {
  curve.levels.clear();
  std::vector<CurvePoint> pts;
  std::vector<const BandwidthPoint*> src;
  for (const BandwidthPoint& p : curve.points) {
    if (p.status != "ok" || !p.gbps || p.gbps->median <= 0) continue;
    // Time per byte (ps/B) rises with footprint as latency does; the spread carries over.
    pts.push_back({p.x, 1000.0 / p.gbps->median, p.gbps->relative_spread()});
    src.push_back(&p);
  }
  if (pts.empty()) return;
  LevelOptions lo;
  lo.min_relative_step = 0.15;  // bandwidth wobbles more than latency within a level
  const std::vector<DetectedLevel> found = detect_levels(pts, lo);
  const bool reaches_memory =
      found.size() >= 2 && l2_bytes && pts.back().footprint_bytes >= 2.0 * double(*l2_bytes);
  for (std::size_t k = 0; k < found.size(); ++k) {
    const DetectedLevel& d = found[k];
    BandwidthLevel l;
    const bool last = k + 1 == found.size();
    // One L1 (where the loads go through it), then the L2: a GPU's API reports one L2 and
    // no further cache, so later plateaus are parts of it or device memory, never "L3".
    l.name = last && reaches_memory             ? "device memory"
             : k == 0 && first_cache_level == 1 ? "L1"
                                                : "L2";
    if (d.capacity_lo && d.capacity_hi) {
      l.capacity_lo_bytes = uint64_t(*d.capacity_lo);
      l.capacity_hi_bytes = uint64_t(*d.capacity_hi);
    }
    std::vector<double> g, b;
    for (std::size_t i = d.first; i <= d.last && i < src.size(); ++i) {
      g.push_back(src[i]->gbps->median);
      if (src[i]->bytes_per_clk_sm) b.push_back(src[i]->bytes_per_clk_sm->median);
    }
    l.gbps = median(g);
    if (!b.empty()) l.bytes_per_clk_sm = median(b);
    l.confidence = d.confidence;
    curve.levels.push_back(std::move(l));
  }
  // Levels past L1 that end within the reported L2 are parts of it (Hopper's near and far
  // partitions), as in the latency probe.
  if (!l2_bytes) return;
  const std::size_t begin = first_cache_level == 1 ? 1 : 0;
  const std::size_t end = curve.levels.size() - (reaches_memory ? 1 : 0);
  std::vector<std::size_t> parts;
  for (std::size_t k = begin; k < end; ++k)
    if (curve.levels[k].capacity_lo_bytes &&
        double(*curve.levels[k].capacity_lo_bytes) <= 1.25 * double(*l2_bytes))
      parts.push_back(k);
  if (parts.size() == 2) {
    curve.levels[parts[0]].name = "L2 near";
    curve.levels[parts[1]].name = "L2 far";
  }
  // The API reports one L2 and nothing beyond it: a plateau that ends past 1.25x the L2 is
  // device memory (a step inside it, e.g. DRAM pages), never an "L3".
  for (std::size_t k = begin; k < end; ++k)
    if (curve.levels[k].capacity_lo_bytes &&
        double(*curve.levels[k].capacity_lo_bytes) > 1.25 * double(*l2_bytes))
      curve.levels[k].name = "device memory";
  dedupe_level_names(curve.levels);
}

void name_levels_from_latency(BandwidthProbeResult& bw, const LatencyProbeResult& latency,
                              std::optional<uint64_t> last_cache_bytes) {
  auto path = latency.paths.find("global");
  if (path == latency.paths.end()) return;
  struct Cache {
    std::string name;
    double bytes;  // top of the capacity interval
    bool l1;
  };
  std::vector<Cache> caches;
  const std::vector<Level>& levels = path->second.levels;
  for (const Level& l : levels) {
    const std::optional<uint64_t> top =
        l.capacity_hi_bytes ? l.capacity_hi_bytes : l.capacity_bytes;
    if (!top || l.name == "device memory") continue;
    caches.push_back({l.name, double(*top), starts_with(l.name, "L1")});
  }
  // A map that ends on a cache it never saw the end of (no capacity, not "device memory":
  // the CPU VM's chase stopped in its L3) gets that cache's end from the bandwidth probe.
  if (!caches.empty() && !levels.empty() && last_cache_bytes) {
    const Level& open = levels.back();
    if (!open.capacity_bytes && !open.capacity_hi_bytes && open.name != "device memory" &&
        double(*last_cache_bytes) > 1.1 * caches.back().bytes)
      caches.push_back({open.name, double(*last_cache_bytes), false});
  }
  if (caches.empty()) return;
  for (auto& [name, curve] : bw.footprint) {
    if (curve.levels.empty()) continue;
    int sms = 0;
    double first_x = -1, last_x = 0;
    for (const BandwidthPoint& p : curve.points)
      if (p.status == "ok" && p.gbps) {
        if (first_x < 0) first_x = p.x;
        last_x = p.x;
        sms = std::max(sms, p.sms);
      }
    auto size_of = [&](const Cache& c) { return c.l1 ? c.bytes * std::max(1, sms) : c.bytes; };
    const bool skips_l1 =
        name.find("_l2") != std::string::npos || name.find("bulk") != std::string::npos;
    const bool stores = starts_with(name, "write") || starts_with(name, "copy");
    const Cache* l1 = nullptr;
    for (const Cache& c : caches)
      if (c.l1) l1 = &c;
    bool l1_step = false;
    if (l1)
      for (const BandwidthLevel& l : curve.levels)
        if (l.capacity_lo_bytes && double(*l.capacity_lo_bytes) <= 1.1 * size_of(*l1))
          l1_step = true;
    const bool allow_l1 = !skips_l1 && (!stores || l1_step);
    // The cache level holding footprint x, nullptr past the last cache.
    auto level_at = [&](double x) -> const Cache* {
      for (const Cache& c : caches)
        if ((allow_l1 || !c.l1) && x <= 1.1 * size_of(c)) return &c;
      return nullptr;
    };
    const double last_cache = caches.empty() ? 0 : size_of(caches.back());
    for (std::size_t k = 0; k < curve.levels.size(); ++k) {
      BandwidthLevel& l = curve.levels[k];
      if (l.capacity_lo_bytes) {
        const Cache* c = level_at(double(*l.capacity_lo_bytes));
        l.name = c ? c->name : "device memory";
        continue;
      }
      // The last plateau: it runs to the end of the sweep.
      if (last_x > 1.1 * last_cache) {
        const Cache* from = k == 0 && first_x >= 0 ? level_at(first_x) : nullptr;
        l.name = from ? from->name + " to device memory (no step)" : "device memory";
      } else {
        const Cache* c = level_at(last_x);
        l.name = c ? c->name : "device memory";
      }
    }
    dedupe_level_names(curve.levels);
  }
  // The headline figure named after the read curve's L1 plateau follows its name.
  auto read = bw.footprint.find("read");
  bool read_has_l1 = false;
  if (read != bw.footprint.end())
    for (const BandwidthLevel& l : read->second.levels) read_has_l1 = read_has_l1 || l.name == "L1";
  for (BandwidthFigure& f : bw.figures)
    if (f.name == "L1 read" && !read_has_l1) f.name = "read, best footprint (no L1 plateau found)";
}

void device_memory_levels(BandwidthProbeResult& bw, std::optional<uint64_t> last_cache_bytes) {
  if (!last_cache_bytes) return;
  const double from = 4.0 * double(*last_cache_bytes);
  for (auto& [name, curve] : bw.footprint) {
    if (name.find("flat") != std::string::npos) continue;  // all device memory already
    std::vector<double> g;
    for (const BandwidthPoint& p : curve.points)
      if (p.status == "ok" && p.gbps && p.x >= from) g.push_back(p.gbps->median);
    if (g.empty()) continue;
    // A plateau named device memory that ends below the figures' footprints holds points a
    // cache still partly serves (the CPU VM's copy: 55 GB/s from 4 to 128 MiB, 35 past it).
    for (std::size_t k = 0; k + 1 < curve.levels.size(); ++k) {
      BandwidthLevel& l = curve.levels[k];
      if (starts_with(l.name, "device memory") && l.capacity_lo_bytes &&
          double(*l.capacity_lo_bytes) < from)
        l.name = "partly cached";
    }
    if (!curve.levels.empty() && starts_with(curve.levels.back().name, "device memory")) {
      curve.levels.back().name = "device memory";
      curve.levels.back().gbps = median(g);
      dedupe_level_names(curve.levels);
      continue;
    }
    if (!curve.levels.empty()) {
      // "L2 to device memory (no step)": the step is now the one past the last cache, so
      // the plateau keeps its cache's name and its points below the figure's footprints.
      BandwidthLevel& last = curve.levels.back();
      const std::string no_step = " to device memory (no step)";
      if (last.name.size() > no_step.size() &&
          last.name.compare(last.name.size() - no_step.size(), no_step.size(), no_step) == 0) {
        last.name.resize(last.name.size() - no_step.size());
        std::vector<double> below;
        for (const BandwidthPoint& p : curve.points)
          if (p.status == "ok" && p.gbps && p.x < from) below.push_back(p.gbps->median);
        if (!below.empty()) last.gbps = median(below);
      }
    }
    BandwidthLevel memory;
    memory.name = "device memory";
    memory.gbps = median(g);
    memory.confidence = 0.5;  // from where memory starts, not from a step on this curve
    curve.levels.push_back(std::move(memory));
    dedupe_level_names(curve.levels);
  }
}

void run_bandwidth(Device& dev, const BandwidthOptions& opt, Progress& progress,
                   const std::atomic<bool>& stop, BandwidthProbeResult& out) {
  const auto t0 = Clock::now();
  // The device as the sweeps see it: its last cache the API's, or the latency map's where
  // that contradicts the API (last_cache).
  DeviceInfo info = dev.info();
  bool memory_known_from_map = false;
  const auto type = info.extra.find("device_type");
  const bool cpu = type != info.extra.end() && type->second.find("CPU") != std::string::npos;
  {
    // Not on a CPU: its chase through 4 KiB pages steps where the TLB's reach ends, and a
    // 2-vCPU VM's map put "memory" anywhere from 4.2 to 90 MiB from one run to the next
    // while its reads ran at cache speed to 64 MiB every time (results/NOTES.md). There the
    // read curve's own plateau decides (adopt_memory_plateau).
    const std::vector<Level>* global = nullptr;
    if (opt.latency && !cpu)
      if (auto it = opt.latency->paths.find("global"); it != opt.latency->paths.end())
        global = &it->second.levels;
    const LastCache cache = last_cache(info.l2_bytes, global);
    if (cache.source != "API" && cache.bytes) {
      info.l2_bytes = cache.bytes;
      memory_known_from_map = true;
      out.last_cache_bytes = cache.bytes;
      out.last_cache_source = cache.source;
      progress.note("bandwidth: device memory past 4x " + format_bytes(double(*cache.bytes)) +
                    ", " + cache.source);
    }
  }
  out.status = {};
  out.peak_gbps_api = api_memory_peak_gbps(info);
  BandwidthKernels* k = dev.kernels<BandwidthKernels>();
  if (!k) {
    out.status = {"unsupported", "the " + info.backend + " backend has no bandwidth kernels"};
    return;
  }
  out.telemetry_before = dev.telemetry();
  Ctx c{dev, *k, opt, progress, stop, out, info};
  c.memory_known = memory_known_from_map;
  c.cpu_device = cpu;
  auto finish = [&] {
    out.clock_mhz_measured = probe_clock(out);
    if (opt.latency) name_levels_from_latency(out, *opt.latency, info.l2_bytes);
    device_memory_levels(out, info.l2_bytes);
    make_figures(out, info, c.own_bytes);
    out.telemetry_after = dev.telemetry();
    out.wall_seconds = seconds_since(t0);
  };
  try {
    if (opt.parts.count("footprint")) {
      // The curves in order; counted first so each gets its share of the time budget.
      std::vector<std::function<void()>> curves;
      curves.push_back([=, &c] { footprint_curve(c, BwOp::read, BwLoad::cached, "read"); });
      curves.push_back([=, &c] { footprint_curve(c, BwOp::write, BwLoad::cached, "write"); });
      curves.push_back(
          [=, &c] { footprint_curve(c, BwOp::write, BwLoad::cached, "write_streaming", true); });
      curves.push_back([=, &c] { footprint_curve(c, BwOp::copy, BwLoad::cached, "copy"); });
      if (k->supports(BwOp::copy, BwLoad::l2_only).ok)
        curves.push_back([=, &c] {
          footprint_curve(c, BwOp::copy, BwLoad::l2_only, "copy_l2_streaming", true);
        });
      else if (k->supports_streaming_stores().ok)
        // Where streaming stores exist without cache operators (a CPU through PoCL:
        // non-temporal stores), a plain-load copy with them: it writes lines without reading
        // them first, as the host probe's memcpy does.
        curves.push_back(
            [=, &c] { footprint_curve(c, BwOp::copy, BwLoad::cached, "copy_streaming", true); });
      // Device-memory writes and copies on non-persistent grids (what gpu-stream and
      // BabelStream run): plain or evict-first stores, copies
      // also through the read-only path. The summary keeps the best variant.
      if (info.backend == "cuda") {
        // One vector per thread is kept: 4 per thread measured 0.5 % slower on writes and
        // 4 % on copies on an H200 (results/NOTES-bandwidth.md).
        const Variant flat{true, 1};
        curves.push_back([=, &c] {
          footprint_curve(c, BwOp::write, BwLoad::cached, "write_flat", false, flat);
        });
        curves.push_back([=, &c] {
          footprint_curve(c, BwOp::write, BwLoad::cached, "write_flat_streaming", true, flat);
        });
        curves.push_back(
            [=, &c] { footprint_curve(c, BwOp::copy, BwLoad::cached, "copy_flat", false, flat); });
        curves.push_back([=, &c] {
          footprint_curve(c, BwOp::copy, BwLoad::cached, "copy_flat_streaming", true, flat);
        });
        if (k->supports(BwOp::copy, BwLoad::readonly).ok)
          curves.push_back([=, &c] {
            footprint_curve(c, BwOp::copy, BwLoad::readonly, "copy_flat_nc_streaming", true, flat);
          });
        // Loads with the L2 prefetch-size hint (.L2::256B).
        const Variant flat256{true, 1, true};
        curves.push_back([=, &c] {
          footprint_curve(c, BwOp::copy, BwLoad::cached, "copy_flat_256", false, flat256);
        });
        curves.push_back([=, &c] {
          footprint_curve(c, BwOp::copy, BwLoad::cached, "copy_flat_256_streaming", true, flat256);
        });
        // 512-thread blocks, 2 vectors per thread (16 KiB per block).
        const Variant flat512{true, 2, false, 512};
        curves.push_back([=, &c] {
          footprint_curve(c, BwOp::copy, BwLoad::cached, "copy_flat_t512x2", false, flat512);
        });
        // The copy engine both ways (global -> shared -> global), persistent grid: the
        // destination equals the source, checked word by word.
        if (k->supports(BwOp::copy, BwLoad::bulk).ok)
          curves.push_back([=, &c] { footprint_curve(c, BwOp::copy, BwLoad::bulk, "copy_bulk"); });
      }
      curves.push_back([=, &c] { footprint_curve(c, BwOp::read, BwLoad::l2_only, "read_l2"); });
      if (info.backend == "cuda") {
        // L2 reads where every block owns its data from blocks x 4 KiB on (one vector per
        // thread per chunk, 4 chunks in flight): strong .cg loads, weak loads that never
        // allocate in L1, the same with the L2 prefetch-size hint; and reads by the copy
        // engine (cp.async.bulk into shared memory).
        const Variant rot{false, 1}, rot256{false, 1, true};
        curves.push_back([=, &c] {
          footprint_curve(c, BwOp::read, BwLoad::l2_only, "read_l2_own", false, rot);
        });
        curves.push_back([=, &c] {
          footprint_curve(c, BwOp::read, BwLoad::no_allocate, "read_l2_na", false, rot);
        });
        curves.push_back([=, &c] {
          footprint_curve(c, BwOp::read, BwLoad::no_allocate, "read_l2_na_256", false, rot256);
        });
        curves.push_back([=, &c] { footprint_curve(c, BwOp::read, BwLoad::bulk, "read_bulk"); });
      }
      if (info.backend == "cuda")
        curves.push_back(
            [=, &c] { footprint_curve(c, BwOp::read, BwLoad::readonly, "read_readonly"); });
      if (k->supports(BwOp::read, BwLoad::texture).ok)
        curves.push_back(
            [=, &c] { footprint_curve(c, BwOp::read, BwLoad::texture, "read_image"); });
      c.footprint_curves_left = int(curves.size());
      for (auto& run_curve : curves) run_curve();
    }
    if (opt.parts.count("scaling") && !stop && !k->supports_scaling().ok) {
      for (const char* n : {"l2", "dram"})
        out.scaling[n].status = {"unsupported", k->supports_scaling().reason};
    } else if (opt.parts.count("scaling") && !stop) {
      if (k->supports(BwOp::read, BwLoad::l2_only).ok)
        scaling_curve(c, "l2", BwLoad::l2_only, false);
      scaling_curve(c, "dram", BwLoad::cached, true);
    }
    if (opt.parts.count("shared") && !stop) shared_curves(c);
    if (opt.parts.count("constant") && !stop) constant_point(c);
    if (opt.parts.count("host") && !stop) host_curves(c);
  } catch (const ProbeError& e) {
    out.status = {"error", e.what()};
    finish();
    throw;
  }
  if (stop) out.status = {"interrupted", "stopped by the user; what was measured is kept"};
  finish();
}

}  // namespace gd
