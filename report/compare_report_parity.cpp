// Writers of the parity table (gpudissect compare --parity): terminal, Markdown (for the
// docs), CSV and JSON. Per probe, each run's ok figures; for every run after the first, the
// first run's ok ids it also has ok ("common") and how many of those agree within the
// tolerance ("agree").
#include <cstdio>
#include <nlohmann/json.hpp>
#include <ostream>
#include <sstream>

#include "compare_report.hpp"
#include "compare_report_detail.hpp"
#include "format.hpp"
#include "report.hpp"

namespace gd::report {

namespace fs = std::filesystem;
using json = nlohmann::json;
using namespace compare_page;
using detail::csv_field;

namespace {

// A Markdown table cell: no line break, no column separator, no markup or HTML.
std::string md_cell(const std::string& s) {
  std::string o;
  for (unsigned char c : s) {
    switch (c) {
      case '|':
        o += "\\|";
        break;
      case '\\':
        o += "\\\\";
        break;
      case '`':
        o += "\\`";
        break;
      case '*':
        o += "\\*";
        break;
      case '_':
        o += "\\_";
        break;
      case '[':
        o += "\\[";
        break;
      case ']':
        o += "\\]";
        break;
      case '<':
        o += "&lt;";
        break;
      case '>':
        o += "&gt;";
        break;
      case '&':
        o += "&amp;";
        break;
      default:
        o += (c < 0x20 || c == 0x7f) ? ' ' : static_cast<char>(c);
    }
  }
  return o;
}

// "CUDA", "OpenCL", "Vulkan"; another backend as the file says; " [2]" added where two
// inputs share a backend.
std::vector<std::string> column_names(const ParityTable& t) {
  std::vector<std::string> names;
  for (const CompareInput& in : t.inputs) {
    const std::string& b = in.backend;
    names.push_back(b == "cuda" ? "CUDA" : b == "opencl" ? "OpenCL" : b == "vulkan" ? "Vulkan" : b);
  }
  for (std::size_t i = 0; i < names.size(); ++i) {
    int same = 0;
    for (const std::string& n : names) same += n == names[i];
    if (same > 1 || names[i].empty()) names[i] += " [" + std::to_string(i + 1) + "]";
  }
  return names;
}

std::string count(const std::optional<int>& v) { return v ? std::to_string(*v) : "-"; }

}  // namespace

void print_parity(std::ostream& os, const ParityTable& t) {
  const std::vector<std::string> names = column_names(t);
  os << "Backend parity: ok figures per probe; for each run after [1], the ids ok in both it "
        "and [1] (common), how many of those agree within "
     << percent_text(t.tolerance)
     << " (agree), and how many others differ by no more than the "
        "step [1]'s figure states (in step).\n";
  for (std::size_t i = 0; i < t.inputs.size(); ++i)
    os << "  [" << i + 1 << "] " << terminal_text(t.inputs[i].name) << "  ("
       << terminal_text(input_facts(t.inputs[i])) << ")  " << terminal_text(t.inputs[i].origin)
       << "\n";
  for (const std::string& n : t.notes) os << "  note: " << terminal_text(n) << "\n";
  std::vector<std::string> head = {"probe"};
  for (const std::string& n : names) head.push_back(terminal_text(n));
  for (std::size_t i = 1; i < names.size(); ++i) {
    head.push_back(terminal_text(names[i]) + " common");
    head.push_back(terminal_text(names[i]) + " agree");
    head.push_back(terminal_text(names[i]) + " in step");
  }
  std::vector<std::vector<std::string>> lines;
  auto add = [&](const ParityRow& r) {
    std::vector<std::string> l = {terminal_text(r.probe)};
    for (const ParityCell& c : r.cells) l.push_back(std::to_string(c.ok));
    for (std::size_t i = 1; i < r.cells.size(); ++i) {
      l.push_back(count(r.cells[i].common));
      l.push_back(count(r.cells[i].agree));
      l.push_back(count(r.cells[i].inside_step));
    }
    lines.push_back(l);
  };
  for (const ParityRow& r : t.rows) add(r);
  add(t.total);
  std::vector<std::size_t> w(head.size());
  for (std::size_t k = 0; k < head.size(); ++k) {
    w[k] = head[k].size();
    for (const auto& l : lines) w[k] = std::max(w[k], l[k].size());
  }
  auto row = [&](const std::vector<std::string>& l) {
    std::string s = l[0] + std::string(w[0] - std::min(w[0], l[0].size()), ' ');
    for (std::size_t k = 1; k < l.size(); ++k) s += "  " + pad_cell(l[k], w[k], /*right=*/true);
    os << s << "\n";
  };
  os << "\n";
  row(head);
  for (const auto& l : lines) row(l);
}

void print_parity_markdown(std::ostream& os, const ParityTable& t) {
  const std::vector<std::string> names = column_names(t);
  const std::string first = md_cell(names.front());
  os << "Ok figures per probe";
  if (!t.inputs.empty()) os << " on " << md_cell(t.inputs.front().name);
  os << " (";
  for (std::size_t i = 0; i < t.inputs.size(); ++i)
    os << (i ? "; " : "") << md_cell(names[i]) << ": " << md_cell(t.inputs[i].origin);
  os << "). *common*: ids ok in both " << first << " and that backend; *within "
     << percent_text(t.tolerance) << "*: of those, how many agree within "
     << percent_text(t.tolerance) << "; *in " << first << "'s step*: of the others, how many "
     << "differ by no more than the step " << first << "'s figure states (a capacity between "
     << "two sweep points, a timer step, the spread between target placements).\n";
  for (const std::string& n : t.notes) os << "\nNote: " << md_cell(n) << ".\n";
  os << "\n| probe |";
  for (const std::string& n : names) os << " " << md_cell(n) << " ok |";
  for (std::size_t i = 1; i < names.size(); ++i)
    os << " " << md_cell(names[i]) << ": common with " << first << " | " << md_cell(names[i])
       << ": within " << percent_text(t.tolerance) << " | " << md_cell(names[i]) << ": in " << first
       << "'s step |";
  os << "\n|---|";
  for (std::size_t i = 0; i < names.size(); ++i) os << "---:|";
  for (std::size_t i = 1; i < names.size(); ++i) os << "---:|---:|---:|";
  os << "\n";
  auto row = [&](const ParityRow& r, bool bold) {
    const std::string b = bold ? "**" : "";
    os << "| " << b << md_cell(r.probe) << b << " |";
    for (const ParityCell& c : r.cells) os << " " << b << c.ok << b << " |";
    for (std::size_t i = 1; i < r.cells.size(); ++i)
      os << " " << b << count(r.cells[i].common) << b << " | " << b << count(r.cells[i].agree) << b
         << " | " << b << count(r.cells[i].inside_step) << b << " |";
    os << "\n";
  };
  for (const ParityRow& r : t.rows) row(r, false);
  row(t.total, true);
}

void write_parity_csv(const fs::path& file, const ParityTable& t) {
  std::ostringstream o;
  o << "probe,input,name,backend,ok,common,agree,in_step\n";
  auto rows = t.rows;
  rows.push_back(t.total);
  for (const ParityRow& r : rows)
    for (std::size_t i = 0; i < r.cells.size(); ++i) {
      const ParityCell& c = r.cells[i];
      o << csv_field(r.probe) << ',' << i + 1 << ',' << csv_field(t.inputs[i].name) << ','
        << csv_field(t.inputs[i].backend) << ',' << c.ok << ','
        << (c.common ? std::to_string(*c.common) : "") << ','
        << (c.agree ? std::to_string(*c.agree) : "") << ','
        << (c.inside_step ? std::to_string(*c.inside_step) : "") << "\n";
    }
  write_text(file, o.str());
}

std::string parity_json(const ParityTable& t) {
  json j;
  j["format"] = "gpudissect-parity";
  j["format_version"] = 1;
  j["tolerance"] = t.tolerance;
  json inputs = json::array();
  for (const CompareInput& in : t.inputs)
    inputs.push_back(json{{"name", in.name},
                          {"backend", in.backend},
                          {"file", in.origin},
                          {"uuid", device_uuid(in)}});
  j["inputs"] = inputs;
  auto row_json = [](const ParityRow& r) {
    json ok = json::array(), common = json::array(), agree = json::array(), in_step = json::array();
    for (const ParityCell& c : r.cells) {
      ok.push_back(c.ok);
      common.push_back(c.common ? json(*c.common) : json(nullptr));
      agree.push_back(c.agree ? json(*c.agree) : json(nullptr));
      in_step.push_back(c.inside_step ? json(*c.inside_step) : json(nullptr));
    }
    return json{
        {"probe", r.probe}, {"ok", ok}, {"common", common}, {"agree", agree}, {"in_step", in_step}};
  };
  json probes = json::array();
  for (const ParityRow& r : t.rows) probes.push_back(row_json(r));
  j["probes"] = probes;
  j["total"] = row_json(t.total);
  j["notes"] = t.notes;
  return j.dump(1, ' ', false, json::error_handler_t::replace) + "\n";
}

void write_parity_json(const fs::path& file, const ParityTable& t) {
  write_text(file, parity_json(t));
}

}  // namespace gd::report
