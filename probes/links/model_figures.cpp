// The links probe's headline figures: peer bandwidth and latency, host links, NCCL.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <limits>

#include "bandwidth/bandwidth.hpp"
#include "gpudissect/json_fields.hpp"
#include "gpudissect/units.hpp"
#include "links/links.hpp"

namespace gd {

using json_fields::get;
using json_fields::get_status;
using json_fields::put;
using json_fields::put_status;

// ---- figures ----

const BandwidthPoint* largest_ok_point(const BandwidthCurve& c) {
  const BandwidthPoint* best = nullptr;
  for (const BandwidthPoint& p : c.points)
    if (p.status.ok() && p.gbps && (!best || p.x > best->x)) best = &p;
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
  f.status = s.ok() ? Status{StatusCode::skipped, "no pair measured it"} : s;
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

// Why no pair has a chase by SM: no peer at all, a pair's chase that failed, or not asked for.
Status no_chase_by_sm(const LinksProbeResult& r) {
  for (const LinkPair& p : r.pairs)
    if (p.chase.status.code == StatusCode::error) return p.chase.status;
  return r.p2p.ok()
             ? Status{StatusCode::skipped, "not measured (links.chase_sms = 0, as with quick)"}
             : r.p2p;
}

// shape: the chase and ping-pong figures of every pair, one short block each
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
        if (const LinkLatency& l = chase ? p.chase : p.ping_pong;
            l.status.code == StatusCode::error) {
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
        c.status = {StatusCode::unsupported, "no clock on the executing GPU"};
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
    out.push_back(not_ok(id, label, "ns", false, no_chase_by_sm(r)));
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

// The chase's mean over the reading SMs, nvbandwidth's definition of peer latency (its
// device_to_device_latency_sm: a 2 MiB chain chased once from each SM, the times summed over
// the hops): comparable with that tool where chase_sms covers every SM, which the default does.
// The highest pair, as above.
void chase_mean_sm_figure(const LinksProbeResult& r, std::vector<Figure>& out) {
  const std::string id = "links.p2p.latency.chase.mean_sm";
  const std::string label = "P2P load latency, mean over the reader's SMs";
  const LinkPair* worst = nullptr;
  double worst_mean = 0;
  std::string pairs;
  for (const LinkPair& p : r.pairs) {
    if (!p.chase.status.ok() || p.chase.by_sm.empty()) continue;
    double sum = 0;
    for (const LinkLatency::BySm& s : p.chase.by_sm) sum += s.ns;
    const double mean = sum / double(p.chase.by_sm.size());
    pairs += (pairs.empty() ? "" : ", ") + std::to_string(p.dst) + " reading " +
             std::to_string(p.src) + " " + format_fixed(mean, 0);
    if (!worst || mean > worst_mean) {
      worst = &p;
      worst_mean = mean;
    }
  }
  if (!worst) {
    out.push_back(not_ok(id, label, "ns", false, no_chase_by_sm(r)));
    return;
  }
  const int sms = worst->dst < int(r.topology.gpus.size()) ? r.topology.gpus[worst->dst].sms : 0;
  const int n = int(worst->chase.by_sm.size());
  Figure f;
  f.id = id;
  f.label = label;
  f.value = Summary{};
  f.value->median = f.value->q1 = f.value->q3 = f.value->min = f.value->max = worst_mean;
  f.value->n = 1;
  f.unit = "ns";
  f.higher_is_better = false;
  f.clock_mhz = worst->chase.clock_mhz;
  f.where = "highest pair: GPU " + std::to_string(worst->dst) + " reading GPU " +
            std::to_string(worst->src) + "'s memory, mean over " + std::to_string(n) +
            (n == sms ? " SMs (every SM)" : " of " + std::to_string(sms) + " SMs") + ", " +
            format_bytes(double(worst->chase.footprint_bytes)) + " chain; by pair " + pairs + " ns";
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
        if (!p.status.ok() || !p.busbw_gbps || !p.time_us) continue;
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
  chase_mean_sm_figure(r, out);
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

}  // namespace gd
