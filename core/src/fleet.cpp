#include "gpudissect/fleet.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>
#include <stdexcept>

#include "gpudissect/fleet_units.hpp"
#include "gpudissect/gpu_state.hpp"
#include "gpudissect/json_fields.hpp"
#include "gpudissect/result.hpp"
#include "gpudissect/units.hpp"

namespace gd {

namespace {

std::string pct(double fraction) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%+.1f%%", 100 * fraction);
  return buf;
}

std::string extra(const FleetRank& r, const char* key) {
  auto it = r.device.extra.find(key);
  return it == r.device.extra.end() ? "" : it->second;
}

std::optional<double> figure_value(const Figure& f) {
  if (!f.status.ok() || !f.value || !std::isfinite(f.value->median)) return std::nullopt;
  return f.value->median;
}

int split_int(const std::string& s, const std::string& what) {
  try {
    size_t used = 0;
    const int v = std::stoi(s, &used);
    if (used != s.size() || v < 0) throw std::invalid_argument(s);
    return v;
  } catch (const std::exception&) {
    throw std::invalid_argument(what + ": '" + s + "' is not a rank number");
  }
}

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  size_t start = 0;
  for (;;) {
    const size_t p = s.find(sep, start);
    out.push_back(s.substr(start, p == std::string::npos ? std::string::npos : p - start));
    if (p == std::string::npos) return out;
    start = p + 1;
  }
}

}  // namespace

std::optional<double> fleet_median(std::vector<double> v) {
  if (v.empty()) return std::nullopt;
  return median(std::move(v));
}

std::optional<double> fleet_mad(const std::vector<double>& v) {
  const auto m = fleet_median(v);
  if (!m) return std::nullopt;
  std::vector<double> d;
  d.reserve(v.size());
  for (double x : v) d.push_back(std::fabs(x - *m));
  return median(std::move(d));
}

std::string fleet_bus_id(const FleetRank& r) { return extra(r, "pci_bus_id"); }
std::string fleet_uuid(const FleetRank& r) { return extra(r, "uuid"); }
std::string fleet_serial(const FleetRank& r) { return extra(r, "serial"); }

std::string fleet_ecc(const FleetRank& r) {
  const std::string mode = extra(r, "ecc");
  if (mode.empty()) return "";
  std::string s = "ECC " + mode;
  const std::string u = extra(r, "ecc_uncorrected_volatile"),
                    c = extra(r, "ecc_corrected_volatile");
  if (!u.empty() || !c.empty())
    s += ", " + (u.empty() ? "?" : u) + " uncorrected / " + (c.empty() ? "?" : c) +
         " corrected errors";
  return s;
}

bool is_alarming_throttle_reason(const std::string& reason) {
  return reason == "hw_slowdown" || reason == "sw_thermal_slowdown" ||
         reason == "hw_thermal_slowdown" || reason == "hw_power_brake_slowdown";
}

void to_json(nlohmann::json& j, const NodeLinks& n) {
  j = nlohmann::json{{"status", n.status.name()},
                     {"device_id", n.device_id},
                     {"wall_seconds", n.wall_seconds},
                     {"figures", n.figures}};
  if (!n.status.reason.empty()) j["reason"] = n.status.reason;
}

void from_json(const nlohmann::json& j, NodeLinks& n) {
  n.status.code = StatusCode::error;
  gd::json_fields::get(j, "status", n.status.code);
  n.status.reason = j.value("reason", "");
  n.device_id = j.value("device_id", "");
  n.wall_seconds = j.value("wall_seconds", 0.0);
  if (j.contains("figures")) n.figures = j.at("figures").get<std::vector<Figure>>();
}

void to_json(nlohmann::json& j, const FleetRank& r) {
  j = nlohmann::json{
      {"rank", r.rank},           {"local_rank", r.local_rank}, {"host", r.host},
      {"device_id", r.device_id}, {"status", r.status.name()},  {"wall_seconds", r.wall_seconds},
      {"device", r.device},       {"figures", r.figures}};
  if (!r.status.reason.empty()) j["reason"] = r.status.reason;
  if (!r.note.empty()) j["note"] = r.note;
  if (!r.injected.empty()) j["injected"] = r.injected;
  if (r.telemetry) j["telemetry"] = *r.telemetry;
  if (!r.result.is_null()) j["result"] = r.result;
  if (r.node_links) j["node_links"] = *r.node_links;
}

