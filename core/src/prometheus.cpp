#include "gpudissect/prometheus.hpp"

#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <map>
#include <sstream>

#include "gpudissect/fleet.hpp"
#include "gpudissect/result.hpp"

namespace gd {

namespace {

std::string extra_of(const DeviceInfo& d, const char* key) {
  auto it = d.extra.find(key);
  return it == d.extra.end() ? "" : it->second;
}

// HELP text: backslash and line feed escaped (quotes may stand as they are).
std::string help_text(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '\\')
      out += "\\\\";
    else if (c == '\n')
      out += "\\n";
    else
      out += c;
  }
  return out;
}

using Labels = std::vector<std::pair<std::string, std::string>>;

std::string label_set(const Labels& labels) {
  if (labels.empty()) return "";
  std::string s = "{";
  for (size_t i = 0; i < labels.size(); ++i)
    s += (i ? "," : "") + labels[i].first + "=\"" + prometheus_label_value(labels[i].second) + "\"";
  return s + "}";
}

Labels gpu_labels(const PrometheusGpu& g) {
  Labels l = {
      {"uuid", g.uuid}, {"pci_bus_id", g.pci_bus_id}, {"host", g.host}, {"backend", g.backend}};
  if (g.rank) l.emplace_back("rank", std::to_string(*g.rank));
  return l;
}

// The families in the order they were first named, each with its HELP and samples.
struct Families {
  struct Family {
    std::string help;
    std::vector<std::string> samples;
  };
  std::vector<std::string> order;
  std::map<std::string, Family> by_name;

  void add(const std::string& name, const std::string& help, const Labels& labels, double v) {
    auto [it, fresh] = by_name.try_emplace(name);
    if (fresh) {
      order.push_back(name);
      it->second.help = help;
    }
    it->second.samples.push_back(name + label_set(labels) + " " + prometheus_number(v));
  }
  std::string text() const {
    std::ostringstream os;
    for (const std::string& name : order) {
      const Family& f = by_name.at(name);
      os << "# HELP " << name << " " << help_text(f.help) << "\n# TYPE " << name << " gauge\n";
      for (const std::string& s : f.samples) os << s << "\n";
    }
    return os.str();
  }
};

const char* const kVerdicts[] = {"healthy", "outlier",     "regressed",
                                 "failed",  "interrupted", "busy (another process)"};

PrometheusGpu gpu_of(const DeviceInfo& d, const std::string& host, const std::string& started) {
  PrometheusGpu g;
  g.uuid = extra_of(d, "uuid");
  g.pci_bus_id = extra_of(d, "pci_bus_id");
  g.host = host;
  g.backend = d.backend;
  g.started_unix = iso8601_to_unix(started);
  return g;
}

}  // namespace

std::string prometheus_metric_name(const std::string& s) {
  std::string out;
  for (char c : s) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '_' || c == ':';
    out += ok ? c : '_';
  }
  if (out.empty() || (out[0] >= '0' && out[0] <= '9')) out.insert(out.begin(), '_');
  return out;
}

std::string prometheus_label_value(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '\\')
      out += "\\\\";
    else if (c == '"')
      out += "\\\"";
    else if (c == '\n')
      out += "\\n";
    else
      out += c;
  }
  return out;
}

std::string prometheus_number(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
  char buf[64];
  for (int digits = 6; digits <= 17; ++digits) {  // the shortest text that reads back as v
    std::snprintf(buf, sizeof buf, "%.*g", digits, v);
    if (std::strtod(buf, nullptr) == v) break;
  }
  return buf;
}

std::optional<double> iso8601_to_unix(const std::string& s) {
  std::tm tm{};
  char z = 0;
  if (std::sscanf(s.c_str(), "%4d-%2d-%2dT%2d:%2d:%2d%c", &tm.tm_year, &tm.tm_mon, &tm.tm_mday,
                  &tm.tm_hour, &tm.tm_min, &tm.tm_sec, &z) != 7 ||
      z != 'Z')
    return std::nullopt;
  tm.tm_year -= 1900;
  tm.tm_mon -= 1;
  return static_cast<double>(timegm(&tm));
}

std::string prometheus_text(const std::vector<PrometheusGpu>& gpus, std::optional<int> fleet_exit) {
  Families fam;
  for (const PrometheusGpu& g : gpus) {
    for (const Figure& f : g.figures) {
      if (!f.status.ok() || !f.value || !std::isfinite(f.value->median)) continue;
      Labels l = {{"figure", f.id}, {"unit", f.unit}};
      for (auto& kv : gpu_labels(g)) l.push_back(kv);
      fam.add(prometheus_metric_name("gpudissect_" + f.id),
              "gpudissect headline figure " + f.id + ": " + f.label + " (" + f.unit + ")", l,
              f.value->median);
    }
  }
  for (const PrometheusGpu& g : gpus)
    if (g.started_unix)
      fam.add("gpudissect_run_timestamp_seconds",
              "When the gpudissect run of this GPU started (seconds since 1970, UTC)",
              gpu_labels(g), *g.started_unix);
  for (const PrometheusGpu& g : gpus) {
    if (!g.verdict) continue;
    for (const char* v : kVerdicts) {
      Labels l = gpu_labels(g);
      l.emplace_back("verdict", v);
      fam.add("gpudissect_fleet_gpu_verdict",
              "The fleet's verdict on this GPU: 1 for its verdict, 0 for the others", l,
              *g.verdict == v ? 1 : 0);
    }
  }
  for (const PrometheusGpu& g : gpus)
    if (g.verdict)
      fam.add("gpudissect_fleet_gpu_healthy", "1 when the fleet judged this GPU healthy, else 0",
              gpu_labels(g), *g.verdict == "healthy" ? 1 : 0);
  if (fleet_exit)
    fam.add("gpudissect_fleet_exit_status",
            "gpudissect fleet's exit status: 0 healthy, 3 drain a GPU, 4 a GPU was busy", {},
            *fleet_exit);
  return fam.text();
}

std::string prometheus_host_name() {
  char buf[256] = {};
  if (gethostname(buf, sizeof buf - 1) != 0 || !buf[0]) return "?";
  return buf;
}

std::string prometheus_run(const RunResult& r, const std::string& host) {
  PrometheusGpu g = gpu_of(r.device, host, r.tool.started_at);
  g.figures = r.figures;
  return prometheus_text({g});
}

std::string prometheus_fleet(const FleetReport& rep) {
  std::vector<PrometheusGpu> gpus;
  for (const FleetGpu& v : rep.gpus) {
    const FleetRank& r = rep.ranks[v.index];
    std::string started;
    if (r.result.is_object() && r.result.contains("tool") && r.result["tool"].is_object() &&
        r.result["tool"].contains("started_at") && r.result["tool"]["started_at"].is_string())
      started = r.result["tool"]["started_at"].get<std::string>();
    PrometheusGpu g = gpu_of(r.device, r.host, started);
    g.rank = r.rank;
    if (r.status.ok()) g.figures = r.figures;
    g.verdict = to_string(v.verdict);
    gpus.push_back(std::move(g));
  }
  return prometheus_text(gpus, rep.exit_code());
}

}  // namespace gd
