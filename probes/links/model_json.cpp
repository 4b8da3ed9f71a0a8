// The links probe's results in JSON and back.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <limits>

#include "bandwidth/bandwidth.hpp"
#include "gpudissect/json_fields.hpp"
#include "gpudissect/units.hpp"
#include "links/links.hpp"

namespace gd {

using json_fields::get;
using json_fields::get_status;
using json_fields::put;
using json_fields::put_status;

// ---- JSON ----

void to_json(nlohmann::json& j, const LinkGpu& g) {
  j = nlohmann::json{{"index", g.index},
                     {"name", g.name},
                     {"sms", g.sms},
                     {"pci_bus_id", g.pci_bus_id},
                     {"compute_capability", g.compute_capability}};
  put(j, "pcie_gen_current", g.pcie_gen_current);
  put(j, "pcie_width_current", g.pcie_width_current);
  put(j, "pcie_gen_max", g.pcie_gen_max);
  put(j, "pcie_width_max", g.pcie_width_max);
  put(j, "pcie_limit_gbps", g.pcie_limit_gbps);
  if (!g.pcie_limit_basis.empty()) j["pcie_limit_basis"] = g.pcie_limit_basis;
}

void from_json(const nlohmann::json& j, LinkGpu& g) {
  get(j, "index", g.index);
  get(j, "name", g.name);
  get(j, "sms", g.sms);
  get(j, "pci_bus_id", g.pci_bus_id);
  get(j, "compute_capability", g.compute_capability);
  get(j, "pcie_gen_current", g.pcie_gen_current);
  get(j, "pcie_width_current", g.pcie_width_current);
  get(j, "pcie_gen_max", g.pcie_gen_max);
  get(j, "pcie_width_max", g.pcie_width_max);
  get(j, "pcie_limit_gbps", g.pcie_limit_gbps);
  get(j, "pcie_limit_basis", g.pcie_limit_basis);
}

void to_json(nlohmann::json& j, const PairTopology& p) {
  j = nlohmann::json{{"a", p.a}, {"b", p.b}, {"nvlinks", p.nvlinks}};
  put(j, "nvlink_version_nvml", p.nvlink_version_nvml);
  if (p.nvlink_generation) j["nvlink_generation"] = p.nvlink_generation;
  if (p.via_nvswitch) j["via_nvswitch"] = true;
  if (!p.pcie_path.empty()) j["pcie_path"] = p.pcie_path;
  put(j, "limit_gbps", p.limit_gbps);
  if (!p.limit_basis.empty()) j["limit_basis"] = p.limit_basis;
}

void from_json(const nlohmann::json& j, PairTopology& p) {
  get(j, "a", p.a);
  get(j, "b", p.b);
  get(j, "nvlinks", p.nvlinks);
  get(j, "nvlink_version_nvml", p.nvlink_version_nvml);
  get(j, "nvlink_generation", p.nvlink_generation);
  get(j, "via_nvswitch", p.via_nvswitch);
  get(j, "pcie_path", p.pcie_path);
  get(j, "limit_gbps", p.limit_gbps);
  get(j, "limit_basis", p.limit_basis);
}

void to_json(nlohmann::json& j, const Topology& t) {
  j = nlohmann::json{{"gpus", t.gpus}, {"pairs", t.pairs}};
  nlohmann::json s;
  put_status(s, t.nvml);
  j["nvml"] = s;
}

void from_json(const nlohmann::json& j, Topology& t) {
  get(j, "gpus", t.gpus);
  get(j, "pairs", t.pairs);
  if (auto it = j.find("nvml"); it != j.end()) t.nvml = get_status(*it);
}

void to_json(nlohmann::json& j, const LinkLatency& l) {
  j = nlohmann::json::object();
  put_status(j, l.status);
  put(j, "ns", l.ns);
  put(j, "cycles", l.cycles);
  put(j, "clock_mhz", l.clock_mhz);
  if (l.footprint_bytes) j["footprint_bytes"] = l.footprint_bytes;
  if (l.hops_or_round_trips) j["hops_or_round_trips"] = l.hops_or_round_trips;
  if (!l.note.empty()) j["note"] = l.note;
  if (!l.by_sm.empty()) {
    nlohmann::json a = nlohmann::json::array();
    for (const LinkLatency::BySm& s : l.by_sm) {
      nlohmann::json e = {{"sm", s.sm}, {"ns", s.ns}};
      put(e, "cycles", s.cycles);
      a.push_back(e);
    }
    j["by_sm"] = a;
  }
}

void from_json(const nlohmann::json& j, LinkLatency& l) {
  l.status = get_status(j);
  get(j, "ns", l.ns);
  get(j, "cycles", l.cycles);
  get(j, "clock_mhz", l.clock_mhz);
  get(j, "footprint_bytes", l.footprint_bytes);
  get(j, "hops_or_round_trips", l.hops_or_round_trips);
  get(j, "note", l.note);
  l.by_sm.clear();
  if (auto it = j.find("by_sm"); it != j.end() && it->is_array())
    for (const nlohmann::json& e : *it) {
      LinkLatency::BySm s;
      get(e, "sm", s.sm);
      get(e, "ns", s.ns);
      get(e, "cycles", s.cycles);
      l.by_sm.push_back(s);
    }
}

void to_json(nlohmann::json& j, const LinkPair& p) {
  j = nlohmann::json{{"src", p.src},
                     {"dst", p.dst},
                     {"curves", p.curves},
                     {"chase", p.chase},
                     {"ping_pong", p.ping_pong}};
  put_status(j, p.status);
}

void from_json(const nlohmann::json& j, LinkPair& p) {
  p.status = get_status(j);
  get(j, "src", p.src);
  get(j, "dst", p.dst);
  get(j, "curves", p.curves);
  get(j, "chase", p.chase);
  get(j, "ping_pong", p.ping_pong);
}

void to_json(nlohmann::json& j, const CollectivePoint& p) {
  j = nlohmann::json{{"bytes", p.bytes}, {"count", p.count}};
  put_status(j, p.status);
  put(j, "time_us", p.time_us);
  put(j, "algbw_gbps", p.algbw_gbps);
  put(j, "busbw_gbps", p.busbw_gbps);
  if (p.checked) j["checked"] = true;
}

void from_json(const nlohmann::json& j, CollectivePoint& p) {
  get(j, "bytes", p.bytes);
  get(j, "count", p.count);
  p.status = get_status(j);
  get(j, "time_us", p.time_us);
  get(j, "algbw_gbps", p.algbw_gbps);
  get(j, "busbw_gbps", p.busbw_gbps);
  get(j, "checked", p.checked);
}

void to_json(nlohmann::json& j, const CollectiveCurve& c) {
  j = nlohmann::json{{"points", c.points}};
  put_status(j, c.status);
}

void from_json(const nlohmann::json& j, CollectiveCurve& c) {
  c.status = get_status(j);
  get(j, "points", c.points);
}

void to_json(nlohmann::json& j, const NcclResult& n) {
  j = nlohmann::json{{"library", n.library},
                     {"ranks", n.ranks},
                     {"environment", n.environment},
                     {"collectives", n.collectives}};
  put_status(j, n.status);
}

void from_json(const nlohmann::json& j, NcclResult& n) {
  n.status = get_status(j);
  get(j, "library", n.library);
  get(j, "ranks", n.ranks);
  get(j, "environment", n.environment);
  get(j, "collectives", n.collectives);
}

void to_json(nlohmann::json& j, const HostLinks& h) {
  j = nlohmann::json{{"all", h.all}, {"single", h.single}};
  put_status(j, h.status);
}

void from_json(const nlohmann::json& j, HostLinks& h) {
  h.status = get_status(j);
  get(j, "all", h.all);
  get(j, "single", h.single);
}

void to_json(nlohmann::json& j, const LinksProbeResult& r) {
  nlohmann::json p2p;
  put_status(p2p, r.p2p);
  j = nlohmann::json{{"wall_seconds", r.wall_seconds},
                     {"gpus", r.gpus},
                     {"topology", r.topology},
                     {"p2p", p2p},
                     {"pairs", r.pairs},
                     {"host", r.host},
                     {"nccl", r.nccl}};
  put_status(j, r.status);
}

void from_json(const nlohmann::json& j, LinksProbeResult& r) {
  r.status = get_status(j);
  get(j, "wall_seconds", r.wall_seconds);
  get(j, "gpus", r.gpus);
  get(j, "topology", r.topology);
  if (auto it = j.find("p2p"); it != j.end()) r.p2p = get_status(*it);
  get(j, "pairs", r.pairs);
  get(j, "host", r.host);
  get(j, "nccl", r.nccl);
}

}  // namespace gd
