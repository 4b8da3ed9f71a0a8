// The latency probe's reading of a measured curve: its levels found, named (L1, L2 near/far,
// device memory, TLB levels) and checked against the curve (level_check.hpp). The sweeps
// that measure the curve are run.cpp's.
#include <algorithm>
#include <cmath>

#include "gpudissect/level_check.hpp"
#include "gpudissect/levels.hpp"
#include "gpudissect/stats.hpp"
#include "gpudissect/units.hpp"
#include "latency/run.hpp"

namespace gd {

namespace {

// A cache the API reports as one L2 can show several latencies: Hopper and Ampere split
// the L2 into two partitions, and lines held only by the far one cost more. Levels past
// L1 whose capacity ends within the reported L2 size are parts of that L2, not an L3.
void name_l2_parts(std::vector<Level>& levels, int first_cache_level, bool reaches_memory,
                   std::optional<uint64_t> l2_bytes) {
  if (!l2_bytes) return;
  const std::size_t begin = first_cache_level == 1 ? 1 : 0;
  const std::size_t end = levels.size() - (reaches_memory ? 1 : 0);
  std::vector<std::size_t> parts;
  for (std::size_t k = begin; k < end; ++k)
    if (levels[k].capacity_lo_bytes &&
        double(*levels[k].capacity_lo_bytes) <= 1.25 * double(*l2_bytes))
      parts.push_back(k);
  if (parts.size() != 2) return;
  // Partitions only when the sizes say so: the near part ends near half the reported L2,
  // the far part near all of it. Anything else keeps plain numbered names.
  const double near = double(*levels[parts[0]].capacity_lo_bytes) / double(*l2_bytes);
  const double far = double(*levels[parts[1]].capacity_lo_bytes) / double(*l2_bytes);
  if (near < 0.3 || near > 0.7 || far < 0.8) return;
  levels[parts[0]].name = "L2 near";
  levels[parts[1]].name = "L2 far";
  // Whatever cache level follows is numbered after L2.
  int next = 3;
  for (std::size_t k = parts.back() + 1; k < end; ++k)
    levels[k].name = "L" + std::to_string(next++);
}

// The measured points of a curve as detect_levels reads them, each with the point it
// came from.
struct CurvePoints {
  std::vector<CurvePoint> pts;
  std::vector<const LatencyPoint*> src;
};

CurvePoints measured_points(const CurveResult& curve) {
  CurvePoints out;
  for (const LatencyPoint& p : curve.points) {
    const std::optional<Summary>& s = p.cycles ? p.cycles : p.ns;
    if (!p.status.ok() || !s || s->median <= 0) continue;
    out.pts.push_back({double(p.footprint_bytes), s->median, s->relative_spread()});
    out.src.push_back(&p);
  }
  return out;
}

// "latency 30..600": the curve's lowest and highest latency, for the notes.
std::string latency_range(const std::vector<CurvePoint>& pts) {
  std::vector<double> lat;
  for (const CurvePoint& c : pts) lat.push_back(c.latency);
  return "latency " +
         format_fixed(lat.empty() ? NAN : *std::min_element(lat.begin(), lat.end()), 0) + ".." +
         format_fixed(lat.empty() ? NAN : *std::max_element(lat.begin(), lat.end()), 0);
}

// What assign_levels was asked to name: the curve's kind and its numbering.
struct LevelNaming {
  const std::string& kind;
  int first_cache_level;
  const std::string& scratch_name;
  bool reaches_memory;
};

// The name of level k of n found.
std::string level_name(const LevelNaming& n, std::size_t k, std::size_t count) {
  const bool last = k + 1 == count;
  if (n.kind == "tlb")
    return count == 1 ? "TLB hit" : last ? "page walk" : "L" + std::to_string(k + 1) + " TLB";
  if (n.kind == "scratch")
    return k == 0 ? n.scratch_name : n.scratch_name + " level " + std::to_string(k + 1);
  if (n.kind == "constant") return "constant L" + std::to_string(k + 1);
  if (last && n.reaches_memory) return "device memory";
  return "L" + std::to_string(int(k) + n.first_cache_level);
}

// One level from a detected plateau: its capacity bracket, its latency (medians over the
// plateau's points, in both units) and its step from the level before (`prev`, if any).
Level make_level(const DetectedLevel& d, const std::vector<const LatencyPoint*>& src,
                 const Level* prev) {
  Level l;
  if (d.capacity_lo && d.capacity_hi) {
    l.capacity_lo_bytes = uint64_t(*d.capacity_lo);
    l.capacity_hi_bytes = uint64_t(*d.capacity_hi);
    l.capacity_bytes = l.capacity_lo_bytes;
  }
  std::vector<double> cyc, ns;
  for (std::size_t i = d.first; i <= d.last && i < src.size(); ++i) {
    if (src[i]->cycles) cyc.push_back(src[i]->cycles->median);
    if (src[i]->ns) ns.push_back(src[i]->ns->median);
  }
  if (!cyc.empty()) l.latency_cycles = median(cyc);
  if (!ns.empty()) l.latency_ns = median(ns);
  l.confidence = d.confidence;
  if (prev) {
    if (l.latency_cycles && prev->latency_cycles)
      l.step_cycles = *l.latency_cycles - *prev->latency_cycles;
    if (l.latency_ns && prev->latency_ns) l.step_ns = *l.latency_ns - *prev->latency_ns;
  }
  return l;
}

// A hierarchy the curve itself contradicts (repeats that disagree, a curve that falls back,
// an implausible jump in a noisy curve) is not a result: the curve says why and keeps its
// points; its levels are named in the note only, so no level figure is published.
void withhold_levels(CurveResult& curve, const HierarchyCheck& hc, const std::string& range) {
  std::string seen;
  for (const Level& l : curve.levels)
    seen += (seen.empty() ? "" : ", ") + l.name + " " +
            (l.latency_cycles ? format_fixed(*l.latency_cycles, 0) + " cycles"
                              : format_fixed(l.latency_ns.value_or(NAN), 1) + " ns") +
            (l.capacity_bytes ? " up to " + format_bytes(double(*l.capacity_bytes)) : "");
  curve.status = {kInconsistentStatus, hc.reason};
  curve.note = "levels found and not published: " + seen + " (" + range + ")";
  curve.levels.clear();
  curve.dram_minus_last_cache_cycles.reset();
  curve.dram_minus_last_cache_ns.reset();
}

}  // namespace

void assign_levels(CurveResult& curve, const std::string& kind, int first_cache_level,
                   std::optional<uint64_t> largest_cache, const std::string& scratch_name,
                   bool check_consistency) {
  curve.levels.clear();
  curve.note.clear();
  // An earlier call's verdict on fewer points; this call judges the curve again.
  if (curve.status.code == kInconsistentStatus) curve.status = {};
  curve.dram_minus_last_cache_cycles.reset();
  curve.dram_minus_last_cache_ns.reset();
  const CurvePoints cp = measured_points(curve);
  const std::vector<CurvePoint>& pts = cp.pts;
  const std::vector<DetectedLevel> found = detect_levels(pts);
  const std::string range = latency_range(pts);
  if (found.empty()) {
    if (!pts.empty())
      curve.note = "no flat plateau found: the curve wanders without a clear step (" + range +
                   " up to " + format_bytes(pts.back().footprint_bytes) + ")";
    return;
  }

  // The curve reaches device memory when it runs well past the largest cache.
  const bool reaches_memory = kind == "cache" && found.size() >= 2 && largest_cache &&
                              pts.back().footprint_bytes >= 2.0 * double(*largest_cache);
  const LevelNaming naming{kind, first_cache_level, scratch_name, reaches_memory};
  for (std::size_t k = 0; k < found.size(); ++k) {
    Level l = make_level(found[k], cp.src, k > 0 ? &curve.levels.back() : nullptr);
    l.name = level_name(naming, k, found.size());
    curve.levels.push_back(std::move(l));
  }
  if (kind == "tlb" && found.size() == 1)
    curve.note = "no TLB miss step within the sweep: every level's reach exceeds " +
                 format_bytes(pts.back().footprint_bytes) + " at this stride (" + range + ")";
  if (kind == "cache")
    name_l2_parts(curve.levels, first_cache_level, reaches_memory, largest_cache);
  if (reaches_memory) {
    curve.dram_minus_last_cache_cycles = curve.levels.back().step_cycles;
    curve.dram_minus_last_cache_ns = curve.levels.back().step_ns;
  }
  // TLB sweeps are left alone: their steps are page walks, not cache levels.
  if (kind != "tlb" && check_consistency)
    if (const HierarchyCheck hc = check_hierarchy(pts, found); !hc.ok)
      withhold_levels(curve, hc, range);
}

void name_tlb_levels_by_lines(CurveResult& tlb, uint64_t line_bytes,
                              const std::vector<Level>& caches) {
  if (tlb.levels.size() < 2 || tlb.stride_bytes == 0) return;
  // The cache whose capacity a step's line footprint lands on, if any. A step is a cache's
  // when its bracket, scaled to lines, overlaps that cache's capacity widened by 25 % (the
  // two curves are measured apart and each edge is only located to 1/8 of a doubling).
  auto cache_of = [&](const Level& l) -> const Level* {
    if (!l.capacity_lo_bytes || !l.capacity_hi_bytes) return nullptr;
    const double scale = double(line_bytes) / double(tlb.stride_bytes);
    const double lo = double(*l.capacity_lo_bytes) * scale;
    const double hi = double(*l.capacity_hi_bytes) * scale;
    for (const Level& c : caches)
      if (c.capacity_bytes && lo <= 1.25 * double(*c.capacity_bytes) &&
          hi >= double(*c.capacity_bytes) / 1.25)
        return &c;
    return nullptr;
  };
  // Level k's plateau is reached through the step at the end of level k-1: a TLB step gives
  // the next TLB level (or the page walk, for the last), a cache step keeps the TLB level
  // and says which cache the lines have moved to.
  std::vector<std::string> names(tlb.levels.size());
  int tlb_level = 1;
  std::string where;  // the cache the lines have left, once one has been passed
  names[0] = "L1 TLB";
  bool any_cache_step = false;
  for (std::size_t k = 1; k < tlb.levels.size(); ++k) {
    const bool last = k + 1 == tlb.levels.size();
    if (const Level* c = cache_of(tlb.levels[k - 1])) {
      where = c->name + " missed";
      any_cache_step = true;
    } else {
      ++tlb_level;
      if (last) {
        names[k] = where.empty() ? "page walk" : "page walk (" + where + ")";
        continue;
      }
    }
    names[k] = "L" + std::to_string(tlb_level) + " TLB" + (where.empty() ? "" : " (" + where + ")");
  }
  if (!any_cache_step) return;  // assign_levels' names stand
  for (std::size_t k = 0; k < names.size(); ++k) {
    tlb.levels[k].name = names[k];
    // A plateau that ends at a cache step ends there because of the cache: that is not the
    // TLB level's reach (the bracket stays, for the record).
    if (cache_of(tlb.levels[k])) tlb.levels[k].capacity_bytes.reset();
  }
  if (!tlb.note.empty()) tlb.note += "; ";
  tlb.note += "one " + format_bytes(double(line_bytes)) + " line per page: a step where the " +
              "lines' own footprint (footprint x " + format_bytes(double(line_bytes)) + " / " +
              format_bytes(double(tlb.stride_bytes)) +
              ") passes a cache level of the global path is that cache, not a TLB";
}

std::vector<uint64_t> add_far_edge_points(const std::vector<uint64_t>& grid, uint64_t lo,
                                          uint64_t hi, int per_doubling, uint64_t stride,
                                          uint64_t largest_cache) {
  constexpr int kDense = 32;  // points per doubling near the edge
  if (largest_cache == 0 || lo == 0 || stride == 0 || per_doubling < 1) return grid;
  const double from = double(largest_cache) * std::exp2(-5.0 / kDense);
  const double to = double(largest_cache) * std::exp2(1.0 / kDense);
  std::vector<uint64_t> out = grid;
  // lo x 2^(m/32) for the m that land in [from, to]: with per_doubling dividing 32 these
  // include the grid's own points there (the same doubles, so the same footprints).
  const auto first = long(std::ceil(std::log2(from / double(lo)) * kDense - 1e-9));
  for (long m = std::max(0L, first);; ++m) {
    const double fp = double(lo) * std::exp2(double(m) / kDense);
    if (fp > to * (1 + 1e-12)) break;
    const uint64_t r = std::max<uint64_t>(1, uint64_t(std::llround(fp / double(stride)))) * stride;
    if (r >= lo && r <= hi) out.push_back(r);
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

}  // namespace gd
