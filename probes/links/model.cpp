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

}  // namespace gd
