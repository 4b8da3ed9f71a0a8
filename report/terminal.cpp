// The terminal summary, and the formatted rows it shares with the HTML report.
#include <algorithm>
#include <charconv>
#include <cmath>
#include <ostream>
#include <sstream>

#include "charts.hpp"
#include "gpudissect/budget.hpp"
#include "gpudissect/device.hpp"
#include "gpudissect/units.hpp"
#include "probe_report.hpp"
#include "report.hpp"
#include "sections.hpp"

namespace gd::report {

namespace detail {

std::string capacity_interval(const Level& l) {
  if (!l.capacity_lo_bytes || !l.capacity_hi_bytes) return "-";
  return format_bytes(static_cast<double>(*l.capacity_lo_bytes)) + ".." +
         format_bytes(static_cast<double>(*l.capacity_hi_bytes));
}

uint64_t tlb_stride(const std::string& key, const CurveResult& c) {
  if (c.stride_bytes) return c.stride_bytes;
  const auto pos = key.find_last_of('_');
  uint64_t v = 0;
  if (pos != std::string::npos) {
    const char* b = key.data() + pos + 1;
    std::from_chars(b, key.data() + key.size(), v);
  }
  return v;
}

std::string tlb_stride_label(const std::string& key, const CurveResult& c) {
  const uint64_t s = tlb_stride(key, c);
  return s ? format_bytes(static_cast<double>(s)) : key;
}

std::string axis_bytes_label(double bytes) {
  static const char* kSuffix[] = {"", "K", "M", "G", "T", "P"};
  int u = 0;
  while (bytes >= 1024.0 && u < 5) {
    bytes /= 1024.0;
    ++u;
  }
  char buf[32];
  if (std::fabs(bytes - std::round(bytes)) < 1e-6)
    std::snprintf(buf, sizeof buf, "%.0f%s", bytes, kSuffix[u]);
  else
    std::snprintf(buf, sizeof buf, "%.1f%s", bytes, kSuffix[u]);
  return buf;
}

std::vector<std::string> tlb_order(const LatencyProbeResult& p) {
  std::vector<std::string> out;
  for (const auto& [key, c] : p.tlb) out.push_back(key);
  std::stable_sort(out.begin(), out.end(), [&](const std::string& a, const std::string& b) {
    return tlb_stride(a, p.tlb.at(a)) < tlb_stride(b, p.tlb.at(b));
  });
  return out;
}

std::vector<SummaryRow> summary_rows(const LatencyProbeResult& p) {
  std::vector<SummaryRow> rows;
  for (const std::string& name : path_order(p)) {
    const CurveResult& c = p.paths.at(name);
    if (c.levels.empty()) {
      SummaryRow row;
      row.path = name;
      if (!c.status.ok())
        row.note = status_text(c.status);
      else if (c.points.empty())
        row.note = "no points measured";
      else
        row.note = "no level found";
      rows.push_back(row);
      continue;
    }
    for (const Level& l : c.levels) {
      SummaryRow row;
      row.path = name;
      row.level = l.name;
      row.capacity = opt_bytes(l.capacity_bytes);
      row.interval = capacity_interval(l);
      row.cycles = opt_fixed(l.latency_cycles, 1);
      row.ns = opt_fixed(l.latency_ns, 1);
      row.confidence = format_fixed(l.confidence, 2);
      rows.push_back(row);
    }
    if (!c.status.ok()) {
      SummaryRow row;
      row.path = name;
      row.note = status_text(c.status);
      rows.push_back(row);
    }
  }
  return rows;
}

std::vector<DramRow> dram_rows(const LatencyProbeResult& p) {
  std::vector<DramRow> rows;
  for (const std::string& name : path_order(p)) {
    const CurveResult& c = p.paths.at(name);
    if (!c.dram_minus_last_cache_cycles && !c.dram_minus_last_cache_ns) continue;
    DramRow row;
    row.path = name;
    // The last level is device memory; the one before it is the last cache.
    if (c.levels.size() >= 2)
      row.from_to = c.levels[c.levels.size() - 2].name + " -> " + c.levels.back().name;
    else
      row.from_to = "last cache -> device memory";
    auto plus = [](const std::optional<double>& v) {
      const std::string s = opt_fixed(v, 1);
      return (v && *v >= 0) ? "+" + s : s;
    };
    row.cycles = plus(c.dram_minus_last_cache_cycles);
    row.ns = plus(c.dram_minus_last_cache_ns);
    rows.push_back(row);
  }
  return rows;
}

std::vector<TlbRow> tlb_rows(const LatencyProbeResult& p) {
  std::vector<TlbRow> rows;
  for (const std::string& key : tlb_order(p)) {
    const CurveResult& c = p.tlb.at(key);
    const uint64_t stride = tlb_stride(key, c);
    const std::string label = tlb_stride_label(key, c);
    if (c.levels.empty()) {
      TlbRow row;
      row.stride = label;
      row.note = !c.status.ok() ? status_text(c.status) : "no level found";
      rows.push_back(row);
      continue;
    }
    for (const Level& l : c.levels) {
      TlbRow row;
      row.stride = label;
      row.level = l.name;
      row.reach = opt_bytes(l.capacity_bytes);
      row.pages = (l.capacity_bytes && stride) ? std::to_string(*l.capacity_bytes / stride) : "-";
      row.cycles = opt_fixed(l.latency_cycles, 1);
      row.ns = opt_fixed(l.latency_ns, 1);
      row.miss_cycles = opt_fixed(l.step_cycles, 1);
      row.miss_ns = opt_fixed(l.step_ns, 1);
      row.confidence = format_fixed(l.confidence, 2);
      rows.push_back(row);
    }
    if (!c.status.ok()) {
      TlbRow row;
      row.stride = label;
      row.note = status_text(c.status);
      rows.push_back(row);
    }
  }
  return rows;
}

}  // namespace detail

namespace {

using detail::mhz;

constexpr std::size_t kWidth = 100;

std::string cell(const std::string& s, std::size_t w, bool right = false) {
  if (s.size() >= w) return s;
  const std::string fill(w - s.size(), ' ');
  return right ? fill + s : s + fill;
}

// Words of `text` wrapped to lines of at most kWidth columns; the text starts at column
// `indent` (the caller has printed that much already) and continuation lines are indented.
void wrapped(std::ostream& os, const std::string& text, std::size_t indent) {
  std::istringstream in(text);
  std::string word;
  std::size_t col = indent;
  bool first = true;
  while (in >> word) {
    if (!first && col + 1 + word.size() > kWidth) {
      os << '\n' << std::string(indent, ' ');
      col = indent;
      first = true;
    }
    if (!first) {
      os << ' ';
      ++col;
    }
    os << word;
    col += word.size();
    first = false;
  }
  os << '\n';
}

// Text from a result file for the terminal: a control character (an escape sequence could
// rewrite the screen) becomes a space.
std::string plain(std::string s) {
  for (char& c : s)
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = ' ';
  return s;
}

std::string telemetry_line(const Telemetry& t) {
  std::string s = "SM " + mhz(t.sm_clock_mhz) + ", memory " + mhz(t.memory_clock_mhz);
  if (t.temperature_c) s += ", " + format_fixed(*t.temperature_c, 0) + " C";
  if (t.power_w) s += ", " + format_fixed(*t.power_w, 0) + " W";
  s += ", throttle: ";
  if (t.throttle_reasons.empty()) {
    s += "none";
  } else {
    for (std::size_t i = 0; i < t.throttle_reasons.size(); ++i)
      s += (i ? ", " : "") + t.throttle_reasons[i];
  }
  return s;
}

}  // namespace

void print_summary(std::ostream& os, const RunResult& r, const ProbeRegistry& registry) {
  using namespace detail;
  const DeviceInfo& d = r.device;
  // A shared or throttled GPU is said before anything else: every figure below is suspect.
  if (r.gpu_state && r.gpu_state->flagged()) os << gpu_state_headline(*r.gpu_state) << "\n\n";
  os << d.name;
  std::string facts;
  if (!d.id.empty()) facts += d.id + ", ";
  facts += "backend " + d.backend;
  if (!d.compute_capability.empty())
    facts += (d.backend == "cuda" ? ", compute capability " : ", ") + d.compute_capability;
  os << "  (" << facts << ")\n";

  const std::string units = d.backend == "cuda" ? "SMs" : "compute units";
  os << "  " << units << ": " << d.compute_units;
  const LatencyProbeResult* p = r.get<LatencyProbeResult>();
  os << "   clock: " << (p && p->clock_mhz_measured ? mhz(p->clock_mhz_measured) : "-")
     << " measured, " << mhz(d.clock_mhz_reported) << " reported";
  double wall = 0;
  for (const Probe* probe : registry.all())
    if (auto it = r.probes.find(probe->name()); it != r.probes.end())
      wall += probe->wall_seconds(it->second);
  if (!r.probes.empty()) os << "   wall time: " << format_fixed(wall, 1) << " s";
  os << '\n';
  if (!r.tool.version.empty() || !r.tool.started_at.empty()) {
    os << "  " << r.tool.name;
    if (!r.tool.version.empty()) os << ' ' << r.tool.version;
    if (!r.tool.started_at.empty()) os << ", started " << r.tool.started_at;
    os << '\n';
  }
  if (const auto& pv = r.provenance)  // where it ran (schema 3)
    os << "  host " << plain(pv->host) << " (" << plain(pv->os) << ", " << plain(pv->kernel)
       << "), CPU " << plain(pv->cpu_model) << "\n  driver " << plain(pv->driver_version)
       << ", runtime " << plain(pv->runtime_version) << "; build git " << plain(pv->git_revision)
       << ", " << plain(pv->build_type) << '\n';
  if (r.gpu_state)
    os << "  GPU state: " << r.gpu_state->verdict
       << (r.gpu_state->verdict == "idle"      ? " (no other process; clock not throttled)"
           : r.gpu_state->verdict == "unknown" ? " (no NVML: other processes and throttling "
                                                 "not checked)"
                                               : " (see the first line)")
       << '\n';
  if (p && p->telemetry_before) os << "  before: " << telemetry_line(*p->telemetry_before) << '\n';
  if (p && p->telemetry_after) os << "  after:  " << telemetry_line(*p->telemetry_after) << '\n';
  for (const Probe* probe : registry.all())
    if (const ProbeReport* rep = probe_reports().find(probe->name());
        rep && r.probes.count(probe->name()))
      rep->print_summary(os, r);
  // Figures whose spread is too large to be results, whatever probe they come from.
  bool header = false;
  for (const Figure& f : r.figures) {
    if (f.status.code != StatusCode::unstable || !f.value) continue;
    if (!header)
      os << "\nUnstable figures (relative spread over "
         << format_fixed(100 * kUnstableRelativeSpread, 0) << " %: not results):\n";
    header = true;
    os << "  " << f.id << "  " << format_fixed(f.value->median, f.value->median < 10 ? 2 : 1) << ' '
       << f.unit << unstable_note(*f.value) << '\n';
  }
}

void print_latency_summary(std::ostream& os, const RunResult& r) {
  using namespace detail;
  const LatencyProbeResult* p = r.get<LatencyProbeResult>();
  if (!p) return;
  if (!p->status.ok()) {
    os << "\nLatency probe " << p->status.name();
    if (!p->status.reason.empty()) os << ": " << p->status.reason;
    os << '\n';
  }

  os << "\nLatency per dependent load, by path and level\n";
  os << cell("path", 9) << "  " << cell("level", 15) << "  " << cell("capacity", 10) << "  "
     << cell("capacity interval", 21) << "  " << cell("cycles", 8, true) << "  "
     << cell("ns", 8, true) << "  " << cell("conf", 5, true) << '\n';
  os << std::string(9, '-') << "  " << std::string(15, '-') << "  " << std::string(10, '-') << "  "
     << std::string(21, '-') << "  " << std::string(8, '-') << "  " << std::string(8, '-') << "  "
     << std::string(5, '-') << '\n';
  for (const SummaryRow& row : summary_rows(*p)) {
    if (!row.note.empty()) {
      os << cell(row.path, 9) << "  ";
      wrapped(os, row.note, 11);
      continue;
    }
    os << cell(row.path, 9) << "  " << cell(row.level, 15) << "  " << cell(row.capacity, 10) << "  "
       << cell(row.interval, 21) << "  " << cell(row.cycles, 8, true) << "  "
       << cell(row.ns, 8, true) << "  " << cell(row.confidence, 5, true) << '\n';
  }

  // What was timed: the machine load of each path's chase, and the stride.
  bool any_instruction = false;
  for (const auto& name : path_order(*p)) {
    const CurveResult& c = p->paths.at(name);
    if (!c.timed_instruction) continue;
    if (!any_instruction) os << "\nInstruction timed (from the binary's SASS)\n";
    any_instruction = true;
    os << cell(name, 9) << "  " << *c.timed_instruction << ", one line every "
       << format_bytes(double(c.stride_bytes)) << '\n';
  }

  const auto dram = dram_rows(*p);
  if (!dram.empty()) {
    os << "\nDevice memory minus last cache\n";
    os << cell("path", 9) << "  " << cell("step", 30) << "  " << cell("cycles", 8, true) << "  "
       << cell("ns", 8, true) << '\n';
    for (const DramRow& row : dram)
      os << cell(row.path, 9) << "  " << cell(row.from_to, 30) << "  " << cell(row.cycles, 8, true)
         << "  " << cell(row.ns, 8, true) << '\n';
  }

  const auto tlb = tlb_rows(*p);
  if (!tlb.empty()) {
    os << "\nTLB (latency against footprint at page-sized strides; miss = cost over the level "
          "before)\n";
    os << cell("stride", 9) << "  " << cell("level", 12) << "  " << cell("reach", 10) << "  "
       << cell("pages", 6, true) << "  " << cell("cycles", 8, true) << "  " << cell("ns", 8, true)
       << "  " << cell("miss cyc", 8, true) << "  " << cell("miss ns", 8, true) << "  "
       << cell("conf", 5, true) << '\n';
    for (const TlbRow& row : tlb) {
      if (!row.note.empty()) {
        os << cell(row.stride, 9) << "  ";
        wrapped(os, row.note, 11);
        continue;
      }
      os << cell(row.stride, 9) << "  " << cell(row.level, 12) << "  " << cell(row.reach, 10)
         << "  " << cell(row.pages, 6, true) << "  " << cell(row.cycles, 8, true) << "  "
         << cell(row.ns, 8, true) << "  " << cell(row.miss_cycles, 8, true) << "  "
         << cell(row.miss_ns, 8, true) << "  " << cell(row.confidence, 5, true) << '\n';
    }
    for (const auto& key : tlb_order(*p)) {
      const CurveResult& c = p->tlb.at(key);
      if (c.note.empty()) continue;
      os << cell(tlb_stride_label(key, c), 9) << "  ";
      wrapped(os, c.note, 11);
    }
  }
}

}  // namespace gd::report
