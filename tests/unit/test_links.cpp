// The links probe without a GPU: the topology -> limit mapping, nccl-tests' bus bandwidth
// factors and sizes, the values a collective must leave (against a host implementation of
// each collective), the probe's flow on a fake backend (matrix, figures, unsupported paths,
// a failed check), and the result's JSON both ways.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "bandwidth/bandwidth.hpp"
#include "fake_device.hpp"
#include "figure_ids_check.hpp"
#include "gpudissect/probe.hpp"  // ProbeError
#include "gpudissect/progress.hpp"
#include "gpudissect/result.hpp"
#include "links/links.hpp"
#include "links/report.hpp"
#include "links/run.hpp"
#include "registry.hpp"
#include "run_probe.hpp"

namespace gd {
namespace {

// ---- topology -> limit ----

TEST(LinksTopology, PciAddressesOfNvmlAndCudaCompareEqual) {
  const auto nvml = parse_pci_bus_id("00000000:19:00.0");
  const auto cuda = parse_pci_bus_id("0000:19:00.0");
  ASSERT_TRUE(nvml && cuda);
  EXPECT_TRUE(*nvml == *cuda);
  EXPECT_EQ(nvml->bus, 0x19u);
  const auto other = parse_pci_bus_id("0000:3B:00.0");
  ASSERT_TRUE(other);
  EXPECT_FALSE(*other == *cuda);
  EXPECT_FALSE(parse_pci_bus_id("garbage"));
  EXPECT_FALSE(parse_pci_bus_id("0000:19:00"));
  EXPECT_FALSE(parse_pci_bus_id("0000:19:00.0x"));
}

TEST(LinksTopology, PerLinkAndPerLaneRates) {
  EXPECT_DOUBLE_EQ(nvlink_gbps_per_link(4), 25);
  EXPECT_DOUBLE_EQ(nvlink_gbps_per_link(5), 50);
  EXPECT_DOUBLE_EQ(nvlink_gbps_per_link(1), 20);
  EXPECT_DOUBLE_EQ(nvlink_gbps_per_link(0), 0);
  EXPECT_NEAR(pcie_gbps_per_lane(5) * 16, 63.015, 0.001);  // Gen5 x16 after 128b/130b
  EXPECT_NEAR(pcie_gbps_per_lane(4) * 16, 31.508, 0.001);
  EXPECT_NEAR(pcie_gbps_per_lane(2) * 16, 8.0, 1e-9);  // 8b/10b
  EXPECT_DOUBLE_EQ(pcie_gbps_per_lane(9), 0);
  EXPECT_EQ(pcie_path_name(20), "PXB");
  EXPECT_EQ(pcie_path_name(50), "SYS");
  EXPECT_EQ(pcie_path_name(7), "");
}

TEST(LinksTopology, ArchitectureDecidesTheNvlinkGeneration) {
  EXPECT_EQ(nvlink_generation_for_arch("9.0"), 4);
  EXPECT_EQ(nvlink_generation_for_arch("8.0"), 3);
  EXPECT_EQ(nvlink_generation_for_arch("10.0"), 5);
  EXPECT_EQ(nvlink_generation_for_arch("8.6"), 0);
  EXPECT_EQ(nvlink_generation_from_nvml(6), 4);  // NVML_NVLINK_VERSION_4_0
  EXPECT_EQ(nvlink_generation_from_nvml(3), 2);  // 2.2
  EXPECT_EQ(nvlink_generation_from_nvml(42), 0);
  // Some drivers answer 5.0 for an H100: the architecture wins.
  EXPECT_EQ(nvlink_generation("9.0", 7u), 4);
  EXPECT_EQ(nvlink_generation("", 6u), 4);
  EXPECT_EQ(nvlink_generation("", std::nullopt), 0);
}

Topology two_gpus(int nvlinks, std::optional<unsigned> version, int gen_a, int gen_b) {
  Topology t;
  for (int i = 0; i < 2; ++i) {
    LinkGpu g;
    g.index = i;
    g.compute_capability = "9.0";
    g.pcie_gen_current = 1;  // idle: downshifted
    g.pcie_width_current = 16;
    g.pcie_gen_max = i == 0 ? gen_a : gen_b;
    g.pcie_width_max = 16;
    t.gpus.push_back(g);
  }
  for (auto [a, b] : {std::pair{0, 1}, std::pair{1, 0}}) {
    PairTopology p;
    p.a = a;
    p.b = b;
    p.nvlinks = nvlinks;
    p.nvlink_version_nvml = version;
    p.pcie_path = "SYS";
    t.pairs.push_back(p);
  }
  return t;
}

TEST(LinksTopology, Nv18OnHopperIs450GBsPerDirection) {
  Topology t = two_gpus(18, 7u, 5, 5);
  derive_limits(t);
  ASSERT_TRUE(t.pair(0, 1)->limit_gbps);
  EXPECT_DOUBLE_EQ(*t.pair(0, 1)->limit_gbps, 450);
  EXPECT_EQ(t.pair(0, 1)->nvlink_generation, 4);
  EXPECT_NE(t.pair(0, 1)->limit_basis.find("18 x NVLink 4"), std::string::npos);
  // Each GPU's host link from its max generation, not the idle current one.
  ASSERT_TRUE(t.gpu(1)->pcie_limit_gbps);
  EXPECT_NEAR(*t.gpu(1)->pcie_limit_gbps, 63.015, 0.001);
}

TEST(LinksTopology, WithoutNvlinkTheSlowerPcieLinkIsTheLimit) {
  Topology t = two_gpus(0, std::nullopt, 4, 5);
  derive_limits(t);
  ASSERT_TRUE(t.pair(0, 1)->limit_gbps);
  EXPECT_NEAR(*t.pair(0, 1)->limit_gbps, 31.508, 0.001);
  EXPECT_NE(t.pair(1, 0)->limit_basis.find("SYS"), std::string::npos);
  EXPECT_NE(t.pair(1, 0)->limit_basis.find("Gen4"), std::string::npos);
}

TEST(LinksTopology, NvlinksDirectOrThroughNvswitches) {
  EXPECT_EQ(pair_nvlinks(4, 0, 0, std::nullopt).links, 4);
  EXPECT_FALSE(pair_nvlinks(4, 18, 18, true).via_switch);  // direct links win
  // HGX: every GPU's 18 links end on NVSwitches.
  const PairLinks hgx = pair_nvlinks(0, 18, 18, true);
  EXPECT_EQ(hgx.links, 18);
  EXPECT_TRUE(hgx.via_switch);
  EXPECT_EQ(pair_nvlinks(0, 18, 12, std::nullopt).links, 12);  // NVML cannot tell: trusted
  EXPECT_EQ(pair_nvlinks(0, 18, 18, false).links, 0);          // NVML says no NVLink P2P
  EXPECT_EQ(pair_nvlinks(0, 18, 0, true).links, 0);            // b reaches no switch
  Topology t = two_gpus(18, 6u, 5, 5);
  t.pairs[0].via_nvswitch = true;
  derive_limits(t);
  EXPECT_DOUBLE_EQ(*t.pair(0, 1)->limit_gbps, 450);
  EXPECT_NE(t.pair(0, 1)->limit_basis.find("through NVSwitches"), std::string::npos);
}

TEST(LinksTopology, NoPcieFactsNoLimit) {
  Topology t = two_gpus(0, std::nullopt, 4, 5);
  t.gpus[0].pcie_gen_max.reset();
  t.gpus[0].pcie_gen_current.reset();
  derive_limits(t);
  EXPECT_FALSE(t.pair(0, 1)->limit_gbps);
  EXPECT_FALSE(t.gpu(0)->pcie_limit_gbps);
}

// ---- collectives ----

TEST(LinksNccl, BusFactorsAsNcclTestsDefineThem) {
  EXPECT_DOUBLE_EQ(bus_factor(Collective::all_reduce, 2), 1.0);
  EXPECT_DOUBLE_EQ(bus_factor(Collective::all_reduce, 8), 1.75);
  EXPECT_DOUBLE_EQ(bus_factor(Collective::all_gather, 8), 0.875);
  EXPECT_DOUBLE_EQ(bus_factor(Collective::reduce_scatter, 2), 0.5);
  EXPECT_DOUBLE_EQ(bus_factor(Collective::all_to_all, 4), 0.75);
  EXPECT_DOUBLE_EQ(bus_factor(Collective::broadcast, 8), 1.0);
}

TEST(LinksNccl, CountsFollowNcclTestsSizes) {
  auto ag = collective_counts(Collective::all_gather, 1 << 20, 4);
  ASSERT_TRUE(ag);
  EXPECT_EQ(ag->send_count, (1u << 20) / 4 / 4);  // per rank
  EXPECT_EQ(ag->recv_count, (1u << 20) / 4);      // S is the whole output
  EXPECT_EQ(ag->bytes, 1u << 20);
  auto rs = collective_counts(Collective::reduce_scatter, 1 << 20, 4);
  ASSERT_TRUE(rs);
  EXPECT_EQ(rs->send_count, (1u << 20) / 4);  // S is the whole input
  EXPECT_EQ(rs->recv_count, (1u << 20) / 16);
  auto a2a = collective_counts(Collective::all_to_all, 96, 3);
  ASSERT_TRUE(a2a);
  EXPECT_EQ(a2a->chunk_count, 8u);
  EXPECT_EQ(a2a->send_count, 24u);
  EXPECT_EQ(a2a->bytes, 96u);
  auto ar = collective_counts(Collective::all_reduce, 8, 2);
  ASSERT_TRUE(ar);
  EXPECT_EQ(ar->send_count, 2u);
  // 8 B over 4 ranks is less than a float each; 4 B all-gather over 2 ranks too.
  EXPECT_FALSE(collective_counts(Collective::all_gather, 8, 4));
  EXPECT_FALSE(collective_counts(Collective::all_gather, 4, 2));
  EXPECT_TRUE(collective_counts(Collective::all_gather, 8, 2));
  // Rounded down to whole pieces.
  EXPECT_EQ(collective_counts(Collective::all_to_all, 100, 3)->bytes, 96u);
}

// The collectives done on the host from the send values: what every rank must hold.
std::vector<std::vector<float>> host_collective(Collective c, int n, const CollectiveCounts& k) {
  std::vector<std::vector<float>> send(n), recv(n);
  for (int r = 0; r < n; ++r)
    for (uint64_t i = 0; i < k.send_count; ++i)
      send[r].push_back(
          collective_send_value(c, n, r, c == Collective::all_to_all ? i / k.chunk_count : 0));
  for (int r = 0; r < n; ++r) {
    recv[r].assign(k.recv_count, 0);
    for (uint64_t i = 0; i < k.recv_count; ++i) switch (c) {
        case Collective::all_reduce:
          for (int q = 0; q < n; ++q) recv[r][i] += send[q][i];
          break;
        case Collective::reduce_scatter:
          for (int q = 0; q < n; ++q) recv[r][i] += send[q][r * k.chunk_count + i];
          break;
        case Collective::all_gather:
          recv[r][i] = send[i / k.chunk_count][i % k.chunk_count];
          break;
        case Collective::broadcast:
          recv[r][i] = send[0][i];
          break;
        case Collective::all_to_all: {
          const uint64_t p = i / k.chunk_count, off = i % k.chunk_count;
          recv[r][i] = send[p][r * k.chunk_count + off];
          break;
        }
      }
  }
  return recv;
}

TEST(LinksNccl, ExpectedValuesMatchTheCollectivesDoneOnTheHost) {
  for (int n : {2, 3, 8})
    for (Collective c : all_collectives()) {
      const auto k = collective_counts(c, 4 * 4 * n, n);
      ASSERT_TRUE(k);
      const auto recv = host_collective(c, n, *k);
      for (int r = 0; r < n; ++r)
        for (uint64_t i = 0; i < k->recv_count; ++i) {
          const uint64_t piece =
              c == Collective::all_gather || c == Collective::all_to_all ? i / k->chunk_count : 0;
          EXPECT_EQ(recv[r][i], collective_expected_value(c, n, r, piece))
              << to_string(c) << " n=" << n << " rank " << r << " element " << i;
        }
    }
}

TEST(LinksNccl, AllToAllPiecesAreDistinguishable) {
  // A transposition bug (pieces delivered to the wrong rank) must change the values.
  EXPECT_NE(collective_expected_value(Collective::all_to_all, 4, 1, 2),
            collective_expected_value(Collective::all_to_all, 4, 2, 1));
}

// ---- the probe on a fake backend ----

class FakeLinks final : public LinksKernels {
 public:
  int n = 2;
  bool peer = true;
  bool nccl = true;
  std::string nccl_why = "NCCL not loadable: libnccl.so.2: cannot open shared object file";
  bool break_sm_read_check = false;
  bool chase_times_out = false;
  int peer_copies = 0;
  int collectives = 0;

