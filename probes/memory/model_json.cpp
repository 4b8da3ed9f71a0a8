// The memory probe's results in JSON and back.
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

namespace {

MemLoad parse_load(const std::string& s) {
  for (MemLoad l : {MemLoad::ca, MemLoad::nc, MemLoad::cg, MemLoad::constant, MemLoad::texture})
    if (to_string(l) == s) return l;
  throw nlohmann::json::other_error::create(501, "unknown load '" + s + "'", nullptr);
}

}  // namespace

// ---- JSON ----

void to_json(nlohmann::json& j, const MemPoint& p) {
  j = {{"footprint_bytes", p.footprint_bytes}};
  jf::put_status(j, p.status);
  jf::put(j, "cycles", p.cycles);
  if (!p.warp_cycles.empty()) j["warp_cycles"] = p.warp_cycles;
}

void from_json(const nlohmann::json& j, MemPoint& p) {
  jf::need(j, "footprint_bytes", p.footprint_bytes);
  p.status = jf::get_status(j);
  jf::get(j, "cycles", p.cycles);
  jf::get(j, "warp_cycles", p.warp_cycles);
}

namespace {

nlohmann::json capacity_json(const CapacityEstimate& e) {
  nlohmann::json j = nlohmann::json::object();
  jf::put(j, "plateau_cycles", e.plateau_cycles);
  jf::put(j, "capacity_bytes", e.capacity_bytes);
  jf::put(j, "next_bytes", e.next_bytes);
  jf::put(j, "beyond_cycles", e.beyond_cycles);
  if (!e.note.empty()) j["note"] = e.note;
  return j;
}

CapacityEstimate capacity_from(const nlohmann::json& j) {
  CapacityEstimate e;
  jf::get(j, "plateau_cycles", e.plateau_cycles);
  jf::get(j, "capacity_bytes", e.capacity_bytes);
  jf::get(j, "next_bytes", e.next_bytes);
  jf::get(j, "beyond_cycles", e.beyond_cycles);
  jf::get(j, "note", e.note);
  return e;
}

}  // namespace

void to_json(nlohmann::json& j, const MemCurve& c) {
  j = {{"key", c.key},       {"load", to_string(c.load)},
       {"warps", c.warps},   {"stride_bytes", c.stride_bytes},
       {"points", c.points}, {"capacity", capacity_json(c.capacity)}};
  jf::put_status(j, c.status);
  if (!c.instruction.empty()) j["instruction"] = c.instruction;
  jf::put(j, "clock_mhz", c.clock_mhz);
  if (c.unit != "cycles") j["unit"] = c.unit;  // absent: cycles (every CUDA run)
}

void from_json(const nlohmann::json& j, MemCurve& c) {
  j.at("key").get_to(c.key);
  c.load = parse_load(j.at("load").get<std::string>());
  jf::get(j, "warps", c.warps);
  jf::get(j, "stride_bytes", c.stride_bytes);
  jf::get(j, "points", c.points);
  if (j.contains("capacity")) c.capacity = capacity_from(j.at("capacity"));
  c.status = jf::get_status(j);
  jf::get(j, "instruction", c.instruction);
  jf::get(j, "clock_mhz", c.clock_mhz);
  jf::get(j, "unit", c.unit);
}

namespace {

nlohmann::json line_json(const LineResult& r) {
  nlohmann::json l = {{"by_stride", r.by_stride}};
  jf::put_status(l, r.status);
  jf::put(l, "bytes", r.estimate.bytes);
  if (!r.estimate.note.empty()) l["note"] = r.estimate.note;
  return l;
}

LineResult line_from(const nlohmann::json& l) {
  LineResult r;
  r.status = jf::get_status(l);
  jf::get(l, "by_stride", r.by_stride);
  jf::get(l, "bytes", r.estimate.bytes);
  jf::get(l, "note", r.estimate.note);
  return r;
}

nlohmann::json ways_json(const WaysResult& r) {
  nlohmann::json w = {{"by_stride", r.by_stride}};
  jf::put_status(w, r.status);
  nlohmann::json es = nlohmann::json::array();
  for (const auto& e : r.estimates) {
    nlohmann::json x = nlohmann::json::object();
    jf::put(x, "ways", e.ways);
    if (!e.note.empty()) x["note"] = e.note;
    es.push_back(x);
  }
  w["estimates"] = es;
  return w;
}

WaysResult ways_from(const nlohmann::json& w) {
  WaysResult r;
  r.status = jf::get_status(w);
  jf::get(w, "by_stride", r.by_stride);
  if (w.contains("estimates"))
    for (const auto& x : w.at("estimates")) {
      WaysEstimate e;
      jf::get(x, "ways", e.ways);
      jf::get(x, "note", e.note);
      r.estimates.push_back(e);
    }
  return r;
}

}  // namespace

