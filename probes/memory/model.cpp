#include <algorithm>
#include <cmath>
#include <numeric>

#include "gpudissect/chain.hpp"
#include "gpudissect/figure.hpp"  // Summary <-> JSON
#include "gpudissect/json_fields.hpp"
#include "gpudissect/levels.hpp"
#include "memory/memory.hpp"

namespace gd {

namespace jf = json_fields;

std::string to_string(MemLoad l) {
  switch (l) {
    case MemLoad::ca:
      return "ca";
    case MemLoad::nc:
      return "nc";
    case MemLoad::cg:
      return "cg";
    case MemLoad::constant:
      return "constant";
    case MemLoad::texture:
      return "texture";
  }
  return "?";
}

namespace {

constexpr uint64_t KiB = 1024;

}  // namespace

std::string CarveoutPoint::label() const {
  if (shared_kib < 0 && percent < 0) return "driver default";
  if (shared_kib < 0) return std::to_string(percent) + " % carveout";
  return std::to_string(shared_kib) + " KiB shared" + (preference_only ? ", preference only" : "");
}

std::string CarveoutPoint::key() const {
  if (shared_kib < 0 && percent < 0) return "default";
  if (shared_kib < 0) return std::to_string(percent) + "pct";
  return std::to_string(shared_kib) + (preference_only ? ".hint" : "");
}

std::optional<uint64_t> unified_l1_bytes(const std::string& cc) {
  // CUDA C++ Programming Guide, "Compute Capability x.y", shared memory sections: the unified
  // data cache is 128 KiB per SM on sm_70/75/86/89, 192 KiB on sm_80/87, 256 KiB on sm_90.
  if (cc == "9.0") return 256 * KiB;
  if (cc == "8.0" || cc == "8.7") return 192 * KiB;
  if (cc == "7.0" || cc == "7.2" || cc == "8.6" || cc == "8.9") return 128 * KiB;
  return std::nullopt;
}

std::vector<int> shared_splits(const std::string& cc) {
  // The shared-memory capacities each compute capability offers (Programming Guide, same
  // sections): the carveout percentage is of the largest.
  if (cc == "9.0") return {0, 8, 16, 32, 64, 100, 132, 164, 196, 228};
  if (cc == "8.0" || cc == "8.7") return {0, 8, 16, 32, 64, 100, 132, 164};
  if (cc == "8.6" || cc == "8.9") return {0, 8, 16, 32, 64, 100};
  if (cc == "7.0" || cc == "7.2") return {0, 8, 16, 32, 64, 96};
  return {};
}

constexpr uint64_t kL1Shortfall = 8 * KiB;  // see splits_for_l1

std::vector<int> splits_for_l1(const std::string& cc, uint64_t capacity, uint64_t next,
                               uint64_t slack) {
  std::vector<int> v;
  const auto unified = unified_l1_bytes(cc);
  if (!unified) return v;
  // The L1 lies in [capacity, next), and the L1 a chase can fill is the unified size less the
  // split less a shortfall: 2-7 KiB at every one of the ten splits on the H200 and H100 (221
  // KiB seen under the 32 KiB split, 186 under 64, 21.1 under 228). So the split is in
  // (unified - next - shortfall, unified - capacity].
  const double hi = static_cast<double>(*unified) - static_cast<double>(capacity) + slack;
  const double lo = static_cast<double>(*unified) - static_cast<double>(next) -
                    static_cast<double>(kL1Shortfall) - slack;
  for (int k : shared_splits(cc)) {
    const double b = static_cast<double>(k) * KiB;
    if (b > lo && b <= hi) v.push_back(k);
  }
  return v;
}

std::vector<CarveoutPoint> carveout_plan(const DeviceInfo& info, uint64_t static_shared,
                                         bool hints) {
  std::vector<CarveoutPoint> plan;
  plan.push_back({});  // the driver's own choice, what the latency probe sees
  const std::string& cc = info.compute_capability;
  const std::vector<int> splits = shared_splits(cc);
  const auto unified = unified_l1_bytes(cc);
  if (splits.empty() || !unified) {
    for (int p : {0, 25, 50, 75, 100}) {
      CarveoutPoint c;
      c.percent = p;
      plan.push_back(c);
    }
    return plan;
  }
  const int max_kib = splits.back();
  for (int k : splits) {
    CarveoutPoint c;
    c.shared_kib = k;
    // Floor: the driver rounds a preference up to the next split it has, and floor(k/max)
    // lies at most 1 % below k, above the split under it.
    c.percent = k * 100 / max_kib;
    // A block that needs k KiB (with the 1 KiB the driver reserves per block) cannot run under
    // a smaller split, so the driver must give at least k.
    const uint64_t need = static_cast<uint64_t>(k) * KiB;
    c.dynamic_shared_bytes = need > KiB + static_shared ? need - KiB - static_shared : 0;
    c.predicted_l1_bytes = *unified - need;
    if (hints && k > 0) {
      CarveoutPoint h = c;
      h.preference_only = true;
      h.dynamic_shared_bytes = 0;
      plan.push_back(h);
    }
    plan.push_back(c);
  }
  return plan;
}

std::vector<uint64_t> capacity_footprints(uint64_t lo, uint64_t hi, int per_doubling,
                                          uint64_t stride) {
  std::vector<uint64_t> v;
  if (lo == 0 || hi < lo || per_doubling < 1 || stride == 0) return v;
  const double steps = std::log2(static_cast<double>(hi) / lo) * per_doubling;
  const int n = static_cast<int>(std::ceil(steps - 1e-9));
  for (int i = 0; i <= n; ++i) {
    const double x = std::min<double>(hi, lo * std::exp2(i / static_cast<double>(per_doubling)));
    uint64_t f = static_cast<uint64_t>(std::llround(x / stride)) * stride;
    f = std::max(f, stride);
    if (v.empty() || f > v.back()) v.push_back(f);
  }
  return v;
}

std::vector<uint64_t> refine_footprints(uint64_t lo, uint64_t hi, int n, uint64_t stride,
                                        const std::vector<uint64_t>& have) {
  std::vector<uint64_t> v;
  if (hi <= lo + stride || n < 1 || stride == 0) return v;
  for (int i = 1; i <= n; ++i) {
    const double x = lo + (hi - lo) * static_cast<double>(i) / (n + 1);
    const uint64_t f = static_cast<uint64_t>(std::llround(x / stride)) * stride;
    if (f <= lo || f >= hi) continue;
    if (std::find(have.begin(), have.end(), f) != have.end()) continue;
    if (std::find(v.begin(), v.end(), f) != v.end()) continue;
    v.push_back(f);
  }
  return v;
}

std::vector<uint32_t> disjoint_chains(uint32_t lines, int warps, uint64_t seed) {
  std::vector<uint32_t> next;
  next.reserve(static_cast<std::size_t>(lines) * warps);
  for (int w = 0; w < warps; ++w) {
    const auto c = sattolo_cycle(lines, seed + static_cast<uint64_t>(w) * 0x9e3779b9ULL);
    const uint32_t base = static_cast<uint32_t>(w) * lines;
    for (uint32_t x : c) next.push_back(base + x);
  }
  return next;
}

std::vector<uint32_t> sequential_chain(uint32_t n) {
  std::vector<uint32_t> next(n);
  for (uint32_t i = 0; i < n; ++i) next[i] = i + 1 < n ? i + 1 : 0;
  return next;
}

CapacityEstimate estimate_capacity(const std::vector<MemPoint>& curve, double tolerance) {
  CapacityEstimate e;
  std::vector<const MemPoint*> pts;
  for (const auto& p : curve)
    if (p.cycles && p.status.ok()) pts.push_back(&p);
  std::sort(pts.begin(), pts.end(), [](const MemPoint* a, const MemPoint* b) {
    return a->footprint_bytes < b->footprint_bytes;
  });
  if (pts.size() < 3) {
    e.note = "fewer than 3 measured points";
    return e;
  }
  const double plateau =
      median({pts[0]->cycles->median, pts[1]->cycles->median, pts[2]->cycles->median});
  // The second and third point both well above the first: the edge lies inside the points
  // the plateau would be taken from (the sweep starts at the level's end).
  const double first = pts[0]->cycles->median;
  if (pts[1]->cycles->median > first * (1 + tolerance) &&
      pts[2]->cycles->median > first * (1 + tolerance)) {
    e.note = "the curve rises from its first points: the sweep starts past the level";
    return e;
  }
  e.plateau_cycles = plateau;
  const double limit = plateau * (1 + tolerance);
  for (std::size_t i = 1; i < pts.size(); ++i) {
    const bool above = pts[i]->cycles->median > limit;
    const bool next_above = i + 1 >= pts.size() || pts[i + 1]->cycles->median > limit;
    if (above && next_above) {
      if (i < 3) {
        // The edge lies inside the three points the plateau was taken from: no plateau.
        e.plateau_cycles.reset();
        e.note = "the curve rises from its first points: the sweep starts past the level";
        return e;
      }
      e.capacity_bytes = pts[i - 1]->footprint_bytes;
      e.next_bytes = pts[i]->footprint_bytes;
      std::vector<double> beyond;
      for (std::size_t k = i; k < pts.size(); ++k) beyond.push_back(pts[k]->cycles->median);
      e.beyond_cycles = median(beyond);
      return e;
    }
  }
  e.note = "the curve never left its first plateau (the level holds the largest footprint, " +
           std::to_string(pts.back()->footprint_bytes) + " bytes)";
  return e;
}

CapacityEstimate next_level(const std::vector<MemPoint>& curve, const CapacityEstimate& first,
                            double tolerance) {
  if (!first.capacity_bytes) {
    CapacityEstimate e;
    e.note = "no first edge";
    return e;
  }
  std::vector<MemPoint> rest;
  for (const auto& p : curve)
    if (p.footprint_bytes >= 2 * *first.capacity_bytes) rest.push_back(p);
  return estimate_capacity(rest, tolerance);
}

GranularityEstimate estimate_granularity(const std::vector<MemPoint>& by_stride, double tolerance) {
  GranularityEstimate g;
  std::vector<const MemPoint*> pts;
  for (const auto& p : by_stride)
    if (p.cycles && p.status.ok()) pts.push_back(&p);
  std::sort(pts.begin(), pts.end(), [](const MemPoint* a, const MemPoint* b) {
    return a->footprint_bytes < b->footprint_bytes;
  });
  if (pts.size() < 3) {
    g.note = "fewer than 3 strides measured";
    return g;
  }
  const double top =
      (pts[pts.size() - 1]->cycles->median + pts[pts.size() - 2]->cycles->median) / 2;
  const double bottom = pts.front()->cycles->median;
  g.hit_cycles = bottom;
  g.miss_cycles = top;
  // A rise under 1.5x: the smallest stride already misses on (nearly) every hop, or the walk
  // never misses; either way the stride of saturation says nothing.
  if (top < 1.5 * bottom) {
    g.note = "latency does not rise with the stride (" + std::to_string(bottom) + " -> " +
             std::to_string(top) + " cycles): every stride hits, or every stride misses";
    return g;
  }
  for (const MemPoint* p : pts)
    if (p->cycles->median >= top * (1 - tolerance)) {
      g.bytes = p->footprint_bytes;
      break;
    }
  if (g.bytes && *g.bytes == pts.front()->footprint_bytes) {
    g.note = "the smallest stride already misses on every hop";
    g.bytes.reset();
  }
  return g;
}

LineEstimate estimate_line(
    const std::vector<std::pair<uint64_t, std::optional<uint64_t>>>& by_stride) {
  LineEstimate e;
  std::vector<std::pair<uint64_t, uint64_t>> v;
  for (const auto& [s, c] : by_stride)
    if (c && *c > 0) v.push_back({s, *c});
  std::sort(v.begin(), v.end());
  if (v.size() < 2) {
    e.note = "fewer than 2 strides with a capacity";
    return e;
  }
  const double base = static_cast<double>(v.front().second);
  bool grew = false;
  for (const auto& [s, c] : v) grew = grew || c >= 1.6 * base;
  if (!grew) {
    e.note = "the capacity seen did not grow up to a " + std::to_string(v.back().first) +
             "-byte stride: lines of at least that size, or a set index that folds the larger "
             "strides onto fewer sets";
    return e;
  }
  for (const auto& [s, c] : v) {
    if (c > 1.25 * base) break;
    e.bytes = s;
  }
  // Past the line each line holds one element: the capacity doubles with each doubling of the
  // stride. A capacity off that by more than 25 % either way is no line's.
  const uint64_t line = *e.bytes;
  for (const auto& [s, c] : v) {
    if (s <= line) continue;
    const double want = base * static_cast<double>(s) / static_cast<double>(line);
    if (c < 0.8 * want || c > 1.25 * want) {
      e.bytes.reset();
      e.note = "the capacities do not follow one line size: constant up to a " +
               std::to_string(line) + "-byte stride, then " + std::to_string(c) + " bytes at " +
               std::to_string(s) + " where a " + std::to_string(line) + "-byte line gives " +
               std::to_string(static_cast<uint64_t>(want));
      return e;
    }
  }
  return e;
}

CapacityEstimate total_capacity(const MemCurve& c) {
  CapacityEstimate e = c.capacity;
  const auto n = static_cast<uint64_t>(std::max(1, c.warps));
  if (e.capacity_bytes) *e.capacity_bytes *= n;
  if (e.next_bytes) *e.next_bytes *= n;
  return e;
}

std::pair<uint64_t, uint64_t> l2_line_range(uint64_t l2_bytes, uint64_t stride) {
  const uint64_t lo = std::max<uint64_t>(l2_bytes / 4, 64 * stride);
  const uint64_t hi = std::max<uint64_t>(3 * l2_bytes / 128 * stride, 2 * lo);
  return {lo, hi};
}

std::vector<int> conflict_counts() {
  std::vector<int> v;
  for (int n = 1; n <= 16; ++n) v.push_back(n);
  for (int n : {20, 24, 28, 32, 36, 40, 48, 56, 64, 68, 72, 80, 96, 128}) v.push_back(n);
  return v;
}

WaysEstimate estimate_ways(const std::vector<MemPoint>& curve, uint64_t stride) {
  WaysEstimate w;
  const CapacityEstimate e = estimate_capacity(curve);
  if (e.capacity_bytes && stride > 0) {
    w.ways = static_cast<int>(*e.capacity_bytes / stride);
    return w;
  }
  uint64_t most = 0;
  for (const auto& p : curve) most = std::max(most, p.footprint_bytes);
  w.note = e.plateau_cycles
               ? "no conflict step up to " + std::to_string(stride ? most / stride : 0) +
                     " lines " + std::to_string(stride) +
                     " bytes apart: a hashed set index, or more ways than that"
               : e.note;
  return w;
}

PartitionVerdict partition_verdict(const std::vector<std::optional<uint64_t>>& cap) {
  PartitionVerdict v;
  if (cap.empty() || !cap[0] || *cap[0] == 0) {
    v.note = "no capacity for one warp";
    return v;
  }
  const double one = static_cast<double>(*cap[0]);
  int per_sm = 0, per_part = 0, seen = 0;
  for (std::size_t n = 1; n <= cap.size(); ++n) {
    if (!cap[n - 1]) {
      v.total_ratio.push_back(std::nullopt);
      continue;
    }
    const double ratio = static_cast<double>(n) * static_cast<double>(*cap[n - 1]) / one;
    v.total_ratio.push_back(ratio);
    if (n == 1) continue;
    ++seen;
    // Within ~25 % of 1 (a shared cache) or of n (one cache per warp's partition); the
    // refinement steps are a few %, so these bands do not overlap for n >= 2.
    if (std::abs(ratio - 1.0) <= 0.25)
      ++per_sm;
    else if (std::abs(ratio - static_cast<double>(n)) <= 0.25 * n)
      ++per_part;
  }
  if (seen == 0) {
    v.note = "only one warp count measured";
  } else if (per_sm == seen) {
    v.verdict = "per SM";
    v.note = "the capacity all warps share stays as warps are added";
  } else if (per_part == seen) {
    v.verdict = "per partition";
    v.note = "each warp keeps one warp's capacity: the total grows with the warps";
  } else {
    v.verdict = "unclear";
    v.note = "the total capacity neither stays nor grows with the warps";
  }
  return v;
}

std::vector<TlbLevel> tlb_levels(const std::vector<MemPoint>& curve) {
  std::vector<CurvePoint> pts;
  for (const MemPoint& p : curve)
    if (p.status.ok() && p.cycles && p.cycles->median > 0)
      pts.push_back({double(p.footprint_bytes), p.cycles->median,
                     (p.cycles->q3 - p.cycles->q1) / p.cycles->median});
  std::vector<TlbLevel> out;
  for (const DetectedLevel& d : detect_levels(pts)) {
    TlbLevel l;
    l.cycles = d.latency;
    if (d.capacity_lo) l.reach_lo_bytes = static_cast<uint64_t>(*d.capacity_lo);
    if (d.capacity_hi) l.reach_hi_bytes = static_cast<uint64_t>(*d.capacity_hi);
    // A miss must cost kTlbMinStep of the hit: on an H200 the chunk-mapped curve can creep
    // from 261 to 290 cycles between 4 MiB and 5 GiB (the level finder would cut it at 38-108
    // MiB, +19 cycles, 7 %), and on another machine the same creep shows in the control curve
    // instead, so it is not translation. Such a rise joins the level before it.
    if (!out.empty() && l.cycles - out.back().cycles < kTlbMinStep * out.back().cycles) {
      out.back().reach_lo_bytes = l.reach_lo_bytes;
      out.back().reach_hi_bytes = l.reach_hi_bytes;
      continue;
    }
    if (!out.empty()) l.step_cycles = l.cycles - out.back().cycles;
    out.push_back(l);
  }
  return out;
}

}  // namespace gd
