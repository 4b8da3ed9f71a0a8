// The frontend probe's part of every report: the instruction-cache curve with its levels,
// the partition test, launch latency and rate, block dispatch and the measured occupancy;
// charts of the IPC curve, the launch-latency distribution, the dispatch timeline and the
// register staircase.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <ostream>
#include <sstream>

#include "charts.hpp"
#include "frontend/frontend.hpp"
#include "gpudissect/budget.hpp"  // unstable_note
#include "gpudissect/units.hpp"
#include "output.hpp"
#include "probe_report.hpp"
#include "sections.hpp"

namespace gd::report {

namespace {

// IPC against the loop's code bytes, steady state and first pass, with each level's edge.
void icache_chart(std::ostringstream& h, const FrontendProbeResult& p, const std::string& inst,
                  SectionContext& ctx) {
  if (ctx.charts) {
    std::ostringstream s, cold;
    for (const auto& e : p.icache)
      if (e.ipc) {
        s << e.code_bytes << " " << e.ipc->median << "\n";
        if (e.first_pass_ipc) cold << e.code_bytes << " " << *e.first_pass_ipc << "\n";
      }
    if (!s.str().empty()) {
      detail::ChartSpec spec;
      spec.name = "frontend_icache";
      spec.title = "Instructions per clock of one warp against code footprint";
      std::ostringstream g;
      g << "$ipc << EOD\n" << s.str() << "EOD\n$cold << EOD\n" << cold.str() << "EOD\n";
      g << "set title " << detail::gnuplot_quote("Instruction caches: one warp, " + inst + " loop")
        << " noenhanced\n";
      g << "set xlabel 'loop code bytes'\nset ylabel 'warp-instructions per clock'\n"
           "set logscale x 2\nset grid\nset key top right box opaque\nset yrange [0:*]\n";
      int i = 0;
      for (const auto& l : p.icache_levels) {
        if (!l.capacity_bytes) continue;
        g << "set arrow from " << *l.capacity_bytes << ", graph 0 to " << *l.capacity_bytes
          << ", graph 1 nohead dashtype 2 lc rgb 'red'\n";
        g << "set label " << ++i << " "
          << detail::gnuplot_quote(l.name + " " + format_bytes(*l.capacity_bytes)) << " at "
          << *l.capacity_bytes << ", graph 0.95 right offset -0.5,0 tc rgb 'red'\n";
      }
      // Binary byte labels at every doubling (16K, 32K ... 2M), as the latency charts have.
      double lo = 1e300, hi = 0;
      for (const auto& e : p.icache)
        if (e.ipc && e.code_bytes) {
          lo = std::min(lo, static_cast<double>(e.code_bytes));
          hi = std::max(hi, static_cast<double>(e.code_bytes));
        }
      std::string tics;
      for (int k = 0; k < 64 && hi > 0; ++k) {
        const double x = std::ldexp(1.0, k);
        if (x < lo / 2 || x > hi * 2) continue;
        tics += (tics.empty() ? "" : ", ") + detail::gnuplot_quote(detail::axis_bytes_label(x)) +
                " " + format_fixed(x, 0);
      }
      if (!tics.empty()) g << "set xtics (" << tics << ")\n";
      g << "plot $ipc with linespoints lw 2 pt 7 title 'steady state'";
      if (!cold.str().empty()) g << ", $cold with points pt 4 title 'first pass (cold)'";
      g << "\n";
      spec.script = g.str();
      h << titled_chart(spec, ctx);
    }
  }
}

// The instruction-cache sweep: its levels and its chart.
void icache_html(std::ostringstream& h, const FrontendProbeResult& p, const std::string& inst,
                 SectionContext& ctx) {
  h << "<h3>Instruction caches</h3>\n<p>One warp runs a loop of independent "
    << detail::html_escape(inst) << " instructions (" << kIcacheChains
    << " chains); code bytes are the loop's machine code"
    << (p.language == "cuda" ? " (cuobjdump addresses, 16 bytes per instruction)" : "")
    << ". Status: " << detail::html_escape(detail::status_text(p.icache_status)) << ".</p>\n";
  if (!p.icache_levels.empty()) {
    h << "<table><tr><th>level</th><th>capacity</th><th>interval</th><th>inst/clk/warp</th>"
         "<th>confidence</th></tr>\n";
    for (const auto& l : p.icache_levels)
      h << "<tr><td>" << detail::html_escape(l.name) << "</td><td>"
        << detail::opt_bytes(l.capacity_bytes) << "</td><td>"
        << detail::opt_bytes(l.capacity_lo_bytes) << ".." << detail::opt_bytes(l.capacity_hi_bytes)
        << "</td><td>" << format_fixed(l.ipc, 3) << "</td><td>" << format_fixed(l.confidence, 2)
        << "</td></tr>\n";
    h << "</table>\n";
  }
  icache_chart(h, p, inst, ctx);
}

// One warp per partition on the same or different code past the L1i.
void partitions_html(std::ostringstream& h, const FrontendProbeResult& p) {
  if (!p.partitions.empty()) {
    h << "<h3>Partitions past the L1i</h3>\n<p>A block of 1-4 warps (warp w on partition w mod 4), "
         "each region "
      << p.partition_region_instructions << " instructions"
      << (p.partition_region_bytes ? " (" + format_bytes(p.partition_region_bytes) + ")" : "")
      << ": the same code, or a region of its own per warp.";
    if (p.partition_halving)
      h << " Two warps on different code run at " << format_fixed(*p.partition_halving, 2)
        << " of one warp's IPC.";
    h << "</p>\n<table><tr><th>warps</th><th>code</th><th>IPC per warp</th><th>status</th></tr>\n";
    for (const auto& q : p.partitions)
      h << "<tr><td>" << q.warps << "</td><td>" << (q.different ? "different" : "same")
        << "</td><td>" << detail::median_spread(q.ipc_per_warp, 3) << "</td><td>"
        << detail::html_escape(q.status.name() + " " + q.status.reason) << "</td></tr>\n";
    h << "</table>\n";
  }
}

// Every launch sample's percentiles, one line per part (the figures are batch medians).
void launch_distribution_text(std::ostream& os, const FrontendProbeResult& p) {
  if (p.launch_distribution_us.empty()) return;
  os << "  every sample (" << p.launch_batches << " batches), us: min / p10 / median / p90 / max\n";
  for (const char* part : {"round_trip", "start", "api", "completion"}) {
    auto it = p.launch_distribution_us.find(part);
    if (it == p.launch_distribution_us.end()) continue;
    const LaunchDistribution& d = it->second;
    os << "    " << part << ": " << format_fixed(d.min, 2) << " / " << format_fixed(d.p10, 2)
       << " / " << format_fixed(d.median, 2) << " / " << format_fixed(d.p90, 2) << " / "
       << format_fixed(d.max, 2) << " (" << d.n << " samples)\n";
  }
}

// Launch latency and its parts, the launch rate of each mode, and the latency's distribution.
void launch_html(std::ostringstream& h, const FrontendProbeResult& p, SectionContext& ctx) {
  h << "<h3>Launch</h3>\n<p>" << detail::html_escape(p.launch_api) << " of an empty kernel: "
    << "call " << detail::median_spread(p.launch_api_us, 2)
    << " µs (host), host call to kernel start " << detail::median_spread(p.launch_start_us, 2)
    << " µs, kernel end to synchronize returning "
    << detail::median_spread(p.launch_completion_us, 2) << " µs, launch + synchronize round trip "
    << detail::median_spread(p.launch_round_trip_us, 2) << " µs";
  if (p.sync_uncertainty_us)
    h << "; host/GPU clock sync within ±" << format_fixed(*p.sync_uncertainty_us, 2) << " µs";
  if (p.timer_resolution_ns)
    h << "; GPU timer step " << format_fixed(*p.timer_resolution_ns, 0) << " ns";
  h << ". Status: " << detail::html_escape(detail::status_text(p.launch_status)) << ".</p>\n";
  if (!p.launch_distribution_us.empty()) {
    std::ostringstream d;
    launch_distribution_text(d, p);
    h << "<pre>" << detail::html_escape(d.str()) << "</pre>\n";
  }
  h << "<table><tr><th>back-to-back</th><th>kernels/s (host)</th><th>kernels/s (GPU timer)</th>"
       "<th>status</th></tr>\n";
  for (const auto& [mode, st] : p.rate_status) {
    h << "<tr><td>" << detail::html_escape(mode) << "</td><td>";
    if (auto it = p.rate_kernels_per_s.find(mode); it != p.rate_kernels_per_s.end())
      h << detail::median_spread(it->second, 0);
    h << "</td><td>";
    if (auto it = p.rate_gpu_kernels_per_s.find(mode); it != p.rate_gpu_kernels_per_s.end())
      h << format_fixed(it->second, 0);
    h << "</td><td>" << detail::html_escape(detail::status_text(st)) << "</td></tr>\n";
  }
  h << "</table>\n";
  if (ctx.charts && !p.launch_round_trip_samples_us.empty()) {
    auto cdf = [](std::vector<double> v) {
      std::sort(v.begin(), v.end());
      std::ostringstream s;
      for (std::size_t i = 0; i < v.size(); ++i)
        s << v[i] << " " << static_cast<double>(i + 1) / static_cast<double>(v.size()) << "\n";
      return s.str();
    };
    detail::ChartSpec spec;
    spec.name = "frontend_launch";
    spec.title = "Launch latency distribution";
    std::ostringstream g;
    g << "$rt << EOD\n" << cdf(p.launch_round_trip_samples_us) << "EOD\n";
    if (!p.launch_start_samples_us.empty())
      g << "$st << EOD\n" << cdf(p.launch_start_samples_us) << "EOD\n";
    g << "set title 'Launch latency of an empty kernel (cumulative)'\nset xlabel 'microseconds'\n"
         "set ylabel 'fraction of launches'\nset grid\nset key bottom right box opaque\n"
         "set yrange [0:1]\nplot $rt with steps lw 2 title 'launch + synchronize'";
    if (!p.launch_start_samples_us.empty())
      g << ", $st with steps lw 2 title 'host call to kernel start'";
    g << "\n";
    spec.script = g.str();
    h << titled_chart(spec, ctx);
  }
}

// Whether the refill part ran or was turned away (files before it have neither).
bool has_refill(const FrontendProbeResult& p) {
  return p.refill_blocks > 0 || !p.refill_status.ok();
}

// One line (text) or paragraph (HTML) on refill after the first wave: the figures, then what
// they rest on (resident blocks, block time, the spread of the gaps).
std::string refill_sentence(const FrontendProbeResult& p, const char* us) {
  std::ostringstream os;
  os << p.refill_blocks << " blocks of " << p.refill_block_threads << " threads (" << p.refill_waves
     << " waves), each " << format_fixed(p.refill_spin_us, 0) << " " << us << " on its SM";
  if (p.refill_latency_us)
    os << ": a freed slot took the next block after "
       << detail::median_spread(p.refill_latency_us, 3) << " " << us << " on average (p10 "
       << format_fixed(p.refill_latency_p10_us.value_or(0), 3) << ", p90 "
       << format_fixed(p.refill_latency_p90_us.value_or(0), 3) << ")";
  if (p.refill_sm_rate)
    os << "; " << detail::median_spread(p.refill_sm_rate, 2) << " blocks/" << us << " per SM ("
       << format_fixed(p.refill_blocks_per_us.value_or(0), 0) << " GPU-wide) with "
       << p.refill_resident_per_sm << " resident per SM and blocks of "
       << format_fixed(p.refill_block_us.value_or(0), 2) << " " << us;
  return os.str();
}

void refill_html(std::ostringstream& h, const FrontendProbeResult& p) {
  if (!has_refill(p)) return;
  h << "<h3>Refill after the first wave</h3>\n<p>" << detail::html_escape(refill_sentence(p, "µs"))
    << ". Status: " << detail::html_escape(detail::status_text(p.refill_status)) << ".</p>\n";
}

// The block dispatch rate, and when each SM started its blocks.
void dispatch_html(std::ostringstream& h, const FrontendProbeResult& p, SectionContext& ctx) {
  h << "<h3>Block dispatch</h3>\n<p>" << p.dispatch_blocks << " blocks of "
    << p.dispatch_block_threads << " threads, each recording %smid and %globaltimer at its "
    << "start: " << detail::median_spread(p.dispatch_blocks_per_us, 1) << " blocks/µs";
  if (p.dispatch_first_wave_us)
    h << "; every SM had started a block after " << format_fixed(*p.dispatch_first_wave_us, 2)
      << " µs (median SM " << format_fixed(p.dispatch_sm_skew_median_us.value_or(0), 2) << " µs)";
  h << ". Status: " << detail::html_escape(detail::status_text(p.dispatch_status)) << ".</p>\n";
  if (ctx.charts && !p.dispatch_trace.empty()) {
    uint64_t first = UINT64_MAX;
    for (const auto& b : p.dispatch_trace) first = std::min(first, b.start_ns);
    detail::ChartSpec spec;
    spec.name = "frontend_dispatch";
    spec.title = "Dispatch timeline: block starts per SM";
    std::ostringstream g;
    g << "$d << EOD\n";
    for (const auto& b : p.dispatch_trace)
      g << static_cast<double>(b.start_ns - first) / 1000.0 << " " << b.sm << "\n";
    g << "EOD\nset title 'Block starts by SM (one launch)'\nset xlabel 'microseconds after the "
         "first block'\nset ylabel 'SM (%smid)'\nset grid\nunset key\n"
         "plot $d with points pt 7 ps 0.4\n";
    spec.script = g.str();
    h << titled_chart(spec, ctx);
  }
}

// Resident blocks and warps by block size, registers and shared memory; the staircase.
void occupancy_html(std::ostringstream& h, const FrontendProbeResult& p, SectionContext& ctx) {
  h << "<h3>Occupancy, measured</h3>\n<p>Blocks spin ~30 µs each recording %smid, %warpid and "
       "%globaltimer; resident blocks = the most blocks overlapping in time on one SM. Status: "
    << detail::html_escape(detail::status_text(p.occupancy_status));
  if (p.max_warps_per_sm) h << "; " << *p.max_warps_per_sm << " warps per SM";
  if (p.max_blocks_per_sm) h << ", " << *p.max_blocks_per_sm << " blocks per SM";
  h << ".</p>\n";
  if (!p.occupancy.empty()) {
    h << "<table><tr><th>varied</th><th>block</th><th>registers</th><th>shared/block</th>"
         "<th>blocks/SM</th><th>warps/SM</th><th>API blocks/SM</th><th>predicted warps</th>"
         "<th>status</th></tr>\n";
    for (const auto& o : p.occupancy)
      h << "<tr><td>" << detail::html_escape(o.kind) << "</td><td>" << o.block_threads
        << "</td><td>" << o.regs_per_thread << "</td><td>" << format_bytes(o.shared_bytes)
        << "</td><td>" << (o.blocks_per_sm ? std::to_string(*o.blocks_per_sm) : "-") << "</td><td>"
        << (o.warps_per_sm ? std::to_string(*o.warps_per_sm) : "-") << "</td><td>"
        << (o.api_blocks_per_sm ? std::to_string(*o.api_blocks_per_sm) : "-") << "</td><td>"
        << (o.predicted_warps_per_sm ? std::to_string(*o.predicted_warps_per_sm) : "-")
        << "</td><td>" << detail::html_escape(o.status.name() + " " + o.status.reason)
        << "</td></tr>\n";
    h << "</table>\n";
  }
  if (ctx.charts) {
    std::ostringstream m, pr;
    for (const auto& o : p.occupancy)
      if (o.kind == "regs" && o.warps_per_sm) {
        m << o.regs_per_thread << " " << *o.warps_per_sm << "\n";
        if (o.predicted_warps_per_sm)
          pr << o.regs_per_thread << " " << *o.predicted_warps_per_sm << "\n";
      }
    if (!m.str().empty()) {
      detail::ChartSpec spec;
      spec.name = "frontend_occupancy_regs";
      spec.title = "Resident warps per SM against registers per thread";
      std::ostringstream g;
      g << "$m << EOD\n"
        << m.str() << "EOD\n$p << EOD\n"
        << pr.str() << "EOD\n"
        << "set title 'Occupancy staircase (blocks of 128 threads)'\nset xlabel 'registers per "
           "thread'\nset ylabel 'resident warps per SM'\nset grid\nset key top right box opaque\n"
           // fsteps: the count at r holds for every register count above the previous r.
           "set yrange [0:*]\nplot $m with fsteps lw 2 title 'measured', $m with points pt 7 "
           "notitle, $p with fsteps dashtype 2 title 'predicted (64K regs, 256-register units)'\n";
      spec.script = g.str();
      h << titled_chart(spec, ctx);
    }
  }
}

// A line per occupancy point: what was varied, and the resident blocks and warps.
void print_occupancy_rows(std::ostream& os, const std::vector<FrontendOccupancyPoint>& occupancy) {
  char line[256];
  for (const auto& o : occupancy) {
    std::snprintf(
        line, sizeof line,
        "  by %-6s %4d threads %3d regs %8s shared: %3s blocks %3s warps (API %s, predicted "
        "%s)%s\n",
        o.kind.c_str(), o.block_threads, o.regs_per_thread, format_bytes(o.shared_bytes).c_str(),
        o.blocks_per_sm ? std::to_string(*o.blocks_per_sm).c_str() : "-",
        o.warps_per_sm ? std::to_string(*o.warps_per_sm).c_str() : "-",
        o.api_blocks_per_sm ? std::to_string(*o.api_blocks_per_sm).c_str() : "-",
        o.predicted_warps_per_sm ? std::to_string(*o.predicted_warps_per_sm).c_str() : "-",
        !o.status.ok() ? (" " + o.status.name() + ": " + o.status.reason).c_str()
        : (o.warps_per_sm && o.predicted_warps_per_sm &&
           *o.warps_per_sm != *o.predicted_warps_per_sm)
            ? "  <- not as predicted"
            : "");
    os << line;
  }
}

}  // namespace

void print_frontend_summary(std::ostream& os, const RunResult& r) {
  const FrontendProbeResult* p = r.get<FrontendProbeResult>();
  if (!p) return;
  os << "\nFrontend probe: " << detail::status_text(p->status) << ", "
     << format_fixed(p->wall_seconds, 1) << " s (compiling " << format_fixed(p->compile_seconds, 1)
     << " s)";
  if (p->clock_mhz)
    os << ", SM clock " << (p->clock_source == "reported" ? "REPORTED " : "seen ")
       << format_fixed(*p->clock_mhz, 0) << " MHz";
  os << "\n";
  if (!p->note.empty()) os << "  note: " << p->note << "\n";
  // A backend without front-end kernels (Vulkan) measured none of the parts below.
  if (p->status.code == StatusCode::unsupported) return;
  os << "Instruction caches (" << detail::status_text(p->icache_status) << "), one warp, "
     << (p->timed_instruction.empty() ? std::string("FFMA") : p->timed_instruction) << " loop:\n";
  char line[256];
  for (const auto& l : p->icache_levels) {
    std::snprintf(line, sizeof line,
                  "  %-8s capacity %-10s (%s..%s)  %6.3f inst/clk/warp  conf %.2f\n",
                  l.name.c_str(), detail::opt_bytes(l.capacity_bytes).c_str(),
                  detail::opt_bytes(l.capacity_lo_bytes).c_str(),
                  detail::opt_bytes(l.capacity_hi_bytes).c_str(), l.ipc, l.confidence);
    os << line;
  }
  if (!p->partitions.empty()) {
    os << "Partition test (" << p->partition_region_instructions << " instructions per region"
       << (p->partition_region_bytes ? ", " + format_bytes(p->partition_region_bytes) : "")
       << "): IPC per warp\n";
    for (const auto& q : p->partitions) {
      std::snprintf(line, sizeof line, "  %d warp(s), %-14s %s %s\n", q.warps,
                    q.different ? "different code" : "same code",
                    detail::median_spread(q.ipc_per_warp, 3).c_str(),
                    q.status.ok() ? "" : (q.status.name() + ": " + q.status.reason).c_str());
      os << line;
    }
    if (p->partition_halving)
      os << "  2 partitions on different code / 1 warp: " << format_fixed(*p->partition_halving, 2)
         << "\n";
  }
  os << "Launch (" << detail::status_text(p->launch_status) << ", " << p->launch_api << "):"
     << " call " << detail::median_spread(p->launch_api_us, 2) << " us, host call -> kernel start "
     << detail::median_spread(p->launch_start_us, 2) << " us, kernel end -> synchronize returns "
     << detail::median_spread(p->launch_completion_us, 2) << " us, round trip "
     << detail::median_spread(p->launch_round_trip_us, 2) << " us";
  if (p->sync_uncertainty_us)
    os << " (clock sync ±" << format_fixed(*p->sync_uncertainty_us, 2) << " us)";
  os << "\n";
  launch_distribution_text(os, *p);
  for (const auto& [mode, st] : p->rate_status) {
    os << "  rate " << mode << ": ";
    if (auto it = p->rate_kernels_per_s.find(mode); it != p->rate_kernels_per_s.end())
      os << format_fixed(it->second.median / 1000, 1) << " k kernels/s";
    if (auto it = p->rate_gpu_kernels_per_s.find(mode); it != p->rate_gpu_kernels_per_s.end())
      os << " (GPU timer " << format_fixed(it->second / 1000, 1) << " k/s)";
    if (!st.ok()) os << detail::status_text(st);
    os << "\n";
  }
  os << "Dispatch (" << detail::status_text(p->dispatch_status) << "): " << p->dispatch_blocks
     << " blocks of " << p->dispatch_block_threads << " threads, "
     << detail::median_spread(p->dispatch_blocks_per_us, 1) << " blocks/us";
  if (p->dispatch_first_wave_us)
    os << ", every SM started after " << format_fixed(*p->dispatch_first_wave_us, 2)
       << " us (median SM " << format_fixed(p->dispatch_sm_skew_median_us.value_or(0), 2) << " us)";
  os << "\n";
  if (has_refill(*p))
    os << "Refill (" << detail::status_text(p->refill_status) << "): " << refill_sentence(*p, "us")
       << "\n";
  os << "Occupancy (" << detail::status_text(p->occupancy_status) << ")";
  if (p->max_warps_per_sm) os << ": " << *p->max_warps_per_sm << " warps/SM";
  if (p->max_blocks_per_sm) os << ", " << *p->max_blocks_per_sm << " blocks/SM";
  os << "\n";
  print_occupancy_rows(os, p->occupancy);
}

// Per SM: resident blocks, refills, the mean refill latency and the start rate.
std::filesystem::path write_refill_csv(const std::filesystem::path& dir,
                                       const FrontendProbeResult& p) {
  const auto f = dir / "frontend_refill.csv";
  OutputFile o(f);
  o << "sm,resident,refills,latency_mean_us,blocks_per_us\n";
  for (const auto& e : p.refill_per_sm)
    o << e.sm << "," << e.resident << "," << e.refills << "," << format_fixed(e.latency_mean_us, 4)
      << "," << format_fixed(e.blocks_per_us, 4) << "\n";
  o.commit();
  return f;
}

std::vector<std::filesystem::path> write_frontend_csv(const std::filesystem::path& dir,
                                                      const RunResult& r) {
  std::vector<std::filesystem::path> files;
  const FrontendProbeResult* p = r.get<FrontendProbeResult>();
  if (!p) return files;
  if (!p->icache.empty()) {
    const auto f = dir / "frontend_icache.csv";
    OutputFile o(f);
    o << "instructions,loop_instructions,code_bytes,status,reason,ipc,ipc_q1,ipc_q3,first_pass_ipc,"
         "clock_mhz\n";
    for (const auto& e : p->icache)
      o << e.instructions << "," << e.loop_instructions << "," << e.code_bytes << ","
        << detail::csv_field(e.status.name()) << "," << detail::csv_field(e.status.reason) << ","
        << (e.ipc ? format_fixed(e.ipc->median, 5) : "") << ","
        << (e.ipc ? format_fixed(e.ipc->q1, 5) : "") << ","
        << (e.ipc ? format_fixed(e.ipc->q3, 5) : "") << ","
        << (e.first_pass_ipc ? format_fixed(*e.first_pass_ipc, 5) : "") << ","
        << (e.clock_mhz ? format_fixed(*e.clock_mhz, 1) : "") << "\n";
    o.commit();
    files.push_back(f);
  }
  if (!p->partitions.empty()) {
    const auto f = dir / "frontend_partitions.csv";
    OutputFile o(f);
    o << "warps,different,status,reason,ipc_per_warp,q1,q3\n";
    for (const auto& e : p->partitions)
      o << e.warps << "," << (e.different ? 1 : 0) << "," << detail::csv_field(e.status.name())
        << "," << detail::csv_field(e.status.reason) << ","
        << (e.ipc_per_warp ? format_fixed(e.ipc_per_warp->median, 5) : "") << ","
        << (e.ipc_per_warp ? format_fixed(e.ipc_per_warp->q1, 5) : "") << ","
        << (e.ipc_per_warp ? format_fixed(e.ipc_per_warp->q3, 5) : "") << "\n";
    o.commit();
    files.push_back(f);
  }
  if (!p->launch_round_trip_samples_us.empty()) {
    const auto f = dir / "frontend_launch.csv";
    OutputFile o(f);
    o << "sample,start_us,round_trip_us\n";
    for (std::size_t i = 0; i < p->launch_round_trip_samples_us.size(); ++i)
      o << i << ","
        << (i < p->launch_start_samples_us.size() ? format_fixed(p->launch_start_samples_us[i], 3)
                                                  : "")
        << "," << format_fixed(p->launch_round_trip_samples_us[i], 3) << "\n";
    o.commit();
    files.push_back(f);
  }
  if (!p->dispatch_trace.empty()) {
    const auto f = dir / "frontend_dispatch.csv";
    OutputFile o(f);
    o << "sm,warp_slot,start_ns,end_ns\n";
    for (const auto& b : p->dispatch_trace)
      o << b.sm << "," << b.warp_slot << "," << b.start_ns << "," << b.end_ns << "\n";
    o.commit();
    files.push_back(f);
  }
  if (!p->refill_per_sm.empty()) files.push_back(write_refill_csv(dir, *p));
  if (!p->occupancy.empty()) {
    const auto f = dir / "frontend_occupancy.csv";
    OutputFile o(f);
    o << "kind,block_threads,regs_requested,regs_per_thread,shared_bytes,blocks_per_sm,"
         "warps_per_sm,api_blocks_per_sm,predicted_warps_per_sm,max_warp_slot,status,reason\n";
    auto oi = [](const std::optional<int>& v) { return v ? std::to_string(*v) : std::string(); };
    for (const auto& e : p->occupancy)
      o << e.kind << "," << e.block_threads << "," << e.regs_requested << "," << e.regs_per_thread
        << "," << e.shared_bytes << "," << oi(e.blocks_per_sm) << "," << oi(e.warps_per_sm) << ","
        << oi(e.api_blocks_per_sm) << "," << oi(e.predicted_warps_per_sm) << "," << e.max_warp_slot
        << "," << detail::csv_field(e.status.name()) << "," << detail::csv_field(e.status.reason)
        << "\n";
    o.commit();
    files.push_back(f);
  }
  return files;
}

std::string frontend_html_section(const RunResult& r, SectionContext& ctx) {
  const FrontendProbeResult* p = r.get<FrontendProbeResult>();
  if (!p) return {};
  std::ostringstream h;
  const std::string inst = p->timed_instruction.empty() ? "FFMA" : p->timed_instruction;
  h << "<h2 id=\"frontend\">Front end</h2>\n<p>Status: "
    << detail::html_escape(detail::status_text(p->status)) << "; "
    << format_fixed(p->wall_seconds, 1) << " s, of which compiling "
    << format_fixed(p->compile_seconds, 1) << " s";
  if (p->clock_mhz)
    h << "; SM clock "
      << (p->clock_source == "reported" ? "reported by the driver (not measured) " : "seen ")
      << format_fixed(*p->clock_mhz, 0) << " MHz";
  h << ".</p>\n";
  if (!p->note.empty()) h << "<p><b>Note:</b> " << detail::html_escape(p->note) << "</p>\n";

  icache_html(h, *p, inst, ctx);
  partitions_html(h, *p);
  launch_html(h, *p, ctx);
  dispatch_html(h, *p, ctx);
  refill_html(h, *p);
  occupancy_html(h, *p, ctx);
  return h.str();
}

}  // namespace gd::report

namespace gd {

// The probe's report half (report/probe_report.hpp), registered by probes/registry.cpp.
std::unique_ptr<report::ProbeReport> make_frontend_report() {
  return report::make_probe_report(report::print_frontend_summary, report::write_frontend_csv,
                                   report::frontend_html_section);
}

}  // namespace gd
