#include "bandwidth/bandwidth.hpp"
#include "links/links.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <limits>

#include "gpudissect/json_fields.hpp"
#include "gpudissect/units.hpp"

namespace gd {

using json_fields::get;
using json_fields::get_status;
using json_fields::put;
using json_fields::put_status;

// ---- topology ----

std::optional<PciAddress> parse_pci_bus_id(const std::string& s) {
  // domain:bus:device.function, hex digits only; the domain may be 4 or 8 digits.
  uint32_t v[4] = {0, 0, 0, 0};
  const char seps[4] = {':', ':', '.', '\0'};
  std::size_t pos = 0;
  for (int k = 0; k < 4; ++k) {
    std::size_t digits = 0;
    while (pos < s.size() && std::isxdigit(static_cast<unsigned char>(s[pos]))) {
      if (++digits > 8) return std::nullopt;
      const char c = char(std::tolower(static_cast<unsigned char>(s[pos++])));
      v[k] = v[k] * 16 + uint32_t(c <= '9' ? c - '0' : c - 'a' + 10);
    }
    if (digits == 0) return std::nullopt;
    if (k < 3) {
      if (pos >= s.size() || s[pos] != seps[k]) return std::nullopt;
      ++pos;
    }
  }
  if (pos != s.size() || v[1] > 0xff || v[2] > 0x1f || v[3] > 7) return std::nullopt;
  return PciAddress{v[0], v[1], v[2], v[3]};
}

int nvlink_generation_for_arch(const std::string& cc) {
  int major = 0, minor = 0;
  if (std::sscanf(cc.c_str(), "%d.%d", &major, &minor) < 1) return 0;
  switch (major) {
    case 6:
      return minor == 0 ? 1 : 0;  // P100 only (sm_61/62 have no NVLink)
    case 7:
      return minor == 0 ? 2 : 0;  // V100 (sm_72 Xavier, sm_75 Turing: none / bridges)
    case 8:
      return minor == 0 ? 3 : 0;  // A100 (sm_86 bridges are NVLink 3 too, not counted)
    case 9:
      return 4;  // H100, H200, GH200
    case 10:
      return 5;  // B200, GB200
    default:
      return 0;
  }
}

int nvlink_generation_from_nvml(unsigned v) {
  switch (v) {
    case 1:
      return 1;
    case 2:
    case 3:
      return 2;
    case 4:
    case 5:
      return 3;
    case 6:
      return 4;
    case 7:
      return 5;
    default:
      return 0;
  }
}

int nvlink_generation(const std::string& cc, std::optional<unsigned> nvml_version) {
  if (int g = nvlink_generation_for_arch(cc)) return g;
  return nvml_version ? nvlink_generation_from_nvml(*nvml_version) : 0;
}

double nvlink_gbps_per_link(int generation) {
  switch (generation) {
    case 1:
      return 20;
    case 2:
    case 3:
    case 4:
      return 25;
    case 5:
      return 50;
    default:
      return 0;
  }
}

double pcie_gbps_per_lane(int generation) {
  switch (generation) {
    case 1:
      return 2.5 * 8 / 10 / 8;
    case 2:
      return 5.0 * 8 / 10 / 8;
    case 3:
      return 8.0 * 128 / 130 / 8;
    case 4:
      return 16.0 * 128 / 130 / 8;
    case 5:
      return 32.0 * 128 / 130 / 8;
    case 6:
      return 64.0 * 242 / 256 / 8;
    default:
      return 0;
  }
}

std::string pcie_path_name(int level) {
  switch (level) {
    case 0:
      return "internal";
    case 10:
      return "PIX";
    case 20:
      return "PXB";
    case 30:
      return "PHB";
    case 40:
      return "NODE";
    case 50:
      return "SYS";
    default:
      return "";
  }
}

const PairTopology* Topology::pair(int a, int b) const {
  for (const PairTopology& p : pairs)
    if (p.a == a && p.b == b) return &p;
  return nullptr;
}

const LinkGpu* Topology::gpu(int index) const {
  for (const LinkGpu& g : gpus)
    if (g.index == index) return &g;
  return nullptr;
}

PairLinks pair_nvlinks(int direct, int switch_a, int switch_b, std::optional<bool> nvlink_p2p) {
  if (direct > 0) return {direct, false};
  if (switch_a > 0 && switch_b > 0 && nvlink_p2p.value_or(true))
    return {std::min(switch_a, switch_b), true};
  return {};
}

void derive_limits(Topology& t) {
  for (LinkGpu& g : t.gpus) {
    g.pcie_limit_gbps.reset();
    g.pcie_limit_basis.clear();
    const auto gen = g.pcie_gen_max ? g.pcie_gen_max : g.pcie_gen_current;
    const auto width = g.pcie_width_max ? g.pcie_width_max : g.pcie_width_current;
    if (gen && width && pcie_gbps_per_lane(*gen) > 0) {
      g.pcie_limit_gbps = pcie_gbps_per_lane(*gen) * *width;
      g.pcie_limit_basis = "PCIe Gen" + std::to_string(*gen) + " x" + std::to_string(*width) +
                           " at " + format_fixed(pcie_gbps_per_lane(*gen), 3) +
                           " GB/s per lane per direction";
    }
  }
  for (PairTopology& p : t.pairs) {
    p.limit_gbps.reset();
    p.limit_basis.clear();
    const LinkGpu* ga = t.gpu(p.a);
    const LinkGpu* gb = t.gpu(p.b);
    if (p.nvlinks > 0) {
      p.nvlink_generation =
          nvlink_generation(ga ? ga->compute_capability : std::string(), p.nvlink_version_nvml);
      if (const double per = nvlink_gbps_per_link(p.nvlink_generation); per > 0) {
        p.limit_gbps = per * p.nvlinks;
        p.limit_basis = std::to_string(p.nvlinks) + " x NVLink " +
                        std::to_string(p.nvlink_generation) + " at " + format_fixed(per, 0) +
                        " GB/s per direction" + (p.via_nvswitch ? ", through NVSwitches" : "");
      } else {
        p.limit_basis = std::to_string(p.nvlinks) + " NVLinks of an unknown generation";
      }
      continue;
    }
    if (ga && gb && ga->pcie_limit_gbps && gb->pcie_limit_gbps) {
      const LinkGpu& slow = *ga->pcie_limit_gbps <= *gb->pcie_limit_gbps ? *ga : *gb;
      p.limit_gbps = *slow.pcie_limit_gbps;
      p.limit_basis = "no NVLink; PCIe" + (p.pcie_path.empty() ? "" : " path " + p.pcie_path) +
                      ", the slower GPU's link: " + slow.pcie_limit_basis;
    }
  }
}

// ---- collectives ----

std::string to_string(Collective c) {
  switch (c) {
    case Collective::all_reduce:
      return "all_reduce";
    case Collective::all_gather:
      return "all_gather";
    case Collective::reduce_scatter:
      return "reduce_scatter";
    case Collective::broadcast:
      return "broadcast";
    case Collective::all_to_all:
      return "all_to_all";
  }
  return "?";
}

const std::vector<Collective>& all_collectives() {
  static const std::vector<Collective> v = {Collective::all_reduce, Collective::all_gather,
                                            Collective::reduce_scatter, Collective::broadcast,
                                            Collective::all_to_all};
  return v;
}

double bus_factor(Collective c, int n) {
  if (n < 1) return 0;
  switch (c) {
    case Collective::all_reduce:
      return 2.0 * (n - 1) / n;
    case Collective::all_gather:
    case Collective::reduce_scatter:
    case Collective::all_to_all:
      return double(n - 1) / n;
    case Collective::broadcast:
      return 1.0;
  }
  return 0;
}

std::optional<CollectiveCounts> collective_counts(Collective c, uint64_t bytes, int ranks,
                                                  uint64_t elem) {
  if (ranks < 1 || elem == 0) return std::nullopt;
  const uint64_t count = bytes / elem;
  CollectiveCounts k;
  switch (c) {
    case Collective::all_reduce:
    case Collective::broadcast:
      if (count == 0) return std::nullopt;
      k.send_count = k.recv_count = k.chunk_count = count;
      break;
    case Collective::all_gather:
      k.chunk_count = count / ranks;
      k.send_count = k.chunk_count;
      k.recv_count = k.chunk_count * ranks;
      break;
    case Collective::reduce_scatter:
      k.chunk_count = count / ranks;
      k.send_count = k.chunk_count * ranks;
      k.recv_count = k.chunk_count;
      break;
    case Collective::all_to_all:
      k.chunk_count = count / ranks;
      k.send_count = k.recv_count = k.chunk_count * ranks;
      break;
  }
  if (k.chunk_count == 0) return std::nullopt;
  k.bytes = (c == Collective::all_gather ? k.recv_count : k.send_count) * elem;
  return k;
}

float collective_send_value(Collective c, int n, int rank, uint64_t piece) {
  switch (c) {
    case Collective::all_reduce:
    case Collective::reduce_scatter:
    case Collective::all_gather:
      return float(rank + 1);
    case Collective::broadcast:
      return rank == 0 ? 1.0f : 0.0f;
    case Collective::all_to_all:
      return float(1 + uint64_t(rank) * n + piece);
  }
  return 0;
}

float collective_expected_value(Collective c, int n, int rank, uint64_t piece) {
  switch (c) {
    case Collective::all_reduce:
    case Collective::reduce_scatter:
      return float(n) * float(n + 1) / 2;  // sum of rank+1 over the ranks
    case Collective::all_gather:
      return float(piece + 1);  // piece p came from rank p
    case Collective::broadcast:
      return 1.0f;
    case Collective::all_to_all:
      // piece p of rank q's output is piece q of rank p's input
      return collective_send_value(c, n, int(piece), uint64_t(rank));
  }
  return 0;
}

// ---- kernel contract names ----

std::string to_string(PeerCopyMode m) {
  switch (m) {
    case PeerCopyMode::read:
      return "read";
    case PeerCopyMode::write:
      return "write";
    case PeerCopyMode::bidir:
      return "bidir";
  }
  return "?";
}

std::string to_string(HostLinkDir d) {
  switch (d) {
    case HostLinkDir::h2d:
      return "h2d";
    case HostLinkDir::d2h:
      return "d2h";
    case HostLinkDir::both:
      return "both";
  }
  return "?";
}

// ---- figures ----

const BandwidthPoint* largest_ok_point(const BandwidthCurve& c) {
  const BandwidthPoint* best = nullptr;
  for (const BandwidthPoint& p : c.points)
    if (p.status == "ok" && p.gbps && (!best || p.x > best->x)) best = &p;
  return best;
}

namespace {

std::string pair_name(int src, int dst) {
  return "GPU " + std::to_string(src) + " -> GPU " + std::to_string(dst);
}

std::string limit_text(const Topology& t, int src, int dst) {
  const PairTopology* p = t.pair(src, dst);
  if (!p) p = t.pair(dst, src);
  if (!p || !p->limit_gbps) return "link limit unknown";
  return "limit " + format_fixed(*p->limit_gbps, 1) + " GB/s per direction (" + p->limit_basis +
         ")";
}

Figure not_ok(const std::string& id, const std::string& label, const std::string& unit, bool higher,
              Status s) {
  Figure f;
  f.id = id;
  f.label = label;
  f.unit = unit;
  f.higher_is_better = higher;
  f.status = s.ok() ? Status{"skipped", "no pair measured it"} : s;
  return f;
}

const char* kCurveLabels[][2] = {{"ce.read", "copy engine read (dst pulls)"},
                                 {"ce.write", "copy engine write (src pushes)"},
                                 {"ce.bidir", "copy engine both ways at once (total)"},
                                 {"sm.read", "SM loads from the peer"},
                                 {"sm.write", "SM stores to the peer"}};

void p2p_bandwidth_figures(const LinksProbeResult& r, std::vector<Figure>& out) {
  for (const auto& [key, label] : kCurveLabels) {
    const std::string id = std::string("links.p2p.") + key;
    struct Cell {
      const LinkPair* pair;
      const BandwidthPoint* point;
    };
    std::vector<Cell> cells;
    for (const LinkPair& p : r.pairs) {
      auto it = p.curves.find(key);
      if (it == p.curves.end()) continue;
      if (const BandwidthPoint* pt = largest_ok_point(it->second)) cells.push_back({&p, pt});
    }
    if (cells.empty()) {
      Status why = r.p2p;
      for (const LinkPair& p : r.pairs)
        if (auto it = p.curves.find(key); it != p.curves.end() && !it->second.status.ok()) {
          why = it->second.status;  // every pair failed: the first one's reason
          break;
        }
      out.push_back(not_ok(id, std::string("P2P ") + label, "GB/s", true, why));
      continue;
    }
    std::vector<double> medians;
    for (const Cell& c : cells) medians.push_back(c.point->gbps->median);
    const Cell& worst = *std::min_element(cells.begin(), cells.end(), [](auto& a, auto& b) {
      return a.point->gbps->median < b.point->gbps->median;
    });
    Figure f;
    f.id = id;
    f.label = std::string("P2P ") + label;
    f.value = *worst.point->gbps;
    f.unit = "GB/s";
    f.where = "lowest of " + std::to_string(cells.size()) +
              " pairs: " + pair_name(worst.pair->src, worst.pair->dst) + " at " +
              format_bytes(worst.point->x) + " (median over pairs " +
              format_fixed(median(medians), 1) + " GB/s); " +
              limit_text(r.topology, worst.pair->src, worst.pair->dst) +
              (std::string(key) == "ce.bidir" ? ", twice that both ways" : "");
    auto it = worst.pair->curves.find(key);
    if (it->second.timed_instruction) f.instruction = *it->second.timed_instruction;
    out.push_back(f);
  }
}

void p2p_latency_figures(const LinksProbeResult& r, std::vector<Figure>& out) {
  for (int k = 0; k < 2; ++k) {
    const bool chase = k == 0;
    const std::string id = chase ? "links.p2p.latency.chase" : "links.p2p.latency.pingpong";
    const std::string label = chase ? "P2P load latency (one thread chasing peer memory)"
                                    : "P2P flag hand-over (ping-pong round trip / 2)";
    const LinkPair* worst = nullptr;
    std::vector<double> medians;
    for (const LinkPair& p : r.pairs) {
      const LinkLatency& l = chase ? p.chase : p.ping_pong;
      if (!l.status.ok() || !l.ns) continue;
      medians.push_back(l.ns->median);
      const LinkLatency* wl = worst ? (chase ? &worst->chase : &worst->ping_pong) : nullptr;
      if (!wl || l.ns->median > wl->ns->median) worst = &p;
    }
    if (!worst) {
      Status why = r.p2p;
      for (const LinkPair& p : r.pairs)
        if (const LinkLatency& l = chase ? p.chase : p.ping_pong; l.status.status == "error") {
          why = l.status;  // every pair failed: the first one's reason
          break;
        }
      out.push_back(not_ok(id, label, "ns", false, why));
      if (chase) out.push_back(not_ok(id + ".cycles", label + ", cycles", "cycles", false, why));
      continue;
    }
    const LinkLatency& l = chase ? worst->chase : worst->ping_pong;
    const std::string pair =
        chase ? "GPU " + std::to_string(worst->dst) + " reading GPU " + std::to_string(worst->src) +
                    "'s memory"
              : "GPU " + std::to_string(worst->src) + " <-> GPU " + std::to_string(worst->dst);
    Figure f;
    f.id = id;
    f.label = label;
    f.value = *l.ns;
    f.unit = "ns";
    f.higher_is_better = false;
    f.clock_mhz = l.clock_mhz;
    f.where = "highest of " + std::to_string(medians.size()) + " pairs: " + pair +
              (chase ? ", " + format_bytes(double(l.footprint_bytes)) + " chain" : "") +
              " (median over pairs " + format_fixed(median(medians), 0) + " ns)";
    out.push_back(f);
    if (chase) {
      Figure c = f;
      c.id = id + ".cycles";
      c.label = label + ", cycles";
      c.unit = "cycles";
      if (l.cycles) {
        c.value = *l.cycles;
      } else {
        c.value.reset();
        c.status = {"unsupported", "no clock on the executing GPU"};
      }
      out.push_back(c);
    }
  }
  // The chase from the best reading SM of each pair (links.chase_sms); the figure is the
  // highest pair, as above, with the range over SMs in its place.
  const std::string id = "links.p2p.latency.chase.best_sm";
  const std::string label = "P2P load latency from the reader's best SM";
  const LinkPair* worst = nullptr;
  const LinkLatency::BySm* worst_best = nullptr;
  for (const LinkPair& p : r.pairs) {
    if (!p.chase.status.ok() || p.chase.by_sm.empty()) continue;
    const LinkLatency::BySm* best = &*std::min_element(
        p.chase.by_sm.begin(), p.chase.by_sm.end(), [](auto& a, auto& b) { return a.ns < b.ns; });
    if (!worst_best || best->ns > worst_best->ns) {
      worst = &p;
      worst_best = best;
    }
  }
  if (!worst) {
    // Why: no peer at all, a pair's chase that failed, or not asked for.
    Status why =
        r.p2p.ok() ? Status{"skipped", "not measured (links.chase_sms = 0, as with quick)"} : r.p2p;
    for (const LinkPair& p : r.pairs)
      if (p.chase.status.status == "error") {
        why = p.chase.status;
        break;
      }
    out.push_back(not_ok(id, label, "ns", false, why));
    return;
  }
  double hi = 0;
  int hi_sm = 0;
  for (const LinkLatency::BySm& s : worst->chase.by_sm)
    if (s.ns > hi) {
      hi = s.ns;
      hi_sm = s.sm;
    }
  Figure f;
  f.id = id;
  f.label = label;
  f.value = Summary{};
  f.value->median = f.value->q1 = f.value->q3 = f.value->min = f.value->max = worst_best->ns;
  f.value->n = 1;
  f.unit = "ns";
  f.higher_is_better = false;
  f.clock_mhz = worst->chase.clock_mhz;
  f.where = "highest of the pairs' best: GPU " + std::to_string(worst->dst) + " reading GPU " +
            std::to_string(worst->src) + "'s memory from SM " + std::to_string(worst_best->sm) +
            "; over " + std::to_string(worst->chase.by_sm.size()) + " SMs " +
            format_fixed(worst_best->ns, 0) + " to " + format_fixed(hi, 0) + " ns (SM " +
            std::to_string(hi_sm) + ")";
  out.push_back(f);
}

void host_figures(const LinksProbeResult& r, std::vector<Figure>& out) {
  for (const char* dir : {"h2d", "d2h", "both"}) {
    const std::string d = dir;
    const std::string words = d == "h2d"   ? "host to GPU"
                              : d == "d2h" ? "GPU to host"
                                           : "both ways at once";
    {
      const std::string id = "links.host." + d + ".all";
      auto it = r.host.all.find(d);
      const BandwidthPoint* pt = it == r.host.all.end() ? nullptr : largest_ok_point(it->second);
      if (!pt) {
        out.push_back(
            not_ok(id, "every GPU " + words + " at once (sum)", "GB/s", true, r.host.status));
      } else {
        Figure f;
        f.id = id;
        f.label = "every GPU " + words + " at once (sum)";
        f.value = *pt->gbps;
        f.unit = "GB/s";
        double limit = 0;
        for (const LinkGpu& g : r.topology.gpus) limit += g.pcie_limit_gbps.value_or(0);
        f.where = std::to_string(r.gpus) + " GPUs, " + format_bytes(pt->x) +
                  " each, pinned; sum of PCIe limits " +
                  (limit > 0 ? format_fixed(limit, 1) + " GB/s per direction" : "unknown") +
                  (d == "both" && limit > 0 ? ", twice that both ways" : "");
        out.push_back(f);
      }
    }
    {
      const std::string id = "links.host." + d + ".single";
      const BandwidthPoint* worst = nullptr;
      std::string who;
      for (const auto& [key, c] : r.host.single) {
        if (key.size() <= d.size() || key.compare(key.size() - d.size(), d.size(), d) != 0 ||
            key[key.size() - d.size() - 1] != '.')
          continue;
        const BandwidthPoint* pt = largest_ok_point(c);
        if (pt && (!worst || pt->gbps->median < worst->gbps->median)) {
          worst = pt;
          who = key.substr(0, key.size() - d.size() - 1);
        }
      }
      if (!worst) {
        out.push_back(not_ok(id, "one GPU alone " + words, "GB/s", true, r.host.status));
      } else {
        Figure f;
        f.id = id;
        f.label = "one GPU alone " + words;
        f.value = *worst->gbps;
        f.unit = "GB/s";
        const LinkGpu* g = r.topology.gpu(std::atoi(who.c_str()));
        f.where = "lowest GPU: " + who + " at " + format_bytes(worst->x) + ", pinned" +
                  (g && g->pcie_limit_gbps ? "; limit " + format_fixed(*g->pcie_limit_gbps, 1) +
                                                 " GB/s (" + g->pcie_limit_basis + ")" +
                                                 (d == "both" ? ", twice that both ways" : "")
                                           : "");
        out.push_back(f);
      }
    }
  }
}

void nccl_figures(const LinksProbeResult& r, std::vector<Figure>& out) {
  for (Collective c : all_collectives()) {
    const std::string name = to_string(c);
    const std::string base = "links.nccl." + name;
    auto it = r.nccl.collectives.find(name);
    const CollectivePoint* largest = nullptr;
    const CollectivePoint* smallest = nullptr;
    if (it != r.nccl.collectives.end())
      for (const CollectivePoint& p : it->second.points) {
        if (p.status != "ok" || !p.busbw_gbps || !p.time_us) continue;
        if (!largest || p.bytes > largest->bytes) largest = &p;
        if (!smallest || p.bytes < smallest->bytes) smallest = &p;
      }
    const Status why = it == r.nccl.collectives.end() || it->second.status.ok() ? r.nccl.status
                                                                                : it->second.status;
    const std::string nice = [&] {
      std::string s = name;
      std::replace(s.begin(), s.end(), '_', '-');
      return "NCCL " + s;
    }();
    if (!largest) {
      out.push_back(not_ok(base + ".busbw", nice + " bus bandwidth", "GB/s", true, why));
      out.push_back(not_ok(base + ".algbw", nice + " algorithm bandwidth", "GB/s", true, why));
      out.push_back(
          not_ok(base + ".latency", nice + " time at the smallest size", "us", false, why));
      continue;
    }
    const std::string ranks = std::to_string(r.nccl.ranks) + " ranks, float32, ";
    Figure b;
    b.id = base + ".busbw";
    b.label = nice + " bus bandwidth";
    b.value = *largest->busbw_gbps;
    b.unit = "GB/s";
    b.where = ranks + format_bytes(double(largest->bytes)) + ", factor " +
              format_fixed(bus_factor(c, r.nccl.ranks), 3) + " (nccl-tests)";
    out.push_back(b);
    Figure a = b;
    a.id = base + ".algbw";
    a.label = nice + " algorithm bandwidth";
    a.value = *largest->algbw_gbps;
    a.where = ranks + format_bytes(double(largest->bytes));
    out.push_back(a);
    Figure l;
    l.id = base + ".latency";
    l.label = nice + " time at the smallest size";
    l.value = *smallest->time_us;
    l.unit = "us";
    l.higher_is_better = false;
    l.where = ranks + format_bytes(double(smallest->bytes));
    out.push_back(l);
  }
}

}  // namespace

std::vector<Figure> links_figures(const LinksProbeResult& r) {
  std::vector<Figure> out;
  p2p_bandwidth_figures(r, out);
  p2p_latency_figures(r, out);
  host_figures(r, out);
  nccl_figures(r, out);
  return out;
}

std::vector<double> links_matrix(const LinksProbeResult& r, const std::string& curve) {
  const int n = r.gpus;
  std::vector<double> m(std::size_t(std::max(n, 0)) * std::max(n, 0),
                        std::numeric_limits<double>::quiet_NaN());
  for (const LinkPair& p : r.pairs) {
    if (p.src < 0 || p.dst < 0 || p.src >= n || p.dst >= n) continue;
    auto it = p.curves.find(curve);
    if (it == p.curves.end()) continue;
    if (const BandwidthPoint* pt = largest_ok_point(it->second))
      m[std::size_t(p.src) * n + p.dst] = pt->gbps->median;
  }
  return m;
}

// ---- JSON ----

void to_json(nlohmann::json& j, const LinkGpu& g) {
  j = nlohmann::json{{"index", g.index},
                     {"name", g.name},
                     {"sms", g.sms},
                     {"pci_bus_id", g.pci_bus_id},
                     {"compute_capability", g.compute_capability}};
  put(j, "pcie_gen_current", g.pcie_gen_current);
  put(j, "pcie_width_current", g.pcie_width_current);
  put(j, "pcie_gen_max", g.pcie_gen_max);
  put(j, "pcie_width_max", g.pcie_width_max);
  put(j, "pcie_limit_gbps", g.pcie_limit_gbps);
  if (!g.pcie_limit_basis.empty()) j["pcie_limit_basis"] = g.pcie_limit_basis;
}

void from_json(const nlohmann::json& j, LinkGpu& g) {
  get(j, "index", g.index);
  get(j, "name", g.name);
  get(j, "sms", g.sms);
  get(j, "pci_bus_id", g.pci_bus_id);
  get(j, "compute_capability", g.compute_capability);
  get(j, "pcie_gen_current", g.pcie_gen_current);
  get(j, "pcie_width_current", g.pcie_width_current);
  get(j, "pcie_gen_max", g.pcie_gen_max);
  get(j, "pcie_width_max", g.pcie_width_max);
  get(j, "pcie_limit_gbps", g.pcie_limit_gbps);
  get(j, "pcie_limit_basis", g.pcie_limit_basis);
}

void to_json(nlohmann::json& j, const PairTopology& p) {
  j = nlohmann::json{{"a", p.a}, {"b", p.b}, {"nvlinks", p.nvlinks}};
  put(j, "nvlink_version_nvml", p.nvlink_version_nvml);
  if (p.nvlink_generation) j["nvlink_generation"] = p.nvlink_generation;
  if (p.via_nvswitch) j["via_nvswitch"] = true;
  if (!p.pcie_path.empty()) j["pcie_path"] = p.pcie_path;
  put(j, "limit_gbps", p.limit_gbps);
  if (!p.limit_basis.empty()) j["limit_basis"] = p.limit_basis;
}

void from_json(const nlohmann::json& j, PairTopology& p) {
  get(j, "a", p.a);
  get(j, "b", p.b);
  get(j, "nvlinks", p.nvlinks);
  get(j, "nvlink_version_nvml", p.nvlink_version_nvml);
  get(j, "nvlink_generation", p.nvlink_generation);
  get(j, "via_nvswitch", p.via_nvswitch);
  get(j, "pcie_path", p.pcie_path);
  get(j, "limit_gbps", p.limit_gbps);
  get(j, "limit_basis", p.limit_basis);
}

void to_json(nlohmann::json& j, const Topology& t) {
  j = nlohmann::json{{"gpus", t.gpus}, {"pairs", t.pairs}};
  nlohmann::json s;
  put_status(s, t.nvml);
  j["nvml"] = s;
}

void from_json(const nlohmann::json& j, Topology& t) {
  get(j, "gpus", t.gpus);
  get(j, "pairs", t.pairs);
  if (auto it = j.find("nvml"); it != j.end()) t.nvml = get_status(*it);
}

void to_json(nlohmann::json& j, const LinkLatency& l) {
  j = nlohmann::json::object();
  put_status(j, l.status);
  put(j, "ns", l.ns);
  put(j, "cycles", l.cycles);
  put(j, "clock_mhz", l.clock_mhz);
  if (l.footprint_bytes) j["footprint_bytes"] = l.footprint_bytes;
  if (l.hops_or_round_trips) j["hops_or_round_trips"] = l.hops_or_round_trips;
  if (!l.note.empty()) j["note"] = l.note;
  if (!l.by_sm.empty()) {
    nlohmann::json a = nlohmann::json::array();
    for (const LinkLatency::BySm& s : l.by_sm) {
      nlohmann::json e = {{"sm", s.sm}, {"ns", s.ns}};
      put(e, "cycles", s.cycles);
      a.push_back(e);
    }
    j["by_sm"] = a;
  }
}

void from_json(const nlohmann::json& j, LinkLatency& l) {
  l.status = get_status(j);
  get(j, "ns", l.ns);
  get(j, "cycles", l.cycles);
  get(j, "clock_mhz", l.clock_mhz);
  get(j, "footprint_bytes", l.footprint_bytes);
  get(j, "hops_or_round_trips", l.hops_or_round_trips);
  get(j, "note", l.note);
  l.by_sm.clear();
  if (auto it = j.find("by_sm"); it != j.end() && it->is_array())
    for (const nlohmann::json& e : *it) {
      LinkLatency::BySm s;
      get(e, "sm", s.sm);
      get(e, "ns", s.ns);
      get(e, "cycles", s.cycles);
      l.by_sm.push_back(s);
    }
}

void to_json(nlohmann::json& j, const LinkPair& p) {
  j = nlohmann::json{{"src", p.src},
                     {"dst", p.dst},
                     {"curves", p.curves},
                     {"chase", p.chase},
                     {"ping_pong", p.ping_pong}};
  put_status(j, p.status);
}

void from_json(const nlohmann::json& j, LinkPair& p) {
  p.status = get_status(j);
  get(j, "src", p.src);
  get(j, "dst", p.dst);
  get(j, "curves", p.curves);
  get(j, "chase", p.chase);
  get(j, "ping_pong", p.ping_pong);
}

void to_json(nlohmann::json& j, const CollectivePoint& p) {
  j = nlohmann::json{{"bytes", p.bytes}, {"count", p.count}, {"status", p.status}};
  if (!p.reason.empty()) j["reason"] = p.reason;
  put(j, "time_us", p.time_us);
  put(j, "algbw_gbps", p.algbw_gbps);
  put(j, "busbw_gbps", p.busbw_gbps);
  if (p.checked) j["checked"] = true;
}

void from_json(const nlohmann::json& j, CollectivePoint& p) {
  get(j, "bytes", p.bytes);
  get(j, "count", p.count);
  get(j, "status", p.status);
  get(j, "reason", p.reason);
  get(j, "time_us", p.time_us);
  get(j, "algbw_gbps", p.algbw_gbps);
  get(j, "busbw_gbps", p.busbw_gbps);
  get(j, "checked", p.checked);
}

void to_json(nlohmann::json& j, const CollectiveCurve& c) {
  j = nlohmann::json{{"points", c.points}};
  put_status(j, c.status);
}

void from_json(const nlohmann::json& j, CollectiveCurve& c) {
  c.status = get_status(j);
  get(j, "points", c.points);
}

void to_json(nlohmann::json& j, const NcclResult& n) {
  j = nlohmann::json{{"library", n.library},
                     {"ranks", n.ranks},
                     {"environment", n.environment},
                     {"collectives", n.collectives}};
  put_status(j, n.status);
}

void from_json(const nlohmann::json& j, NcclResult& n) {
  n.status = get_status(j);
  get(j, "library", n.library);
  get(j, "ranks", n.ranks);
  get(j, "environment", n.environment);
  get(j, "collectives", n.collectives);
}

void to_json(nlohmann::json& j, const HostLinks& h) {
  j = nlohmann::json{{"all", h.all}, {"single", h.single}};
  put_status(j, h.status);
}

void from_json(const nlohmann::json& j, HostLinks& h) {
  h.status = get_status(j);
  get(j, "all", h.all);
  get(j, "single", h.single);
}

void to_json(nlohmann::json& j, const LinksProbeResult& r) {
  nlohmann::json p2p;
  put_status(p2p, r.p2p);
  j = nlohmann::json{{"wall_seconds", r.wall_seconds},
                     {"gpus", r.gpus},
                     {"topology", r.topology},
                     {"p2p", p2p},
                     {"pairs", r.pairs},
                     {"host", r.host},
                     {"nccl", r.nccl}};
  put_status(j, r.status);
}

void from_json(const nlohmann::json& j, LinksProbeResult& r) {
  r.status = get_status(j);
  get(j, "wall_seconds", r.wall_seconds);
  get(j, "gpus", r.gpus);
  get(j, "topology", r.topology);
  if (auto it = j.find("p2p"); it != j.end()) r.p2p = get_status(*it);
  get(j, "pairs", r.pairs);
  get(j, "host", r.host);
  get(j, "nccl", r.nccl);
}

}  // namespace gd
