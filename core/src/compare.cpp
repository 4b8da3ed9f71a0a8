// Comparing GPUs: reference database, normalisation, matching, baseline verdicts.
#include "gpudissect/compare.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <set>
#include <stdexcept>

#include "bandwidth/bandwidth.hpp"
#include "compute/compute.hpp"
#include "gpudissect/json_read.hpp"

namespace gd {

namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}
bool starts_with(const std::string& s, const std::string& prefix) {
  return s.rfind(prefix, 0) == 0;
}

// Units of one dimension and their factor to the first (the canonical one).
struct Dim {
  std::vector<std::pair<std::string, double>> units;
};
const std::vector<Dim>& dims() {
  static const std::vector<Dim> d = {
      {{{"GB/s", 1}, {"TB/s", 1e3}, {"MB/s", 1e-3}}},
      {{{"TFLOP/s", 1}, {"GFLOP/s", 1e-3}}},
      {{{"TOP/s", 1}, {"GOP/s", 1e-3}}},
      // Plain instructions (moves, warp ops, FP32 add): counted as thread-instructions.
      {{{"Tinst/s", 1}, {"Ginst/s", 1e-3}}},
      {{{"ns", 1}, {"us", 1e3}}},
      {{{"cycles", 1}}},
      {{{"bytes", 1}}},
      {{{"B/clk/SM", 1}}},
      {{{"ops/clk/SM", 1}}},
      {{{"FLOP/clk/SM", 1}}},
      {{{"OP/clk/SM", 1}}},
      // The front end's figures (frontend.*): each its own dimension.
      {{{"inst/clk/warp", 1}}},
      {{{"ratio", 1}}},
      {{{"kernels/s", 1}}},
      {{{"blocks/us", 1}}},
      {{{"blocks/clk (GPU-wide)", 1}}},
      {{{"warps", 1}}},
      {{{"blocks", 1}}},
      {{{"registers", 1}}},
  };
  return d;
}
const Dim* dim_of(const std::string& unit, double* factor) {
  for (const Dim& d : dims())
    for (const auto& [u, f] : d.units)
      if (u == unit) {
        if (factor) *factor = f;
        return &d;
      }
  return nullptr;
}

bool per_clock_unit_name(const std::string& u) {
  return u == "B/clk/SM" || u == "ops/clk/SM" || u == "FLOP/clk/SM" || u == "OP/clk/SM";
}

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

}  // namespace