// shape: every field of the result in the JSON's order, one line or block each
void to_json(nlohmann::json& j, const MemoryProbeResult& r) {
  j = nlohmann::json::object();
  jf::put_status(j, r.status);
  j["wall_seconds"] = r.wall_seconds;
  jf::put(j, "clock_mhz", r.clock_mhz);
  auto part = [&](const char* key, const Status& s) {
    nlohmann::json p;
    jf::put_status(p, s);
    j["parts"][key] = p;
  };
  part("carveout", r.carveout_status);
  part("partition", r.partition_status);
  part("granularity", r.granularity_status);
  part("constant", r.constant_status);
  part("tlb", r.tlb_status);
  nlohmann::json cs = nlohmann::json::array();
  for (const auto& c : r.carveouts) {
    nlohmann::json e = {{"shared_kib", c.point.shared_kib},
                        {"percent", c.point.percent},
                        {"preference_only", c.point.preference_only},
                        {"dynamic_shared_bytes", c.point.dynamic_shared_bytes},
                        {"curve", c.curve}};
    jf::put(e, "predicted_l1_bytes", c.point.predicted_l1_bytes);
    jf::put(e, "api_probe_blocks", c.api_probe_blocks);
    jf::put(e, "api_shared_bytes", c.api_shared_bytes);
    jf::put(e, "attr_carveout_percent", c.attr_carveout_percent);
    jf::put(e, "implied_shared_bytes", c.implied_shared_bytes);
    if (!c.agreement.empty()) e["agreement"] = c.agreement;
    cs.push_back(e);
  }
  j["carveouts"] = cs;
  nlohmann::json ps = nlohmann::json::array();
  for (const auto& p : r.partitions) {
    nlohmann::json e = {{"path", p.path}, {"by_warps", p.by_warps}};
    jf::put_status(e, p.status);
    nlohmann::json v = {{"verdict", p.verdict.verdict}, {"note", p.verdict.note}};
    nlohmann::json ratios = nlohmann::json::array();
    for (const auto& x : p.verdict.total_ratio)
      ratios.push_back(x ? nlohmann::json(*x) : nlohmann::json());
    v["total_ratio"] = ratios;
    e["verdict"] = v;
    ps.push_back(e);
  }
  j["partitions"] = ps;
  nlohmann::json gs = nlohmann::json::array();
  for (const auto& g : r.granularity) {
    nlohmann::json e = {{"level", g.level}, {"curve", g.curve}};
    jf::put_status(e, g.status);
    nlohmann::json est = nlohmann::json::object();
    jf::put(est, "bytes", g.estimate.bytes);
    jf::put(est, "hit_cycles", g.estimate.hit_cycles);
    jf::put(est, "miss_cycles", g.estimate.miss_cycles);
    if (!g.estimate.note.empty()) est["note"] = g.estimate.note;
    e["estimate"] = est;
    gs.push_back(e);
  }
  j["granularity"] = gs;
  j["l1_line"] = line_json(r.l1_line);
  j["l1_ways"] = ways_json(r.l1_ways);
  j["l2_line"] = line_json(r.l2_line);
  j["l2_ways"] = ways_json(r.l2_ways);
  if (r.constant) j["constant"] = *r.constant;
  jf::put(j, "constant_bank_bytes", r.constant_bank_bytes);
  nlohmann::json ts = nlohmann::json::array();
  for (const auto& t : r.tlb) {
    nlohmann::json e = {{"mapping", t.mapping}, {"curve", t.curve}};
    jf::put_status(e, t.status);
    nlohmann::json ls = nlohmann::json::array();
    for (const auto& l : t.levels) {
      nlohmann::json x = {{"cycles", l.cycles}};
      jf::put(x, "reach_lo_bytes", l.reach_lo_bytes);
      jf::put(x, "reach_hi_bytes", l.reach_hi_bytes);
      jf::put(x, "step_cycles", l.step_cycles);
      ls.push_back(x);
    }
    e["levels"] = ls;
    if (!t.note.empty()) e["note"] = t.note;
    ts.push_back(e);
  }
  j["tlb"] = ts;
}

