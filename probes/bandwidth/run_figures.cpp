// The probe's headline figures, read from its curves.
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

// shape: the headline figures in their published order, one short block each
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
        if (q.status.ok() && q.gbps && q.x >= own && q.x <= l2 / 2) in.push_back(&q);
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
        if (q.status.ok() && q.gbps && q.x >= 4 * l2) {
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

}  // namespace gd::bandwidth_run
