// The memory probe's report pieces: figures with stable ids, the terminal summary, one CSV of
// every point, and an HTML section with a chart per part (latency against footprint or stride).
#include "memory/report.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <ostream>
#include <sstream>

#include "charts.hpp"
#include "gpudissect/units.hpp"
#include "output.hpp"
#include "probe_report.hpp"

namespace gd::report {

namespace {

constexpr uint64_t KiB = 1024;

// "224 KiB (224..228 KiB)": the capacity and the first footprint past it.
std::string capacity_text(const CapacityEstimate& e) {
  if (!e.capacity_bytes) return "-";
  std::string s = format_bytes(*e.capacity_bytes);
  if (e.next_bytes) s += " (<" + format_bytes(*e.next_bytes) + ")";
  return s;
}

// "64 B 27.5 MiB (<28 MiB); 128 B ...": each stride's capacity, the total over the curve's
// warps (the L1 curves have one).
std::string line_capacities(const LineResult& l) {
  std::string s;
  for (const auto& c : l.by_stride)
    s += (s.empty() ? "" : "; ") + std::to_string(c.stride_bytes) + " B " +
         capacity_text(total_capacity(c));
  return s;
}

std::string line_verdict(const LineResult& l) {
  return l.estimate.bytes ? std::to_string(*l.estimate.bytes) + " B"
                          : "undetermined: " + l.estimate.note;
}

// "1 MiB apart: undetermined (...); 4 MiB apart: 16 ways"
std::string ways_text(const WaysResult& w) {
  std::string s;
  for (std::size_t i = 0; i < w.by_stride.size(); ++i) {
    s += (i ? "; " : "") + format_bytes(w.by_stride[i].stride_bytes) + " apart: ";
    if (i < w.estimates.size())
      s += w.estimates[i].ways ? std::to_string(*w.estimates[i].ways) + " ways"
                               : "undetermined (" + w.estimates[i].note + ")";
  }
  return s;
}

// The L2 line part's note on which edge it compares.
constexpr const char* kL2EdgeNote =
    "the first edge of each sweep is compared across strides; on Hopper that may be the near half "
    "of the L2 (26.9-29.3 MiB of the H200's 60 MiB in its latency map), the same cache at every "
    "stride";

// "L1 TLB 32 MiB..36 MiB at 300 cycles; L2 TLB ... +100; page walk 900 (+500)".
std::string tlb_text(const TlbResult& t) {
  if (!t.status.ok()) return detail::status_text(t.status);
  if (t.levels.size() == 1)
    return "flat at " + format_fixed(t.levels[0].cycles, 0) + " cycles; " + t.note;
  std::string s;
  for (std::size_t i = 0; i < t.levels.size(); ++i) {
    const TlbLevel& l = t.levels[i];
    const bool last = i + 1 == t.levels.size();
    s += (i ? "; " : "") +
         (last && i > 0 ? std::string("past the last TLB") : "L" + std::to_string(i + 1) + " TLB");
    if (l.reach_lo_bytes && l.reach_hi_bytes)
      s += " reach " + format_bytes(double(*l.reach_lo_bytes)) + ".." +
           format_bytes(double(*l.reach_hi_bytes));
    s += " at " + format_fixed(l.cycles, 0) + " cycles";
    if (l.step_cycles) s += " (+" + format_fixed(*l.step_cycles, 0) + ")";
  }
  if (!t.note.empty()) s += (s.empty() ? "" : "; ") + t.note;
  return s;
}

void csv_curve(std::ostream& o, const std::string& part, const MemCurve& c) {
  for (const auto& p : c.points)
    o << detail::csv_field(part) << "," << detail::csv_field(c.key) << "," << to_string(c.load)
      << "," << c.warps << "," << p.footprint_bytes << ","
      << (p.cycles ? format_fixed(p.cycles->median, 3) : "") << ","
      << (p.cycles ? format_fixed(p.cycles->q1, 3) : "") << ","
      << (p.cycles ? format_fixed(p.cycles->q3, 3) : "") << ","
      << detail::csv_field(p.status.name()) << "," << detail::csv_field(p.status.reason) << "\n";
}

// Latency curves on one chart: x in bytes (log2), y cycles per hop.
std::string chart(SectionContext& ctx, const std::string& name, const std::string& title,
                  const std::string& xlabel,
                  const std::vector<std::pair<std::string, const MemCurve*>>& curves) {
  if (!ctx.charts) return {};
  std::ostringstream g;
  int n = 0;
  std::vector<std::string> plots, keys, labels;
  for (const auto& [label, c] : curves) {
    std::ostringstream d;
    for (const auto& p : c->points)
      if (p.cycles) d << p.footprint_bytes << " " << p.cycles->median << "\n";
    if (d.str().empty()) continue;
    g << "$d" << n << " << EOD\n" << d.str() << "EOD\n";
    plots.push_back("$d" + std::to_string(n) + " using 1:2 with linespoints title ");
    keys.push_back(label);
    labels.push_back(c->instruction.empty() ? label : label + ", " + c->instruction);
    ++n;
  }
  if (plots.empty()) return {};
  // The instruction timed: in the title where every curve timed the same one, else in each
  // curve's key.
  std::string inst;
  bool same = true;
  for (const auto& [label, c] : curves) {
    if (inst.empty()) inst = c->instruction;
    same = same && (c->instruction.empty() || c->instruction == inst);
  }
  if (!same) inst.clear();
  g << "set title " << detail::gnuplot_quote(inst.empty() ? title : title + " (" + inst + ")")
    << " noenhanced\n";
  // Binary byte labels at every doubling, as the latency charts have.
  double lo = 1e300, hi = 0;
  for (const auto& [label, c] : curves)
    for (const auto& p : c->points)
      if (p.cycles) {
        lo = std::min(lo, static_cast<double>(p.footprint_bytes));
        hi = std::max(hi, static_cast<double>(p.footprint_bytes));
      }
  if (hi > 0) {
    g << "set xtics (";
    bool first = true;
    for (double x = std::exp2(std::floor(std::log2(lo))); x <= hi * 2; x *= 2) {
      g << (first ? "" : ", ") << detail::gnuplot_quote(detail::axis_bytes_label(x)) << " " << x;
      first = false;
    }
    g << ")\n";
  }
  // The unit of the first curve's hops (every curve of one chart comes from one backend).
  const std::string unit = curves.empty() ? "cycles" : curves.front().second->unit;
  g << "set xlabel " << detail::gnuplot_quote(xlabel) << "\nset ylabel "
    << detail::gnuplot_quote(unit + " per load") << "\n"
    << "set logscale x 2\nset grid\nset key top left box opaque noenhanced\nset yrange [0:*]\n";
  if (!same) keys = labels;  // the keys name each curve's instruction
  g << "plot ";
  for (std::size_t i = 0; i < plots.size(); ++i)
    g << (i ? ", " : "") << plots[i] << detail::gnuplot_quote(keys[i]);
  g << "\n";
  detail::ChartSpec spec;
  spec.name = name;
  spec.title = title;
  spec.script = g.str();
  return titled_chart(spec, ctx);
}

using detail::html_escape;

// The L1 capacity under each carve-out split, as a table, or why there is none.
void print_carveouts(std::ostream& os, const MemoryProbeResult& m) {
  if (!m.carveouts.empty()) {
    os << "  L1 by carve-out (" << detail::status_text(m.carveout_status) << ")\n";
    char b[256];
    std::snprintf(b, sizeof b, "  %-32s %-22s %10s %12s %12s  %s\n", "split", "L1 capacity",
                  "cycles", "predicted", "API shared", "read back");
    os << b;
    for (const auto& c : m.carveouts) {
      std::snprintf(
          b, sizeof b, "  %-32s %-22s %10s %12s %12s  %s\n", c.point.label().c_str(),
          capacity_text(c.curve.capacity).c_str(),
          detail::opt_fixed(c.curve.capacity.plateau_cycles, 1).c_str(),
          detail::opt_bytes(c.point.predicted_l1_bytes).c_str(),
          detail::opt_bytes(c.api_shared_bytes).c_str(),
          c.agreement.empty() ? detail::status_text(c.curve.status).c_str() : c.agreement.c_str());
      os << b;
    }
  } else if (!m.carveout_status.ok()) {
    os << "  carve-out: " << detail::status_text(m.carveout_status) << "\n";
  }
}

// The L1 against the shared-memory carve-out: a row and a curve per split.
void carveout_html(std::ostringstream& h, const MemoryProbeResult& m, SectionContext& ctx) {
  h << "<h3>L1 against the shared-memory carve-out</h3>\n<p>One thread chases a random cycle of "
       "128-byte lines through global memory in a kernel whose carve-out preference is set and "
       "whose block asks for the shared memory that forces the split. Status: "
    << html_escape(detail::status_text(m.carveout_status)) << ".</p>\n";
  if (!m.carveouts.empty()) {
    h << "<table><tr><th>split</th><th>preference</th><th>dynamic shared</th><th>L1 capacity</th>"
         "<th>cycles</th><th>predicted L1</th><th>occupancy API</th><th>read back</th></tr>\n";
    for (const auto& c : m.carveouts)
      h << "<tr><td>" << html_escape(c.point.label()) << "</td><td>"
        << (c.point.percent >= 0 ? std::to_string(c.point.percent) + " %" : "-") << "</td><td>"
        << format_bytes(c.point.dynamic_shared_bytes) << "</td><td>"
        << html_escape(capacity_text(c.curve.capacity)) << "</td><td>"
        << detail::opt_fixed(c.curve.capacity.plateau_cycles, 1) << "</td><td>"
        << detail::opt_bytes(c.point.predicted_l1_bytes) << "</td><td>"
        << (c.api_probe_blocks ? std::to_string(*c.api_probe_blocks) +
                                     " blocks = " + detail::opt_bytes(c.api_shared_bytes)
                               : "-")
        << "</td><td>"
        << html_escape(c.agreement.empty() ? detail::status_text(c.curve.status) : c.agreement)
        << "</td></tr>\n";
    h << "</table>\n";
    std::vector<std::pair<std::string, const MemCurve*>> curves;
    for (const auto& c : m.carveouts) curves.push_back({c.point.label(), &c.curve});
    h << chart(ctx, "memory_carveout", "L1 latency by footprint under each carve-out",
               "footprint (bytes)", curves);
  }
}

// Caches private to a scheduler partition: each path's capacity per warp by warps.
void partitions_html(std::ostringstream& h, const MemoryProbeResult& m, SectionContext& ctx) {
  h << "<h3>Caches private to a scheduler partition?</h3>\n<p>1 to 4 warps of one block, each "
       "chasing its own chain (footprint per warp on the x axis). A cache per SM shows each warp "
       "1/n of it; a cache per partition keeps each warp's capacity. Status: "
    << html_escape(detail::status_text(m.partition_status)) << ".</p>\n";
  for (const auto& p : m.partitions) {
    h << "<p><b>" << html_escape(p.path) << "</b>: ";
    if (!p.status.ok()) {
      h << html_escape(detail::status_text(p.status)) << "</p>\n";
      continue;
    }
    for (std::size_t i = 0; i < p.by_warps.size(); ++i) {
      h << p.by_warps[i].warps << " warps: " << html_escape(capacity_text(p.by_warps[i].capacity))
        << " per warp";
      if (i < p.verdict.total_ratio.size() && p.verdict.total_ratio[i])
        h << " (total x" << format_fixed(*p.verdict.total_ratio[i], 2) << ")";
      h << "; ";
    }
    h << "verdict: <b>"
      << html_escape(p.verdict.verdict.empty() ? "undetermined" : p.verdict.verdict) << "</b> ("
      << html_escape(p.verdict.note) << ").</p>\n";
    std::vector<std::pair<std::string, const MemCurve*>> curves;
    for (const auto& c : p.by_warps) curves.push_back({std::to_string(c.warps) + " warps", &c});
    h << chart(ctx, "memory_partition_" + p.path, p.path + " path: latency by footprint per warp",
               "footprint per warp (bytes)", curves);
  }
}

// The bytes fetched per miss, L1 and L2, from a sequential walk's latency by stride.
void granularity_html(std::ostringstream& h, const MemoryProbeResult& m, SectionContext& ctx) {
  h << "<h3>Fetch granularity</h3>\n<p>One thread walks memory sequentially at a stride; each new "
       "sector misses, so the latency per load rises with the stride until the stride reaches the "
       "bytes fetched per miss. L1: cached loads after a 512 KiB warm-up; L2: loads that bypass "
       "L1, after L2 was flushed. Status: "
    << html_escape(detail::status_text(m.granularity_status)) << ".</p>\n<ul>\n";
  for (const auto& g : m.granularity) {
    h << "<li>" << (g.level == "l1" ? "L1" : "L2") << ": ";
    if (!g.status.ok())
      h << html_escape(detail::status_text(g.status));
    else if (g.estimate.bytes)
      h << *g.estimate.bytes << " bytes (" << html_escape(g.curve.instruction) << ")";
    else
      h << "undetermined: " << html_escape(g.estimate.note);
    h << "</li>\n";
  }
  h << "</ul>\n";
  {
    std::vector<std::pair<std::string, const MemCurve*>> curves;
    for (const auto& g : m.granularity)
      if (!g.curve.points.empty())
        curves.push_back({g.level == "l1" ? "L1 (ld.global.ca)" : "L2 (ld.global.cg)", &g.curve});
    h << chart(ctx, "memory_granularity",
               "Latency per load against the stride of a sequential walk", "stride (bytes)",
               curves);
  }
}

// The L1 line size and associativity.
void l1_line_ways_html(std::ostringstream& h, const MemoryProbeResult& m, SectionContext& ctx) {
  if (!m.l1_line.by_stride.empty()) {
    h << "<p>L1 line (tag) size from the capacity a random chain sees at each stride (a line holds "
         "one element once the stride passes it, so the capacity seen grows): "
      << html_escape(m.l1_line.estimate.bytes ? std::to_string(*m.l1_line.estimate.bytes) + " bytes"
                                              : "undetermined: " + m.l1_line.estimate.note)
      << ".</p>\n";
    std::vector<std::pair<std::string, const MemCurve*>> curves;
    for (const auto& c : m.l1_line.by_stride)
      curves.push_back({"stride " + std::to_string(c.stride_bytes) + " B", &c});
    h << chart(ctx, "memory_l1_line", "L1 latency by footprint at each stride", "footprint (bytes)",
               curves);
  }

  if (!m.l1_ways.by_stride.empty()) {
    h << "<p>L1 associativity: N lines a fixed distance apart (with a plain set index all in one "
         "set) stay hits while N is at most the ways. ";
    std::vector<std::pair<std::string, const MemCurve*>> curves;
    for (std::size_t i = 0; i < m.l1_ways.by_stride.size(); ++i) {
      const auto& c = m.l1_ways.by_stride[i];
      h << html_escape(format_bytes(c.stride_bytes)) << " apart: ";
      if (i < m.l1_ways.estimates.size())
        h << html_escape(m.l1_ways.estimates[i].ways
                             ? std::to_string(*m.l1_ways.estimates[i].ways) + " ways"
                             : "undetermined (" + m.l1_ways.estimates[i].note + ")");
      h << ". ";
      curves.push_back({format_bytes(c.stride_bytes) + " apart", &c});
    }
    h << "</p>\n";
    h << chart(ctx, "memory_l1_ways", "L1 conflict chains: latency by lines x distance",
               "lines x distance (bytes)", curves);
  }
}

// The L2 line size and associativity (through L2 only).
void l2_line_ways_html(std::ostringstream& h, const MemoryProbeResult& m, SectionContext& ctx) {
  // Older results have neither part (an empty ok status): no section for them.
  const bool l2_parts = !m.l2_line.by_stride.empty() || !m.l2_line.status.ok() ||
                        !m.l2_ways.by_stride.empty() || !m.l2_ways.status.ok();
  if (l2_parts) {
    h << "<h3>L2 line and associativity</h3>\n<p>Line (tag) size: warps of one block, each "
         "chasing its own random chain through L2 only (<code>ld.global.cg</code>, no L1), at "
         "strides of 64, 128 and 256 bytes; the capacity is the total over the warps. As for the "
         "L1, it stays while the stride is within a line and doubles with each doubling past it. "
      << html_escape(std::string(kL2EdgeNote))
      << ". Status: " << html_escape(detail::status_text(m.l2_line.status)) << ".";
    if (!m.l2_line.by_stride.empty())
      h << " Capacity by stride: " << html_escape(line_capacities(m.l2_line)) << "; line: <b>"
        << html_escape(line_verdict(m.l2_line)) << "</b>.";
    h << "</p>\n";
    if (!m.l2_line.by_stride.empty()) {
      std::vector<std::pair<std::string, const MemCurve*>> curves;
      for (const auto& c : m.l2_line.by_stride)
        curves.push_back({"stride " + std::to_string(c.stride_bytes) + " B", &c});
      h << chart(ctx, "memory_l2_line", "L2 latency by footprint per warp at each stride",
                 "footprint per warp (bytes)", curves);
    }
    h << "<p>Associativity: N lines a fixed distance apart through L2 only, one warp; with a plain "
         "set index they share one set and stay hits while N is at most the ways. A hashed slice "
         "and set index (NVIDIA's L2) shows no step. Status: "
      << html_escape(detail::status_text(m.l2_ways.status)) << ".";
    if (!m.l2_ways.by_stride.empty()) h << " " << html_escape(ways_text(m.l2_ways));
    h << "</p>\n";
    if (!m.l2_ways.by_stride.empty()) {
      std::vector<std::pair<std::string, const MemCurve*>> curves;
      for (const auto& c : m.l2_ways.by_stride)
        curves.push_back({format_bytes(c.stride_bytes) + " apart", &c});
      h << chart(ctx, "memory_l2_ways", "L2 conflict chains: latency by lines x distance",
                 "lines x distance (bytes)", curves);
    }
  }
}

// The constant bank's caches.
void constant_html(std::ostringstream& h, const MemoryProbeResult& m, SectionContext& ctx) {
  h << "<h3>Constant memory</h3>\n<p>Status: "
    << html_escape(detail::status_text(m.constant_status)) << ".";
  if (m.constant) {
    const CapacityEstimate n = next_level(m.constant->points, m.constant->capacity);
    h << " Constant L1 " << html_escape(capacity_text(m.constant->capacity)) << " at "
      << detail::opt_fixed(m.constant->capacity.plateau_cycles, 1) << " "
      << html_escape(m.constant->unit) << "; the next level "
      << html_escape(n.capacity_bytes ? capacity_text(n)
                     : n.plateau_cycles
                         ? "holds at least " +
                               detail::opt_bytes(m.constant->points.back().footprint_bytes) +
                               " (no step to the bank's end)"
                         : std::string("-"))
      << " at " << detail::opt_fixed(n.plateau_cycles, 1) << " " << html_escape(m.constant->unit)
      << ".</p>\n";
    h << chart(ctx, "memory_constant", "Constant-bank chase", "footprint (bytes)",
               {{"LDC", &*m.constant}});
  } else {
    h << "</p>\n";
  }
}

// The TLB reach, over chunk-mapped memory and over one allocation.
void tlb_html(std::ostringstream& h, const MemoryProbeResult& m, SectionContext& ctx) {
  h << "<h3>TLB</h3>\n<p>One thread chases one line per 2 MiB, in random order, through L2 "
       "only (every line fits the L2, so a rise is address translation, not data), over memory "
       "mapped from separate 2 MiB physical chunks (no translation can cover two), and over one "
       "ordinary allocation beside it, whose pages the driver chooses. Status: "
    << html_escape(detail::status_text(m.tlb_status)) << ".</p>\n<ul>\n";
  std::vector<std::pair<std::string, const MemCurve*>> tlb_curves;
  for (const auto& t : m.tlb) {
    const std::string label =
        t.mapping == "chunks" ? "2 MiB chunk-mapped memory" : "one allocation";
    h << "<li>" << html_escape(label) << ": " << html_escape(tlb_text(t)) << "</li>\n";
    if (!t.curve.points.empty()) tlb_curves.push_back({label, &t.curve});
  }
  h << "</ul>\n";
  h << chart(ctx, "memory_tlb", "TLB: latency by footprint, one line per 2 MiB",
             "footprint (bytes)", tlb_curves);
}

}  // namespace

void print_memory_summary(std::ostream& os, const MemoryProbeResult& m) {
  os << "\nMemory probe: " << detail::status_text(m.status) << ", "
     << format_fixed(m.wall_seconds, 1) << " s";
  if (m.clock_mhz) os << ", SM clock " << format_fixed(*m.clock_mhz, 0) << " MHz";
  os << "\n";
  // A backend without the probe's kernels: the header line says why, once.
  if (m.status.code == StatusCode::unsupported) return;
  print_carveouts(os, m);
  for (const auto& p : m.partitions) {
    os << "  " << p.path << " path, warps of one block with disjoint chains: ";
    if (!p.status.ok()) {
      os << detail::status_text(p.status) << "\n";
      continue;
    }
    for (const auto& c : p.by_warps) os << c.warps << "w " << capacity_text(c.capacity) << "; ";
    os << "-> " << (p.verdict.verdict.empty() ? "undetermined" : p.verdict.verdict) << " ("
       << p.verdict.note << ")\n";
  }
  if (m.partitions.empty() && !m.partition_status.ok())
    os << "  partitions: " << detail::status_text(m.partition_status) << "\n";
  for (const auto& g : m.granularity) {
    os << "  " << (g.level == "l1" ? "L1" : "L2") << " fetch granularity: ";
    if (!g.status.ok())
      os << detail::status_text(g.status);
    else if (g.estimate.bytes)
      os << *g.estimate.bytes << " B (" << detail::opt_fixed(g.estimate.hit_cycles, 1) << " -> "
         << detail::opt_fixed(g.estimate.miss_cycles, 1) << " " << g.curve.unit << ")";
    else
      os << "undetermined: " << g.estimate.note;
    os << "\n";
  }
  if (!m.l1_line.by_stride.empty())
    os << "  L1 line (capacity by stride: " << line_capacities(m.l1_line)
       << "): " << line_verdict(m.l1_line) << "\n";
  if (!m.l1_ways.by_stride.empty())
    os << "  L1 associativity (conflict chains): " << ways_text(m.l1_ways) << "\n";
  if (m.granularity.empty() && !m.granularity_status.ok())
    os << "  fetch granularity: " << detail::status_text(m.granularity_status) << "\n";
  if (!m.l2_line.by_stride.empty()) {
    os << "  L2 line (total capacity over " << m.l2_line.by_stride.front().warps
       << " warps by stride, through L2 only: " << line_capacities(m.l2_line) << "): ";
    os << (m.l2_line.status.ok() ? line_verdict(m.l2_line) : detail::status_text(m.l2_line.status))
       << "\n    (" << kL2EdgeNote << ")\n";
  } else if (!m.l2_line.status.ok()) {
    os << "  L2 line: " << detail::status_text(m.l2_line.status) << "\n";
  }
  if (!m.l2_ways.by_stride.empty())
    os << "  L2 associativity (conflict chains through L2 only): " << ways_text(m.l2_ways)
       << (m.l2_ways.status.ok() ? "" : "; " + detail::status_text(m.l2_ways.status)) << "\n";
  else if (!m.l2_ways.status.ok())
    os << "  L2 associativity: " << detail::status_text(m.l2_ways.status) << "\n";
  if (m.constant) {
    const CapacityEstimate n = next_level(m.constant->points, m.constant->capacity);
    os << "  constant: L1 " << capacity_text(m.constant->capacity) << " at "
       << detail::opt_fixed(m.constant->capacity.plateau_cycles, 1) << " " << m.constant->unit
       << "; next level "
       << (n.capacity_bytes   ? capacity_text(n)
           : n.plateau_cycles ? ">= " + detail::opt_bytes(m.constant->points.back().footprint_bytes)
                              : std::string("-"))
       << " at " << detail::opt_fixed(n.plateau_cycles, 1) << " " << m.constant->unit << "\n";
  } else if (!m.constant_status.ok()) {
    os << "  constant: " << detail::status_text(m.constant_status) << "\n";
  }
  for (const auto& t : m.tlb)
    os << "  TLB, " << (t.mapping == "chunks" ? "2 MiB chunk-mapped memory" : "one allocation")
       << ": " << tlb_text(t) << "\n";
  if (m.tlb.empty() && !m.tlb_status.ok())
    os << "  TLB: " << detail::status_text(m.tlb_status) << "\n";
}

std::vector<std::filesystem::path> write_memory_csv(const std::filesystem::path& dir,
                                                    const MemoryProbeResult& m) {
  std::vector<std::filesystem::path> files;
  if (m.carveouts.empty() && m.partitions.empty() && m.granularity.empty() && !m.constant &&
      m.tlb.empty() && m.l2_line.by_stride.empty() && m.l2_ways.by_stride.empty())
    return files;
  const auto f = dir / "memory_points.csv";
  OutputFile o(f);
  o << "part,curve,load,warps,footprint_or_stride_bytes,cycles,q1,q3,status,reason\n";
  for (const auto& c : m.carveouts) csv_curve(o, "carveout", c.curve);
  for (const auto& p : m.partitions)
    for (const auto& c : p.by_warps) csv_curve(o, "partition", c);
  for (const auto& g : m.granularity) csv_curve(o, "granularity", g.curve);
  for (const auto& c : m.l1_line.by_stride) csv_curve(o, "line", c);
  for (const auto& c : m.l1_ways.by_stride) csv_curve(o, "ways", c);
  for (const auto& c : m.l2_line.by_stride) csv_curve(o, "l2_line", c);
  for (const auto& c : m.l2_ways.by_stride) csv_curve(o, "l2_ways", c);
  if (m.constant) csv_curve(o, "constant", *m.constant);
  for (const auto& t : m.tlb) csv_curve(o, "tlb", t.curve);
  o.commit();
  files.push_back(f);
  return files;
}

std::string memory_html_section(const MemoryProbeResult& m, SectionContext& ctx) {
  std::ostringstream h;
  h << "<h2 id=\"memory\">Memory hierarchy details</h2>\n<p>Status: "
    << html_escape(detail::status_text(m.status)) << "; " << format_fixed(m.wall_seconds, 1)
    << " s";
  if (m.clock_mhz) h << "; SM clock seen " << format_fixed(*m.clock_mhz, 0) << " MHz";
  h << ". Every chase's end position is checked against the host's walk of the same chain.</p>\n";

  carveout_html(h, m, ctx);
  partitions_html(h, m, ctx);
  granularity_html(h, m, ctx);
  l1_line_ways_html(h, m, ctx);
  l2_line_ways_html(h, m, ctx);
  constant_html(h, m, ctx);
  tlb_html(h, m, ctx);
  return h.str();
}

}  // namespace gd::report

namespace gd {

// The probe's report half (report/probe_report.hpp), registered by probes/registry.cpp.
std::unique_ptr<report::ProbeReport> make_memory_report() {
  return report::make_probe_report(
      [](std::ostream& os, const RunResult& r) {
        if (const MemoryProbeResult* m = r.get<MemoryProbeResult>())
          report::print_memory_summary(os, *m);
      },
      [](const std::filesystem::path& dir, const RunResult& r) {
        const MemoryProbeResult* m = r.get<MemoryProbeResult>();
        return m ? report::write_memory_csv(dir, *m) : std::vector<std::filesystem::path>{};
      },
      [](const RunResult& r, report::SectionContext& ctx) {
        const MemoryProbeResult* m = r.get<MemoryProbeResult>();
        return m ? report::memory_html_section(*m, ctx) : std::string();
      });
}

}  // namespace gd
