// Writers of the cross-backend comparison and the parity table (gpudissect compare A B on
// one GPU through two backends, compare --parity): terminal, Markdown, CSV and JSON. Text
// from the result files (device names, instructions, reasons) is made plain for the
// terminal, escaped for Markdown, quoted for CSV and written by the JSON library for JSON.
#include <algorithm>
#include <cstdio>
#include <map>
#include <nlohmann/json.hpp>
#include <ostream>
#include <sstream>

#include "compare_report.hpp"
#include "compare_report_detail.hpp"
#include "format.hpp"
#include "gpudissect/units.hpp"
#include "report.hpp"

namespace gd::report {

namespace fs = std::filesystem;
using json = nlohmann::json;
using namespace compare_page;
using detail::csv_field;

namespace {

std::string num(const std::optional<double>& v) {
  if (!v) return "";
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.9g", *v);
  return buf;
}

// "16.16 ns", "215.3 KiB": a value as compare shows it, with its unit.
std::string value_text(const std::optional<double>& v, const std::string& unit) {
  if (!v) return "-";
  return compare_number(*v, unit) +
         (unit == "bytes" || unit.empty() ? "" : " " + terminal_text(unit));
}

std::string match_text(const CrossBackendReport& r) {
  switch (r.match) {
    case GpuMatch::uuid:
      return "one GPU (same UUID)";
    case GpuMatch::name:
      return device_uuid(r.a).empty() || device_uuid(r.b).empty()
                 ? "one GPU (same device name; a UUID on one side only)"
                 : "one GPU model (same device name; the UUIDs differ: two boards)";
    case GpuMatch::none:
      break;
  }
  return "two different GPUs (neither UUID nor device name match): differences are not the "
         "backends' alone";
}

std::string status_line(const Status& s) {
  return terminal_text(s.name()) + (s.reason.empty() ? "" : ": " + terminal_text(s.reason));
}

void print_listings(std::ostream& os, const BackendItem& it, const CrossBackendReport& r) {
  constexpr std::size_t kColumn = 40;
  os << "    " << pad_cell("[1] " + terminal_text(r.a.backend), kColumn) << "  [2] "
     << terminal_text(r.b.backend) << "\n";
  const std::size_t lines =
      std::max<std::size_t>(1, std::max(it.listing_a.size(), it.listing_b.size()));
  for (std::size_t i = 0; i < lines; ++i) {
    auto cell = [&](const std::vector<std::string>& l) {
      if (l.empty()) return std::string(i == 0 ? "-" : "");
      return i < l.size() ? terminal_text(l[i]) : std::string();
    };
    const std::string right = cell(it.listing_b);
    std::string line =
        "    " + pad_cell(cell(it.listing_a), kColumn) + (right.empty() ? "" : "  " + right);
    while (!line.empty() && line.back() == ' ') line.pop_back();
    os << line << "\n";
  }
}

void print_pair(std::ostream& os, const BackendItem& it, const CrossBackendReport& r) {
  os << "\n  " << terminal_text(it.id) << "  (" << terminal_text(it.label) << ")\n";
  os << "    [1] " << value_text(it.a, it.unit) << "   [2] " << value_text(it.b, it.unit);
  if (it.ratio) os << "   " << compare_page::ratio_text(it.ratio);
  if (!it.note.empty()) os << "   " << terminal_text(it.note);
  os << "\n";
  print_listings(os, it, r);
}

// Per probe: ids ok in the first run only, in the second only.
std::vector<std::pair<std::string, std::pair<int, int>>> one_sided_by_probe(
    const CrossBackendReport& r) {
  std::vector<std::pair<std::string, std::pair<int, int>>> out;
  for (const BackendItem& it : r.items) {
    const bool first = it.verdict == BackendVerdict::only_first;
    if (!first && it.verdict != BackendVerdict::only_second) continue;
    const std::string p = probe_of(it.id);
    auto at = std::find_if(out.begin(), out.end(), [&](const auto& e) { return e.first == p; });
    if (at == out.end()) at = out.insert(out.end(), {p, {0, 0}});
    ++(first ? at->second.first : at->second.second);
  }
  return out;
}

void print_one_sided(std::ostream& os, const CrossBackendReport& r) {
  const int n = r.count(BackendVerdict::only_first) + r.count(BackendVerdict::only_second);
  if (!n) return;
  os << "\nOk on one side only (" << n << "):\n";
  os << "  " << pad_cell("probe", 12) << "  " << pad_cell("[1] only", 8, true) << "  "
     << pad_cell("[2] only", 8, true) << "\n";
  for (const auto& [probe, c] : one_sided_by_probe(r))
    os << "  " << pad_cell(terminal_text(probe), 12) << "  "
       << pad_cell(std::to_string(c.first), 8, true) << "  "
       << pad_cell(std::to_string(c.second), 8, true) << "\n";
  std::size_t w = 10;
  for (const BackendItem& it : r.items) w = std::max(w, it.id.size());
  w = std::min<std::size_t>(w, 48);
  for (const BackendVerdict side : {BackendVerdict::only_first, BackendVerdict::only_second}) {
    const bool first = side == BackendVerdict::only_first;
    for (const BackendItem& it : r.items) {
      if (it.verdict != side) continue;
      os << "  " << pad_cell(terminal_text(it.id), w) << "  ok in " << (first ? "[1]" : "[2]")
         << " only (" << value_text(first ? it.a : it.b, it.unit) << "); "
         << (first ? "[2]" : "[1]") << ": " << status_line(first ? it.status_b : it.status_a)
         << "\n";
    }
  }
}

}  // namespace

// ---------------------------------------------------------------------------------------
// cross-backend

void print_cross_backend(std::ostream& os, const CrossBackendReport& r, bool verbose) {
  os << "Cross-backend comparison of " << match_text(r) << ":\n";
  for (int i = 0; i < 2; ++i) {
    const CompareInput& in = i == 0 ? r.a : r.b;
    os << "  [" << i + 1 << "] " << terminal_text(in.name) << "  ("
       << terminal_text(input_facts(in)) << ")  " << terminal_text(in.origin) << "\n";
  }
  os << "Tolerance: " << percent_text(r.tolerance) << "; ratios are [2] / [1]; instructions: the "
     << "code each backend timed, \"-\" where it gave none.\n";
  os << "\n"
     << r.common() << " ids ok in both: " << r.count(BackendVerdict::within)
     << " within the tolerance, " << r.count(BackendVerdict::differs) << " differ ("
     << r.inside_step() << " of them inside [1]'s own step), "
     << r.count(BackendVerdict::not_comparable) << " not comparable; "
     << r.count(BackendVerdict::only_first) << " ok in [1] only, "
     << r.count(BackendVerdict::only_second) << " ok in [2] only.\n";
  auto section = [&](const char* title, BackendVerdict v) {
    const int n = r.count(v);
    if (!n) return;
    os << "\n" << title << " (" << n << "):\n";
    for (const BackendItem& it : r.items)
      if (it.verdict == v) print_pair(os, it, r);
  };
  section("Differ beyond the tolerance", BackendVerdict::differs);
  section("Not comparable", BackendVerdict::not_comparable);
  if (verbose) section("Within the tolerance", BackendVerdict::within);
  print_one_sided(os, r);
}

void write_cross_backend_csv(const fs::path& file, const CrossBackendReport& r) {
  std::ostringstream o;
  o << "id,label,probe,verdict,unit,value_1,value_2,ratio,status_1,status_2,reason_1,reason_2,"
       "instructions_1,instructions_2,note\n";
  auto joined = [](const std::vector<std::string>& l) {
    std::string s;
    for (const std::string& x : l) s += (s.empty() ? "" : "; ") + x;
    return s;
  };
  for (const BackendItem& it : r.items)
    o << csv_field(it.id) << ',' << csv_field(it.label) << ',' << csv_field(probe_of(it.id)) << ','
      << to_string(it.verdict) << ',' << csv_field(it.unit) << ',' << num(it.a) << ',' << num(it.b)
      << ',' << num(it.ratio) << ',' << csv_field(it.status_a.name()) << ','
      << csv_field(it.status_b.name()) << ',' << csv_field(it.status_a.reason) << ','
      << csv_field(it.status_b.reason) << ',' << csv_field(joined(it.listing_a)) << ','
      << csv_field(joined(it.listing_b)) << ',' << csv_field(it.note) << "\n";
  write_text(file, o.str());
}

namespace {

json opt_json(const std::optional<double>& v) { return v ? json(*v) : json(nullptr); }

json input_json(const CompareInput& in) {
  return json{
      {"name", in.name}, {"backend", in.backend}, {"file", in.origin}, {"uuid", device_uuid(in)}};
}

}  // namespace

std::string cross_backend_json(const CrossBackendReport& r) {
  json j;
  j["format"] = "gpudissect-cross-backend";
  j["format_version"] = 1;
  j["same_gpu"] = to_string(r.match);
  j["tolerance"] = r.tolerance;
  j["inputs"] = json::array({input_json(r.a), input_json(r.b)});
  json counts = json::object();
  for (BackendVerdict v :
       {BackendVerdict::within, BackendVerdict::differs, BackendVerdict::not_comparable,
        BackendVerdict::only_first, BackendVerdict::only_second})
    counts[to_string(v)] = r.count(v);
  counts["common"] = r.common();
  counts["inside_step"] = r.inside_step();
  j["counts"] = counts;
  json per_probe = json::object();
  for (const auto& [probe, c] : one_sided_by_probe(r))
    per_probe[probe] = json{{"only_first", c.first}, {"only_second", c.second}};
  j["one_sided_per_probe"] = per_probe;
  json figures = json::array();
  for (const BackendItem& it : r.items)
    figures.push_back(json{{"id", it.id},
                           {"label", it.label},
                           {"probe", probe_of(it.id)},
                           {"verdict", to_string(it.verdict)},
                           {"unit", it.unit},
                           {"values", json::array({opt_json(it.a), opt_json(it.b)})},
                           {"ratio", opt_json(it.ratio)},
                           {"status", json::array({it.status_a.name(), it.status_b.name()})},
                           {"reason", json::array({it.status_a.reason, it.status_b.reason})},
                           {"instructions", json::array({it.listing_a, it.listing_b})},
                           {"inside_step", it.inside_step},
                           {"note", it.note}});
  j["figures"] = figures;
  return j.dump(1, ' ', false, json::error_handler_t::replace) + "\n";
}

void write_cross_backend_json(const fs::path& file, const CrossBackendReport& r) {
  write_text(file, cross_backend_json(r));
}

}  // namespace gd::report