// ---------------------------------------------------------------------------------------
// reference database

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
  if (text_field(j, "format") != "gpudissect-reference")
    e.push_back("\"format\" must be \"gpudissect-reference\"");
  if (!j.contains("format_version") || !j["format_version"].is_number_integer() ||
      j["format_version"].get<int>() != 1)
    e.push_back("\"format_version\" must be 1");
  if (text_field(j, "name").empty()) e.push_back("no \"name\"");
  if (j.contains("aliases") &&
      (!j["aliases"].is_array() || !std::all_of(j["aliases"].begin(), j["aliases"].end(),
                                                [](const json& a) { return a.is_string(); })))
    e.push_back("\"aliases\" must be a list of strings");

  std::set<std::string> source_keys;
  if (!j.contains("sources") || !j["sources"].is_array() || j["sources"].empty()) {
    e.push_back("no \"sources\" list");
  } else {
    for (const json& s : j["sources"]) {
      const std::string key = s.is_object() ? text_field(s, "key") : "";
      if (key.empty() || text_field(s, "document").empty() || text_field(s, "title").empty()) {
        e.push_back("a source lacks key, document or title: " + s.dump());
        continue;
      }
      if (!source_keys.insert(key).second) e.push_back("duplicate source key '" + key + "'");
    }
  }
  auto check_source = [&](const json& o, const std::string& what) {
    const std::string src = text_field(o, "source");
    if (src.empty())
      e.push_back(what + ": no \"source\"");
    else if (!source_keys.count(src))
      e.push_back(what + ": source '" + src + "' is not in \"sources\"");
  };

  if (j.contains("facts")) {
    const json& f = j["facts"];
    if (!f.is_object()) {
      e.push_back("\"facts\" must be an object");
    } else {
      if (f.contains("compute_units")) {
        const json& cu = f["compute_units"];
        if (!cu.is_object() || !cu.contains("value") || !cu["value"].is_number_integer() ||
            cu["value"].get<int>() <= 0 || text_field(cu, "unit_name").empty())
          e.push_back("facts.compute_units needs a positive integer \"value\" and a \"unit_name\"");
        else
          check_source(cu, "facts.compute_units");
      }
      if (f.contains("clock_mhz")) {
        const json& c = f["clock_mhz"];
        if (!c.is_object() || !c.contains("value") || !c["value"].is_number() ||
            c["value"].get<double>() <= 0)
          e.push_back("facts.clock_mhz needs a positive \"value\"");
        else
          check_source(c, "facts.clock_mhz");
      }
      if (f.contains("other")) {
        if (!f["other"].is_array()) {
          e.push_back("facts.other must be a list");
        } else {
          for (const json& o : f["other"]) {
            if (!o.is_object() || text_field(o, "what").empty() || text_field(o, "value").empty())
              e.push_back("facts.other entry needs \"what\" and \"value\" (text): " + o.dump());
            else
              check_source(o, "fact '" + text_field(o, "what") + "'");
          }
        }
      }
    }
  }

  if (!j.contains("figures") || !j["figures"].is_array()) {
    e.push_back("no \"figures\" list");
    return e;
  }
  const auto& units = known_units();
  std::set<std::string> ids;
  for (const json& f : j["figures"]) {
    const std::string id = f.is_object() ? text_field(f, "id") : "";
    const std::string what = "figure '" + (id.empty() ? f.dump() : id) + "'";
    if (!f.is_object() || id.empty()) {
      e.push_back("a figure has no \"id\": " + f.dump());
      continue;
    }
    if (!well_formed_figure_id(id)) e.push_back(what + ": malformed id");
    if (!ids.insert(id).second) e.push_back(what + ": duplicate id");
    if (!f.contains("value") || !f["value"].is_number() || !std::isfinite(f["value"].get<double>()))
      e.push_back(what + ": no numeric \"value\"");
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
    if (f.contains("per_sm_per_clk")) {
      const std::string pu = text_field(f, "per_sm_per_clk_unit");
      if (!f["per_sm_per_clk"].is_number() || !per_clock_unit_name(pu))
        e.push_back(what + ": per_sm_per_clk needs a number and a per-clock per_sm_per_clk_unit");
    }
    const std::string q = text_field(f, "qualifier");
    if (!q.empty() && q != "approx" && q != "at least" && q != "at most")
      e.push_back(what + ": qualifier must be approx, at least or at most");
    if (text_field(f, "method").empty()) e.push_back(what + ": no \"method\" note");
    check_source(f, what);
  }
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
      g.compute_units = f["compute_units"]["value"].get<int>();
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

// ---------------------------------------------------------------------------------------
// inputs

CompareInput input_from_result(RunResult r, const std::string& origin) {
  CompareInput in;
  in.name = r.device.name.empty() ? fs::path(origin).stem().string() : r.device.name;
  in.label = in.name;
  in.origin = origin;
  in.backend = r.device.backend;
  in.units = r.device.compute_units;
  in.unit_name = r.device.backend == "cuda" ? "SM" : "CU";
  if (const auto* lat = r.get<LatencyProbeResult>(); lat && lat->clock_mhz_measured) {
    in.clock_mhz = lat->clock_mhz_measured;
    in.clock_source = "measured";
  } else if (const auto* c = r.get<ComputeProbeResult>();
             c && c->clock_mhz && c->clock_source == "measured") {
    in.clock_mhz = c->clock_mhz;
    in.clock_source = "measured";
  } else if (const auto* b = r.get<BandwidthProbeResult>(); b && b->clock_mhz_measured) {
    in.clock_mhz = b->clock_mhz_measured;
    in.clock_source = "measured";
  } else if (r.device.clock_mhz_reported) {
    in.clock_mhz = r.device.clock_mhz_reported;
    in.clock_source = "reported";
  }
  in.figures = r.figures;
  in.run = std::make_shared<const RunResult>(std::move(r));
  return in;
}

