// The host memory probe's report pieces: a summary line per operation, one CSV per curve,
// and an HTML section with the curves on one chart.
#include <fstream>
#include <ostream>
#include <sstream>

#include "bandwidth/bandwidth.hpp"
#include "charts.hpp"
#include "gpudissect/budget.hpp"  // unstable_note
#include "gpudissect/units.hpp"
#include "host_memory/host_memory.hpp"
#include "output.hpp"
#include "probe_report.hpp"
#include "sections.hpp"

namespace gd::report {

void print_host_memory_summary(std::ostream& os, const RunResult& r) {
  const HostMemoryResult* h = r.get<HostMemoryResult>();
  if (!h) return;
  os << "\nHost memory (" << h->threads << " threads" << (h->cpu.empty() ? "" : ", " + h->cpu)
     << "): " << h->status.name() << (h->status.reason.empty() ? "" : " (" + h->status.reason + ")")
     << ", " << format_fixed(h->wall_seconds, 1) << " s\n";
  for (const BandwidthFigure& f : h->figures)
    os << "  " << f.name << "  " << format_fixed(f.gbps.median, 1) << " GB/s"
       << unstable_note(f.gbps) << "  (" << f.where << ")\n";
  if (h->figures.empty() && h->status.ok())
    os << "  no footprint reached 4x the largest cache the OS reports: no memory figure\n";
}

std::vector<std::filesystem::path> write_host_memory_csv(const std::filesystem::path& dir,
                                                         const RunResult& r) {
  std::vector<std::filesystem::path> files;
  const HostMemoryResult* h = r.get<HostMemoryResult>();
  if (!h) return files;
  for (const auto& [op, c] : h->curves) {
    const auto file = dir / (detail::file_stem("host_memory_" + op) + ".csv");
    OutputFile out(file);
    out << "footprint_bytes,status,gbps,gbps_q1,gbps_q3,read_bytes,write_bytes,reason\n";
    for (const BandwidthPoint& p : c.points)
      out << static_cast<uint64_t>(p.x) << ',' << detail::csv_field(p.status.name()) << ','
          << (p.gbps ? format_fixed(p.gbps->median, 3) : "") << ','
          << (p.gbps ? format_fixed(p.gbps->q1, 3) : "") << ','
          << (p.gbps ? format_fixed(p.gbps->q3, 3) : "") << ',' << p.read_bytes << ','
          << p.write_bytes << ',' << detail::csv_field(p.status.reason) << '\n';
    if (!out) throw std::runtime_error("cannot write " + file.string());
    out.commit();
    files.push_back(file);
  }
  return files;
}

std::string host_memory_html_section(const RunResult& r, SectionContext& ctx) {
  const HostMemoryResult* h = r.get<HostMemoryResult>();
  if (!h) return {};
  std::ostringstream o;
  o << "<h2 id=\"host-memory\">Host memory</h2>\n<p>The host CPU's own memory bandwidth, "
    << h->threads << " threads of plain C++ (" << detail::html_escape(h->cpu)
    << "): the bound of pageable transfers, and the reference for OpenCL on a CPU. Caches as "
       "the OS reports them: "
    << detail::html_escape([&] {
         std::string s;
         for (const auto& c : h->caches) s += (s.empty() ? "" : ", ") + c;
         return s.empty() ? std::string("not reported") : s;
       }())
    << ". Status " << detail::html_escape(h->status.name()) << ", "
    << format_fixed(h->wall_seconds, 1) << " s.</p>\n";
  if (!h->figures.empty()) {
    o << "<table>\n<tr><th>figure</th><th>GB/s</th><th>where</th></tr>\n";
    for (const BandwidthFigure& f : h->figures)
      o << "<tr><td>" << detail::html_escape(f.name) << "</td><td class=\"n\">"
        << format_fixed(f.gbps.median, 1) << "</td><td>" << detail::html_escape(f.where)
        << "</td></tr>\n";
    o << "</table>\n";
  }
  if (ctx.charts) {
    std::vector<std::pair<std::string, const BandwidthCurve*>> curves;
    for (const auto& [op, c] : h->curves) curves.emplace_back(op, &c);
    if (auto spec = bandwidth_curves_chart("host_memory", "Host memory bandwidth", curves))
      o << section_chart(*spec, ctx);
  }
  return o.str();
}

}  // namespace gd::report

namespace gd {

// The probe's report half (report/probe_report.hpp), registered by probes/registry.cpp.
std::unique_ptr<report::ProbeReport> make_host_memory_report() {
  return report::make_probe_report(report::print_host_memory_summary, report::write_host_memory_csv,
                                   report::host_memory_html_section);
}

}  // namespace gd
