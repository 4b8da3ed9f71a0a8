// The links probe's report pieces: terminal summary, CSV files, HTML section.
#include "links/report.hpp"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <iomanip>
#include <ostream>
#include <sstream>

#include "bandwidth/bandwidth.hpp"
#include "charts.hpp"
#include "gpudissect/units.hpp"
#include "output.hpp"
#include "probe_report.hpp"

namespace gd::report {

namespace {

// "error (why)": the links section's own form, with the status even where it is ok
// (detail::status_text writes "ok" or "status: reason").
std::string status_paren(const Status& s) {
  return s.name() + (s.reason.empty() ? "" : " (" + s.reason + ")");
}

const std::vector<std::pair<std::string, std::string>>& curve_titles() {
  static const std::vector<std::pair<std::string, std::string>> v = {
      {"ce.read", "copy engine, read (issued by dst)"},
      {"ce.write", "copy engine, write (issued by src)"},
      {"ce.bidir", "copy engine, both ways at once (total)"},
      {"sm.read", "SM loads (kernel on dst)"},
      {"sm.write", "SM stores (kernel on src)"}};
  return v;
}

std::string topology_line(const Topology& t, const PairTopology& p) {
  std::string s = "GPU " + std::to_string(p.a) + " - GPU " + std::to_string(p.b) + ": ";
  if (p.nvlinks > 0)
    s += "NV" + std::to_string(p.nvlinks) + (p.via_nvswitch ? " (through NVSwitches)" : "");
  else if (!p.pcie_path.empty())
    s += p.pcie_path;
  else
    s += "path unknown";
  s += p.limit_gbps ? ", limit " + format_fixed(*p.limit_gbps, 1) + " GB/s per direction (" +
                          p.limit_basis + ")"
                    : "";
  (void)t;
  return s;
}

// "GPU 1 reading GPU 0 by SM (16 SMs): 790 ns (SM 40) to 870 ns (SM 8), median 820".
std::string by_sm_line(const LinkPair& p) {
  const auto& v = p.chase.by_sm;
  const auto [lo, hi] =
      std::minmax_element(v.begin(), v.end(), [](auto& a, auto& b) { return a.ns < b.ns; });
  std::vector<double> ns;
  for (const auto& s : v) ns.push_back(s.ns);
  return "GPU " + std::to_string(p.dst) + " reading GPU " + std::to_string(p.src) + " by SM (" +
         std::to_string(v.size()) + " SMs): " + format_fixed(lo->ns, 0) + " ns (SM " +
         std::to_string(lo->sm) + ") to " + format_fixed(hi->ns, 0) + " ns (SM " +
         std::to_string(hi->sm) + "), median " + format_fixed(median(ns), 0);
}

std::string latency_matrix(const LinksProbeResult& r, bool chase) {
  std::vector<double> m(std::size_t(r.gpus) * r.gpus, std::nan(""));
  for (const LinkPair& p : r.pairs) {
    const LinkLatency& l = chase ? p.chase : p.ping_pong;
    if (l.status.ok() && l.ns && p.src < r.gpus && p.dst < r.gpus)
      m[std::size_t(p.src) * r.gpus + p.dst] = l.ns->median;
  }
  return format_links_matrix(m, r.gpus, 0);
}

}  // namespace

std::string format_links_matrix(const std::vector<double>& m, int n, int decimals) {
  std::ostringstream o;
  o << "  src\\dst";
  for (int d = 0; d < n; ++d) o << std::setw(10) << d;
  o << "\n";
  for (int s = 0; s < n; ++s) {
    o << std::setw(9) << s;
    for (int d = 0; d < n; ++d) {
      const std::size_t i = std::size_t(s) * n + d;
      const double v = i < m.size() ? m[i] : std::nan("");
      o << std::setw(10) << (std::isnan(v) ? std::string("N/A") : format_fixed(v, decimals));
    }
    o << "\n";
  }
  return o.str();
}

namespace {

using detail::html_escape;

// A row per message size (the union of every collective's), a column group per collective:
// time, algorithm and bus bandwidth.
void print_nccl_table(std::ostream& os, const NcclResult& nccl) {
  if (nccl.collectives.empty()) return;
  os << "  " << std::setw(12) << "size (B)";
  for (const auto& [name, c] : nccl.collectives) os << "  " << std::setw(26) << name;
  os << "\n  " << std::setw(12) << "";
  for (std::size_t i = 0; i < nccl.collectives.size(); ++i)
    os << "  " << std::setw(10) << "time us" << std::setw(8) << "algbw" << std::setw(8) << "busbw";
  os << "\n";
  // Rows by size, over the union of every collective's sizes.
  std::map<uint64_t, int> rows;
  for (const auto& [name, c] : nccl.collectives)
    for (const CollectivePoint& p : c.points) rows[p.bytes] = 0;
  for (const auto& [bytes, unused] : rows) {
    os << "  " << std::setw(12) << bytes;
    for (const auto& [name, c] : nccl.collectives) {
      const CollectivePoint* hit = nullptr;
      for (const CollectivePoint& p : c.points)
        if (p.bytes == bytes) hit = &p;
      if (hit && hit->time_us)
        os << "  " << std::setw(10) << format_fixed(hit->time_us->median, 1) << std::setw(8)
           << format_fixed(hit->algbw_gbps->median, 1) << std::setw(8)
           << format_fixed(hit->busbw_gbps->median, 1);
      else
        os << "  " << std::setw(26) << (hit ? hit->status.name() : "-");
    }
    os << "\n";
  }
}

// A chart per GPU pair: bandwidth against transfer size, a line per transfer kind.
void p2p_charts(std::ostringstream& o, const LinksProbeResult& r, SectionContext& ctx) {
  for (const LinkPair& p : r.pairs) {
    std::vector<std::pair<std::string, const BandwidthCurve*>> curves;
    for (const auto& [key, c] : p.curves) curves.emplace_back(key, &c);
    if (curves.empty()) continue;
    const std::string name = "links_p2p_" + std::to_string(p.src) + "_" + std::to_string(p.dst);
    if (auto spec = bandwidth_curves_chart(name,
                                           "GPU " + std::to_string(p.src) + " -> GPU " +
                                               std::to_string(p.dst) + " by transfer size",
                                           curves, "transfer size (bytes)"))
      o << section_chart(*spec, ctx);
  }
}

// Peer to peer: a bandwidth matrix per transfer kind, a chart per pair, the latencies.
void p2p_html(std::ostringstream& o, const LinksProbeResult& r, SectionContext& ctx) {
  o << "<h3>Peer to peer</h3>\n<p>" << html_escape(status_paren(r.p2p)) << "</p>\n";
  for (const auto& [key, title] : curve_titles()) {
    const auto m = links_matrix(r, key);
    bool any = false;
    for (double v : m) any = any || !std::isnan(v);
    if (!any) continue;
    o << "<p>" << html_escape(title) << ", GB/s</p>\n<table>\n<tr><th>src \\ dst</th>";
    for (int d = 0; d < r.gpus; ++d) o << "<th>" << d << "</th>";
    o << "</tr>\n";
    for (int s = 0; s < r.gpus; ++s) {
      o << "<tr><th>" << s << "</th>";
      for (int d = 0; d < r.gpus; ++d) {
        const double v = m[std::size_t(s) * r.gpus + d];
        o << "<td class=\"n\">" << (std::isnan(v) ? "-" : format_fixed(v, 1)) << "</td>";
      }
      o << "</tr>\n";
    }
    o << "</table>\n";
  }
  if (ctx.charts) p2p_charts(o, r, ctx);
  for (const LinkPair& p : r.pairs)
    for (const auto& [key, c] : p.curves)
      if (!c.note.empty())
        o << "<p>GPU " << p.src << " -> GPU " << p.dst << ", " << html_escape(key) << ": "
          << html_escape(c.note) << "</p>\n";
  bool any_latency = false;
  for (const LinkPair& p : r.pairs) any_latency = any_latency || p.chase.ns || p.ping_pong.ns;
  if (any_latency) {
    o << "<table>\n<tr><th>src</th><th>dst</th><th>chase ns (dst reads src)</th><th>chase "
         "cycles</th><th>ping-pong ns</th></tr>\n";
    for (const LinkPair& p : r.pairs)
      o << "<tr><td>" << p.src << "</td><td>" << p.dst << "</td><td class=\"n\">"
        << (p.chase.ns ? format_fixed(p.chase.ns->median, 0) : "-") << "</td><td class=\"n\">"
        << (p.chase.cycles ? format_fixed(p.chase.cycles->median, 0) : "-")
        << "</td><td class=\"n\">"
        << (p.ping_pong.ns ? format_fixed(p.ping_pong.ns->median, 0) : "-") << "</td></tr>\n";
    o << "</table>\n";
    for (const LinkPair& p : r.pairs)
      if (!p.chase.by_sm.empty()) o << "<p>" << html_escape(by_sm_line(p)) << "</p>\n";
  }
}

}  // namespace

void print_links_summary(std::ostream& os, const LinksProbeResult& r) {
  os << "\nLinks (" << r.gpus << " GPU" << (r.gpus == 1 ? "" : "s")
     << "): " << status_paren(r.status) << ", " << format_fixed(r.wall_seconds, 1) << " s\n";
  if (r.gpus == 0) return;  // no backend kernels or no GPU: the line above says why
  if (!r.topology.nvml.ok()) os << "  topology: NVML " << status_paren(r.topology.nvml) << "\n";
  for (const LinkGpu& g : r.topology.gpus) {
    os << "  GPU " << g.index << " " << g.name << " " << g.pci_bus_id;
    if (g.pcie_gen_max || g.pcie_gen_current)
      os << ", PCIe Gen" << (g.pcie_gen_current ? std::to_string(*g.pcie_gen_current) : "?") << " x"
         << (g.pcie_width_current ? std::to_string(*g.pcie_width_current) : "?") << " now (max Gen"
         << (g.pcie_gen_max ? std::to_string(*g.pcie_gen_max) : "?") << " x"
         << (g.pcie_width_max ? std::to_string(*g.pcie_width_max) : "?") << ")";
    os << "\n";
  }
  for (const PairTopology& p : r.topology.pairs)
    if (p.a < p.b) os << "  " << topology_line(r.topology, p) << "\n";

  os << "  peer to peer: " << status_paren(r.p2p) << "\n";
  if (!r.pairs.empty()) {
    for (const auto& [key, title] : curve_titles()) {
      const auto m = links_matrix(r, key);
      bool any = false;
      for (double v : m) any = any || !std::isnan(v);
      if (!any) continue;
      os << "  " << title << ", GB/s at the largest size:\n" << format_links_matrix(m, r.gpus, 1);
      // The SM kernels' thread shapes tried at the largest size (probes/links/run.cpp).
      for (const LinkPair& p : r.pairs)
        if (auto it = p.curves.find(key); it != p.curves.end() && !it->second.note.empty())
          os << "    " << p.src << "->" << p.dst << ": " << it->second.note << "\n";
    }
    os << "  load latency, one thread chasing the peer's memory (row: memory, column: reader), "
          "ns:\n"
       << latency_matrix(r, true);
    for (const LinkPair& p : r.pairs)
      if (!p.chase.by_sm.empty()) os << "    " << by_sm_line(p) << "\n";
    os << "  flag ping-pong, round trip / 2 (row: starter), ns:\n" << latency_matrix(r, false);
    for (const LinkPair& p : r.pairs)
      if (!p.status.ok())
        os << "  GPU " << p.src << " -> GPU " << p.dst << ": " << status_paren(p.status) << "\n";
  }

  os << "  host links (pinned): " << status_paren(r.host.status) << "\n";
  for (const auto& [key, c] : r.host.all)
    if (const BandwidthPoint* pt = largest_ok_point(c))
      os << "    all GPUs " << std::setw(4) << key << "  " << std::setw(8)
         << format_fixed(pt->gbps->median, 1) << " GB/s  (" << format_bytes(pt->x) << " per GPU)\n";
  for (const auto& [key, c] : r.host.single)
    if (const BandwidthPoint* pt = largest_ok_point(c))
      os << "    GPU " << std::setw(8) << key << "  " << std::setw(8)
         << format_fixed(pt->gbps->median, 1) << " GB/s  (alone)\n";

  os << "  NCCL collectives: " << status_paren(r.nccl.status);
  if (!r.nccl.library.empty()) os << ", " << r.nccl.library;
  for (const auto& [k, v] : r.nccl.environment) os << ", " << k << "=" << v;
  os << "\n";
  print_nccl_table(os, r.nccl);
}

std::vector<std::filesystem::path> write_links_csv(const std::filesystem::path& dir,
                                                   const LinksProbeResult& r) {
  std::vector<std::filesystem::path> files;
  auto open = [&](const std::string& name) {
    files.push_back(dir / name);
    return OutputFile(files.back());
  };
  auto done = [&](OutputFile& out) { out.commit(); };
  auto q = [](const std::string& s) { return detail::csv_field(s); };
  if (!r.topology.gpus.empty()) {
    auto out = open("links_topology.csv");
    out << "a,b,nvlinks,nvlink_generation,pcie_path,limit_gbps,basis\n";
    for (const PairTopology& p : r.topology.pairs)
      out << p.a << ',' << p.b << ',' << p.nvlinks << ',' << p.nvlink_generation << ','
          << q(p.pcie_path) << ',' << (p.limit_gbps ? format_fixed(*p.limit_gbps, 3) : "") << ','
          << q(p.limit_basis) << "\n";
    done(out);
  }
  if (!r.pairs.empty()) {
    auto out = open("links_p2p.csv");
    out << "src,dst,curve,bytes,status,gbps,gbps_q1,gbps_q3,reason\n";
    for (const LinkPair& p : r.pairs)
      for (const auto& [key, c] : p.curves)
        for (const BandwidthPoint& pt : c.points)
          out << p.src << ',' << p.dst << ',' << q(key) << ',' << uint64_t(pt.x) << ','
              << q(pt.status.name()) << ',' << (pt.gbps ? format_fixed(pt.gbps->median, 3) : "")
              << ',' << (pt.gbps ? format_fixed(pt.gbps->q1, 3) : "") << ','
              << (pt.gbps ? format_fixed(pt.gbps->q3, 3) : "") << ',' << q(pt.status.reason)
              << "\n";
    done(out);
    auto lat = open("links_latency.csv");
    lat << "src,dst,kind,status,ns,ns_q1,ns_q3,cycles,footprint_bytes,reason\n";
    for (const LinkPair& p : r.pairs)
      for (const auto& [kind, l] : {std::pair<std::string, const LinkLatency*>{"chase", &p.chase},
                                    {"ping_pong", &p.ping_pong}})
        lat << p.src << ',' << p.dst << ',' << kind << ',' << q(l->status.name()) << ','
            << (l->ns ? format_fixed(l->ns->median, 1) : "") << ','
            << (l->ns ? format_fixed(l->ns->q1, 1) : "") << ','
            << (l->ns ? format_fixed(l->ns->q3, 1) : "") << ','
            << (l->cycles ? format_fixed(l->cycles->median, 1) : "") << ',' << l->footprint_bytes
            << ',' << q(l->status.reason) << "\n";
    done(lat);
  }
  if (!r.host.all.empty() || !r.host.single.empty()) {
    auto out = open("links_host.csv");
    out << "gpus,direction,bytes_per_gpu,status,gbps,gbps_q1,gbps_q3,reason\n";
    for (const auto* m : {&r.host.all, &r.host.single})
      for (const auto& [key, c] : *m)
        for (const BandwidthPoint& pt : c.points) {
          const auto dot = key.find('.');
          out << q(dot == std::string::npos ? "all" : key.substr(0, dot)) << ','
              << q(dot == std::string::npos ? key : key.substr(dot + 1)) << ',' << uint64_t(pt.x)
              << ',' << q(pt.status.name()) << ','
              << (pt.gbps ? format_fixed(pt.gbps->median, 3) : "") << ','
              << (pt.gbps ? format_fixed(pt.gbps->q1, 3) : "") << ','
              << (pt.gbps ? format_fixed(pt.gbps->q3, 3) : "") << ',' << q(pt.status.reason)
              << "\n";
        }
    done(out);
  }
  if (!r.nccl.collectives.empty()) {
    auto out = open("links_nccl.csv");
    out << "collective,bytes,count,status,time_us,algbw_gbps,busbw_gbps,checked,reason\n";
    for (const auto& [name, c] : r.nccl.collectives)
      for (const CollectivePoint& p : c.points)
        out << q(name) << ',' << p.bytes << ',' << p.count << ',' << q(p.status.name()) << ','
            << (p.time_us ? format_fixed(p.time_us->median, 2) : "") << ','
            << (p.algbw_gbps ? format_fixed(p.algbw_gbps->median, 3) : "") << ','
            << (p.busbw_gbps ? format_fixed(p.busbw_gbps->median, 3) : "") << ','
            << (p.checked ? "yes" : "no") << ',' << q(p.status.reason) << "\n";
    done(out);
  }
  return files;
}

std::string links_html_section(const LinksProbeResult& r, SectionContext& ctx) {
  std::ostringstream o;
  o << "<h2 id=\"links\">Links between GPUs, to the host, and NCCL collectives</h2>\n<p>" << r.gpus
    << " GPU" << (r.gpus == 1 ? "" : "s") << ". Status " << html_escape(status_paren(r.status))
    << ", " << format_fixed(r.wall_seconds, 1)
    << " s. A matrix cell (src, dst) is data moving from src's memory to dst; read is issued "
       "by dst, write by src; each cell is the median of its repeats at the largest size.</p>\n";
  o << "<h3>Topology</h3>\n<p>NVML: " << html_escape(status_paren(r.topology.nvml)) << "</p>\n";
  if (!r.topology.pairs.empty()) {
    o << "<table>\n<tr><th>pair</th><th>link</th><th>limit GB/s per direction</th>"
         "<th>basis</th></tr>\n";
    for (const PairTopology& p : r.topology.pairs)
      if (p.a < p.b)
        o << "<tr><td>" << p.a << " - " << p.b << "</td><td>"
          << (p.nvlinks ? "NV" + std::to_string(p.nvlinks) : html_escape(p.pcie_path))
          << "</td><td class=\"n\">" << (p.limit_gbps ? format_fixed(*p.limit_gbps, 1) : "-")
          << "</td><td>" << html_escape(p.limit_basis) << "</td></tr>\n";
    o << "</table>\n";
  }
  p2p_html(o, r, ctx);
  o << "<h3>Host links</h3>\n<p>" << html_escape(status_paren(r.host.status)) << "</p>\n";
  if (ctx.charts) {
    std::vector<std::pair<std::string, const BandwidthCurve*>> curves;
    for (const auto& [key, c] : r.host.all) curves.emplace_back("all " + key, &c);
    for (const auto& [key, c] : r.host.single) curves.emplace_back("GPU " + key, &c);
    if (!curves.empty())
      if (auto spec = bandwidth_curves_chart("links_host", "Host links (pinned)", curves,
                                             "transfer size (bytes)"))
        o << section_chart(*spec, ctx);
  }
  o << "<h3>NCCL collectives</h3>\n<p>" << html_escape(status_paren(r.nccl.status))
    << (r.nccl.library.empty() ? "" : ", " + html_escape(r.nccl.library));
  for (const auto& [k, v] : r.nccl.environment) o << ", " << html_escape(k + "=" + v);
  o << ". Bus bandwidth as nccl-tests defines it (doc/PERFORMANCE.md).</p>\n";
  if (!r.nccl.collectives.empty()) {
    o << "<table>\n<tr><th>collective</th><th>size</th><th>time us</th><th>algbw GB/s</th>"
         "<th>busbw GB/s</th><th>checked</th></tr>\n";
    for (const auto& [name, c] : r.nccl.collectives)
      for (const CollectivePoint& p : c.points) {
        if (!p.time_us) continue;
        o << "<tr><td>" << html_escape(name) << "</td><td class=\"n\">"
          << format_bytes(double(p.bytes)) << "</td><td class=\"n\">"
          << format_fixed(p.time_us->median, 1) << "</td><td class=\"n\">"
          << format_fixed(p.algbw_gbps->median, 1) << "</td><td class=\"n\">"
          << format_fixed(p.busbw_gbps->median, 1) << "</td><td>" << (p.checked ? "yes" : "")
          << "</td></tr>\n";
      }
    o << "</table>\n";
  }
  return o.str();
}

}  // namespace gd::report

namespace gd {

// The probe's report half (report/probe_report.hpp), registered by probes/registry.cpp.
std::unique_ptr<report::ProbeReport> make_links_report() {
  return report::make_probe_report(
      [](std::ostream& os, const RunResult& r) {
        if (const LinksProbeResult* l = r.get<LinksProbeResult>())
          report::print_links_summary(os, *l);
      },
      [](const std::filesystem::path& dir, const RunResult& r) {
        const LinksProbeResult* l = r.get<LinksProbeResult>();
        return l ? report::write_links_csv(dir, *l) : std::vector<std::filesystem::path>{};
      },
      [](const RunResult& r, report::SectionContext& ctx) {
        const LinksProbeResult* l = r.get<LinksProbeResult>();
        return l ? report::links_html_section(*l, ctx) : std::string();
      });
}

}  // namespace gd