CompareInput input_from_reference(const ReferenceGpu& g) {
  CompareInput in;
  in.name = g.name;
  in.label = g.name;
  in.origin = g.file.string();
  in.reference = true;
  in.backend = "reference";
  in.units = g.compute_units;
  in.unit_name = g.unit_name;
  in.clock_mhz = g.clock_mhz;
  if (g.clock_mhz) in.clock_source = "stated";
  std::map<std::string, std::string> titles;
  for (const auto& s : g.sources) titles[s.key] = s.title + " (" + s.document + ")";
  for (const ReferenceFigure& rf : g.figures) {
    Figure f;
    f.id = rf.id;
    f.label = rf.label.empty() ? rf.id : rf.label;
    if (per_clock_unit_name(rf.unit)) {
      f.per_sm_per_clk = rf.value;
      f.per_sm_per_clk_unit = rf.unit;
      f.unit = rf.unit;
    } else {
      f.value = single_value(rf.value);
      f.unit = rf.unit;
      if (rf.per_sm_per_clk) {
        f.per_sm_per_clk = rf.per_sm_per_clk;
        f.per_sm_per_clk_unit = rf.per_sm_per_clk_unit;
      }
    }
    f.higher_is_better = !(rf.unit == "ns" || rf.unit == "us" || rf.unit == "cycles");
    f.clock_mhz = g.clock_mhz;
    f.where = rf.method;
    in.figures.push_back(std::move(f));
    if (!rf.qualifier.empty()) in.qualifiers[rf.id] = rf.qualifier;
    in.notes[rf.id] = rf.method + " Source: " + titles[rf.source] + ".";
  }
  return in;
}

void label_inputs(std::vector<CompareInput>& inputs) {
  std::map<std::string, int> seen;
  for (CompareInput& in : inputs) {
    const int n = ++seen[in.name];
    in.label = n == 1 ? in.name : in.name + " #" + std::to_string(n);
  }
}

namespace {
std::string fmt(double v, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}
}  // namespace

std::string input_facts(const CompareInput& in) {
  std::string s = in.reference ? "reference" : in.backend;
  s += ", ";
  s += in.units > 0 ? std::to_string(in.units) + " " + in.unit_name + (in.units == 1 ? "" : "s")
                    : in.unit_name + " count unknown";
  s += ", ";
  s += in.clock_mhz ? fmt(*in.clock_mhz, 0) + " MHz (" + in.clock_source + ")" : "clock unknown";
  return s;
}

// ---------------------------------------------------------------------------------------
// normalisation

std::optional<std::string> per_clock_unit(const std::string& unit) {
  double f = 0;
  const Dim* d = dim_of(unit, &f);
  if (!d) return std::nullopt;
  const std::string canon = d->units.front().first;
  if (canon == "GB/s") return std::string("B/clk/SM");
  if (canon == "TFLOP/s") return std::string("FLOP/clk/SM");
  if (canon == "TOP/s") return std::string("OP/clk/SM");
  if (canon == "Tinst/s") return std::string("ops/clk/SM");
  if (canon == "ns") return std::string("cycles");
  return std::nullopt;
}

std::optional<double> per_sm_per_clock(double value, const std::string& unit, int units,
                                       std::optional<double> clock_mhz) {
  double f = 0;
  const Dim* d = dim_of(unit, &f);
  if (!d || !clock_mhz || *clock_mhz <= 0 || !std::isfinite(value)) return std::nullopt;
  const std::string canon = d->units.front().first;
  const double hz = *clock_mhz * 1e6;
  if (canon == "ns") return value * f * 1e-9 * hz;  // a latency in cycles
  if (units <= 0) return std::nullopt;
  double per_s = 0;  // bytes or operations per second
  if (canon == "GB/s")
    per_s = value * f * 1e9;
  else if (canon == "TFLOP/s" || canon == "TOP/s" || canon == "Tinst/s")
    per_s = value * f * 1e12;
  else
    return std::nullopt;
  return per_s / (units * hz);
}

std::optional<double> per_sm(double value, const std::string& unit, int units) {
  double f = 0;
  const Dim* d = dim_of(unit, &f);
  if (!d || units <= 0) return std::nullopt;
  const std::string canon = d->units.front().first;
  if (canon != "GB/s" && canon != "TFLOP/s" && canon != "TOP/s" && canon != "Tinst/s")
    return std::nullopt;
  return value * f / units;
}

