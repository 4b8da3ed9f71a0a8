// The front-end probe's results in JSON and back.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <regex>
#include <sstream>

#include "frontend/frontend.hpp"
#include "gpudissect/figure.hpp"
#include "gpudissect/json_fields.hpp"

namespace gd {

// ---- JSON ----

using json_fields::get;
using json_fields::put;

void to_json(nlohmann::json& j, const BlockRecord& b) {
  j = nlohmann::json::array({b.sm, b.warp_slot, b.start_ns, b.end_ns});
}
void from_json(const nlohmann::json& j, BlockRecord& b) {
  // [sm, slot, start, end], each range-checked and named by its index in an error.
  auto field = [&](std::size_t i, auto& x) {
    read_at(index_segment(i), [&] { x = json_integer<std::decay_t<decltype(x)>>(j.at(i)); });
  };
  field(0, b.sm);
  field(1, b.warp_slot);
  field(2, b.start_ns);
  field(3, b.end_ns);
}

namespace {

nlohmann::json status_json(const Status& s) {
  nlohmann::json j;
  json_fields::put_status(j, s);
  return j;
}

}  // namespace

// shape: every field of the result in the JSON's order, one line or block each
void to_json(nlohmann::json& j, const FrontendProbeResult& r) {
  j = nlohmann::json::object();
  json_fields::put_status(j, r.status);
  j["wall_seconds"] = r.wall_seconds;
  j["language"] = r.language;
  j["sms"] = r.sms;
  if (!r.note.empty()) j["note"] = r.note;
  put(j, "clock_mhz", r.clock_mhz);
  if (!r.clock_source.empty()) j["clock_source"] = r.clock_source;
  j["compile_seconds"] = r.compile_seconds;

  nlohmann::json ic;
  ic["status"] = status_json(r.icache_status);
  ic["timed_instruction"] = r.timed_instruction;
  ic["code_bytes_source"] = r.code_bytes_source;
  ic["points"] = nlohmann::json::array();
  for (const auto& p : r.icache) {
    nlohmann::json e{{"instructions", p.instructions},
                     {"loop_instructions", p.loop_instructions},
                     {"code_bytes", p.code_bytes}};
    json_fields::put_status(e, p.status);
    put(e, "ipc", p.ipc);
    put(e, "first_pass_ipc", p.first_pass_ipc);
    put(e, "clock_mhz", p.clock_mhz);
    ic["points"].push_back(e);
  }
  ic["levels"] = nlohmann::json::array();
  for (const auto& l : r.icache_levels) {
    nlohmann::json e{{"name", l.name}, {"ipc", l.ipc}, {"confidence", l.confidence}};
    put(e, "capacity_bytes", l.capacity_bytes);
    put(e, "capacity_lo_bytes", l.capacity_lo_bytes);
    put(e, "capacity_hi_bytes", l.capacity_hi_bytes);
    ic["levels"].push_back(e);
  }
  j["icache"] = ic;

  nlohmann::json pa;
  pa["status"] = status_json(r.partitions_status);
  pa["region_instructions"] = r.partition_region_instructions;
  pa["region_bytes"] = r.partition_region_bytes;
  put(pa, "halving", r.partition_halving);
  pa["points"] = nlohmann::json::array();
  for (const auto& p : r.partitions) {
    nlohmann::json e{{"warps", p.warps}, {"different", p.different}};
    json_fields::put_status(e, p.status);
    put(e, "ipc_per_warp", p.ipc_per_warp);
    pa["points"].push_back(e);
  }
  j["partitions"] = pa;

  nlohmann::json la;
  la["status"] = status_json(r.launch_status);
  la["api"] = r.launch_api;
  la["start_source"] = r.launch_start_source;
  put(la, "api_us", r.launch_api_us);
  put(la, "start_us", r.launch_start_us);
  put(la, "round_trip_us", r.launch_round_trip_us);
  put(la, "kernel_us", r.launch_kernel_us);
  put(la, "completion_us", r.launch_completion_us);
  put(la, "sync_uncertainty_us", r.sync_uncertainty_us);
  put(la, "timer_resolution_ns", r.timer_resolution_ns);
  if (r.launch_batches) la["batches"] = r.launch_batches;
  if (r.launch_round_trip_empty_kernel) la["round_trip_empty_kernel"] = true;
  if (!r.launch_round_trip_api.empty()) la["round_trip_api"] = r.launch_round_trip_api;
  if (!r.launch_wait.empty()) la["wait"] = r.launch_wait;
  for (const auto& [part, d] : r.launch_distribution_us)
    la["distribution_us"][part] = {{"min", d.min}, {"p10", d.p10}, {"median", d.median},
                                   {"p90", d.p90}, {"max", d.max}, {"n", d.n}};
  la["start_samples_us"] = r.launch_start_samples_us;
  la["round_trip_samples_us"] = r.launch_round_trip_samples_us;
  nlohmann::json rates = nlohmann::json::object();
  for (const auto& [mode, st] : r.rate_status) {
    nlohmann::json e = status_json(st);
    if (auto it = r.rate_kernels_per_s.find(mode); it != r.rate_kernels_per_s.end())
      e["kernels_per_s"] = it->second;
    if (auto it = r.rate_gpu_kernels_per_s.find(mode); it != r.rate_gpu_kernels_per_s.end())
      e["gpu_kernels_per_s"] = it->second;
    rates[mode] = e;
  }
  la["rates"] = rates;
  j["launch"] = la;

  nlohmann::json di;
  di["status"] = status_json(r.dispatch_status);
  di["blocks"] = r.dispatch_blocks;
  di["block_threads"] = r.dispatch_block_threads;
  put(di, "blocks_per_us", r.dispatch_blocks_per_us);
  put(di, "first_wave_us", r.dispatch_first_wave_us);
  put(di, "sm_skew_median_us", r.dispatch_sm_skew_median_us);
  put(di, "sm_skew_max_us", r.dispatch_sm_skew_max_us);
  di["trace"] = r.dispatch_trace;
  j["dispatch"] = di;

  // Only where the part ran or was turned away: older files and fixtures have no "refill".
  if (r.refill_blocks > 0 || !r.refill_status.ok()) {
    nlohmann::json rf;
    rf["status"] = status_json(r.refill_status);
    rf["blocks"] = r.refill_blocks;
    rf["block_threads"] = r.refill_block_threads;
    rf["waves"] = r.refill_waves;
    rf["spin_us"] = r.refill_spin_us;
    rf["resident_per_sm"] = r.refill_resident_per_sm;
    put(rf, "latency_us", r.refill_latency_us);
    put(rf, "latency_p10_us", r.refill_latency_p10_us);
    put(rf, "latency_p90_us", r.refill_latency_p90_us);
    put(rf, "sm_blocks_per_us", r.refill_sm_rate);
    put(rf, "blocks_per_us", r.refill_blocks_per_us);
    put(rf, "block_us", r.refill_block_us);
    nlohmann::json per = nlohmann::json::array();
    for (const auto& s : r.refill_per_sm)
      per.push_back({{"sm", s.sm},
                     {"resident", s.resident},
                     {"refills", s.refills},
                     {"latency_mean_us", s.latency_mean_us},
                     {"blocks_per_us", s.blocks_per_us}});
    rf["per_sm"] = per;
    j["refill"] = rf;
  }

  nlohmann::json oc;
  oc["status"] = status_json(r.occupancy_status);
  put(oc, "max_warps_per_sm", r.max_warps_per_sm);
  put(oc, "max_blocks_per_sm", r.max_blocks_per_sm);
  oc["points"] = nlohmann::json::array();
  for (const auto& p : r.occupancy) {
    nlohmann::json e{{"kind", p.kind},
                     {"block_threads", p.block_threads},
                     {"regs_requested", p.regs_requested},
                     {"regs_per_thread", p.regs_per_thread},
                     {"shared_bytes", p.shared_bytes},
                     {"max_warp_slot", p.max_warp_slot}};
    json_fields::put_status(e, p.status);
    put(e, "blocks_per_sm", p.blocks_per_sm);
    put(e, "warps_per_sm", p.warps_per_sm);
    put(e, "api_blocks_per_sm", p.api_blocks_per_sm);
    put(e, "predicted_warps_per_sm", p.predicted_warps_per_sm);
    oc["points"].push_back(e);
  }
  j["occupancy"] = oc;
}

// shape: every field of the result in the JSON's order, one line or block each
void from_json(const nlohmann::json& j, FrontendProbeResult& r) {
  r = FrontendProbeResult{};
  r.status = json_fields::get_status(j);
  get(j, "wall_seconds", r.wall_seconds);
  get(j, "language", r.language);
  get(j, "sms", r.sms);
  get(j, "note", r.note);
  get(j, "clock_mhz", r.clock_mhz);
  get(j, "clock_source", r.clock_source);
  get(j, "compile_seconds", r.compile_seconds);
  if (auto it = j.find("icache"); it != j.end()) {
    const auto& ic = *it;
    if (ic.contains("status")) r.icache_status = json_fields::get_status(ic["status"]);
    get(ic, "timed_instruction", r.timed_instruction);
    get(ic, "code_bytes_source", r.code_bytes_source);
    for (const auto& e : ic.value("points", nlohmann::json::array())) {
      IcacheCurvePoint p;
      get(e, "instructions", p.instructions);
      get(e, "loop_instructions", p.loop_instructions);
      get(e, "code_bytes", p.code_bytes);
      p.status = json_fields::get_status(e);
      get(e, "ipc", p.ipc);
      get(e, "first_pass_ipc", p.first_pass_ipc);
      get(e, "clock_mhz", p.clock_mhz);
      r.icache.push_back(p);
    }
    for (const auto& e : ic.value("levels", nlohmann::json::array())) {
      IcacheLevel l;
      get(e, "name", l.name);
      get(e, "ipc", l.ipc);
      get(e, "confidence", l.confidence);
      get(e, "capacity_bytes", l.capacity_bytes);
      get(e, "capacity_lo_bytes", l.capacity_lo_bytes);
      get(e, "capacity_hi_bytes", l.capacity_hi_bytes);
      r.icache_levels.push_back(l);
    }
  }
  if (auto it = j.find("partitions"); it != j.end()) {
    const auto& pa = *it;
    if (pa.contains("status")) r.partitions_status = json_fields::get_status(pa["status"]);
    get(pa, "region_instructions", r.partition_region_instructions);
    get(pa, "region_bytes", r.partition_region_bytes);
    get(pa, "halving", r.partition_halving);
    for (const auto& e : pa.value("points", nlohmann::json::array())) {
      PartitionPoint p;
      get(e, "warps", p.warps);
      get(e, "different", p.different);
      p.status = json_fields::get_status(e);
      get(e, "ipc_per_warp", p.ipc_per_warp);
      r.partitions.push_back(p);
    }
  }
  if (auto it = j.find("launch"); it != j.end()) {
    const auto& la = *it;
    if (la.contains("status")) r.launch_status = json_fields::get_status(la["status"]);
    get(la, "api", r.launch_api);
    get(la, "start_source", r.launch_start_source);
    get(la, "api_us", r.launch_api_us);
    get(la, "start_us", r.launch_start_us);
    get(la, "round_trip_us", r.launch_round_trip_us);
    get(la, "kernel_us", r.launch_kernel_us);
    get(la, "completion_us", r.launch_completion_us);
    get(la, "sync_uncertainty_us", r.sync_uncertainty_us);
    get(la, "timer_resolution_ns", r.timer_resolution_ns);
    get(la, "batches", r.launch_batches);
    get(la, "round_trip_empty_kernel", r.launch_round_trip_empty_kernel);
    get(la, "round_trip_api", r.launch_round_trip_api);
    get(la, "wait", r.launch_wait);
    if (auto d = la.find("distribution_us"); d != la.end() && d->is_object())
      for (const auto& [part, v] : d->items()) {
        LaunchDistribution x;
        get(v, "min", x.min);
        get(v, "p10", x.p10);
        get(v, "median", x.median);
        get(v, "p90", x.p90);
        get(v, "max", x.max);
        get(v, "n", x.n);
        r.launch_distribution_us[part] = x;
      }
    get(la, "start_samples_us", r.launch_start_samples_us);
    get(la, "round_trip_samples_us", r.launch_round_trip_samples_us);
    if (auto rt = la.find("rates"); rt != la.end())
      for (const auto& [mode, e] : rt->items()) {
        r.rate_status[mode] = json_fields::get_status(e);
        if (e.contains("kernels_per_s"))
          r.rate_kernels_per_s[mode] = e["kernels_per_s"].get<Summary>();
        if (e.contains("gpu_kernels_per_s"))
          r.rate_gpu_kernels_per_s[mode] = e["gpu_kernels_per_s"].get<double>();
      }
  }
  if (auto it = j.find("dispatch"); it != j.end()) {
    const auto& di = *it;
    if (di.contains("status")) r.dispatch_status = json_fields::get_status(di["status"]);
    get(di, "blocks", r.dispatch_blocks);
    get(di, "block_threads", r.dispatch_block_threads);
    get(di, "blocks_per_us", r.dispatch_blocks_per_us);
    get(di, "first_wave_us", r.dispatch_first_wave_us);
    get(di, "sm_skew_median_us", r.dispatch_sm_skew_median_us);
    get(di, "sm_skew_max_us", r.dispatch_sm_skew_max_us);
    get(di, "trace", r.dispatch_trace);
  }
  if (auto it = j.find("refill"); it != j.end()) {
    const auto& rf = *it;
    if (rf.contains("status")) r.refill_status = json_fields::get_status(rf["status"]);
    get(rf, "blocks", r.refill_blocks);
    get(rf, "block_threads", r.refill_block_threads);
    get(rf, "waves", r.refill_waves);
    get(rf, "spin_us", r.refill_spin_us);
    get(rf, "resident_per_sm", r.refill_resident_per_sm);
    get(rf, "latency_us", r.refill_latency_us);
    get(rf, "latency_p10_us", r.refill_latency_p10_us);
    get(rf, "latency_p90_us", r.refill_latency_p90_us);
    get(rf, "sm_blocks_per_us", r.refill_sm_rate);
    get(rf, "blocks_per_us", r.refill_blocks_per_us);
    get(rf, "block_us", r.refill_block_us);
    for (const auto& e : rf.value("per_sm", nlohmann::json::array())) {
      RefillSm s;
      get(e, "sm", s.sm);
      get(e, "resident", s.resident);
      get(e, "refills", s.refills);
      get(e, "latency_mean_us", s.latency_mean_us);
      get(e, "blocks_per_us", s.blocks_per_us);
      r.refill_per_sm.push_back(s);
    }
  }
  if (auto it = j.find("occupancy"); it != j.end()) {
    const auto& oc = *it;
    if (oc.contains("status")) r.occupancy_status = json_fields::get_status(oc["status"]);
    get(oc, "max_warps_per_sm", r.max_warps_per_sm);
    get(oc, "max_blocks_per_sm", r.max_blocks_per_sm);
    for (const auto& e : oc.value("points", nlohmann::json::array())) {
      FrontendOccupancyPoint p;
      get(e, "kind", p.kind);
      get(e, "block_threads", p.block_threads);
      get(e, "regs_requested", p.regs_requested);
      get(e, "regs_per_thread", p.regs_per_thread);
      get(e, "shared_bytes", p.shared_bytes);
      get(e, "max_warp_slot", p.max_warp_slot);
      p.status = json_fields::get_status(e);
      get(e, "blocks_per_sm", p.blocks_per_sm);
      get(e, "warps_per_sm", p.warps_per_sm);
      get(e, "api_blocks_per_sm", p.api_blocks_per_sm);
      get(e, "predicted_warps_per_sm", p.predicted_warps_per_sm);
      r.occupancy.push_back(p);
    }
  }
}

}  // namespace gd
