// The reference database (data/reference/*.json): validation, loading, lookup.
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <set>
#include <stdexcept>

#include "gpudissect/compare.hpp"
#include "gpudissect/compare_internal.hpp"
#include "gpudissect/json_read.hpp"

namespace gd {

namespace fs = std::filesystem;
using json = nlohmann::json;
using namespace compare_detail;

namespace {

// The units an id may carry, by its shape; empty: any known unit.
std::vector<std::string> units_for_id(const std::string& id) {
  if (ends_with(id, ".capacity")) return {"bytes"};
  if (ends_with(id, ".cycles")) return {"cycles"};
  if (starts_with(id, "compute.") && ends_with(id, ".latency")) return {"cycles", "ns"};
  if (starts_with(id, "latency.")) return {"ns", "us"};
  if (starts_with(id, "bandwidth.")) return {"GB/s", "TB/s", "MB/s", "B/clk/SM"};
  if (starts_with(id, "compute."))
    return {"TFLOP/s", "GFLOP/s",    "TOP/s",       "GOP/s",
            "Tinst/s", "ops/clk/SM", "FLOP/clk/SM", "OP/clk/SM"};
  if (starts_with(id, "icache.") || starts_with(id, "capacity.")) return {"bytes"};
  return {};
}

std::string text_field(const json& j, const char* key) {
  return j.contains(key) && j[key].is_string() ? j[key].get<std::string>() : std::string();
}

// Problems of a reference document, one part at a time; each appends to `e`.
struct Checker {
  std::vector<std::string>& e;
  std::set<std::string> source_keys;

  void source_of(const json& o, const std::string& what) {
    const std::string src = text_field(o, "source");
    if (src.empty())
      e.push_back(what + ": no \"source\"");
    else if (!source_keys.count(src))
      e.push_back(what + ": source '" + src + "' is not in \"sources\"");
  }

  void header(const json& j) {
    if (text_field(j, "format") != "gpudissect-reference")
      e.push_back("\"format\" must be \"gpudissect-reference\"");
    if (!j.contains("format_version") || !j["format_version"].is_number_integer() ||
        json_to_integer<int>(j["format_version"]) != 1)
      e.push_back("\"format_version\" must be 1");
    if (text_field(j, "name").empty()) e.push_back("no \"name\"");
    if (j.contains("aliases") &&
        (!j["aliases"].is_array() || !std::all_of(j["aliases"].begin(), j["aliases"].end(),
                                                  [](const json& a) { return a.is_string(); })))
      e.push_back("\"aliases\" must be a list of strings");
  }

  void sources(const json& j) {
    if (!j.contains("sources") || !j["sources"].is_array() || j["sources"].empty()) {
      e.push_back("no \"sources\" list");
      return;
    }
    for (const json& s : j["sources"]) {
      const std::string key = s.is_object() ? text_field(s, "key") : "";
      if (key.empty() || text_field(s, "document").empty() || text_field(s, "title").empty()) {
        e.push_back("a source lacks key, document or title: " + s.dump());
        continue;
      }
      if (!source_keys.insert(key).second) e.push_back("duplicate source key '" + key + "'");
    }
  }

  void facts(const json& f) {
    if (!f.is_object()) {
      e.push_back("\"facts\" must be an object");
      return;
    }
    if (f.contains("compute_units")) {
      const json& cu = f["compute_units"];
      if (!cu.is_object() || !cu.contains("value") || !cu["value"].is_number_integer() ||
          json_to_integer<int>(cu["value"]).value_or(0) <= 0 || text_field(cu, "unit_name").empty())
        e.push_back("facts.compute_units needs a positive integer \"value\" and a \"unit_name\"");
      else
        source_of(cu, "facts.compute_units");
    }
    if (f.contains("clock_mhz")) {
      const json& c = f["clock_mhz"];
      if (!c.is_object() || !c.contains("value") || !c["value"].is_number() ||
          c["value"].get<double>() <= 0)
        e.push_back("facts.clock_mhz needs a positive \"value\"");
      else
        source_of(c, "facts.clock_mhz");
    }
    if (!f.contains("other")) return;
    if (!f["other"].is_array()) {
      e.push_back("facts.other must be a list");
      return;
    }
    for (const json& o : f["other"]) {
      if (!o.is_object() || text_field(o, "what").empty() || text_field(o, "value").empty())
        e.push_back("facts.other entry needs \"what\" and \"value\" (text): " + o.dump());
      else
        source_of(o, "fact '" + text_field(o, "what") + "'");
    }
  }