std::optional<std::string> per_sm_unit(const std::string& unit) {
  double f = 0;
  const Dim* d = dim_of(unit, &f);
  if (!d) return std::nullopt;
  const std::string canon = d->units.front().first;
  if (canon == "GB/s") return std::string("GB/s/SM");
  if (canon == "TFLOP/s") return std::string("TFLOP/s/SM");
  if (canon == "TOP/s") return std::string("TOP/s/SM");
  if (canon == "Tinst/s") return std::string("Tinst/s/SM");
  return std::nullopt;
}

std::optional<double> convert_unit(double value, const std::string& from, const std::string& to) {
  if (from == to) return value;
  double ff = 0, ft = 0;
  const Dim* a = dim_of(from, &ff);
  const Dim* b = dim_of(to, &ft);
  if (!a || a != b) return std::nullopt;
  return value * ff / ft;
}

// ---------------------------------------------------------------------------------------
// the comparison

namespace {

bool has_number(const Figure& f) { return f.status.ok() && (f.value || f.per_sm_per_clk); }

}  // namespace

Comparison compare(std::vector<CompareInput> inputs) {
  Comparison c;
  label_inputs(inputs);
  c.inputs = std::move(inputs);
  const std::size_t n = c.inputs.size();

  // Ids in first-seen order, and where each input has them.
  std::vector<std::string> order;
  std::map<std::string, std::vector<const Figure*>> by_id;
  for (std::size_t i = 0; i < n; ++i) {
    for (const Figure& f : c.inputs[i].figures) {
      auto& v = by_id[f.id];
      if (v.empty()) {
        v.assign(n, nullptr);
        order.push_back(f.id);
      }
      if (!v[i]) v[i] = &f;  // a repeated id within one input: the first counts
    }
  }

  for (const std::string& id : order) {
    const auto& figs = by_id[id];
    int with_number = 0, present = 0;
    for (const Figure* f : figs) {
      present += f != nullptr;
      with_number += f && has_number(*f);
    }
    if (present < 2) {
      for (std::size_t i = 0; i < n; ++i)
        if (figs[i]) c.only_in[c.inputs[i].label].push_back(id);
      continue;
    }
    CompareRow row;
    row.id = id;
    row.present = with_number;
    // The row's unit: the first input's with a value; its label and direction likewise.
    for (const Figure* f : figs) {
      if (!f) continue;
      if (row.label.empty()) {
        row.label = f->label;
        row.higher_is_better = f->higher_is_better;
      }
      if (row.unit.empty() && f->value) {
        row.unit = f->unit;
        row.label = f->label;
        row.higher_is_better = f->higher_is_better;
      }
    }
    if (row.unit.empty())
      for (const Figure* f : figs)
        if (f && !f->unit.empty()) {
          row.unit = f->unit;
          break;
        }
    row.per_sm_unit = per_sm_unit(row.unit).value_or("");

    for (std::size_t i = 0; i < n; ++i) {
      CompareCell cell;
      const Figure* f = figs[i];
      if (f) {
        const CompareInput& in = c.inputs[i];
        cell.present = true;
        cell.status = f->status;
        cell.instruction = f->instruction;
        cell.where = f->where;
        if (auto q = in.qualifiers.find(id); q != in.qualifiers.end()) cell.qualifier = q->second;
        if (auto nt = in.notes.find(id); nt != in.notes.end()) cell.note = nt->second;
        if (f->status.ok() && f->value) {
          if (auto v = convert_unit(f->value->median, f->unit, row.unit)) {
            cell.value = v;
          } else {
            cell.unit_mismatch = true;
            cell.unit = f->unit;
          }
        }
        if (f->status.ok()) {
          const std::optional<double> clk = f->clock_mhz ? f->clock_mhz : in.clock_mhz;
          if (f->per_sm_per_clk) {
            cell.per_clk = f->per_sm_per_clk;
            cell.per_clk_unit = f->per_sm_per_clk_unit;
          } else if (f->value && !cell.unit_mismatch) {
            if (auto u = per_clock_unit(row.unit)) {
              if (auto p = per_sm_per_clock(*cell.value, row.unit, in.units, clk)) {
                cell.per_clk = p;
                cell.per_clk_unit = *u;
                cell.per_clk_derived = true;
              }
            }
          }
          if (cell.value) cell.per_sm = per_sm(*cell.value, row.unit, in.units);
        }
      }
      row.cells.push_back(std::move(cell));
    }
    // Per-clock figures in one unit. A tool states an instruction's rate per SM per clock in
    // its own unit (the compute probe: thread-instructions, ops/clk/SM), while one derived
    // from a rate in TFLOP/s is in FLOP/clk/SM. The first input that has both fixes the
    // factor between them (2 FLOP per FMA, ~4096 per wgmma thread-instruction ...), and the
    // derived figures of the others are expressed in the stated unit with it.
    {
      std::string stated;
      for (const CompareCell& cell : row.cells)
        if (cell.per_clk && !cell.per_clk_derived) {
          stated = cell.per_clk_unit;
          break;
        }
      const auto derived_unit = per_clock_unit(row.unit);
      if (!stated.empty() && derived_unit && stated != *derived_unit) {
        std::optional<double> k;
        for (std::size_t i = 0; i < n && !k; ++i) {
          const CompareCell& cell = row.cells[i];
          if (!cell.per_clk || cell.per_clk_derived || cell.per_clk_unit != stated || !cell.value ||
              *cell.per_clk <= 0)
            continue;
          const Figure* f = figs[i];
          const auto clk = f->clock_mhz ? f->clock_mhz : c.inputs[i].clock_mhz;
          if (auto d = per_sm_per_clock(*cell.value, row.unit, c.inputs[i].units, clk))
            if (*d > 0) k = *d / *cell.per_clk;
        }
        if (k)
          for (CompareCell& cell : row.cells)
            if (cell.per_clk && cell.per_clk_derived && cell.per_clk_unit == *derived_unit) {
              cell.per_clk = *cell.per_clk / *k;
              cell.per_clk_unit = stated;
            }
      }
    }
    // Ratios to the first input.
    const CompareCell& first = row.cells.front();
    for (std::size_t i = 1; i < n; ++i) {
      CompareCell& cell = row.cells[i];
      if (first.value && cell.value && *first.value != 0) cell.ratio = *cell.value / *first.value;
      if (first.per_clk && cell.per_clk && first.per_clk_unit == cell.per_clk_unit &&
          *first.per_clk != 0)
        cell.per_clk_ratio = *cell.per_clk / *first.per_clk;
    }
    if (first.value) row.cells.front().ratio = 1.0;
    if (first.per_clk) row.cells.front().per_clk_ratio = 1.0;
    c.rows.push_back(std::move(row));
  }

  // Caveats: what differs between the inputs.
  std::set<std::string> backends;
  std::set<int> units;
  double clk_lo = 0, clk_hi = 0;
  bool unknown_clock = false, unknown_units = false;
  for (const CompareInput& in : c.inputs) {
    backends.insert(in.backend);
    if (in.clock_mhz) {
      clk_lo = clk_lo == 0 ? *in.clock_mhz : std::min(clk_lo, *in.clock_mhz);
      clk_hi = std::max(clk_hi, *in.clock_mhz);
    } else {
      unknown_clock = true;
    }
    if (in.units > 0)
      units.insert(in.units);
    else
      unknown_units = true;
  }
  if (backends.count("cuda") && backends.count("opencl"))
    c.caveats.push_back(
        "The inputs come from different backends: an OpenCL run has no cycle counter (its "
        "latencies are in ns only) and may time other instructions than a CUDA run.");
  if (backends.count("reference") && backends.size() > 1)
    c.caveats.push_back(
        "Reference figures were measured by other software with other methods (each names its "
        "source and method): a ratio to them says how the figures compare, not that the "
        "hardware differs by it.");
  if (clk_lo > 0 && clk_hi > 1.02 * clk_lo)
    c.caveats.push_back(
        "The inputs ran at different clocks: compare cycles with cycles and ns with ns (each id "
        "has one unit); 'per SM per clock' divides by each input's own clock.");
  if (unknown_clock)
    c.caveats.push_back(
        "Some inputs have no known clock: their per-clock figures are absent unless the source "
        "stated them; 'per SM' (GB/s per SM = bytes per ns per SM) still compares them.");
  if (units.size() > 1 || unknown_units)
    c.caveats.push_back(
        "The inputs have different numbers of SMs (CUs, WGPs, cores): whole-GPU figures "
        "scale with them; the per-SM columns do not.");
  return c;
}