// shape: every field of the result in the JSON's order, one line or block each
void from_json(const nlohmann::json& j, MemoryProbeResult& r) {
  r.status = jf::get_status(j);
  jf::get(j, "wall_seconds", r.wall_seconds);
  jf::get(j, "clock_mhz", r.clock_mhz);
  if (j.contains("parts")) {
    const auto& p = j.at("parts");
    auto part = [&](const char* key, Status& s) {
      if (p.contains(key)) s = jf::get_status(p.at(key));
    };
    part("carveout", r.carveout_status);
    part("partition", r.partition_status);
    part("granularity", r.granularity_status);
    part("constant", r.constant_status);
    part("tlb", r.tlb_status);
  }
  if (j.contains("carveouts"))
    for (const auto& e : j.at("carveouts")) {
      CarveoutResult c;
      jf::need(e, "shared_kib", c.point.shared_kib);
      jf::need(e, "percent", c.point.percent);
      jf::get(e, "preference_only", c.point.preference_only);
      jf::get(e, "dynamic_shared_bytes", c.point.dynamic_shared_bytes);
      jf::get(e, "predicted_l1_bytes", c.point.predicted_l1_bytes);
      jf::get(e, "api_probe_blocks", c.api_probe_blocks);
      jf::get(e, "api_shared_bytes", c.api_shared_bytes);
      jf::get(e, "attr_carveout_percent", c.attr_carveout_percent);
      jf::get(e, "implied_shared_bytes", c.implied_shared_bytes);
      jf::get(e, "agreement", c.agreement);
      e.at("curve").get_to(c.curve);
      r.carveouts.push_back(c);
    }
  if (j.contains("partitions"))
    for (const auto& e : j.at("partitions")) {
      PartitionResult p;
      e.at("path").get_to(p.path);
      p.status = jf::get_status(e);
      e.at("by_warps").get_to(p.by_warps);
      if (e.contains("verdict")) {
        const auto& v = e.at("verdict");
        jf::get(v, "verdict", p.verdict.verdict);
        jf::get(v, "note", p.verdict.note);
        if (v.contains("total_ratio"))
          for (const auto& x : v.at("total_ratio"))
            p.verdict.total_ratio.push_back(x.is_null() ? std::nullopt
                                                        : std::optional<double>(x.get<double>()));
      }
      r.partitions.push_back(p);
    }
  if (j.contains("granularity"))
    for (const auto& e : j.at("granularity")) {
      GranularityResult g;
      e.at("level").get_to(g.level);
      g.status = jf::get_status(e);
      e.at("curve").get_to(g.curve);
      if (e.contains("estimate")) {
        const auto& est = e.at("estimate");
        jf::get(est, "bytes", g.estimate.bytes);
        jf::get(est, "hit_cycles", g.estimate.hit_cycles);
        jf::get(est, "miss_cycles", g.estimate.miss_cycles);
        jf::get(est, "note", g.estimate.note);
      }
      r.granularity.push_back(g);
    }
  if (j.contains("l1_line")) r.l1_line = line_from(j.at("l1_line"));
  if (j.contains("l1_ways")) r.l1_ways = ways_from(j.at("l1_ways"));
  if (j.contains("l2_line")) r.l2_line = line_from(j.at("l2_line"));
  if (j.contains("l2_ways")) r.l2_ways = ways_from(j.at("l2_ways"));
  if (j.contains("constant")) r.constant = j.at("constant").get<MemCurve>();
  jf::get(j, "constant_bank_bytes", r.constant_bank_bytes);
  if (j.contains("tlb"))
    for (const auto& e : j.at("tlb")) {
      TlbResult t;
      e.at("mapping").get_to(t.mapping);
      t.status = jf::get_status(e);
      e.at("curve").get_to(t.curve);
      if (e.contains("levels"))
        for (const auto& x : e.at("levels")) {
          TlbLevel l;
          x.at("cycles").get_to(l.cycles);
          jf::get(x, "reach_lo_bytes", l.reach_lo_bytes);
          jf::get(x, "reach_hi_bytes", l.reach_hi_bytes);
          jf::get(x, "step_cycles", l.step_cycles);
          t.levels.push_back(l);
        }
      jf::get(e, "note", t.note);
      r.tlb.push_back(t);
    }
}

}  // namespace gd