  void unit_of(const json& f, const std::string& id, const std::string& what) {
    const auto& units = known_units();
    const std::string unit = text_field(f, "unit");
    if (unit.empty()) {
      e.push_back(what + ": no \"unit\"");
    } else if (std::find(units.begin(), units.end(), unit) == units.end()) {
      e.push_back(what + ": unknown unit '" + unit + "'");
    } else {
      const auto allowed = units_for_id(id);
      if (!allowed.empty() && std::find(allowed.begin(), allowed.end(), unit) == allowed.end())
        e.push_back(what + ": unit '" + unit + "' does not fit the id");
    }
  }

  void figure(const json& f, std::set<std::string>& ids) {
    const std::string id = f.is_object() ? text_field(f, "id") : "";
    const std::string what = "figure '" + (id.empty() ? f.dump() : id) + "'";
    if (!f.is_object() || id.empty()) {
      e.push_back("a figure has no \"id\": " + f.dump());
      return;
    }
    if (!well_formed_figure_id(id)) e.push_back(what + ": malformed id");
    if (!ids.insert(id).second) e.push_back(what + ": duplicate id");
    if (!f.contains("value") || !f["value"].is_number() || !std::isfinite(f["value"].get<double>()))
      e.push_back(what + ": no numeric \"value\"");
    unit_of(f, id, what);
    if (f.contains("per_sm_per_clk")) {
      const std::string pu = text_field(f, "per_sm_per_clk_unit");
      if (!f["per_sm_per_clk"].is_number() || !per_clock_unit_name(pu))
        e.push_back(what + ": per_sm_per_clk needs a number and a per-clock per_sm_per_clk_unit");
    }
    const std::string q = text_field(f, "qualifier");
    if (!q.empty() && q != "approx" && q != "at least" && q != "at most")
      e.push_back(what + ": qualifier must be approx, at least or at most");
    if (text_field(f, "method").empty()) e.push_back(what + ": no \"method\" note");
    source_of(f, what);
  }
};

}  // namespace

std::string ReferenceGpu::sources_text() const {
  std::string s;
  for (const ReferenceSource& src : sources) {
    if (!s.empty()) s += "; ";
    s += src.title + " (" + src.document + ")";
  }
  return s;
}

const std::vector<std::string>& known_units() {
  static const std::vector<std::string> u = [] {
    std::vector<std::string> v;
    for (const Dim& d : dims())
      for (const auto& p : d.units) v.push_back(p.first);
    return v;
  }();
  return u;
}

bool well_formed_figure_id(const std::string& id) {
  if (id.empty() || id.front() == '.' || id.back() == '.') return false;
  std::size_t parts = 1;
  bool first = true;
  char prev = 0;
  for (char c : id) {
    if (c == '.') {
      if (prev == '.') return false;
      ++parts;
      first = false;
    } else if (first) {
      if (!(std::islower(static_cast<unsigned char>(c)) ||
            std::isdigit(static_cast<unsigned char>(c)) || c == '_'))
        return false;
    } else if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_')) {
      return false;
    }
    prev = c;
  }
  return parts >= 2 && std::islower(static_cast<unsigned char>(id.front()));
}

std::vector<std::string> validate_reference_json(const json& j) {
  std::vector<std::string> e;
  if (!j.is_object()) return {"the document is not a JSON object"};
  Checker check{e, {}};
  check.header(j);
  check.sources(j);
  if (j.contains("facts")) check.facts(j["facts"]);
  if (!j.contains("figures") || !j["figures"].is_array()) {
    e.push_back("no \"figures\" list");
    return e;
  }
  std::set<std::string> ids;
  for (const json& f : j["figures"]) check.figure(f, ids);
  return e;
}

