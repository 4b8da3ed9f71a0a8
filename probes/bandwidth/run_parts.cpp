// The parts after the footprint sweeps: SM scaling, shared memory, constant cache, host link.
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
        p.status = {StatusCode::error, t.check_error};
      } else {
        fill_figures(p, stream_traffic(BwOp::read, t.layout, r.passes), t.seconds, t.clock_mhz,
                     used);
        if (t.distinct_sms && t.distinct_sms != k)
          p.status.reason =
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
  if (c.stop)
    curve.status = {StatusCode::interrupted, "stopped by the user before the sweep finished"};
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
      curve.status = {StatusCode::unsupported, s.reason};
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
          p.status = {StatusCode::error, t.check_error};
        } else {
          fill_figures(p, {shared_bytes(t.layout), 0}, t.seconds, t.clock_mhz,
                       c.info.compute_units);
          if (p.bytes_per_clk_sm)
            if (std::string why = shared_plausibility(p.bytes_per_clk_sm->median); !why.empty()) {
              p.status = {StatusCode::error, why};
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
    curve.status = {StatusCode::unsupported, s.reason};
    return;
  }
  const auto t0 = Clock::now();
  curve.timed_instruction = c.k.instruction("constant");
  curve.note = "bytes delivered to registers: every thread of a warp reads the same word";
  guarded_point(curve, "constant", 0, [&] {
    const ConstantTiming t = c.k.constant(c.opt.repeats);
    BandwidthPoint p;
    if (!t.check_error.empty()) {
      p.status = {StatusCode::error, t.check_error};
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
        curve.status = {StatusCode::unsupported, s.reason};
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
            p.status = {StatusCode::error, t.check_error};
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
      if (c.stop) curve.status = {StatusCode::interrupted, "stopped by the user"};
      curve.wall_seconds = seconds_since(t0);
      c.other_spent += curve.wall_seconds;
      if (const BandwidthPoint* p = best_point(curve, 0, 1e30))
        c.progress.note("bandwidth host " + name + ": best " + format_fixed(p->gbps->median, 1) +
                        " GB/s at " + format_bytes(p->x));
    }
}

}  // namespace gd::bandwidth_run