// ---------------------------------------------------------------------------------------
// baseline

std::optional<double> parse_tolerance(const std::string& s) {
  std::string t;
  for (char c : s)
    if (!std::isspace(static_cast<unsigned char>(c))) t += c;
  if (!t.empty() && t.back() == '%') t.pop_back();
  if (t.empty()) return std::nullopt;
  char* end = nullptr;
  const double v = std::strtod(t.c_str(), &end);
  if (!end || *end != '\0' || !std::isfinite(v) || v < 0) return std::nullopt;
  return v / 100.0;
}

std::string to_string(Verdict v) {
  switch (v) {
    case Verdict::within:
      return "within tolerance";
    case Verdict::improved:
      return "improved";
    case Verdict::regressed:
      return "regressed";
    case Verdict::failed:
      return "failed (ok in baseline)";
    case Verdict::recovered:
      return "ok again (failed in baseline)";
    case Verdict::failed_both:
      return "failed in both";
    case Verdict::only_new:
      return "new (not in baseline)";
    case Verdict::only_baseline:
      return "missing (only in baseline)";
    case Verdict::not_comparable:
      return "not comparable";
  }
  return "?";
}

bool is_regression(Verdict v) { return v == Verdict::regressed || v == Verdict::failed; }

int BaselineReport::regressions() const {
  return static_cast<int>(std::count_if(
      items.begin(), items.end(), [](const BaselineItem& i) { return is_regression(i.verdict); }));
}
int BaselineReport::improvements() const {
  return static_cast<int>(std::count_if(items.begin(), items.end(), [](const BaselineItem& i) {
    return i.verdict == Verdict::improved || i.verdict == Verdict::recovered;
  }));
}

