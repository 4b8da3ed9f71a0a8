// The HTML report: one self-contained file (inline CSS and SVG, nothing fetched).
#include <map>
#include <sstream>
#include <stdexcept>
#include <system_error>

#include "article.hpp"
#include "charts.hpp"
#include "gpudissect/budget.hpp"
#include "gpudissect/units.hpp"
#include "probe_report.hpp"
#include "report.hpp"
#include "sections.hpp"
#include "style.hpp"

namespace gd::report {

namespace fs = std::filesystem;

namespace {

using namespace detail;

// The run report's own rules, after the shared style (style.hpp).
const char* kCss = R"css(
.facts { display: flex; flex-wrap: wrap; gap: 2em; }
.facts > div { flex: 1 1 420px; min-width: 0; }
.hierarchy svg { width: 100%; max-width: 960px; }
table.rates td.n { white-space: nowrap; }
.bar { display: inline-block; height: 0.7em; background: #9bb7d8; margin-right: 0.4em;
       max-width: 5em; vertical-align: baseline; }
.small { font-size: 0.85em; }
.glance .facts { gap: 1.5em; }
.glance .facts > div:first-child { flex: 3 1 500px; }
.glance .facts > div:last-child { flex: 2 1 300px; }
table.rates { font-size: 0.85em; }
table.rates .u { color: #777; font-size: 0.85em; }
ol.standouts li { margin-bottom: 0.4em; }
code.id { font-size: 0.8em; color: #666; }
nav.toc ol { columns: 2; column-gap: 2em; }
@media print {
  .glance { break-after: page; page-break-after: always; }
  .glance { font-size: 8pt; }
  .glance h3 { margin: 0.5em 0 0.3em; }
  .glance table.rates { font-size: 7pt; margin: 0.3em 0; }
  .glance table.rates td, .glance table.rates th { padding: 0.1em 0.4em; }
  .glance figcaption, .glance p { margin: 0.3em 0; }
  .glance ol.standouts li { margin-bottom: 0.2em; }
  .facts > div { flex: 1 1 45%; }
  .glance .facts > div:first-child { flex: 3 1 55%; }
  .glance .facts > div:last-child { flex: 2 1 35%; }
}
)css";

struct Html {
  std::ostringstream o;
  void kv(const std::string& k, const std::string& v) {
    o << "<tr><th>" << html_escape(k) << "</th><td>" << html_escape(v) << "</td></tr>\n";
  }
};

std::string bytes_exact(uint64_t b) {
  return format_bytes(static_cast<double>(b)) + " (" + std::to_string(b) + " bytes)";
}

void device_facts(Html& h, const DeviceInfo& d, const std::optional<Provenance>& prov) {
  const bool cuda = d.backend == "cuda";
  h.o << "<table class=\"kv\">\n";
  h.kv("name", d.name);
  if (!d.vendor.empty()) h.kv("vendor", d.vendor);
  h.kv("backend", d.backend);
  if (!d.id.empty()) h.kv("id", d.id);
  h.kv(cuda ? "SMs" : "compute units", std::to_string(d.compute_units));
  if (!d.compute_capability.empty())
    h.kv(cuda ? "compute capability" : "OpenCL version", d.compute_capability);
  if (d.clock_mhz_reported) h.kv("clock (reported)", mhz(d.clock_mhz_reported));
  if (d.memory_clock_mhz) h.kv("memory clock (reported)", mhz(d.memory_clock_mhz));
  if (d.memory_bus_width_bits)
    h.kv("memory bus width", std::to_string(*d.memory_bus_width_bits) + " bits");
  if (d.memory_bytes) h.kv("memory", bytes_exact(*d.memory_bytes));
  if (d.l2_bytes)
    h.kv(cuda ? "L2 cache (reported)" : "global memory cache", bytes_exact(*d.l2_bytes));
  if (d.l1_or_cacheline_bytes)
    h.kv(cuda ? "L1 / cache line" : "cache line", bytes_exact(*d.l1_or_cacheline_bytes));
  if (d.shared_per_sm_bytes) h.kv("shared memory per SM", bytes_exact(*d.shared_per_sm_bytes));
  if (d.shared_per_block_bytes)
    h.kv(cuda ? "shared memory per block" : "local memory", bytes_exact(*d.shared_per_block_bytes));
  if (d.shared_per_block_optin_bytes)
    h.kv("shared memory per block (opt-in)", bytes_exact(*d.shared_per_block_optin_bytes));
  if (d.constant_bytes) h.kv("constant memory", bytes_exact(*d.constant_bytes));
  if (!d.driver_version.empty()) h.kv("driver", d.driver_version);
  if (!d.toolkit_version.empty()) h.kv(cuda ? "CUDA runtime" : "platform", d.toolkit_version);
  for (const auto& [k, v] : d.extra) h.kv(k, v);
  if (prov) {  // where it ran (schema 3); kv escapes every value, as it does the device's
    h.kv("host", prov->host);
    h.kv("OS", prov->os + ", " + prov->kernel + " (" + prov->machine + ")");
    h.kv("CPU", prov->cpu_model);
    if (d.driver_version.empty()) h.kv("driver", prov->driver_version);
  }
  h.o << "</table>\n";
}

std::string telemetry_text(const Telemetry& t) {
  std::string s = "SM clock " + mhz(t.sm_clock_mhz) + ", memory clock " + mhz(t.memory_clock_mhz);
  if (t.temperature_c) s += ", " + format_fixed(*t.temperature_c, 0) + " °C";
  if (t.power_w) s += ", " + format_fixed(*t.power_w, 0) + " W";
  s += "; throttle reasons: ";
  if (t.throttle_reasons.empty()) s += "none";
  for (std::size_t i = 0; i < t.throttle_reasons.size(); ++i)
    s += (i ? ", " : "") + t.throttle_reasons[i];
  return s;
}

void probe_facts(Html& h, const RunResult& r, const ProbeRegistry& registry) {
  h.o << "<table class=\"kv\">\n";
  for (const Probe* probe : registry.all()) {
    auto it = r.probes.find(probe->name());
    if (it == r.probes.end()) continue;
    std::any copy = it->second;  // status() takes the result by reference
    const Status st = probe->status(copy);
    h.kv(probe->name() + " probe",
         st.with_reason() + ", " + format_fixed(probe->wall_seconds(it->second), 1) + " s");
  }
  if (const LatencyProbeResult* p = r.get<LatencyProbeResult>()) {
    h.kv("SM clock (measured)",
         p->clock_mhz_measured ? mhz(p->clock_mhz_measured) : "- (no device cycle counter)");
    if (p->telemetry_before) h.kv("telemetry before", telemetry_text(*p->telemetry_before));
    if (p->telemetry_after) h.kv("telemetry after", telemetry_text(*p->telemetry_after));
  }
  if (r.device.clock_mhz_reported) h.kv("SM clock (reported)", mhz(r.device.clock_mhz_reported));
  h.kv("tool", r.tool.name + (r.tool.version.empty() ? "" : " " + r.tool.version));
  if (r.provenance)
    h.kv("build", "git " + r.provenance->git_revision + ", " + r.provenance->build_type);
  if (!r.tool.command.empty()) h.kv("command", r.tool.command);
  if (!r.tool.started_at.empty()) h.kv("started", r.tool.started_at);
  h.kv("schema version", std::to_string(r.schema_version));
  h.o << "</table>\n";
}

// The headline figures with their stable ids: what comparisons and baselines read.
void figures_table(Html& h, const std::vector<Figure>& figures) {
  if (figures.empty()) return;
  h.o << "<h2 id=\"figures\" class=\"keep\">Headline figures</h2>\n<details><summary>All "
      << figures.size()
      << " figures, with the stable ids that <code>compare</code> and baselines read</summary>\n"
         "<table>\n<tr><th>id</th><th>figure</th><th>value</th><th>unit</th><th>per SM per "
         "clock</th><th>instruction</th><th>where</th></tr>\n";
  for (const Figure& f : figures) {
    std::string value =
        f.value ? format_fixed(f.value->median, f.value->median < 10 ? 2 : 1) : f.status.name();
    if (f.value && f.status.code == StatusCode::unstable) value += unstable_note(*f.value);
    std::string per = f.per_sm_per_clk
                          ? format_fixed(*f.per_sm_per_clk, 2) + " " + f.per_sm_per_clk_unit
                          : std::string("-");
    h.o << "<tr><td><code>" << html_escape(f.id) << "</code></td><td>" << html_escape(f.label)
        << "</td><td class=\"n\">" << html_escape(value) << "</td><td>" << html_escape(f.unit)
        << "</td><td class=\"n\">" << html_escape(per) << "</td><td><code>"
        << html_escape(f.instruction) << "</code></td><td>"
        << html_escape(f.status.ok() ? f.where : f.status.reason)
        << (f.suspect.empty() ? "" : " (suspect: " + html_escape(f.suspect) + ")")
        << "</td></tr>\n";
  }
  h.o << "</table>\n</details>\n";
}

void summary_table(Html& h, const LatencyProbeResult& p) {
  h.o << "<table>\n<tr><th>path</th><th>level</th><th class=\"n\">capacity</th>"
         "<th class=\"n\">capacity interval</th><th class=\"n\">cycles</th>"
         "<th class=\"n\">ns</th><th class=\"n\">confidence</th></tr>\n";
  for (const SummaryRow& row : summary_rows(p)) {
    h.o << "<tr><td>" << html_escape(row.path) << "</td>";
    if (!row.note.empty()) {
      h.o << "<td colspan=\"6\" class=\"muted\">" << html_escape(row.note) << "</td></tr>\n";
      continue;
    }
    h.o << "<td>" << html_escape(row.level) << "</td><td class=\"n\">" << html_escape(row.capacity)
        << "</td><td class=\"n\">" << html_escape(row.interval) << "</td><td class=\"n\">"
        << html_escape(row.cycles) << "</td><td class=\"n\">" << html_escape(row.ns)
        << "</td><td class=\"n\">" << html_escape(row.confidence) << "</td></tr>\n";
  }
  h.o << "</table>\n";
  const auto dram = dram_rows(p);
  if (!dram.empty()) {
    h.o << "<h3>Device memory minus last cache</h3>\n<table>\n<tr><th>path</th><th>step</th>"
           "<th class=\"n\">cycles</th><th class=\"n\">ns</th></tr>\n";
    for (const DramRow& row : dram)
      h.o << "<tr><td>" << html_escape(row.path) << "</td><td>" << html_escape(row.from_to)
          << "</td><td class=\"n\">" << html_escape(row.cycles) << "</td><td class=\"n\">"
          << html_escape(row.ns) << "</td></tr>\n";
    h.o << "</table>\n";
  }
}

void levels_table(Html& h, const CurveResult& c, bool tlb, uint64_t stride) {
  if (c.levels.empty()) {
    h.o << "<p class=\"muted\">No level found.</p>\n";
    return;
  }
  h.o << "<table>\n<tr><th>level</th><th class=\"n\">" << (tlb ? "reach" : "capacity")
      << "</th><th class=\"n\">interval</th>";
  if (tlb) h.o << "<th class=\"n\">pages</th>";
  h.o << "<th class=\"n\">cycles</th><th class=\"n\">ns</th><th class=\"n\">"
      << (tlb ? "miss cost, cycles" : "step, cycles") << "</th><th class=\"n\">"
      << (tlb ? "miss cost, ns" : "step, ns") << "</th><th class=\"n\">confidence</th></tr>\n";
  for (const Level& l : c.levels) {
    h.o << "<tr><td>" << html_escape(l.name) << "</td><td class=\"n\">"
        << html_escape(opt_bytes(l.capacity_bytes)) << "</td><td class=\"n\">"
        << html_escape(capacity_interval(l)) << "</td>";
    if (tlb)
      h.o << "<td class=\"n\">"
          << ((l.capacity_bytes && stride) ? std::to_string(*l.capacity_bytes / stride) : "-")
          << "</td>";
    h.o << "<td class=\"n\">" << html_escape(opt_fixed(l.latency_cycles, 1))
        << "</td><td class=\"n\">" << html_escape(opt_fixed(l.latency_ns, 1))
        << "</td><td class=\"n\">" << html_escape(opt_fixed(l.step_cycles, 1))
        << "</td><td class=\"n\">" << html_escape(opt_fixed(l.step_ns, 1))
        << "</td><td class=\"n\">" << html_escape(format_fixed(l.confidence, 2)) << "</td></tr>\n";
  }
  h.o << "</table>\n";
}

std::string spread(const std::optional<Summary>& s, int digits) {
  if (!s) return "-";
  return format_fixed(s->q1, digits) + "–" + format_fixed(s->q3, digits);
}

void points_table(Html& h, const CurveResult& c) {
  if (c.points.empty()) return;
  std::size_t ok = 0;
  for (const LatencyPoint& p : c.points) ok += p.status.ok();
  h.o << "<details><summary>" << c.points.size() << " points (" << ok
      << " measured)</summary>\n<table>\n<tr><th class=\"n\">footprint</th>"
         "<th class=\"n\">stride</th><th>status</th><th class=\"n\">cycles</th>"
         "<th class=\"n\">cycles q1–q3</th><th class=\"n\">ns</th><th class=\"n\">ns q1–q3</th>"
         "<th class=\"n\">clock MHz</th><th>reason</th></tr>\n";
  for (const LatencyPoint& p : c.points) {
    h.o << "<tr><td class=\"n\" title=\"" << p.footprint_bytes << " bytes\">"
        << html_escape(format_bytes(static_cast<double>(p.footprint_bytes)))
        << "</td><td class=\"n\">" << html_escape(format_bytes(static_cast<double>(p.stride_bytes)))
        << "</td><td>" << html_escape(p.status.name()) << "</td><td class=\"n\">"
        << html_escape(p.cycles ? format_fixed(p.cycles->median, 1) : std::string("-"))
        << "</td><td class=\"n\">" << html_escape(spread(p.cycles, 1)) << "</td><td class=\"n\">"
        << html_escape(p.ns ? format_fixed(p.ns->median, 1) : std::string("-"))
        << "</td><td class=\"n\">" << html_escape(spread(p.ns, 1)) << "</td><td class=\"n\">"
        << html_escape(opt_fixed(p.clock_mhz, 0)) << "</td><td>" << html_escape(p.status.reason)
        << "</td></tr>\n";
  }
  h.o << "</table>\n</details>\n";
}

// Charts drawn for the page, by spec name; failures by name with gnuplot's message.
struct Charts {
  bool enabled = false;
  std::string why_not;
  std::map<std::string, std::string> svg;
  std::map<std::string, std::string> failed;
  std::vector<std::string> png_failed;
};

void chart(Html& h, const Charts& ch, const std::string& name, const std::string& caption) {
  if (!ch.enabled) return;  // the page says once, at the top, why there are no charts
  if (auto it = ch.svg.find(name); it != ch.svg.end()) {
    h.o << "<figure class=\"chart\">\n" << it->second << "\n";
    if (!caption.empty()) h.o << "<figcaption>" << html_escape(caption) << "</figcaption>\n";
    h.o << "</figure>\n";
  } else if (auto f = ch.failed.find(name); f != ch.failed.end()) {
    h.o << "<p class=\"note\">The chart <code>" << html_escape(name)
        << "</code> could not be drawn: gnuplot failed (" << html_escape(f->second) << ").</p>\n";
  }
}

void how_to_read(Html& h, const RunResult& r) {
  const bool cycles =
      r.get<LatencyProbeResult>() && r.get<LatencyProbeResult>()->clock_mhz_measured;
  h.o << "<h2 id=\"how\">How to read this report</h2>\n<p>Each point is the latency of one "
         "<em>dependent</em> load: the probe follows a chain of pointers through a buffer of the "
         "given footprint, so every load has to wait for the one before it. While the buffer "
         "fits in a cache the latency stays flat; each such <em>plateau</em> is a cache level, "
         "and its height is that level's load-to-use latency. A level's <em>capacity</em> is "
         "where its plateau ends: it lies between the last footprint still on the plateau and "
         "the first one clearly above it, and that interval is given beside it (the shaded band "
         "in the charts). The last level, device memory, has no capacity. "
         "<em>Confidence</em> (0 to 1) says how clearly the plateau and its edge stand out "
         "from the noise: near 1 a flat plateau and a sharp step, below about 0.5 a level to "
         "treat as tentative. Error bars show the interquartile range of the repeats.</p>\n<p>";
  if (cycles)
    h.o << "Cycles are SM clock cycles at the clock measured during the run ("
        << html_escape(mhz(r.get<LatencyProbeResult>()->clock_mhz_measured))
        << "); nanoseconds are wall time, and the right axis of each path's chart gives them. ";
  else
    h.o << "This backend has no device cycle counter, so latencies are in nanoseconds only "
           "(a <code>-</code> marks the missing cycles). ";
  h.o << "The TLB section repeats the sweep with page-sized strides, so that every load touches "
         "a new page: its plateaus are TLB levels, a level's reach is the footprint its entries "
         "cover, and the miss cost is the latency it adds over the level before.</p>\n";
}

}  // namespace

std::string latency_html_section(const RunResult& r, SectionContext& ctx) {
  const LatencyProbeResult* lat = r.get<LatencyProbeResult>();
  if (!lat) return {};
  Charts ch;
  ch.enabled = ctx.charts;
  if (ch.enabled) {
    int n = 0;
    for (const ChartSpec& s : chart_specs(r)) {
      std::string err;
      if (auto svg = render_inline_svg(s, "c" + std::to_string(n++) + "-", &err))
        ch.svg[s.name] = std::move(*svg);
      else
        ch.failed[s.name] = err;
      if (ctx.png) {
        std::error_code ec;
        fs::create_directories(ctx.png_dir, ec);
        const fs::path out = ctx.png_dir / (file_stem(s.name) + ".png");
        if (render_chart(s, ChartFormat::png, out, &err))
          ctx.pngs.push_back(out);
        else
          ctx.notes.push_back("A PNG chart could not be written: " + out.string() + ": " + err);
      }
    }
  }
  Html h;
  {
    const LatencyProbeResult& p = *lat;
    h.o << "<h2 id=\"summary\">Latency against footprint</h2>\n";
    chart(h, ch, "latency_all",
          "All paths on one chart; the levels are marked in each path's chart below.");
    h.o << "<h3>Levels found</h3>\n";
    summary_table(h, p);
    how_to_read(h, r);

    for (const std::string& name : path_order(p)) {
      const CurveResult& c = p.paths.at(name);
      h.o << "<h2 id=\"path-" << html_escape(slugify(name)) << "\">Path: " << html_escape(name)
          << "</h2>\n";
      if (!c.status.ok())
        h.o << "<p class=\"note\">" << html_escape(c.status.with_reason()) << "</p>\n";
      if (c.points.empty()) continue;
      h.o << "<p class=\"muted\">Stride "
          << html_escape(format_bytes(static_cast<double>(c.stride_bytes))) << ", "
          << c.points.size() << " footprints, " << html_escape(format_fixed(c.wall_seconds, 1))
          << " s."
          << (c.timed_instruction
                  ? " Instruction timed: <code>" + html_escape(*c.timed_instruction) + "</code>."
                  : std::string())
          << "</p>\n";
      if (!c.note.empty()) h.o << "<p class=\"note\">" << html_escape(c.note) << "</p>\n";
      chart(h, ch, "latency_" + slugify(name), "");
      levels_table(h, c, false, 0);
      points_table(h, c);
    }

    if (!p.tlb.empty()) {
      h.o << "<h2 id=\"tlb\">TLB</h2>\n<p>Latency against footprint with page-sized strides: "
             "every load touches a new page, so the plateaus are TLB levels.</p>\n";
      chart(h, ch, "tlb", "");
      for (const std::string& key : tlb_order(p)) {
        const CurveResult& c = p.tlb.at(key);
        h.o << "<h3>Stride " << html_escape(tlb_stride_label(key, c)) << "</h3>\n";
        if (!c.status.ok())
          h.o << "<p class=\"note\">" << html_escape(c.status.with_reason()) << "</p>\n";
        if (c.points.empty()) continue;
        if (!c.note.empty()) h.o << "<p class=\"note\">" << html_escape(c.note) << "</p>\n";
        levels_table(h, c, true, tlb_stride(key, c));
        points_table(h, c);
      }
    }
  }
  return h.o.str();
}

std::vector<fs::path> write_html(const fs::path& file, const RunResult& r,
                                 const ProbeRegistry& registry, const HtmlOptions& opt) {
  ensure_writable(file);  // fail before drawing any chart
  std::vector<fs::path> pngs;
  std::string why_no_charts;
  SectionContext sc;
  sc.charts = gnuplot_available(&why_no_charts);
  sc.png = opt.png && sc.charts;
  sc.png_dir = opt.png_dir.empty() ? file.parent_path() : opt.png_dir;
  if (sc.png_dir.empty()) sc.png_dir = ".";

  // The sections first: the page's head lists what they could not draw.
  std::string sections;
  for (const Probe* probe : registry.all())
    if (const ProbeReport* rep = probe_reports().find(probe->name());
        rep && r.probes.count(probe->name()))
      sections += rep->html_section(r, sc);

  Html h;
  const DeviceInfo& d = r.device;
  h.o << "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
         "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>"
      << html_escape("gpudissect: " + d.name) << "</title>\n<style>" << page_css(1000) << kCss
      << "</style>\n</head>\n<body>\n";
  h.o << "<h1>gpudissect: " << html_escape(d.name) << "</h1>\n<p class=\"sub\">"
      << html_escape(r.tool.name + (r.tool.version.empty() ? "" : " " + r.tool.version)) << " · "
      << html_escape(d.backend)
      << (r.tool.started_at.empty() ? "" : " · " + html_escape(r.tool.started_at)) << "</p>\n";
  // A shared or throttled GPU: a banner before the summary, as the terminal's first line.
  if (r.gpu_state && r.gpu_state->flagged())
    h.o << "<p class=\"gpu-state\" role=\"alert\" style=\"border:2px solid #b00020;"
           "background:#fdecea;padding:.6em .8em;font-weight:600\">"
        << html_escape(gpu_state_headline(*r.gpu_state)) << "</p>\n";
  else if (r.gpu_state && r.gpu_state->verdict == "unknown")
    h.o << "<p class=\"note\">" << html_escape(gpu_state_headline(*r.gpu_state)) << "</p>\n";
  if (!sc.charts)
    h.o << "<p class=\"note\">No charts: charts need gnuplot, which was not found ("
        << html_escape(why_no_charts) << "). The tables below hold every figure.</p>\n";
  for (const std::string& n : sc.notes) h.o << "<p class=\"note\">" << html_escape(n) << "</p>\n";

  // The summary first, then the contents, then the device, the run and each probe.
  Html body;
  body.o << article_summary(r, opt.references, opt.references_note);
  body.o << "<div class=\"facts\">\n<div>\n<h2 id=\"device\">Device</h2>\n";
  device_facts(body, d, r.provenance);
  body.o << "</div>\n<div>\n<h2 id=\"run\" class=\"keep\">Run</h2>\n";
  probe_facts(body, r, registry);
  body.o << "</div>\n</div>\n";
  if (r.probes.empty()) body.o << "<p>No probe results in this file.</p>\n";
  figures_table(body, r.figures);
  body.o << sections;
  const std::string text = body.o.str();
  const std::string glance_end = "</section>\n";
  const std::size_t cut = text.find(glance_end);
  const std::size_t at = cut == std::string::npos ? 0 : cut + glance_end.size();
  h.o << text.substr(0, at) << table_of_contents(text) << text.substr(at);
  for (const auto& f : sc.pngs) pngs.push_back(f);
  h.o << "<footer>Written by " << html_escape(r.tool.name)
      << " from a saved result; the JSON file holds "
      << "every figure shown here.</footer>\n</body>\n</html>\n";

  write_text(file, h.o.str());
  return pngs;
}

}  // namespace gd::report