void from_json(const nlohmann::json& j, FleetRank& r) {
  gd::json_fields::need(j, "rank", r.rank);
  r.local_rank = 0;
  gd::json_fields::get(j, "local_rank", r.local_rank);
  r.host = j.value("host", "");
  r.device_id = j.value("device_id", "");
  r.status.code = StatusCode::error;
  gd::json_fields::get(j, "status", r.status.code);
  r.status.reason = j.value("reason", "");
  r.note = j.value("note", "");
  r.injected = j.value("injected", "");
  r.wall_seconds = j.value("wall_seconds", 0.0);
  if (j.contains("device")) r.device = j.at("device").get<DeviceInfo>();
  if (j.contains("telemetry")) r.telemetry = j.at("telemetry").get<Telemetry>();
  if (j.contains("figures")) r.figures = j.at("figures").get<std::vector<Figure>>();
  r.result = j.contains("result") ? j.at("result") : nlohmann::json();
  if (j.contains("node_links")) r.node_links = j.at("node_links").get<NodeLinks>();
}

FleetInjection parse_fleet_injection(const std::string& spec) {
  const std::string forms =
      "expected slow:RANK:FIGURE:FACTOR, fail:RANK or hang:RANK (got '" + spec + "')";
  const auto parts = split(spec, ':');
  FleetInjection inj;
  inj.kind = parts[0];
  if ((inj.kind == "fail" || inj.kind == "hang") && parts.size() == 2) {
    inj.rank = split_int(parts[1], "--inject " + spec);
    return inj;
  }
  if (inj.kind == "slow" && parts.size() == 4 && !parts[2].empty()) {
    inj.rank = split_int(parts[1], "--inject " + spec);
    inj.figure = parts[2];
    try {
      size_t used = 0;
      inj.factor = std::stod(parts[3], &used);
      if (used != parts[3].size() || !(inj.factor > 0) || !std::isfinite(inj.factor))
        throw std::invalid_argument(parts[3]);
    } catch (const std::exception&) {
      throw std::invalid_argument("--inject " + spec + ": factor '" + parts[3] +
                                  "' is not a positive number");
    }
    return inj;
  }
  throw std::invalid_argument("--inject: " + forms);
}

bool apply_slow_injection(FleetRank& r, const std::string& figure, double factor) {
  bool done = false;
  for (Figure& f : r.figures) {
    if (f.id != figure || !f.value) continue;
    Summary& s = *f.value;
    s.median *= factor;
    s.q1 *= factor;
    s.q3 *= factor;
    s.min *= factor;
    s.max *= factor;
    if (f.per_sm_per_clk) *f.per_sm_per_clk *= factor;
    done = true;
  }
  return done;
}

std::string to_string(CellMark m) {
  switch (m) {
    case CellMark::absent:
      return "absent";
    case CellMark::failed:
      return "failed";
    case CellMark::alone:
      return "alone";
    case CellMark::near:
      return "near";
    case CellMark::drift:
      return "drift";
    case CellMark::outlier:
      return "outlier";
    case CellMark::better:
      return "better";
  }
  return "?";
}

std::string to_string(GpuVerdict v) {
  switch (v) {
    case GpuVerdict::healthy:
      return "healthy";
    case GpuVerdict::outlier:
      return "outlier";
    case GpuVerdict::regressed:
      return "regressed";
    case GpuVerdict::failed:
      return "failed";
    case GpuVerdict::interrupted:
      return "interrupted";
    case GpuVerdict::busy:
      return "busy (another process)";
  }
  return "?";
}

int FleetReport::unhealthy() const {
  return static_cast<int>(std::count_if(gpus.begin(), gpus.end(), [](const FleetGpu& g) {
    return g.verdict != GpuVerdict::healthy && g.verdict != GpuVerdict::interrupted &&
           g.verdict != GpuVerdict::busy;
  }));
}