namespace {

// The comparable number of a figure: its value, else its per-clock value.
std::optional<double> number(const Figure& f, std::string* unit) {
  if (f.value) {
    *unit = f.unit;
    return f.value->median;
  }
  if (f.per_sm_per_clk) {
    *unit = f.per_sm_per_clk_unit;
    return f.per_sm_per_clk;
  }
  return std::nullopt;
}

}  // namespace

BaselineReport compare_baseline(const CompareInput& baseline, const CompareInput& current,
                                double tolerance, bool allow_missing) {
  BaselineReport rep;
  rep.baseline = baseline;
  rep.current = current;
  rep.tolerance = tolerance;
  std::map<std::string, const Figure*> base;
  for (const Figure& f : baseline.figures) base.emplace(f.id, &f);
  std::set<std::string> seen;
  // A relative margin so that a change of exactly the tolerance (e.g. 100 -> 97 at 3 %)
  // counts as within despite rounding.
  const double eps = 1e-9;
  for (const Figure& f : current.figures) {
    if (!seen.insert(f.id).second) continue;
    BaselineItem it;
    it.id = f.id;
    it.label = f.label;
    it.unit = f.unit;
    it.higher_is_better = f.higher_is_better;
    auto b = base.find(f.id);
    std::string cu;
    const auto cv = f.status.ok() ? number(f, &cu) : std::nullopt;
    it.current = cv;
    if (b == base.end()) {
      it.verdict = Verdict::only_new;
      rep.items.push_back(std::move(it));
      continue;
    }
    const Figure& bf = *b->second;
    it.higher_is_better = bf.higher_is_better;
    std::string bu;
    const auto bv = bf.status.ok() ? number(bf, &bu) : std::nullopt;
    it.baseline = bv;
    const bool cur_ok = f.status.ok() && cv, base_ok = bf.status.ok() && bv;
    if (!cur_ok && base_ok) {
      it.verdict = Verdict::failed;
      it.reason = f.status.ok()
                      ? "no value"
                      : f.status.status + (f.status.reason.empty() ? "" : ": " + f.status.reason);
    } else if (cur_ok && !base_ok) {
      it.verdict = Verdict::recovered;
      it.reason = "baseline: " + bf.status.status +
                  (bf.status.reason.empty() ? "" : ": " + bf.status.reason);
    } else if (!cur_ok && !base_ok) {
      it.verdict = Verdict::failed_both;
      it.reason = f.status.status + (f.status.reason.empty() ? "" : ": " + f.status.reason);
    } else {
      const auto c2 = convert_unit(*cv, cu, bu);
      if (!c2) {
        // An id keeps its unit from release to release: a new run stating another one has
        // not measured what the baseline did, and must not pass by saying so.
        it.verdict = Verdict::failed;
        it.reason = "units differ: " + cu + " against " + bu;
      } else if (*bv == 0) {
        it.verdict = *c2 == 0 ? Verdict::within : Verdict::not_comparable;
        if (*c2 != 0) it.reason = "baseline is 0";
      } else {
        it.current = c2;
        it.unit = bu;
        const double change = (*c2 - *bv) / std::fabs(*bv);
        it.change = change;
        const double better = it.higher_is_better ? change : -change;
        // A figure found between two points of a sweep (a capacity) cannot be told apart from
        // one a step away: the baseline's step widens the tolerance. Only the baseline's: the
        // file under judgement could otherwise claim a step wide enough to excuse anything.
        const double step = bf.resolution && std::isfinite(*bf.resolution) && *bf.resolution > 0
                                ? *bf.resolution
                                : 0;
        const double allowed = std::max(tolerance, step);
        if (better < -allowed - eps)
          it.verdict = Verdict::regressed;
        else if (better > allowed + eps)
          it.verdict = Verdict::improved;
        else
          it.verdict = Verdict::within;
        if (it.verdict == Verdict::within && std::fabs(better) > tolerance + eps)
          it.reason = "within the measurement's step (" + fmt(100 * step, 1) + " %)";
      }
    }
    rep.items.push_back(std::move(it));
  }
  for (const Figure& f : baseline.figures) {
    if (!seen.insert(f.id).second) continue;
    BaselineItem it;
    it.id = f.id;
    it.label = f.label;
    it.unit = f.unit;
    it.higher_is_better = f.higher_is_better;
    std::string bu;
    it.baseline = f.status.ok() ? number(f, &bu) : std::nullopt;
    it.verdict = Verdict::only_baseline;
    // A figure the baseline measured and the new run lacks (dropped, renamed, or a run with
    // no figures at all) fails the gate, unless partial runs were asked for.
    if (it.baseline && !allow_missing) {
      it.verdict = Verdict::failed;
      it.reason = "missing from the new run (ok in the baseline)";
    }
    rep.items.push_back(std::move(it));
  }
  return rep;
}

