#include "gpudissect/fleet_collect.hpp"

#include <filesystem>
#include <map>

#include "gpudissect/result.hpp"

namespace gd {

void fleet_fill_from_result(FleetRank& r, const nlohmann::json& result) {
  r.result = result;
  r.device = result.at("device").get<DeviceInfo>();
  if (result.contains("figures")) r.figures = result.at("figures").get<std::vector<Figure>>();
  const nlohmann::json probes = result.value("probes", nlohmann::json::object());
  if (!probes.is_object()) return;
  for (const char* p : {"bandwidth", "latency"}) {
    if (r.telemetry || !probes.contains(p) || !probes.at(p).is_object()) continue;
    for (const char* k : {"telemetry_after", "telemetry_before"})
      if (!r.telemetry && probes.at(p).contains(k))
        r.telemetry = probes.at(p).at(k).get<Telemetry>();
  }
}

std::string run_json_host(const nlohmann::json& run) {
  if (!run.is_object()) return "";
  auto p = run.find("provenance");
  if (p == run.end() || !p->is_object()) return "";
  auto h = p->find("host");
  return h != p->end() && h->is_string() ? h->get<std::string>() : "";
}

std::string collect_source_name(const std::string& path) {
  std::string name = std::filesystem::path(path).filename().string();
  for (const std::string suffix : {".gz", ".json"})
    if (name.size() > suffix.size() &&
        name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0)
      name.erase(name.size() - suffix.size());
  return name;
}

FleetRank fleet_rank_from_run_json(const nlohmann::json& run, const std::string& path, int rank) {
  FleetRank r;
  r.rank = rank;
  r.host = run_json_host(run);
  if (r.host.empty()) r.host = collect_source_name(path);
  fleet_fill_from_result(r, run);
  r.device_id = r.device.id;
  r.status = {};
  const nlohmann::json probes = run.value("probes", nlohmann::json::object());
  if (probes.is_object())
    for (const auto& [name, pj] : probes.items()) {
      if (!pj.is_object() || !pj.contains("status") || !pj.at("status").is_string()) continue;
      const std::string st = pj.at("status").get<std::string>();
      if (st == "ok") continue;
      std::string why = name + " " + st;
      if (pj.contains("reason") && pj.at("reason").is_string())
        why += ": " + pj.at("reason").get<std::string>();
      r.note += (r.note.empty() ? "a probe did not end ok: " : "; ") + why;
    }
  return r;
}

void assign_local_ranks(std::vector<FleetRank>& ranks) {
  std::map<std::string, int> next;
  for (FleetRank& r : ranks) r.local_rank = next[r.host]++;
}

}  // namespace gd
