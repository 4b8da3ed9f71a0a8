#include "fleet_report.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <ostream>
#include <sstream>

#include "format.hpp"
#include "gpudissect/fleet_units.hpp"
#include "gpudissect/units.hpp"
#include "output.hpp"

namespace gd::report {

namespace {

std::string gpu_name(const FleetRank& r) {
  std::string s = r.host.empty() ? "?" : r.host;
  s += " rank " + std::to_string(r.rank);
  s += " " + (r.device.id.empty() ? r.device_id : r.device.id);
  return s;
}

const char* cell_class(CellMark m) {
  switch (m) {
    case CellMark::outlier:
      return "out";
    case CellMark::drift:
      return "drift";
    case CellMark::better:
      return "better";
    case CellMark::failed:
      return "fail";
    case CellMark::near:
      return "near";
    default:
      return "none";
  }
}

const char* verdict_class(GpuVerdict v) {
  switch (v) {
    case GpuVerdict::failed:
      return "fail";
    case GpuVerdict::outlier:
      return "out";
    case GpuVerdict::regressed:
      return "drift";
    default:
      return "near";
  }
}

}  // namespace

void print_fleet(std::ostream& os, const FleetReport& rep) {
  int measured = 0;
  for (const auto& r : rep.ranks) measured += r.status.ok();
  os << "fleet: " << rep.ranks.size() << " rank(s), " << measured << " measured, "
     << rep.unhealthy() << " unhealthy (robust z > " << format_significant(rep.options.threshold, 3)
     << " and > " << format_significant(100 * rep.options.min_deviation, 3)
     << "% from the median of the others"
     << (rep.options.baseline_tolerance
             ? ", or beyond " + format_significant(100 * *rep.options.baseline_tolerance, 3) +
                   "% of the baseline"
             : std::string())
     << ")\n";
  if (rep.busy())
    os << "  " << rep.busy()
       << " GPU(s) busy (another process used them while they were measured): not judged\n";
  for (const FleetGpu& g : rep.gpus) {
    const FleetRank& r = rep.ranks[g.index];
    os << "  " << to_string(g.verdict) << "  " << gpu_name(r);
    if (!r.device.name.empty()) os << "  " << r.device.name;
    if (!fleet_bus_id(r).empty()) os << "  bus " << fleet_bus_id(r);
    if (!fleet_uuid(r).empty()) os << "  " << fleet_uuid(r);
    os << "\n";
    for (const auto& why : g.reasons) os << "      " << why << "\n";
    if (!r.note.empty()) os << "      note: " << r.note << "\n";
  }
  for (const auto& n : rep.notes) os << "(" << n << ")\n";
  // Links per node: the figures every node measured once, with every GPU of the node.
  for (const FleetNode& n : rep.nodes) {
    os << "  links on " << n.host << " (rank " << n.rank << "): " << n.links.status.name();
    if (!n.links.status.reason.empty()) os << ": " << n.links.status.reason;
    os << "\n";
    for (const Figure& f : n.links.figures)
      if (f.value && f.status.ok())
        os << "      " << f.id << "  " << format_significant(f.value->median, 4) << " " << f.unit
           << "\n";
  }
}

namespace {

// A figure id that may break after its dots, so that a column is as narrow as its values.
std::string breakable_id(const std::string& id) {
  std::string out;
  for (char c : id) {
    out += detail::html_escape(std::string(1, c));
    if (c == '.' || c == '_') out += "<wbr>";
  }
  return out;
}

void html_head(std::ostream& h, const FleetReport& rep, const std::string& title) {
  h << "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>" << detail::html_escape(title)
    << "</title>\n<style>\n"
       "body{font-family:sans-serif;margin:1.5em;color:#222}\n"
       "table{border-collapse:collapse;font-size:13px}\n"
       "td,th{border:1px solid #ccc;padding:3px 6px;text-align:right;vertical-align:top}\n"
       "th{background:#f2f2f2}\ntd.l,th.l{text-align:left}\n"
       ".near{background:#e6f4e6}.drift{background:#fff2bf}.out{background:#f7b4ad}\n"
       ".better{background:#cfe3fa}.fail{background:#d9d9d9;color:#700}.none{background:#fff}\n"
       "small{color:#555}\n"
       // The tables scroll inside their own box; the page never runs wider than the window.
       ".box{max-width:100%;overflow-x:auto}\n"
       "table.every{font-size:12px}table.every td,table.every th{padding:2px 4px}\n"
       "table.every th.fig{min-width:5em;max-width:8em;font-weight:normal}\n"
       "table.every td.id{max-width:13em;overflow-wrap:anywhere}\n"
       "table.every td.v{white-space:nowrap}\n"
       "</style></head><body>\n";
  h << "<h1>" << detail::html_escape(title) << "</h1>\n";
  int measured = 0;
  for (const auto& r : rep.ranks) measured += r.status.ok();
  h << "<p>" << rep.ranks.size() << " rank(s), " << measured << " measured, <b>" << rep.unhealthy()
    << " unhealthy</b> (exit status " << rep.exit_code() << ").</p>\n";
  h << "<p><small>Each cell is compared with the median of the <i>other</i> GPUs' values; "
       "robust z = (value &minus; median) / max(1.4826&times;MAD, "
    << format_significant(100 * rep.options.noise_floor, 3)
    << "% of the median). A figure worse than the median by more than z "
    << format_significant(rep.options.threshold, 3) << " and more than "
    << format_significant(100 * rep.options.min_deviation, 3)
    << "% makes its GPU an outlier. Colours: <span class=\"near\">near the median</span> "
       "<span class=\"drift\">worse, beyond half the threshold</span> "
       "<span class=\"out\">outlier</span> <span class=\"better\">better beyond the "
       "threshold (not flagged)</span> <span class=\"fail\">failed</span>.</small></p>\n";
  for (const auto& n : rep.notes)
    h << "<p><small>Note: " << detail::html_escape(n) << "</small></p>\n";
}

// The unhealthy GPUs first, with the figures that make them so.
void html_verdicts(std::ostream& h, const FleetReport& rep) {
  h << "<h2>Verdicts</h2>\n<div class=\"box\"><table><tr><th class=\"l\">verdict</th>"
       "<th class=\"l\">GPU</th><th class=\"l\">why</th></tr>\n";
  for (const FleetGpu& g : rep.gpus) {
    const FleetRank& r = rep.ranks[g.index];
    h << "<tr><td class=\"l " << verdict_class(g.verdict) << "\">" << to_string(g.verdict)
      << "</td><td class=\"l\">" << detail::html_escape(gpu_name(r)) << "</td><td class=\"l\">";
    for (const auto& why : g.reasons) h << detail::html_escape(why) << "<br>";
    if (!r.note.empty()) h << "<small>" << detail::html_escape(r.note) << "</small>";
    h << "</td></tr>\n";
  }
  h << "</table></div>\n";
}

void html_identity(std::ostream& h, const FleetGpu& g, const FleetRank& r) {
  h << "<tr><td class=\"l id " << verdict_class(g.verdict) << "\">"
    << detail::html_escape(gpu_name(r)) << "</td><td class=\"l id\">"
    << detail::html_escape(r.device.name) << "</td><td class=\"l v\">"
    << detail::html_escape(fleet_bus_id(r)) << "</td><td class=\"l id\">"
    << detail::html_escape(fleet_uuid(r))
    << (fleet_serial(r).empty() ? "" : "<br>" + detail::html_escape(fleet_serial(r)))
    << (fleet_ecc(r).empty() ? "" : "<br>" + detail::html_escape(fleet_ecc(r)))
    << "</td><td class=\"l id\">";
  if (r.telemetry) {
    const Telemetry& t = *r.telemetry;
    if (t.sm_clock_mhz) h << "SM " << format_significant(*t.sm_clock_mhz, 4) << " MHz ";
    if (t.memory_clock_mhz) h << "mem " << format_significant(*t.memory_clock_mhz, 4) << " MHz ";
    if (t.temperature_c) h << format_significant(*t.temperature_c, 3) << " &deg;C ";
    if (t.power_w) h << format_significant(*t.power_w, 4) << " W ";
    for (const auto& tr : t.throttle_reasons)
      h << "<br>"
        << (is_alarming_throttle_reason(tr) ? "<b>" + detail::html_escape(tr) + "</b>"
                                            : detail::html_escape(tr));
  }
  h << "</td>";
}

void html_cell(std::ostream& h, const FleetRow& row, const FleetCell& c) {
  std::string tip;
  if (c.median) tip += "median of the others " + fleet_quantity(*c.median, row.unit);
  if (c.mad) tip += ", MAD " + fleet_quantity(*c.mad, row.unit);
  if (c.z && std::isfinite(*c.z)) tip += ", robust z " + format_significant(*c.z, 3);
  if (!c.reason.empty()) tip = c.reason;
  h << "<td class=\"v " << cell_class(c.mark) << "\" title=\"" << detail::html_escape(tip) << "\">";
  if (c.value)
    h << detail::html_escape(fleet_quantity(*c.value, row.unit));
  else if (c.mark == CellMark::failed)
    h << "failed";
  if (c.deviation && c.mark != CellMark::alone) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%+.1f%%", 100 * *c.deviation);
    h << "<br><small>" << buf << "</small>";
  }
  h << "</td>";
}

// Every GPU: identity, then one column per headline figure, each value in its unit.
void html_every_gpu(std::ostream& h, const FleetReport& rep) {
  h << "<h2>Every GPU</h2>\n<div class=\"box\"><table class=\"every\">\n<tr><th class=\"l\">"
       "GPU</th><th class=\"l\">device</th><th class=\"l\">bus id</th><th class=\"l\">UUID / "
       "serial / ECC</th><th class=\"l\">clocks (NVML)</th>";
  for (const FleetRow& row : rep.rows)
    h << "<th class=\"fig\" title=\"" << detail::html_escape(row.label) << "\">"
      << breakable_id(row.id) << (row.higher_is_better ? "" : "<br><small>lower is better</small>")
      << "</th>";
  h << "</tr>\n";
  for (const FleetGpu& g : rep.gpus) {
    const FleetRank& r = rep.ranks[g.index];
    html_identity(h, g, r);
    if (!r.status.ok()) {
      h << "<td class=\"l fail\" colspan=\"" << std::max<size_t>(1, rep.rows.size()) << "\">"
        << detail::html_escape(r.status.with_reason()) << "</td></tr>\n";
      continue;
    }
    for (const FleetRow& row : rep.rows) html_cell(h, row, row.cells[g.index]);
    h << "</tr>\n";
  }
  h << "<tr><th class=\"l\" colspan=\"5\">fleet median (MAD)</th>";
  for (const FleetRow& row : rep.rows) {
    h << "<th class=\"v\">";
    if (row.median) h << detail::html_escape(fleet_quantity(*row.median, row.unit));
    if (row.mad)
      h << "<br><small>(" << detail::html_escape(fleet_quantity(*row.mad, row.unit)) << ")</small>";
    h << "</th>";
  }
  h << "</tr>\n</table></div>\n";
}

// Links per node: measured once per node, every GPU of it together (gpudissect run links).
void html_links(std::ostream& h, const FleetReport& rep) {
  if (rep.nodes.empty()) return;
  std::vector<std::string> ids;
  for (const FleetNode& n : rep.nodes)
    for (const Figure& f : n.links.figures)
      if (f.value && std::find(ids.begin(), ids.end(), f.id) == ids.end()) ids.push_back(f.id);
  h << "<h2>Links per node</h2>\n<p><small>The <code>links</code> probe, run once on each "
       "node by its first rank after every rank of the node had finished: peer bandwidth "
       "(the lowest pair), latency (the highest pair), host links and NCCL collectives.</small>"
       "</p>\n<div class=\"box\"><table>\n<tr><th class=\"l\">node</th>"
       "<th class=\"l\">status</th>";
  for (const auto& id : ids) h << "<th>" << detail::html_escape(id) << "</th>";
  h << "</tr>\n";
  for (const FleetNode& n : rep.nodes) {
    h << "<tr><td class=\"l\">" << detail::html_escape(n.host) << "</td><td class=\"l"
      << (n.links.status.ok() ? "" : " fail") << "\">"
      << detail::html_escape(n.links.status.with_reason()) << "</td>";
    for (const auto& id : ids) {
      h << "<td>";
      for (const Figure& f : n.links.figures)
        if (f.id == id && f.value)
          h << detail::html_escape(fleet_quantity(f.value->median, f.unit));
      h << "</td>";
    }
    h << "</tr>\n";
  }
  h << "</table></div>\n";
}

// Baseline verdicts, where asked for.
void html_baseline(std::ostream& h, const FleetReport& rep) {
  bool any_baseline = false;
  for (const FleetGpu& g : rep.gpus) any_baseline |= g.baseline.has_value();
  if (!any_baseline) return;
  h << "<h2>Against the baseline</h2>\n<table><tr><th class=\"l\">GPU</th><th>regressions"
       "</th><th>improvements</th></tr>\n";
  for (const FleetGpu& g : rep.gpus)
    if (g.baseline)
      h << "<tr><td class=\"l\">" << detail::html_escape(gpu_name(rep.ranks[g.index]))
        << "</td><td class=\"" << (g.baseline_regressions ? "out" : "near") << "\">"
        << g.baseline_regressions << "</td><td>" << g.baseline->improvements() << "</td></tr>\n";
  h << "</table>\n";
}

}  // namespace

std::string fleet_html(const FleetReport& rep, const std::string& title) {
  std::ostringstream h;
  html_head(h, rep, title);
  html_verdicts(h, rep);
  html_every_gpu(h, rep);
  html_links(h, rep);
  html_baseline(h, rep);
  h << "</body></html>\n";
  return h.str();
}

void write_fleet_html(const std::filesystem::path& file, const FleetReport& rep,
                      const std::string& title) {
  write_file(file, fleet_html(rep, title));
}

}  // namespace gd::report