// ---------------------------------------------------------------------------------------
// curves

std::vector<CurveSeries> latency_series(const std::vector<CompareInput>& inputs,
                                        const std::string& path, bool cycles) {
  std::vector<CurveSeries> out;
  int index = -1;
  for (const CompareInput& in : inputs) {
    ++index;
    if (!in.run) continue;
    const auto* lat = in.run->get<LatencyProbeResult>();
    if (!lat) continue;
    auto it = lat->paths.find(path);
    if (it == lat->paths.end()) continue;
    CurveSeries s;
    s.input = in.label;
    s.input_index = index;
    for (const LatencyPoint& p : it->second.points) {
      const auto& v = cycles ? p.cycles : p.ns;
      if (p.status != "ok" || !v || p.footprint_bytes == 0) continue;
      s.points.emplace_back(static_cast<double>(p.footprint_bytes), v->median);
    }
    std::sort(s.points.begin(), s.points.end());
    if (!s.points.empty()) out.push_back(std::move(s));
  }
  return out;
}

std::vector<LevelMark> latency_marks(const std::vector<CompareInput>& inputs,
                                     const std::string& path, bool cycles) {
  std::vector<LevelMark> out;
  const std::string prefix = "latency." + path + ".";
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    const CompareInput& in = inputs[i];
    if (in.run) continue;  // results have their curves
    for (const Figure& f : in.figures) {
      if (!starts_with(f.id, prefix) || !f.value || !f.status.ok()) continue;
      std::string level = f.id.substr(prefix.size());
      if (cycles) {
        if (!ends_with(level, ".cycles") || f.unit != "cycles") continue;
        level.resize(level.size() - 7);
      } else if (f.unit != "ns" && f.unit != "us") {
        continue;
      }
      if (level.find('.') != std::string::npos || level == "dram_minus_last_cache") continue;
      LevelMark m;
      m.input = in.label;
      m.input_index = static_cast<int>(i);
      m.level = level;
      m.value = cycles ? f.value->median : *convert_unit(f.value->median, f.unit, "ns");
      if (auto q = in.qualifiers.find(f.id); q != in.qualifiers.end()) m.qualifier = q->second;
      out.push_back(std::move(m));
    }
  }
  return out;
}

