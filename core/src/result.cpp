#include "gpudissect/result.hpp"

#include <stdexcept>

#include "gpudissect/budget.hpp"
#include "gpudissect/json_fields.hpp"
#include "gpudissect/units.hpp"

namespace gd {

using nlohmann::json;

using json_fields::get;
using json_fields::get_status;
using json_fields::need;
using json_fields::put;
using json_fields::put_status;

void to_json(json& j, const Summary& s) {
  j = json{{"median", s.median}, {"q1", s.q1},   {"q3", s.q3},
           {"min", s.min},       {"max", s.max}, {"n", s.n}};
}
void from_json(const json& j, Summary& s) {
  if (j.is_number()) {  // a single value
    s = single_value(j.get<double>());
    return;
  }
  if (!j.is_object())
    throw JsonReadError("", "expected a number or a summary, got " + json_kind(j));
  need(j, "median", s.median);
  get(j, "q1", s.q1);
  get(j, "q3", s.q3);
  get(j, "min", s.min);
  get(j, "max", s.max);
  get(j, "n", s.n);
}

void to_json(json& j, const DeviceInfo& d) {
  j = json{{"backend", d.backend},
           {"id", d.id},
           {"name", d.name},
           {"vendor", d.vendor},
           {"compute_units", d.compute_units},
           {"compute_capability", d.compute_capability},
           {"driver_version", d.driver_version},
           {"toolkit_version", d.toolkit_version}};
  put(j, "clock_mhz_reported", d.clock_mhz_reported);
  put(j, "memory_clock_mhz", d.memory_clock_mhz);
  put(j, "memory_bus_width_bits", d.memory_bus_width_bits);
  put(j, "memory_bytes", d.memory_bytes);
  put(j, "l2_bytes", d.l2_bytes);
  put(j, "l1_or_cacheline_bytes", d.l1_or_cacheline_bytes);
  put(j, "shared_per_sm_bytes", d.shared_per_sm_bytes);
  put(j, "shared_per_block_bytes", d.shared_per_block_bytes);
  put(j, "shared_per_block_optin_bytes", d.shared_per_block_optin_bytes);
  put(j, "constant_bytes", d.constant_bytes);
  if (!d.extra.empty()) j["extra"] = d.extra;
}
void from_json(const json& j, DeviceInfo& d) {
  need(j, "backend", d.backend);
  need(j, "name", d.name);
  get(j, "id", d.id);
  get(j, "vendor", d.vendor);
  get(j, "compute_units", d.compute_units);
  get(j, "compute_capability", d.compute_capability);
  get(j, "driver_version", d.driver_version);
  get(j, "toolkit_version", d.toolkit_version);
  get(j, "clock_mhz_reported", d.clock_mhz_reported);
  get(j, "memory_clock_mhz", d.memory_clock_mhz);
  get(j, "memory_bus_width_bits", d.memory_bus_width_bits);
  get(j, "memory_bytes", d.memory_bytes);
  get(j, "l2_bytes", d.l2_bytes);
  get(j, "l1_or_cacheline_bytes", d.l1_or_cacheline_bytes);
  get(j, "shared_per_sm_bytes", d.shared_per_sm_bytes);
  get(j, "shared_per_block_bytes", d.shared_per_block_bytes);
  get(j, "shared_per_block_optin_bytes", d.shared_per_block_optin_bytes);
  get(j, "constant_bytes", d.constant_bytes);
  get(j, "extra", d.extra);
}

void to_json(json& j, const Telemetry& t) {
  j = json::object();
  put(j, "sm_clock_mhz", t.sm_clock_mhz);
  put(j, "memory_clock_mhz", t.memory_clock_mhz);
  put(j, "temperature_c", t.temperature_c);
  put(j, "power_w", t.power_w);
  j["throttle_reasons"] = t.throttle_reasons;
}
void from_json(const json& j, Telemetry& t) {
  get(j, "sm_clock_mhz", t.sm_clock_mhz);
  get(j, "memory_clock_mhz", t.memory_clock_mhz);
  get(j, "temperature_c", t.temperature_c);
  get(j, "power_w", t.power_w);
  get(j, "throttle_reasons", t.throttle_reasons);
}

void to_json(json& j, const LatencyPoint& p) {
  j = json{{"footprint_bytes", p.footprint_bytes}, {"stride_bytes", p.stride_bytes}};
  put_status(j, p.status);
  // Flat medians first (what scripts read), the full spread beside them.
  if (p.cycles) j["cycles"] = p.cycles->median;
  if (p.ns) j["ns"] = p.ns->median;
  json spread = json::object();
  if (p.cycles) spread["cycles"] = *p.cycles;
  if (p.ns) spread["ns"] = *p.ns;
  if (!spread.empty()) j["spread"] = spread;
  put(j, "clock_mhz", p.clock_mhz);
}
void from_json(const json& j, LatencyPoint& p) {
  need(j, "footprint_bytes", p.footprint_bytes);
  get(j, "stride_bytes", p.stride_bytes);
  p.status = get_status(j);
  if (auto s = j.find("spread"); s != j.end()) {
    get(*s, "cycles", p.cycles);
    get(*s, "ns", p.ns);
  }
  // A document with only the flat medians still reads.
  if (!p.cycles && j.contains("cycles") && j["cycles"].is_number())
    p.cycles = Summary{j["cycles"].get<double>(), 0, 0, 0, 0, 1};
  if (!p.ns && j.contains("ns") && j["ns"].is_number())
    p.ns = Summary{j["ns"].get<double>(), 0, 0, 0, 0, 1};
  get(j, "clock_mhz", p.clock_mhz);
}

void to_json(json& j, const Level& l) {
  j = json{{"name", l.name}, {"confidence", l.confidence}};
  put(j, "capacity_bytes", l.capacity_bytes);
  if (l.capacity_lo_bytes && l.capacity_hi_bytes)
    j["capacity_interval_bytes"] = {*l.capacity_lo_bytes, *l.capacity_hi_bytes};
  put(j, "latency_cycles", l.latency_cycles);
  put(j, "latency_ns", l.latency_ns);
  put(j, "step_cycles", l.step_cycles);
  put(j, "step_ns", l.step_ns);
}
void from_json(const json& j, Level& l) {
  need(j, "name", l.name);
  get(j, "confidence", l.confidence);
  get(j, "capacity_bytes", l.capacity_bytes);
  if (auto it = j.find("capacity_interval_bytes");
      it != j.end() && it->is_array() && it->size() == 2) {
    read_at("capacity_interval_bytes", [&] {
      l.capacity_lo_bytes = json_integer<uint64_t>((*it)[0]);
      l.capacity_hi_bytes = json_integer<uint64_t>((*it)[1]);
    });
  }
  get(j, "latency_cycles", l.latency_cycles);
  get(j, "latency_ns", l.latency_ns);
  get(j, "step_cycles", l.step_cycles);
  get(j, "step_ns", l.step_ns);
}

void to_json(json& j, const CurveResult& c) {
  j = json::object();
  put_status(j, c.status);
  j["stride_bytes"] = c.stride_bytes;
  put(j, "timed_instruction", c.timed_instruction);
  if (!c.note.empty()) j["note"] = c.note;
  j["wall_seconds"] = c.wall_seconds;
  j["points"] = c.points;
  j["levels"] = c.levels;
  put(j, "dram_minus_last_cache_cycles", c.dram_minus_last_cache_cycles);
  put(j, "dram_minus_last_cache_ns", c.dram_minus_last_cache_ns);
}
void from_json(const json& j, CurveResult& c) {
  c.status = get_status(j);
  get(j, "stride_bytes", c.stride_bytes);
  get(j, "timed_instruction", c.timed_instruction);
  get(j, "note", c.note);
  get(j, "wall_seconds", c.wall_seconds);
  get(j, "points", c.points);
  get(j, "levels", c.levels);
  get(j, "dram_minus_last_cache_cycles", c.dram_minus_last_cache_cycles);
  get(j, "dram_minus_last_cache_ns", c.dram_minus_last_cache_ns);
}

void to_json(json& j, const LatencyProbeResult& p) {
  j = json::object();
  put_status(j, p.status);
  j["wall_seconds"] = p.wall_seconds;
  put(j, "clock_mhz_measured", p.clock_mhz_measured);
  put(j, "telemetry_before", p.telemetry_before);
  put(j, "telemetry_after", p.telemetry_after);
  j["paths"] = p.paths;
  if (!p.tlb.empty()) j["tlb"] = p.tlb;
}
void from_json(const json& j, LatencyProbeResult& p) {
  p.status = get_status(j);
  get(j, "wall_seconds", p.wall_seconds);
  get(j, "clock_mhz_measured", p.clock_mhz_measured);
  get(j, "telemetry_before", p.telemetry_before);
  get(j, "telemetry_after", p.telemetry_after);
  json_fields::get_named(j, "paths", p.paths);  // keys name CSV files and charts
  json_fields::get_named(j, "tlb", p.tlb);
}

std::vector<Figure> collect_figures(const RunResult& r, const ProbeRegistry& registry) {
  std::vector<Figure> all;
  for (const Probe* p : registry.all()) {
    if (!r.probes.count(p->name())) continue;
    std::vector<Figure> figs = p->figures(r);
    if (r.gpu_state) mark_suspect_figures(*r.gpu_state, p->name(), figs);
    for (Figure& f : figs) all.push_back(std::move(f));
  }
  // A spread over 10 % is not a result: the figure keeps its value but says so.
  for (Figure& f : all)
    if (f.status.ok() && f.value && is_unstable(*f.value))
      f.status = {StatusCode::unstable,
                  "relative spread (IQR over median) " +
                      format_fixed(100 * f.value->relative_spread(), 0) + " % is over " +
                      format_fixed(100 * kUnstableRelativeSpread, 0) + " %; measured " + f.where};
  return all;
}

json to_json(const RunResult& r, const ProbeRegistry& registry) {
  json j;
  j["schema_version"] = r.schema_version;
  j["tool"] = json{{"name", r.tool.name},
                   {"version", r.tool.version},
                   {"command", r.tool.command},
                   {"started_at", r.tool.started_at}};
  j["device"] = r.device;
  j["probes"] = json::object();
  for (const auto& [name, result] : r.probes) {
    if (const Probe* p = registry.find(name))
      j["probes"][name] = p->to_json(result);
    else if (const json* raw = std::any_cast<json>(&result))
      j["probes"][name] = *raw;  // kept as read from a newer file
  }
  j["figures"] = r.figures;
  if (r.gpu_state) j["gpu_state"] = *r.gpu_state;
  if (r.provenance) j["provenance"] = *r.provenance;
  if (r.soak) j["soak"] = *r.soak;
  return j;
}

RunResult run_result_from_json(const json& j, const ProbeRegistry& registry) {
  if (!j.is_object())
    throw std::runtime_error("not a gpudissect result: the document is not a JSON object");
  if (!j.contains("schema_version") || !j["schema_version"].is_number_integer())
    throw std::runtime_error("not a gpudissect result: no integer \"schema_version\"");
  // Compared as the 64-bit number it is: 4294967298 is not version 2.
  const json& sv = j["schema_version"];
  const auto version = json_to_integer<int>(sv);
  const bool known = version && *version >= kOldestSchemaVersion && *version <= kSchemaVersion;
  if (!known)
    throw std::runtime_error(
        "unknown schema_version " + sv.dump() + " (this gpudissect reads versions " +
        std::to_string(kOldestSchemaVersion) + " to " + std::to_string(kSchemaVersion) + ")");
  RunResult r;
  try {
    r.schema_version = kSchemaVersion;  // what it is now, in memory and when written again
    read_at("tool", [&] {
      const json& t = j.at("tool");
      if (!t.is_object()) throw JsonReadError("", "expected an object, got " + json_kind(t));
      get(t, "name", r.tool.name);
      get(t, "version", r.tool.version);
      get(t, "command", r.tool.command);
      get(t, "started_at", r.tool.started_at);
    });
    need(j, "device", r.device);
    read_at("probes", [&] {
      const json& probes = j.at("probes");
      if (!probes.is_object())
        throw JsonReadError("", "expected an object, got " + json_kind(probes));
      for (const auto& [name, pj] : probes.items()) {
        // Captured by name: clang 15 lets no lambda capture a structured binding.
        read_at(name, [&, &name = name, &pj = pj] {
          if (const Probe* p = registry.find(name)) {
            try {
              r.probes[name] = p->from_json(pj);
            } catch (const std::invalid_argument& e) {  // a probe's own check of a value
              throw JsonReadError("", e.what());
            } catch (const std::out_of_range& e) {
              throw JsonReadError("", e.what());
            }
          } else {
            r.probes[name] = pj;
          }
        });
      }
    });
    if (j.contains("gpu_state"))
      read_at("gpu_state", [&] { r.gpu_state = j.at("gpu_state").get<GpuState>(); });
    if (j.contains("provenance") && !j.at("provenance").is_null())
      read_at("provenance", [&] { r.provenance = j.at("provenance").get<Provenance>(); });
    if (j.contains("soak") && !j.at("soak").is_null())
      read_at("soak", [&] {
        if (!j.at("soak").is_object())
          throw JsonReadError("", "expected an object, got " + json_kind(j.at("soak")));
        r.soak = j.at("soak");
      });
    if (j.contains("figures"))
      get(j, "figures", r.figures);
    else
      r.figures = collect_figures(r, registry);
  } catch (const JsonReadError& e) {
    throw std::runtime_error(std::string("malformed gpudissect result: ") + e.what());
  } catch (const json::exception& e) {
    throw std::runtime_error(std::string("malformed gpudissect result: ") + describe_json_error(e));
  }
  return r;
}

}  // namespace gd
