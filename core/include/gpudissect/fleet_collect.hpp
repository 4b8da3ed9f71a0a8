// A fleet's ranks from run JSONs: the live fleet's ranks read their own run's JSON, and
// `fleet --collect` reads run JSONs that separate `gpudissect run` invocations wrote (other
// nodes, other times, a job array). Both go through fleet_fill_from_result, so a collected
// fleet is judged on exactly what a live one would be. GPU-free.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "gpudissect/fleet.hpp"

namespace gd {

// Sets r.result, r.device, r.figures and r.telemetry (NVML's readings around the bandwidth
// or latency probe, the one after it preferred) from a run JSON. Throws on a malformed one.
void fleet_fill_from_result(FleetRank& r, const nlohmann::json& result);

// The host a run JSON says it ran on: its top-level provenance.host, "" where it has none.
std::string run_json_host(const nlohmann::json& run);

// The name a collected file stands for when its JSON names no host: "node-a" for
// ".../node-a.json" or ".../node-a.json.gz".
std::string collect_source_name(const std::string& path);

// One rank of a collected fleet: `rank`, the host (run_json_host, else the file's name), the
// device id the run opened, status ok, and a note naming every probe that did not end ok.
// `run` must hold its figures (run_result_from_json derives them for files that have none).
FleetRank fleet_rank_from_run_json(const nlohmann::json& run, const std::string& path, int rank);

// local_rank: the rank's index among the ranks of its host, in rank order.
void assign_local_ranks(std::vector<FleetRank>& ranks);

}  // namespace gd