std::vector<LevelMark> bandwidth_marks(const std::vector<CompareInput>& inputs,
                                       const std::string& op, bool per_clk) {
  std::vector<LevelMark> out;
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    const CompareInput& in = inputs[i];
    if (in.run) continue;
    for (const Figure& f : in.figures) {
      if (!f.status.ok()) continue;
      std::string level;
      for (const char* l : {"l1", "l2", "dram"})
        if (f.id == std::string("bandwidth.") + l + "." + op) level = l;
      if (level.empty()) continue;
      std::optional<double> v;
      bool derived = false;
      if (per_clk) {
        if (f.per_sm_per_clk && f.per_sm_per_clk_unit == "B/clk/SM") {
          v = f.per_sm_per_clk;
        } else if (f.value) {
          v = per_sm_per_clock(f.value->median, f.unit, in.units,
                               f.clock_mhz ? f.clock_mhz : in.clock_mhz);
          derived = true;
        }
      } else if (f.value) {
        v = convert_unit(f.value->median, f.unit, "GB/s");
      }
      if (!v) continue;
      LevelMark m;
      m.input = in.label;
      m.input_index = static_cast<int>(i);
      m.level = level == "dram" ? "device memory" : level == "l1" ? "L1" : "L2";
      m.value = *v;
      m.derived = derived;
      // The qualifier is the value's: a per-clock figure stated beside it is exact.
      const bool qualified = !per_clk || derived || !f.value;
      if (auto q = in.qualifiers.find(f.id); q != in.qualifiers.end() && qualified)
        m.qualifier = q->second;
      out.push_back(std::move(m));
    }
  }
  return out;
}

std::vector<CurveSeries> bandwidth_series(const std::vector<CompareInput>& inputs,
                                          const std::string& op, bool per_clk) {
  std::vector<CurveSeries> out;
  int index = -1;
  for (const CompareInput& in : inputs) {
    ++index;
    if (!in.run) continue;
    const auto* bw = in.run->get<BandwidthProbeResult>();
    if (!bw) continue;
    auto it = bw->footprint.find(op);
    if (it == bw->footprint.end()) continue;
    CurveSeries s;
    s.input = in.label;
    s.input_index = index;
    for (const BandwidthPoint& p : it->second.points) {
      const auto& v = per_clk ? p.bytes_per_clk_sm : p.gbps;
      if (p.status != "ok" || !v || p.x <= 0) continue;
      s.points.emplace_back(p.x, v->median);
    }
    std::sort(s.points.begin(), s.points.end());
    if (!s.points.empty()) out.push_back(std::move(s));
  }
  return out;
}

std::vector<std::string> sweep_ops(const std::vector<CompareInput>& inputs) {
  std::vector<std::string> ops;
  for (const CompareInput& in : inputs) {
    if (!in.run) continue;
    const auto* c = in.run->get<ComputeProbeResult>();
    if (!c) continue;
    for (const ComputeFigure& f : c->sweep)
      if (f.status.ok() && f.ops_per_clk_sm && std::find(ops.begin(), ops.end(), f.op) == ops.end())
        ops.push_back(f.op);
  }
  return ops;
}

std::vector<CurveSeries> sweep_series(const std::vector<CompareInput>& inputs,
                                      const std::string& op) {
  std::vector<CurveSeries> out;
  int index = -1;
  for (const CompareInput& in : inputs) {
    ++index;
    if (!in.run) continue;
    const auto* c = in.run->get<ComputeProbeResult>();
    if (!c) continue;
    std::map<int, CurveSeries> by_ilp;
    for (const ComputeFigure& f : c->sweep) {
      if (f.op != op || !f.status.ok() || !f.ops_per_clk_sm || f.warps_per_sm <= 0 ||
          !f.mix.empty())
        continue;
      CurveSeries& s = by_ilp[f.ilp];
      s.input = in.label + ", ILP " + std::to_string(f.ilp);
      s.points.emplace_back(static_cast<double>(f.warps_per_sm), f.ops_per_clk_sm->median);
    }
    int variant = 0;
    for (auto& [ilp, s] : by_ilp) {
      std::sort(s.points.begin(), s.points.end());
      s.input_index = index;
      s.variant = variant++;
      out.push_back(std::move(s));
    }
  }
  return out;
}

}  // namespace gd
