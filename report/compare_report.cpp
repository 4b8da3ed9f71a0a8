// Writers of comparisons and baseline reports: terminal and CSV. The HTML page is
// compare_report_html.cpp, its charts compare_report_charts.cpp.
#include "compare_report.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <ostream>
#include <set>
#include <sstream>
#include <stdexcept>

#include "charts.hpp"
#include "compare_report_detail.hpp"
#include "gpudissect/units.hpp"
#include "report.hpp"
#include "style.hpp"

namespace gd::report {

namespace fs = std::filesystem;
using namespace detail;

std::string compare_number(double v, const std::string& unit) {
  if (!std::isfinite(v)) return "-";
  if (unit == "bytes") return format_bytes(v);
  const double a = std::fabs(v);
  int digits = a >= 1000 ? 0 : a >= 100 ? 1 : a >= 10 ? 2 : a >= 1 ? 3 : 4;
  if (a >= 1000) digits = 0;
  std::string s = format_fixed(v, digits);
  // Trailing zeros after the point say nothing here.
  if (s.find('.') != std::string::npos) {
    while (!s.empty() && s.back() == '0') s.pop_back();
    if (!s.empty() && s.back() == '.') s.pop_back();
  }
  return s;
}

namespace compare_page {

std::string terminal_text(const std::string& s) {
  std::string o;
  o.reserve(s.size());
  for (unsigned char c : s) o += (c < 0x20 || c == 0x7f) ? '?' : static_cast<char>(c);
  return o;
}

std::string pad_cell(const std::string& s, std::size_t w, bool right) {
  std::size_t n = 0;
  for (unsigned char ch : s) n += (ch & 0xC0) != 0x80;
  if (n >= w) return s;
  return right ? std::string(w - n, ' ') + s : s + std::string(w - n, ' ');
}

std::string percent_text(double fraction) { return compare_number(fraction * 100, "") + " %"; }

std::string qualifier_mark(const std::string& q) {
  if (q == "approx") return "~";
  if (q == "at least") return ">";
  if (q == "at most") return "<";
  return "";
}

std::string ratio_text(const std::optional<double>& r) {
  if (!r) return "";
  return "x" + format_fixed(*r, *r >= 10 ? 1 : 2);
}

// A cell's value as text: qualifier, number, or the status where the figure failed.
std::string cell_value(const CompareCell& c, const std::string& unit) {
  if (!c.present) return "";
  if (!c.status.ok()) return c.status.name();
  if (c.unit_mismatch) return "(in " + c.unit + ")";
  if (!c.value) return "";
  return qualifier_mark(c.qualifier) + compare_number(*c.value, unit);
}

std::string cell_per_clk(const CompareCell& c) {
  if (!c.present || !c.status.ok() || !c.per_clk) return "";
  // The value's qualifier (about, over, below) carries over to a per-clock figure derived
  // from it, and belongs to one the source gives per clock only.
  const bool qualified = !c.value || c.per_clk_derived;
  return (qualified ? qualifier_mark(c.qualifier) : std::string()) +
         compare_number(*c.per_clk, c.per_clk_unit) + (c.per_clk_derived ? "*" : "");
}

}  // namespace compare_page

using namespace compare_page;

namespace {

// The per-clock unit a row shows (first cell's that has one).
std::string row_clk_unit(const CompareRow& row) {
  for (const CompareCell& c : row.cells)
    if (c.per_clk) return c.per_clk_unit;
  return "";
}

std::string csv_num(const std::optional<double>& v) {
  if (!v) return "";
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.9g", *v);
  return buf;
}

}  // namespace

// ---------------------------------------------------------------------------------------
// terminal

void print_comparison(std::ostream& os, const Comparison& c) {
  os << "Inputs (ratios are to [1]; * = per SM per clock derived here from the value, the "
        "SM count and the clock):\n";
  for (std::size_t i = 0; i < c.inputs.size(); ++i)
    os << "  [" << i + 1 << "] " << c.inputs[i].label << "  (" << input_facts(c.inputs[i]) << ")  "
       << c.inputs[i].origin << "\n";
  for (const std::string& cv : c.caveats) os << "  note: " << cv << "\n";
  if (c.rows.empty()) {
    os << "\nNo figure is present in two or more inputs.\n";
    return;
  }
  const std::size_t n = c.inputs.size();
  std::size_t idw = 6;
  for (const CompareRow& r : c.rows) idw = std::max(idw, r.id.size());
  idw = std::min<std::size_t>(idw, 44);
  // Up to three inputs: values and per-clock figures in one table; more: two tables, so
  // that a line stays readable.
  const bool one_table = n <= 3;
  auto value_cells = [&](const CompareRow& r) {
    for (std::size_t i = 0; i < n; ++i) {
      const CompareCell& cell = r.cells[i];
      std::string v = cell_value(cell, r.unit);
      if (i > 0 && cell.ratio) v += " " + ratio_text(cell.ratio);
      os << "  " << pad_cell(v.empty() ? "-" : v, 16, true);
    }
  };
  auto clk_cells = [&](const CompareRow& r) {
    const std::string clk_unit = row_clk_unit(r);
    os << "  " << pad_cell(clk_unit, 12, false);
    for (std::size_t i = 0; i < n; ++i) {
      const CompareCell& cell = r.cells[i];
      std::string v = cell_per_clk(cell);
      if (!v.empty() && cell.per_clk_unit != clk_unit) v += " " + cell.per_clk_unit;
      if (i > 0 && cell.per_clk_ratio) v += " " + ratio_text(cell.per_clk_ratio);
      os << "  " << pad_cell(v.empty() ? "-" : v, 14, true);
    }
  };
  auto head = [&](bool values, bool clk) {
    os << "\n" << pad_cell("id", idw, false);
    if (values) {
      os << "  " << pad_cell("unit", 8, false);
      for (std::size_t i = 0; i < n; ++i)
        os << "  " << pad_cell("[" + std::to_string(i + 1) + "]", 16, true);
    }
    if (clk) {
      os << "  " << pad_cell("per SM per clock", 12, false);
      for (std::size_t i = 0; i < n; ++i)
        os << "  " << pad_cell("[" + std::to_string(i + 1) + "]", 14, true);
    }
    os << "\n";
  };
  head(true, one_table);
  for (const CompareRow& r : c.rows) {
    os << pad_cell(r.id, idw, false) << "  " << pad_cell(r.unit, 8, false);
    value_cells(r);
    if (one_table) clk_cells(r);
    os << "\n";
  }
  if (!one_table) {
    os << "\nPer SM per clock:";
    head(false, true);
    for (const CompareRow& r : c.rows) {
      if (row_clk_unit(r).empty()) continue;
      os << pad_cell(r.id, idw, false);
      clk_cells(r);
      os << "\n";
    }
  }
  std::size_t only = 0;
  for (const auto& [label, ids] : c.only_in) only += ids.size();
  if (only)
    os << "\n" << only << " figure(s) present in one input only (listed in the CSV and HTML).\n";
}

// ---------------------------------------------------------------------------------------
// CSV

void write_comparison_csv(const fs::path& file, const Comparison& c) {
  std::ostringstream o;
  o << "id,label,unit,input,name,kind,backend,units,clock_mhz,clock_source,status,qualifier,"
       "value,ratio,per_sm,per_sm_unit,per_sm_per_clk,per_sm_per_clk_unit,per_clk_derived,"
       "per_clk_ratio,instruction,note\n";
  for (const CompareRow& r : c.rows) {
    for (std::size_t i = 0; i < c.inputs.size(); ++i) {
      const CompareInput& in = c.inputs[i];
      const CompareCell& cell = r.cells[i];
      if (!cell.present) continue;
      o << csv_field(r.id) << ',' << csv_field(r.label) << ','
        << csv_field(cell.unit_mismatch ? cell.unit : r.unit) << ',' << i + 1 << ','
        << csv_field(in.label) << ',' << (in.reference ? "reference" : "result") << ','
        << csv_field(in.backend) << ',' << (in.units > 0 ? std::to_string(in.units) : "") << ','
        << csv_num(in.clock_mhz) << ',' << csv_field(in.clock_source) << ','
        << csv_field(cell.status.name()) << ',' << csv_field(cell.qualifier) << ','
        << csv_num(cell.value) << ',' << csv_num(cell.ratio) << ',' << csv_num(cell.per_sm) << ','
        << (cell.per_sm ? r.per_sm_unit : "") << ',' << csv_num(cell.per_clk) << ','
        << csv_field(cell.per_clk ? cell.per_clk_unit : "") << ','
        << (cell.per_clk ? (cell.per_clk_derived ? "1" : "0") : "") << ','
        << csv_num(cell.per_clk_ratio) << ',' << csv_field(cell.instruction) << ','
        << csv_field(cell.status.ok() ? cell.note : cell.status.reason) << "\n";
    }
  }
  for (const auto& [label, ids] : c.only_in)
    for (const std::string& id : ids)
      o << csv_field(id) << ",,,," << csv_field(label) << ",,,,,,only in this input,,,,,,,,,,,\n";
  write_text(file, o.str());
}

// ---------------------------------------------------------------------------------------
// baseline

void print_baseline(std::ostream& os, const BaselineReport& r, bool verbose) {
  os << "Baseline: " << r.baseline.label << " (" << input_facts(r.baseline) << ") "
     << r.baseline.origin << "\n";
  os << "New run:  " << r.current.label << " (" << input_facts(r.current) << ") "
     << r.current.origin << "\n";
  os << "Tolerance: " << format_fixed(r.tolerance * 100, 2)
     << " % (or, where larger, the baseline's own spread or step for a figure)\n";
  if (r.baseline.name != r.current.name) os << "note: the two runs are of different devices\n";
  if (r.baseline.clock_mhz && r.current.clock_mhz &&
      std::fabs(*r.baseline.clock_mhz - *r.current.clock_mhz) > 0.01 * *r.baseline.clock_mhz)
    os << "note: the clocks differ (" << format_fixed(*r.baseline.clock_mhz, 0) << " against "
       << format_fixed(*r.current.clock_mhz, 0) << " MHz)\n";

  auto section = [&](const std::string& title, auto pred) {
    std::vector<const BaselineItem*> items;
    for (const BaselineItem& it : r.items)
      if (pred(it)) items.push_back(&it);
    if (items.empty()) return;
    std::size_t w = 10;
    for (const auto* it : items) w = std::max(w, it->id.size());
    w = std::min<std::size_t>(w, 48);
    os << "\n" << title << " (" << items.size() << "):\n";
    for (const auto* it : items) {
      os << "  " << pad_cell(it->id, w, false) << "  "
         << pad_cell(it->baseline ? compare_number(*it->baseline, it->unit) : "-", 10, true)
         << " -> " << pad_cell(it->current ? compare_number(*it->current, it->unit) : "-", 10, true)
         << " " << pad_cell(it->unit, 8, false) << " "
         << pad_cell(it->change
                         ? (*it->change >= 0 ? "+" : "") + format_fixed(*it->change * 100, 1) + " %"
                         : "",
                     9, true)
         << "  " << to_string(it->verdict) << (it->reason.empty() ? "" : ": " + it->reason) << "\n";
    }
  };
  section("REGRESSIONS", [](const BaselineItem& i) { return is_regression(i.verdict); });
  section("Improvements", [](const BaselineItem& i) {
    return i.verdict == Verdict::improved || i.verdict == Verdict::recovered;
  });
  section("Not comparable / failed in both", [](const BaselineItem& i) {
    return i.verdict == Verdict::not_comparable || i.verdict == Verdict::failed_both;
  });
  section("Only in one run (listed, not failures)", [](const BaselineItem& i) {
    return i.verdict == Verdict::only_new || i.verdict == Verdict::only_baseline;
  });
  // Changes past the tolerance that a capacity's sweep step or the baseline's own spread
  // cannot resolve: shown, not flagged.
  section("Past the tolerance but within the baseline's step or spread (not flagged)",
          [](const BaselineItem& i) { return i.verdict == Verdict::within && !i.reason.empty(); });
  section("Not gated (host; --include-host gates them)",
          [](const BaselineItem& i) { return i.verdict == Verdict::not_gated; });
  if (verbose)
    section("Within tolerance",
            [](const BaselineItem& i) { return i.verdict == Verdict::within && i.reason.empty(); });
  int within = 0, only = 0;
  for (const auto& it : r.items) {
    within += it.verdict == Verdict::within;
    only += it.verdict == Verdict::only_new || it.verdict == Verdict::only_baseline;
  }
  os << "\n"
     << r.items.size() << " figures: " << r.regressions() << " regressed, " << r.improvements()
     << " improved, " << within << " within tolerance, " << only << " in one run only"
     << (r.not_gated() ? ", " + std::to_string(r.not_gated()) + " not gated (host)" : "") << ".\n";
  os << (r.regressions() ? "RESULT: REGRESSION (exit status 3)\n" : "RESULT: no regression\n");
}

void write_baseline_csv(const fs::path& file, const BaselineReport& r) {
  std::ostringstream o;
  o << "id,label,unit,higher_is_better,baseline,current,change,verdict,reason\n";
  for (const BaselineItem& it : r.items)
    o << csv_field(it.id) << ',' << csv_field(it.label) << ',' << csv_field(it.unit) << ','
      << (it.higher_is_better ? 1 : 0) << ',' << csv_num(it.baseline) << ',' << csv_num(it.current)
      << ',' << csv_num(it.change) << ',' << csv_field(to_string(it.verdict)) << ','
      << csv_field(it.reason) << "\n";
  write_text(file, o.str());
}

}  // namespace gd::report
