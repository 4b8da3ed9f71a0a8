// The names of a curve's plateaus: the cache levels it crossed, from the latency map where
// it ran first, and where device memory starts.
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

namespace gd {

using bandwidth_run::kApiCacheShare;

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
  // Nor far below it (under 1/8, kApiCacheShare, as for a bandwidth curve's plateau): the CPU
  // VM's map also stepped at 4.2 MiB, where its 4 KiB pages outrun the TLB, while reads ran
  // at cache speed to 64 MiB.
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
    if (!p.status.ok() || !p.gbps || p.gbps->median <= 0) continue;
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

// shape: one walk of each curve against the latency map's levels
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
      if (p.status.ok() && p.gbps) {
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
      if (p.status.ok() && p.gbps && p.x >= from) g.push_back(p.gbps->median);
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
          if (p.status.ok() && p.gbps && p.x < from) below.push_back(p.gbps->median);
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

}  // namespace gd