int FleetReport::busy() const {
  return static_cast<int>(std::count_if(
      gpus.begin(), gpus.end(), [](const FleetGpu& g) { return g.verdict == GpuVerdict::busy; }));
}

namespace {

// The rank's run's gpu_state, read once for both questions asked of it (busy? why?);
// nullopt where there is none, or one this version cannot read (it says nothing).
std::optional<GpuState> rank_gpu_state(const FleetRank& r) {
  if (!r.result.is_object()) return std::nullopt;
  auto it = r.result.find("gpu_state");
  if (it == r.result.end() || !it->is_object()) return std::nullopt;
  try {
    return it->get<GpuState>();
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

bool rank_busy(const FleetRank& r, const std::optional<GpuState>& st) {
  return r.status.code == StatusCode::busy || (st && st->shared);
}

// Rows: figure ids in first-seen order over the measured ranks; then the cells' values
// (first figure of an id per rank; units as the row's).
void build_rows(FleetReport& rep) {
  const size_t n = rep.ranks.size();
  std::map<std::string, size_t> row_of;
  for (const FleetRank& r : rep.ranks) {
    if (!r.status.ok()) continue;
    for (const Figure& f : r.figures) {
      if (row_of.count(f.id)) continue;
      row_of[f.id] = rep.rows.size();
      FleetRow row;
      row.id = f.id;
      row.label = f.label;
      row.unit = f.unit;
      row.higher_is_better = f.higher_is_better;
      row.cells.resize(n);
      rep.rows.push_back(std::move(row));
    }
  }
  for (size_t i = 0; i < n; ++i) {
    const FleetRank& r = rep.ranks[i];
    if (!r.status.ok()) continue;
    std::set<std::string> seen;
    for (const Figure& f : r.figures) {
      if (!seen.insert(f.id).second) continue;
      FleetRow& row = rep.rows[row_of.at(f.id)];
      FleetCell& c = row.cells[i];
      const auto v = figure_value(f);
      if (v && f.unit == row.unit) {
        c.value = v;
        c.mark = CellMark::near;
        row.resolution = std::max(row.resolution, f.resolution.value_or(0));
      } else {
        c.mark = CellMark::failed;
        c.reason = !f.status.ok() ? f.status.with_reason()
                   : v            ? "unit " + f.unit + " differs from the fleet's"
                                  : "no value";
      }
    }
  }
}

// One measured cell against the median of the other GPUs' values (`others`, not empty).
// Returns the reason line when it makes its GPU an outlier, "" otherwise.
std::string judge_value(const FleetRow& row, FleetCell& c, const std::vector<double>& others,
                        const FleetOptions& options) {
  c.median = fleet_median(others);
  c.mad = fleet_mad(others);
  const double med = *c.median, x = *c.value;
  const double scale = std::max(kMadToSigma * *c.mad, options.noise_floor * std::fabs(med));
  if (scale > 0)
    c.z = (x - med) / scale;
  else
    c.z = (x == med) ? 0.0 : (x > med ? HUGE_VAL : -HUGE_VAL);
  if (med != 0) c.deviation = (x - med) / std::fabs(med);
  const double worse_z = row.higher_is_better ? -*c.z : *c.z;
  const double worse_dev =
      c.deviation ? (row.higher_is_better ? -*c.deviation : *c.deviation) : 0.0;
  const bool beyond_dev =
      !c.deviation || std::fabs(*c.deviation) > std::max(options.min_deviation, row.resolution);
  if (worse_z > options.threshold && beyond_dev && worse_dev >= 0) {
    c.mark = CellMark::outlier;
    c.flags = true;
    return row.id + " " + fleet_quantity(x, row.unit) + ": " +
           (c.deviation ? pct(*c.deviation) + " vs" : "vs") + " median " +
           fleet_quantity(med, row.unit) + " of the others (robust z " +
           format_significant(*c.z, 2) + ")";
  }
  if (-worse_z > options.threshold && beyond_dev)
    c.mark = CellMark::better;
  else if (worse_z > options.threshold / 2)
    c.mark = CellMark::drift;
  else
    c.mark = CellMark::near;
  return "";
}

// Every cell of every row; the reasons of each GPU's flagged cells, by rank index.
std::vector<std::vector<std::string>> judge_rows(FleetReport& rep, const std::vector<bool>& busy,
                                                 const FleetOptions& options) {
  const size_t n = rep.ranks.size();
  std::vector<std::vector<std::string>> reasons(n);
  for (FleetRow& row : rep.rows) {
    std::vector<double> all;
    int measured = 0;  // ranks that have this figure at all (ok or not)
    for (size_t i = 0; i < n; ++i) {
      if (busy[i]) continue;  // a shared GPU's figures are no yardstick
      if (row.cells[i].value) all.push_back(*row.cells[i].value);
      if (row.cells[i].mark != CellMark::absent) ++measured;
    }
    row.median = fleet_median(all);
    row.mad = fleet_mad(all);
    for (size_t i = 0; i < n; ++i) {
      FleetCell& c = row.cells[i];
      if (c.mark == CellMark::absent || busy[i]) continue;  // a busy GPU is not judged
      std::vector<double> others;
      for (size_t k = 0; k < n; ++k)
        if (k != i && !busy[k] && row.cells[k].value) others.push_back(*row.cells[k].value);
      if (c.mark == CellMark::failed) {
        // Failed here but ok on most of the others: this GPU is the odd one.
        const int other_measured = measured - 1;
        if (other_measured > 0 && 2 * static_cast<int>(others.size()) > other_measured) {
          c.flags = true;
          reasons[i].push_back(row.id + " failed (" + c.reason + "), ok on " +
                               std::to_string(others.size()) + " other GPU(s)");
        }
      } else if (others.empty()) {
        c.mark = CellMark::alone;
      } else if (std::string why = judge_value(row, c, others, options); !why.empty()) {
        reasons[i].push_back(std::move(why));
      }
    }
  }
  return reasons;
}

std::string uncorrected_ecc(const FleetRank& r) {
  const std::string u = extra(r, "ecc_uncorrected_volatile");
  return !u.empty() && u != "0" ? "ECC: " + u + " uncorrected memory errors since the driver loaded"
                                : "";
}

// Not judged: its figures were measured beside another process. Uncorrected ECC errors
// still make it sick (the verdict that wins, exit 3).
void busy_verdict(FleetGpu& g, const FleetRank& r, const std::optional<GpuState>& st) {
  g.verdict = GpuVerdict::busy;
  if (r.status.code == StatusCode::busy)
    g.reasons.push_back(r.status.reason);
  else if (st)
    for (const std::string& why : st->reasons) g.reasons.push_back(why);
  if (const std::string ecc = uncorrected_ecc(r); !ecc.empty()) {
    g.reasons.push_back(ecc);
    g.verdict = GpuVerdict::outlier;
  }
}

void baseline_verdict(FleetGpu& g, const FleetRank& r, const CompareInput& baseline,
                      double tolerance) {
  CompareInput cur;
  cur.name = r.device.name;
  cur.label = r.host + " rank " + std::to_string(r.rank);
  cur.backend = r.device.backend;
  cur.figures = r.figures;
  // A fleet profile measures a part of what a full baseline holds: the figures it did
  // not measure are listed, not failures (a failed probe still fails its figures).
  g.baseline = compare_baseline(baseline, cur, tolerance, /*allow_missing=*/true);
  g.baseline_regressions = g.baseline->regressions();
  for (const BaselineItem& it : g.baseline->items) {
    if (!is_regression(it.verdict)) continue;
    std::string line = it.id + " against the baseline: " + to_string(it.verdict);
    if (it.change) {  // (appended piece by piece: GCC 12 -Wrestrict)
      line += " ";
      line += pct(*it.change);
    }
    if (it.baseline && it.current) {
      line += " (";
      line += fleet_quantity(*it.baseline, it.unit);
      line += " -> ";
      line += fleet_quantity(*it.current, it.unit);
      line += ")";
    }
    if (!it.reason.empty()) {
      line += ": ";
      line += it.reason;
    }
    g.reasons.push_back(line);
  }
  if (g.baseline_regressions > 0 && g.verdict == GpuVerdict::healthy)
    g.verdict = GpuVerdict::regressed;
}

int verdict_order(GpuVerdict v) {
  switch (v) {
    case GpuVerdict::failed:
      return 0;
    case GpuVerdict::outlier:
      return 1;
    case GpuVerdict::regressed:
      return 2;
    case GpuVerdict::busy:
      return 3;
    case GpuVerdict::healthy:
      return 4;
    case GpuVerdict::interrupted:
      return 5;
  }
  return 6;
}

// The notes: a fleet of two or fewer, ranks that measured one GPU (`same_gpu`), injections,
// and the nodes' links.
void add_notes(FleetReport& rep, const std::vector<bool>& busy,
               const std::map<std::pair<std::string, std::string>, std::vector<int>>& same_gpu) {
  const size_t n = rep.ranks.size();
  int measured = 0;
  for (size_t i = 0; i < n; ++i) measured += rep.ranks[i].status.ok() && !busy[i];
  if (measured == 2)
    rep.notes.push_back(
        "two GPUs measured: each is judged against the other alone, so a figure worse on one "
        "flags that one; with three or more the median of the others decides");
  if (measured < 2 && n > 0)
    rep.notes.push_back("fewer than two GPUs measured: nothing to compare with");
  for (const auto& [key, ranks_of] : same_gpu)
    if (ranks_of.size() > 1) {
      std::string list;
      for (int k : ranks_of) list += (list.empty() ? "" : ", ") + std::to_string(k);
      rep.notes.push_back("ranks " + list + " measured the same GPU (" + key.first + " " +
                          key.second + "): their figures are not independent");
    }
  for (const FleetRank& r : rep.ranks)
    if (!r.injected.empty())
      rep.notes.push_back("rank " + std::to_string(r.rank) + ": fault injected for testing (" +
                          r.injected + ")");
  for (const FleetRank& r : rep.ranks)
    if (r.node_links) rep.nodes.push_back({r.host, r.rank, *r.node_links});
}

}  // namespace

bool fleet_rank_busy(const FleetRank& r) { return rank_busy(r, rank_gpu_state(r)); }

FleetReport analyse_fleet(std::vector<FleetRank> ranks, const FleetOptions& options,
                          const CompareInput* baseline) {
  FleetReport rep;
  std::sort(ranks.begin(), ranks.end(),
            [](const FleetRank& a, const FleetRank& b) { return a.rank < b.rank; });
  rep.ranks = std::move(ranks);
  rep.options = options;
  const size_t n = rep.ranks.size();
  std::vector<std::optional<GpuState>> state(n);
  std::vector<bool> busy(n);
  for (size_t i = 0; i < n; ++i) {
    state[i] = rank_gpu_state(rep.ranks[i]);
    busy[i] = rank_busy(rep.ranks[i], state[i]);
  }
  build_rows(rep);
  const auto reasons = judge_rows(rep, busy, options);

  // Per GPU: failed, outlier (figures, throttling), regressed against the baseline.
  std::map<std::pair<std::string, std::string>, std::vector<int>> same_gpu;
  for (size_t i = 0; i < n; ++i) {
    const FleetRank& r = rep.ranks[i];
    FleetGpu g;
    g.index = static_cast<int>(i);
    if (busy[i]) {
      busy_verdict(g, r, state[i]);
    } else if (!r.status.ok()) {
      g.verdict =
          r.status.code == StatusCode::interrupted ? GpuVerdict::interrupted : GpuVerdict::failed;
      g.reasons.push_back(r.status.with_reason());
    } else {
      // The bus id names a GPU on its host; without one (OpenCL) the device id does (CUDA
      // ids are not used: with one visible GPU per task every rank's is cuda:0).
      if (!fleet_bus_id(r).empty())
        same_gpu[{r.host, fleet_bus_id(r)}].push_back(r.rank);
      else if (r.device.backend != "cuda" && !r.device_id.empty())
        same_gpu[{r.host, r.device_id}].push_back(r.rank);
      g.reasons = reasons[i];
      if (r.telemetry)
        for (const auto& t : r.telemetry->throttle_reasons)
          if (is_alarming_throttle_reason(t)) g.reasons.push_back("clocks throttled: " + t);
      if (const std::string ecc = uncorrected_ecc(r); !ecc.empty()) g.reasons.push_back(ecc);
      if (!g.reasons.empty()) g.verdict = GpuVerdict::outlier;
      if (baseline && options.baseline_tolerance)
        baseline_verdict(g, r, *baseline, *options.baseline_tolerance);
      fleet_soak_verdict(g, r);
    }
    rep.gpus.push_back(std::move(g));
  }
  std::stable_sort(rep.gpus.begin(), rep.gpus.end(), [](const FleetGpu& a, const FleetGpu& b) {
    return verdict_order(a.verdict) < verdict_order(b.verdict);
  });
  add_notes(rep, busy, same_gpu);
  return rep;
}

nlohmann::json fleet_to_json(const FleetReport& rep, const nlohmann::json& run_info) {
  nlohmann::json j;
  j["fleet_schema_version"] = kFleetSchemaVersion;
  j["run"] = run_info;
  j["settings"] = {{"threshold", rep.options.threshold},
                   {"min_deviation", rep.options.min_deviation},
                   {"noise_floor", rep.options.noise_floor}};
  if (rep.options.baseline_tolerance)
    j["settings"]["baseline_tolerance"] = *rep.options.baseline_tolerance;
  j["exit_status"] = rep.exit_code();
  j["notes"] = rep.notes;
  nlohmann::json verdicts = nlohmann::json::array();
  for (const FleetGpu& g : rep.gpus) {
    const FleetRank& r = rep.ranks[g.index];
    nlohmann::json v = {{"rank", r.rank},
                        {"host", r.host},
                        {"device_id", r.device_id},
                        {"bus_id", fleet_bus_id(r)},
                        {"verdict", to_string(g.verdict)},
                        {"reasons", g.reasons}};
    if (!fleet_uuid(r).empty()) v["uuid"] = fleet_uuid(r);
    if (!fleet_serial(r).empty()) v["serial"] = fleet_serial(r);
    if (g.baseline) v["baseline_regressions"] = g.baseline_regressions;
    if (g.soak_regressions) v["soak_regressions"] = *g.soak_regressions;
    verdicts.push_back(std::move(v));
  }
  j["verdicts"] = std::move(verdicts);
  nlohmann::json rows = nlohmann::json::array();
  for (const FleetRow& row : rep.rows) {
    nlohmann::json cells = nlohmann::json::array();
    for (size_t i = 0; i < row.cells.size(); ++i) {
      const FleetCell& c = row.cells[i];
      nlohmann::json cj = {{"rank", rep.ranks[i].rank}, {"mark", to_string(c.mark)}};
      if (c.value) cj["value"] = *c.value;
      if (c.median) cj["median_of_others"] = *c.median;
      if (c.mad) cj["mad_of_others"] = *c.mad;
      if (c.z && std::isfinite(*c.z)) cj["z"] = *c.z;
      if (c.deviation) cj["deviation"] = *c.deviation;
      if (!c.reason.empty()) cj["reason"] = c.reason;
      if (c.flags) cj["flags"] = true;
      cells.push_back(std::move(cj));
    }
    nlohmann::json rj = {{"id", row.id},
                         {"label", row.label},
                         {"unit", row.unit},
                         {"higher_is_better", row.higher_is_better},
                         {"cells", std::move(cells)}};
    if (row.median) rj["median"] = *row.median;
    if (row.mad) rj["mad"] = *row.mad;
    rows.push_back(std::move(rj));
  }
  j["figures"] = std::move(rows);
  nlohmann::json nodes = nlohmann::json::array();
  for (const FleetNode& n : rep.nodes) {
    nlohmann::json nj = n.links;
    nj["host"] = n.host;
    nj["rank"] = n.rank;
    nodes.push_back(std::move(nj));
  }
  j["nodes"] = std::move(nodes);
  j["ranks"] = rep.ranks;
  return j;
}

}  // namespace gd