ReferenceGpu reference_from_json(const json& j, const fs::path& file) {
  const auto problems = validate_reference_json(j);
  if (!problems.empty()) {
    std::string msg = "invalid reference";
    if (!file.empty()) msg += " " + file.string();
    msg += ":";
    for (const auto& p : problems) msg += "\n  " + p;
    throw std::runtime_error(msg);
  }
  ReferenceGpu g;
  g.file = file;
  g.name = j["name"].get<std::string>();
  if (j.contains("aliases"))
    for (const json& a : j["aliases"]) g.aliases.push_back(a.get<std::string>());
  g.vendor = text_field(j, "vendor");
  g.architecture = text_field(j, "architecture");
  for (const json& s : j["sources"])
    g.sources.push_back({s["key"].get<std::string>(), s["document"].get<std::string>(),
                         s["title"].get<std::string>()});
  if (j.contains("facts")) {
    const json& f = j["facts"];
    if (f.contains("compute_units")) {
      g.compute_units = json_to_integer<int>(f["compute_units"]["value"]).value_or(0);
      g.unit_name = f["compute_units"]["unit_name"].get<std::string>();
      g.compute_units_note = text_field(f["compute_units"], "note");
    }
    if (f.contains("clock_mhz")) {
      g.clock_mhz = f["clock_mhz"]["value"].get<double>();
      g.clock_note = text_field(f["clock_mhz"], "note");
    }
    if (f.contains("other"))
      for (const json& o : f["other"])
        g.facts[o["what"].get<std::string>()] = o["value"].get<std::string>();
  }
  for (const json& f : j["figures"]) {
    ReferenceFigure r;
    r.id = f["id"].get<std::string>();
    r.label = text_field(f, "label");
    r.value = f["value"].get<double>();
    r.unit = f["unit"].get<std::string>();
    if (f.contains("per_sm_per_clk")) {
      r.per_sm_per_clk = f["per_sm_per_clk"].get<double>();
      r.per_sm_per_clk_unit = f["per_sm_per_clk_unit"].get<std::string>();
    }
    r.qualifier = text_field(f, "qualifier");
    r.method = text_field(f, "method");
    r.source = text_field(f, "source");
    g.figures.push_back(std::move(r));
  }
  return g;
}

ReferenceDb load_reference_dir(const fs::path& dir) {
  ReferenceDb db;
  db.dir = dir;
  std::error_code ec;
  std::vector<fs::path> files;
  for (const auto& entry : fs::directory_iterator(dir, ec))
    if (entry.path().extension() == ".json") files.push_back(entry.path());
  if (ec) db.errors.push_back(dir.string() + ": " + ec.message());
  std::sort(files.begin(), files.end());
  for (const fs::path& f : files) {
    try {
      json j = read_json_file(f);
      db.gpus.push_back(reference_from_json(j, f));
    } catch (const std::exception& e) {
      db.errors.push_back(f.filename().string() + ": " + e.what());
    }
  }
  std::sort(db.gpus.begin(), db.gpus.end(), [](const ReferenceGpu& a, const ReferenceGpu& b) {
    return lower(a.name) < lower(b.name);
  });
  return db;
}

const ReferenceGpu* find_reference(const ReferenceDb& db, const std::string& name) {
  const std::string n = lower(name);
  for (const ReferenceGpu& g : db.gpus) {
    if (lower(g.name) == n || lower(g.file.stem().string()) == n) return &g;
    for (const auto& a : g.aliases)
      if (lower(a) == n) return &g;
  }
  return nullptr;
}

std::optional<fs::path> find_reference_dir(const fs::path& exe, const fs::path& fallback) {
  if (const char* env = std::getenv("GD_REFERENCE_DIR"); env && *env) return fs::path(env);
  std::error_code ec;
  fs::path dir = exe.parent_path();
  if (dir.empty()) dir = ".";
  // The installed layout first: /usr/bin's ../../data/reference is /data/reference, a
  // folder of someone else's on many servers.
  for (const fs::path& c :
       {dir / ".." / "share" / "gpudissect" / "reference", dir / ".." / "data" / "reference",
        dir / ".." / ".." / "data" / "reference"})
    if (fs::is_directory(c, ec)) return fs::weakly_canonical(c, ec);
  if (!fallback.empty() && fs::is_directory(fallback, ec)) return fallback;
  return std::nullopt;
}
}  // namespace gd