  int gpu_count() override { return n; }
  Topology topology() override {
    Topology t;
    for (int i = 0; i < n; ++i) {
      LinkGpu g;
      g.index = i;
      g.name = "Fake H200";
      g.sms = 8;
      g.compute_capability = "9.0";
      g.pcie_gen_max = 5;
      g.pcie_width_max = 16;
      t.gpus.push_back(g);
    }
    for (int a = 0; a < n; ++a)
      for (int b = 0; b < n; ++b)
        if (a != b) {
          PairTopology p;
          p.a = a;
          p.b = b;
          p.nvlinks = 18;
          t.pairs.push_back(p);
        }
    return t;
  }
  Support peer_access(int, int) override {
    return peer ? Support::yes() : Support::no("cudaDeviceCanAccessPeer says no");
  }
  // GB/s = 100 x (src + 1) + bytes / 1 MiB: distinct per pair and rising with size.
  static double rate(int src, uint64_t bytes) { return 100.0 * (src + 1) + double(bytes >> 20); }
  TransferTiming peer_copy(const PeerCopyRequest& r) override {
    ++peer_copies;
    TransferTiming t;
    t.bytes_per_repeat = r.bytes * r.iterations * (r.mode == PeerCopyMode::bidir ? 2 : 1);
    for (int i = 0; i < r.repeats; ++i)
      t.seconds.push_back(double(t.bytes_per_repeat) / (rate(r.src, r.bytes) * 1e9));
    return t;
  }
  // SM transfers: 0.9 of the copy engines' rate with the default shape (4 blocks of 512
  // threads per SM, 4 loads in flight each); reads gain 2 % with 8 loads in flight and
  // another 1 % with one block per SM, so the probe's shape search must end on 1x8.
  std::vector<std::pair<int, int>> sm_shapes;
  std::vector<int> chase_sms;
  int wrong_end_on_sm = -2;  // the chase from this SM ends on the wrong line
  static double sm_share(const PeerSmRequest& r) {
    if (r.write) return 0.9;
    return 0.9 * (r.loads_per_thread == 8 ? 1.02 : 1.0) * (r.blocks_per_sm == 1 ? 1.01 : 1.0);
  }
  TransferTiming peer_sm(const PeerSmRequest& r) override {
    sm_shapes.emplace_back(r.blocks_per_sm, r.loads_per_thread);
    TransferTiming t;
    t.bytes_per_repeat = r.bytes * r.iterations;
    for (int i = 0; i < r.repeats; ++i)
      t.seconds.push_back(double(t.bytes_per_repeat) / (rate(r.src, r.bytes) * sm_share(r) * 1e9));
    if (break_sm_read_check && !r.write) t.check_error = "the loads summed to 1, expected 2";
    t.instruction = r.write ? "STG.E.128" : "LDG.E.128";
    return t;
  }
  ChaseTiming peer_chase(const PeerChaseRequest& r) override {
    if (chase_times_out) throw BackendError("peer chase: timed out after 10 s");
    ChaseTiming t;
    // From a chosen SM: 700 ns plus 10 per SM (SM 0 is the closest to the link).
    const double ns = r.sm >= 0 ? 700 + 10.0 * r.sm : 800 + 10 * r.owner;
    chase_sms.push_back(r.sm);
    for (int i = 0; i < r.repeats; ++i) {
      t.ns_per_hop.push_back(ns);
      t.cycles_per_hop.push_back(1.98 * ns);
    }
    t.sm = r.sm;
    t.clock_mhz = 1980;
    uint32_t cur = 0;
    for (uint64_t h = 0; h < r.warmup_hops + r.hops_per_repeat * r.repeats; ++h)
      cur = (*r.next)[cur];
    t.end_line = cur + (r.sm == wrong_end_on_sm ? 1 : 0);
    return t;
  }
  PeerPingPongTiming peer_ping_pong(const PeerPingPongRequest& r) override {
    PeerPingPongTiming t;
    for (int i = 0; i < r.repeats; ++i) t.ns_per_handoff.push_back(1500 + r.a);
    return t;
  }
  HostCopyTiming host_copy(const HostCopyRequest& r) override {
    HostCopyTiming t;
    t.bytes_per_gpu_per_repeat = r.bytes * r.iterations * (r.dir == HostLinkDir::both ? 2 : 1);
    // 50 GB/s per GPU alone, 80 GB/s for all together (the host side caps it).
    const double total = double(t.bytes_per_gpu_per_repeat) * r.gpus.size();
    const double gbps = r.gpus.size() > 1 ? 80 : 50;
    for (int i = 0; i < r.repeats; ++i) t.wall_seconds.push_back(total / (gbps * 1e9));
    return t;
  }
  Support nccl_open() override { return nccl ? Support::yes() : Support::no(nccl_why); }
  std::string nccl_description() override { return nccl ? "libnccl.so.2 (NCCL 2.28.3)" : ""; }
  CollectiveTiming collective(const CollectiveRequest& r) override {
    ++collectives;
    CollectiveTiming t;
    t.checked = r.check;
    // algbw 100 GB/s at every size.
    for (int i = 0; i < r.repeats; ++i) t.seconds_per_op.push_back(double(r.bytes) / 100e9);
    return t;
  }
};

class FakeDevice final : public fakes::FakeDevice {
 public:
  explicit FakeDevice(bool with_kernels) {
    info_.backend = with_kernels ? "cuda" : "opencl";
    info_.id = with_kernels ? "cuda:0" : "opencl:0.0";
    info_.name = "Fake";
    if (with_kernels) serve(LinksKernels::kProbe, &links);
  }
  FakeLinks links;
};

LinksOptions small_options() {
  return parse_links_options({{"p2p_min", "1M"},
                              {"p2p_max", "16M"},
                              {"p2p_step", "4"},
                              {"host_min", "1M"},
                              {"host_max", "4M"},
                              {"nccl_min", "8"},
                              {"nccl_max", "1M"},
                              {"nccl_step", "16"},
                              {"repeats", "3"}});
}

const Figure* find(const std::vector<Figure>& v, const std::string& id) {
  for (const Figure& f : v)
    if (f.id == id) return &f;
  return nullptr;
}

TEST(LinksProbe, SizesAndIterations) {
  EXPECT_EQ(links_sizes(4096, 16384, 2), (std::vector<uint64_t>{4096, 8192, 16384}));
  EXPECT_EQ(links_sizes(1 << 20, 1 << 30, 32), (std::vector<uint64_t>{1 << 20, 32 << 20, 1 << 30}));
  EXPECT_EQ(links_sizes(8, 100, 4), (std::vector<uint64_t>{8, 32, 100}));  // the max is last
  EXPECT_EQ(links_sizes(64, 64, 2), (std::vector<uint64_t>{64}));
  EXPECT_TRUE(links_sizes(0, 64, 2).empty());
  EXPECT_EQ(links_iterations(4096, 256 << 20, 1000), 1000);
  EXPECT_EQ(links_iterations(1 << 30, 256 << 20, 1000), 1);
  EXPECT_EQ(links_iterations(1 << 20, 256 << 20, 1000), 256);
}

TEST(LinksProbe, OptionsAreValidated) {
  EXPECT_THROW(parse_links_options({{"nope", "1"}}), std::invalid_argument);
  EXPECT_THROW(parse_links_options({{"parts", "p2p,bogus"}}), std::invalid_argument);
  EXPECT_THROW(parse_links_options({{"p2p_min", "1G"}, {"p2p_max", "1M"}}), std::invalid_argument);
  const LinksOptions q = parse_links_options({{"quick", "1"}});
  EXPECT_EQ(q.repeats, 3);
  EXPECT_EQ(q.p2p_step, 32);
  EXPECT_EQ(q.host_min, q.host_max);
  EXPECT_EQ(parse_links_options({{"parts", "nccl"}}).parts, std::set<std::string>{"nccl"});
}

TEST(LinksProbe, TwoGpusEveryPartAndItsFigures) {
  FakeDevice dev(true);
  LinksProbeResult out;
  fakes::run_probe(run_links, dev, small_options(), out);
  EXPECT_TRUE(out.status.ok()) << out.status.reason;
  EXPECT_EQ(out.gpus, 2);
  ASSERT_EQ(out.pairs.size(), 2u);
  EXPECT_DOUBLE_EQ(*out.topology.pair(0, 1)->limit_gbps, 450);
  // 1M, 4M, 16M for 5 curves and 2 pairs.
  EXPECT_EQ(out.pairs[0].curves.size(), 5u);
  EXPECT_EQ(out.pairs[0].curves.at("ce.read").points.size(), 3u);
  EXPECT_EQ(dev.links.peer_copies, 2 * 3 * 3);

  const std::vector<Figure> figs = links_figures(out);
  // The lowest pair at the largest size: src 0 gives 100 + 16 GB/s, src 1 200 + 16.
  const Figure* read = find(figs, "links.p2p.ce.read");
  ASSERT_TRUE(read && read->value);
  EXPECT_NEAR(read->value->median, 116, 1e-6);
  EXPECT_NE(read->where.find("GPU 0 -> GPU 1"), std::string::npos) << read->where;
  EXPECT_NE(read->where.find("450.0"), std::string::npos) << read->where;
  const Figure* bidir = find(figs, "links.p2p.ce.bidir");
  ASSERT_TRUE(bidir && bidir->value);
  EXPECT_NEAR(bidir->value->median, 116, 1e-6);  // the fake's rate counts both directions
  const Figure* sm = find(figs, "links.p2p.sm.read");
  ASSERT_TRUE(sm && sm->value);
  // The best thread shape at the largest size (1 block per SM x 8 loads), the others listed.
  EXPECT_NEAR(sm->value->median, 116 * 0.9 * 1.02 * 1.01, 1e-6);
  EXPECT_EQ(sm->instruction, "LDG.E.128");
  const std::string& note = out.pairs[0].curves.at("sm.read").note;
  EXPECT_NE(note.find("4x4 104.4"), std::string::npos) << note;  // (100 + 16) x 0.9
  EXPECT_NE(note.find("the figure is 1x8"), std::string::npos) << note;
  // Smaller sizes keep the default shape: only the largest is searched.
  const Figure* smw = find(figs, "links.p2p.sm.write");
  ASSERT_TRUE(smw && smw->value);
  EXPECT_NEAR(smw->value->median, 116 * 0.9, 1e-6);
  EXPECT_NE(out.pairs[0].curves.at("sm.write").note.find("the figure is 4x4"), std::string::npos);
  // Latency: the highest pair; the chase of GPU 0 reading GPU 1's memory is 810 ns.
  const Figure* chase = find(figs, "links.p2p.latency.chase");
  ASSERT_TRUE(chase && chase->value);
  EXPECT_DOUBLE_EQ(chase->value->median, 810);
  EXPECT_FALSE(chase->higher_is_better);
  // Again from each of the reader's 8 SMs (chase_sms 1024, capped at the 8 there are), per pair.
  EXPECT_EQ(dev.links.chase_sms,
            (std::vector<int>{-1, 0, 1, 2, 3, 4, 5, 6, 7, -1, 0, 1, 2, 3, 4, 5, 6, 7}));
  ASSERT_EQ(out.pairs[0].chase.by_sm.size(), 8u);
  EXPECT_DOUBLE_EQ(out.pairs[0].chase.by_sm[7].ns, 770);
  const Figure* best_sm = find(figs, "links.p2p.latency.chase.best_sm");
  ASSERT_TRUE(best_sm && best_sm->value);
  EXPECT_DOUBLE_EQ(best_sm->value->median, 700);
  EXPECT_NE(best_sm->where.find("from SM 0; over 8 SMs 700 to 770 ns (SM 7)"), std::string::npos)
      << best_sm->where;
  // nvbandwidth's definition: the mean over every SM, 700 + 10 x 3.5.
  const Figure* mean_sm = find(figs, "links.p2p.latency.chase.mean_sm");
  ASSERT_TRUE(mean_sm && mean_sm->value);
  EXPECT_DOUBLE_EQ(mean_sm->value->median, 735);
  EXPECT_FALSE(mean_sm->higher_is_better);
  EXPECT_NE(mean_sm->where.find("mean over 8 SMs (every SM)"), std::string::npos) << mean_sm->where;
  EXPECT_NE(mean_sm->where.find("by pair 1 reading 0 735, 0 reading 1 735 ns"), std::string::npos)
      << mean_sm->where;
  ASSERT_TRUE(find(figs, "links.p2p.latency.chase.cycles")->value);
  EXPECT_DOUBLE_EQ(find(figs, "links.p2p.latency.pingpong")->value->median, 1501);
  // Host: all together 80 GB/s, each alone 50.
  EXPECT_NEAR(find(figs, "links.host.h2d.all")->value->median, 80, 1e-6);
  EXPECT_NEAR(find(figs, "links.host.d2h.single")->value->median, 50, 1e-6);
  ASSERT_TRUE(find(figs, "links.host.both.all")->value);
  // NCCL: algbw 100 GB/s; all-reduce busbw x 2(n-1)/n = 1, all-gather x 1/2.
  EXPECT_NEAR(find(figs, "links.nccl.all_reduce.busbw")->value->median, 100, 1e-6);
  EXPECT_NEAR(find(figs, "links.nccl.all_gather.busbw")->value->median, 50, 1e-6);
  EXPECT_NEAR(find(figs, "links.nccl.broadcast.algbw")->value->median, 100, 1e-6);
  const Figure* lat = find(figs, "links.nccl.all_reduce.latency");
  ASSERT_TRUE(lat && lat->value);
  EXPECT_NEAR(lat->value->median, 8 / 100e9 * 1e6, 1e-9);  // the 8 B point, in us
  EXPECT_EQ(out.nccl.environment.at("NCCL_NVLS_ENABLE"), "0");
  // 8 B, 128 B, 2 KiB, 32 KiB, 512 KiB, 1 MiB for each of 5 collectives.
  EXPECT_EQ(dev.links.collectives, 5 * 6);
  for (const Figure& f : figs) EXPECT_EQ(f.status.name(), "ok") << f.id << " " << f.status.reason;
}

TEST(LinksProbe, MatrixAndTerminalSummary) {
  FakeDevice dev(true);
  LinksProbeResult out;
  fakes::run_probe(run_links, dev, small_options(), out);
  const auto m = links_matrix(out, "ce.write");
  ASSERT_EQ(m.size(), 4u);
  EXPECT_TRUE(std::isnan(m[0]) && std::isnan(m[3]));
  EXPECT_NEAR(m[1], 116, 1e-6);  // (0, 1)
  EXPECT_NEAR(m[2], 216, 1e-6);  // (1, 0)
  const std::string text = report::format_links_matrix(m, 2, 1);
  EXPECT_NE(text.find("N/A"), std::string::npos);
  EXPECT_NE(text.find("116.0"), std::string::npos);
  EXPECT_NE(text.find("216.0"), std::string::npos);
  std::ostringstream os;
  report::print_links_summary(os, out);
  EXPECT_NE(os.str().find("NCCL_NVLS_ENABLE=0"), std::string::npos);
  EXPECT_NE(os.str().find("NV18"), std::string::npos);
  EXPECT_NE(os.str().find("all_reduce"), std::string::npos);
  EXPECT_NE(os.str().find("busbw"), std::string::npos);

  report::SectionContext ctx;  // no charts
  const std::string html = report::links_html_section(out, ctx);
  EXPECT_NE(html.find("NCCL_NVLS_ENABLE=0"), std::string::npos);
  EXPECT_NE(html.find("<td class=\"n\">216.0</td>"), std::string::npos);

  const auto dir = std::filesystem::temp_directory_path() / "gd_links_csv_test";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const auto files = report::write_links_csv(dir, out);
  EXPECT_EQ(files.size(), 5u);
  std::ifstream nccl(dir / "links_nccl.csv");
  std::string header, first;
  std::getline(nccl, header);
  std::getline(nccl, first);
  EXPECT_EQ(header, "collective,bytes,count,status,time_us,algbw_gbps,busbw_gbps,checked,reason");
  EXPECT_EQ(first.rfind("all_gather,8,1,ok,", 0), 0u) << first;  // std::map order
  std::filesystem::remove_all(dir);
}

TEST(LinksProbe, OneGpuHasNoPeerAndLeavesTheHostToTheBandwidthProbe) {
  FakeDevice dev(true);
  dev.links.n = 1;
  LinksProbeResult out;
  fakes::run_probe(run_links, dev, small_options(), out);
  EXPECT_TRUE(out.status.ok());
  EXPECT_EQ(out.host.status.name(), "skipped");
  EXPECT_NE(out.host.status.reason.find("bandwidth.host"), std::string::npos);
  EXPECT_TRUE(out.host.all.empty());
}

TEST(LinksProbe, OneGpuHasNoPeerButMeasuresTheHostWhenAsked) {
  FakeDevice dev(true);
  dev.links.n = 1;
  LinksProbeResult out;
  auto kv = std::map<std::string, std::string>{{"host_min", "1M"},
                                               {"host_max", "4M"},
                                               {"nccl_max", "1M"},
                                               {"repeats", "3"},
                                               {"parts", "p2p,latency,host,nccl"}};
  fakes::run_probe(run_links, dev, parse_links_options(kv), out);
  EXPECT_TRUE(out.status.ok());
  EXPECT_EQ(out.p2p.name(), "unsupported");
  EXPECT_EQ(out.p2p.reason, "one GPU: no peer");
  EXPECT_EQ(out.nccl.status.name(), "unsupported");
  EXPECT_EQ(out.nccl.status.reason, "needs 2 GPUs");
  EXPECT_TRUE(out.host.status.ok());
  EXPECT_TRUE(out.host.single.empty());  // "all" is that GPU alone
  const auto figs = links_figures(out);
  EXPECT_EQ(find(figs, "links.p2p.ce.read")->status.reason, "one GPU: no peer");
  EXPECT_FALSE(find(figs, "links.p2p.ce.read")->value);
  EXPECT_EQ(find(figs, "links.nccl.all_reduce.busbw")->status.reason, "needs 2 GPUs");
  EXPECT_TRUE(find(figs, "links.host.h2d.all")->value);
}

TEST(LinksProbe, NoPeerAccessAndNoNcclAreUnsupportedWithTheirReasons) {
  FakeDevice dev(true);
  dev.links.peer = false;
  dev.links.nccl = false;
  LinksProbeResult out;
  fakes::run_probe(run_links, dev, small_options(), out);
  EXPECT_TRUE(out.status.ok());
  EXPECT_EQ(out.p2p.name(), "unsupported");
  EXPECT_NE(out.p2p.reason.find("cudaDeviceCanAccessPeer says no"), std::string::npos);
  EXPECT_EQ(out.pairs.at(0).status.name(), "unsupported");
  EXPECT_EQ(dev.links.peer_copies, 0);
  EXPECT_EQ(out.nccl.status.name(), "unsupported");
  EXPECT_NE(out.nccl.status.reason.find("libnccl.so.2"), std::string::npos);
  EXPECT_EQ(dev.links.collectives, 0);
  EXPECT_EQ(find(links_figures(out), "links.nccl.broadcast.busbw")->status.name(), "unsupported");
}

TEST(LinksProbe, ABackendWithoutKernelsIsUnsupported) {
  FakeDevice dev(false);
  LinksProbeResult out;
  fakes::run_probe(run_links, dev, small_options(), out);
  EXPECT_EQ(out.status.name(), "unsupported");
  EXPECT_NE(out.status.reason.find("opencl backend has no links kernels"), std::string::npos);
  EXPECT_EQ(out.nccl.status.name(), "unsupported");
  for (const Figure& f : links_figures(out)) {
    EXPECT_EQ(f.status.name(), "unsupported") << f.id;
    EXPECT_FALSE(f.value) << f.id;
  }
}

TEST(LinksProbe, AFailedCheckIsAnErrorAndExitsThroughProbeError) {
  FakeDevice dev(true);
  dev.links.break_sm_read_check = true;
  LinksProbeResult out;
  EXPECT_THROW(fakes::run_probe(run_links, dev, small_options(), out), ProbeError);
  EXPECT_EQ(out.status.name(), "error");
  EXPECT_NE(out.status.reason.find("loads summed"), std::string::npos);
  const BandwidthCurve& c = out.pairs[0].curves.at("sm.read");
  EXPECT_EQ(c.status.name(), "error");
  EXPECT_EQ(c.points[0].status.code, StatusCode::error);
  EXPECT_FALSE(c.points[0].gbps);
  // The other curves and parts still stand.
  EXPECT_TRUE(out.pairs[0].curves.at("ce.read").status.ok());
  EXPECT_TRUE(out.nccl.status.ok());
  const auto figs = links_figures(out);
  EXPECT_FALSE(find(figs, "links.p2p.sm.read")->value);
  EXPECT_EQ(find(figs, "links.p2p.sm.read")->status.name(), "error");
  EXPECT_TRUE(find(figs, "links.p2p.ce.read")->value);
}

TEST(LinksProbe, AChaseFromOneSmThatEndsWrongIsThePairsChaseError) {
  FakeDevice dev(true);
  dev.links.wrong_end_on_sm = 3;
  LinksProbeResult out;
  EXPECT_THROW(fakes::run_probe(run_links, dev, small_options(), out), ProbeError);
  EXPECT_EQ(out.pairs[0].chase.status.name(), "error");
  EXPECT_NE(out.pairs[0].chase.status.reason.find("from SM 3 ended on line"), std::string::npos)
      << out.pairs[0].chase.status.reason;
  EXPECT_TRUE(out.pairs[0].chase.by_sm.empty());  // no partial range is shown as a result
  const auto figs = links_figures(out);
  EXPECT_EQ(find(figs, "links.p2p.latency.chase")->status.name(), "error");
  EXPECT_FALSE(find(figs, "links.p2p.latency.chase.best_sm")->value);
  const Figure* mean_sm = find(figs, "links.p2p.latency.chase.mean_sm");
  ASSERT_TRUE(mean_sm);
  EXPECT_FALSE(mean_sm->value);
  EXPECT_EQ(mean_sm->status.name(), "error");
}

TEST(LinksProbe, QuickChasesFromOneBlockOnly) {
  EXPECT_EQ(parse_links_options({}).chase_sms, 1024);
  EXPECT_EQ(parse_links_options({{"quick", "1"}}).chase_sms, 0);
  EXPECT_EQ(parse_links_options({{"quick", "1"}, {"chase_sms", "4"}}).chase_sms, 4);
  EXPECT_THROW(parse_links_options({{"chase_sms", "-1"}}), std::invalid_argument);
}

TEST(LinksProbe, ATimeoutIsAnErrorOfItsFigureNotAHang) {
  FakeDevice dev(true);
  dev.links.chase_times_out = true;
  LinksProbeResult out;
  EXPECT_THROW(fakes::run_probe(run_links, dev, small_options(), out), ProbeError);
  EXPECT_EQ(out.status.name(), "error");
  EXPECT_NE(out.status.reason.find("timed out"), std::string::npos);
  EXPECT_NE(out.status.reason.find("and 1 more"), std::string::npos);  // both pairs
  EXPECT_EQ(out.pairs[0].chase.status.name(), "error");
  EXPECT_TRUE(out.pairs[0].ping_pong.status.ok());
  const auto figs = links_figures(out);
  EXPECT_EQ(find(figs, "links.p2p.latency.chase")->status.name(), "error");
  EXPECT_NE(find(figs, "links.p2p.latency.chase")->status.reason.find("timed out"),
            std::string::npos);
  EXPECT_FALSE(find(figs, "links.p2p.latency.chase")->value);
  EXPECT_TRUE(find(figs, "links.p2p.latency.pingpong")->value);
}

TEST(LinksProbe, JsonRoundTripThroughTheRegistry) {
  FakeDevice dev(true);
  RunResult r;
  r.device = dev.info();
  LinksProbeResult& out = r.put<LinksProbeResult>();
  fakes::run_probe(run_links, dev, small_options(), out);
  r.figures = collect_figures(r, probe_registry());
  EXPECT_GT(expect_figure_ids_declared(r), 0);
  const nlohmann::json j = to_json(r, probe_registry());
  ASSERT_TRUE(j.contains("probes") && j["probes"].contains("links"));
  const RunResult back = run_result_from_json(j, probe_registry());
  const LinksProbeResult* l = back.get<LinksProbeResult>();
  ASSERT_TRUE(l);
  EXPECT_EQ(nlohmann::json(*l), nlohmann::json(out));
  EXPECT_EQ(l->topology.pair(0, 1)->nvlinks, 18);
  EXPECT_EQ(l->nccl.environment.at("NCCL_NVLS_ENABLE"), "0");
  EXPECT_EQ(to_json(back, probe_registry()), j);
  EXPECT_TRUE(find(back.figures, "links.nccl.all_to_all.busbw"));
}

}  // namespace
}  // namespace gd
