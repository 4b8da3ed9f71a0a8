// The atomics probe's results in JSON and back.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <numeric>

#include "atomics/atomics.hpp"
#include "gpudissect/figure.hpp"
#include "gpudissect/json_fields.hpp"
#include "gpudissect/stats.hpp"
#include "gpudissect/units.hpp"

namespace gd {

using nlohmann::json;

// ---- JSON ----

using json_fields::get;
using json_fields::get_status;
using json_fields::put;
using json_fields::put_status;

namespace {

// NaN (not measured) is written as null and read back as NaN.
json matrix_json(const std::vector<std::vector<double>>& m) {
  json rows = json::array();
  for (const auto& row : m) {
    json r = json::array();
    for (double v : row) r.push_back(std::isfinite(v) ? json(v) : json(nullptr));
    rows.push_back(std::move(r));
  }
  return rows;
}
std::vector<std::vector<double>> matrix_from(const json& j) {
  std::vector<std::vector<double>> m;
  for (const json& row : j) {
    std::vector<double> r;
    for (const json& v : row) r.push_back(v.is_null() ? kNaN : v.get<double>());
    m.push_back(std::move(r));
  }
  return m;
}
}  // namespace

void to_json(json& j, const PlacementSpread& s) {
  j = json{{"values", s.values}, {"min", s.min},   {"median", s.median},
           {"max", s.max},       {"mean", s.mean}, {"repeat_spread", s.repeat_spread}};
}
void from_json(const json& j, PlacementSpread& s) {
  get(j, "values", s.values);
  get(j, "min", s.min);
  get(j, "median", s.median);
  get(j, "max", s.max);
  get(j, "mean", s.mean);
  get(j, "repeat_spread", s.repeat_spread);
}

void to_json(json& j, const MatrixSummary& s) {
  json clusters = json::array();
  for (const SmCluster& c : s.clusters)
    clusters.push_back({{"sms", c.sms}, {"median_within", c.median_within}});
  json between = json::array();
  for (double v : s.between) between.push_back(std::isfinite(v) ? json(v) : json(nullptr));
  j = json{{"all", s.all},
           {"clusters", clusters},
           {"between", between},
           {"noise", s.noise},
           {"structure", s.structure}};
}
void from_json(const json& j, MatrixSummary& s) {
  get(j, "all", s.all);
  if (auto it = j.find("clusters"); it != j.end())
    for (const json& c : *it) {
      SmCluster x;
      get(c, "sms", x.sms);
      get(c, "median_within", x.median_within);
      s.clusters.push_back(std::move(x));
    }
  if (auto it = j.find("between"); it != j.end())
    for (const json& v : *it) s.between.push_back(v.is_null() ? kNaN : v.get<double>());
  get(j, "noise", s.noise);
  get(j, "structure", s.structure);
}

void to_json(json& j, const SmMatrix& m) {
  j = json::object();
  put_status(j, m.status);
  j["sms"] = m.sms;
  j["unit"] = m.unit;
  j["values"] = matrix_json(m.values);
  j["ns"] = matrix_json(m.ns);
  j["round_trips_per_pair"] = m.round_trips_per_pair;
  put(j, "clock_mhz", m.clock_mhz);
  j["seconds"] = m.seconds;
  put(j, "instruction", m.instruction);
  j["summary"] = m.summary;
  j["placements"] = m.placements;
  if (!m.placement_summaries.empty()) j["placement_summaries"] = m.placement_summaries;
}
void from_json(const json& j, SmMatrix& m) {
  m.status = get_status(j);
  get(j, "sms", m.sms);
  get(j, "unit", m.unit);
  if (auto it = j.find("values"); it != j.end()) m.values = matrix_from(*it);
  if (auto it = j.find("ns"); it != j.end()) m.ns = matrix_from(*it);
  get(j, "round_trips_per_pair", m.round_trips_per_pair);
  get(j, "clock_mhz", m.clock_mhz);
  get(j, "seconds", m.seconds);
  get(j, "instruction", m.instruction);
  get(j, "summary", m.summary);
  get(j, "placements", m.placements);
  get(j, "placement_summaries", m.placement_summaries);
}

void to_json(json& j, const AtomicLatency& l) {
  j = json::object();
  put_status(j, l.status);
  put(j, "cycles", l.cycles);
  put(j, "ns", l.ns);
  put(j, "clock_mhz", l.clock_mhz);
  j["round_trips"] = l.round_trips;
  put(j, "sm_a", l.sm_a);
  put(j, "sm_b", l.sm_b);
  put(j, "instruction", l.instruction);
  if (!l.note.empty()) j["note"] = l.note;
  if (l.locations != 1) j["locations"] = l.locations;
  put(j, "placement_cycles", l.placement_cycles);
  put(j, "placement_ns", l.placement_ns);
}
void from_json(const json& j, AtomicLatency& l) {
  l.status = get_status(j);
  get(j, "cycles", l.cycles);
  get(j, "ns", l.ns);
  get(j, "clock_mhz", l.clock_mhz);
  get(j, "round_trips", l.round_trips);
  get(j, "sm_a", l.sm_a);
  get(j, "sm_b", l.sm_b);
  get(j, "instruction", l.instruction);
  get(j, "note", l.note);
  get(j, "locations", l.locations);
  get(j, "placement_cycles", l.placement_cycles);
  get(j, "placement_ns", l.placement_ns);
}

void to_json(json& j, const AtomicThroughput& t) {
  j = json::object();
  put_status(j, t.status);
  j["space"] = t.space;
  j["op"] = t.op;
  j["type"] = t.type;
  j["contention"] = t.contention;
  j["scope"] = t.scope;
  j["ways"] = t.ways;
  j["use_return"] = t.use_return;
  j["ops_per_launch"] = t.ops_per_launch;
  put(j, "gops", t.gops);
  put(j, "ops_per_clk_sm", t.ops_per_clk_sm);
  put(j, "clock_mhz", t.clock_mhz);
  if (t.sms) j["sms"] = t.sms;
  put(j, "instruction", t.instruction);
  if (!t.note.empty()) j["note"] = t.note;
  if (t.placements != 1) j["placements"] = t.placements;
  put(j, "placement_gops", t.placement_gops);
}
void from_json(const json& j, AtomicThroughput& t) {
  t.status = get_status(j);
  get(j, "space", t.space);
  get(j, "op", t.op);
  get(j, "type", t.type);
  get(j, "contention", t.contention);
  get(j, "scope", t.scope);
  get(j, "ways", t.ways);
  get(j, "use_return", t.use_return);
  get(j, "ops_per_launch", t.ops_per_launch);
  get(j, "gops", t.gops);
  get(j, "ops_per_clk_sm", t.ops_per_clk_sm);
  get(j, "clock_mhz", t.clock_mhz);
  get(j, "sms", t.sms);
  get(j, "instruction", t.instruction);
  get(j, "note", t.note);
  get(j, "placements", t.placements);
  get(j, "placement_gops", t.placement_gops);
}

void to_json(json& j, const AtomicsProbeResult& r) {
  j = json::object();
  put_status(j, r.status);
  j["wall_seconds"] = r.wall_seconds;
  put(j, "clock_mhz_measured", r.clock_mhz_measured);
  j["latency"] = r.latency;
  j["throughput"] = r.throughput;
  put(j, "matrix", r.matrix);
}
void from_json(const json& j, AtomicsProbeResult& r) {
  r.status = get_status(j);
  get(j, "wall_seconds", r.wall_seconds);
  get(j, "clock_mhz_measured", r.clock_mhz_measured);
  get(j, "latency", r.latency);
  get(j, "throughput", r.throughput);
  get(j, "matrix", r.matrix);
}

}  // namespace gd
