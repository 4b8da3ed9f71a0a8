// Links: the backend-neutral contract of the links probe (GPU to GPU and GPU to host
// transfers, peer latencies, NCCL collectives over every GPU of the node), the GPU-free
// pieces it is judged by (the physical limit a link topology implies, nccl-tests' bus
// bandwidth factors, the values a collective must leave), and the result model.
//
// Direction convention: a matrix cell (src, dst) is data moving from src's memory to dst.
// "read" is issued by dst (it pulls from the peer), "write" by src (it pushes to the peer).
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "bandwidth/bandwidth.hpp"
#include "gpudissect/device.hpp"
#include "gpudissect/figure.hpp"
#include "gpudissect/stats.hpp"
#include "gpudissect/status.hpp"

namespace gd {

// ---- topology and the limit it implies ----

// A PCI address as NVML ("00000000:19:00.0") or the CUDA runtime ("0000:19:00.0") writes
// it; the two spell the domain differently, so addresses are compared parsed.
struct PciAddress {
  uint32_t domain = 0, bus = 0, device = 0, function = 0;
  bool operator==(const PciAddress& o) const {  // (C++17: nvcc compiles this header)
    return domain == o.domain && bus == o.bus && device == o.device && function == o.function;
  }
};
std::optional<PciAddress> parse_pci_bus_id(const std::string& s);

// NVLink generation of an architecture (compute capability "9.0" -> 4); 0 where unknown.
// sm_60 NVLink 1 (P100), sm_70 2 (V100), sm_80 3 (A100), sm_90 4 (H100/H200), sm_100 5.
int nvlink_generation_for_arch(const std::string& compute_capability);
// The major generation of NVML's nvmlNvlinkVersion_t value (1 = 1.0, 2 = 2.0, 3 = 2.2,
// 4 = 3.0, 5 = 3.1, 6 = 4.0, 7 = 5.0); 0 where unknown. Some drivers answer 5.0 for an H100,
// so the architecture wins where it is known (nvlink_generation).
int nvlink_generation_from_nvml(unsigned nvml_version);
int nvlink_generation(const std::string& compute_capability, std::optional<unsigned> nvml_version);
// Data rate of one link in one direction, GB/s (1e9 B/s), as NVIDIA's datasheets give the
// totals: P100 160 GB/s over 4 links both ways (NVLink 1: 20), V100 300 GB/s over 6 links
// (2: 25), A100 600 GB/s over 12 (3: 25), H100 900 GB/s over 18 (4: 25), B200 1.8 TB/s over
// 18 (5: 50). 0 for an unknown generation.
double nvlink_gbps_per_link(int generation);
// One PCIe lane, one direction, GB/s, after line coding (PCI-SIG base specifications):
// Gen1 2.5 GT/s and Gen2 5 GT/s with 8b/10b (0.25, 0.5), Gen3 8, Gen4 16, Gen5 32 GT/s with
// 128b/130b (0.985, 1.969, 3.938), Gen6 64 GT/s PAM4 with 242/256 FLIT coding (7.563). TLP
// headers and flow control come on top: this is the signalling limit, not a payload limit.
double pcie_gbps_per_lane(int generation);
// nvmlGpuTopologyLevel_t (0 internal, 10 single switch, 20 several switches, 30 host
// bridge, 40 NUMA node, 50 system) in nvidia-smi topo's words: "PIX", "PXB", "PHB", "NODE",
// "SYS"; "" for an unknown level.
std::string pcie_path_name(int nvml_topology_level);

// One GPU as the links probe sees it.
struct LinkGpu {
  int index = 0;  // CUDA device index
  std::string name;
  int sms = 0;  // multiprocessors (the chase by reading SM spreads over them)
  std::string pci_bus_id;
  std::string compute_capability;
  std::optional<int> pcie_gen_current, pcie_width_current;  // NVML, now (idle GPUs downshift)
  std::optional<int> pcie_gen_max, pcie_width_max;          // NVML, what the link can train to
  std::optional<double> pcie_limit_gbps;  // per direction, max gen x max width (derive_limits)
  std::string pcie_limit_basis;
};

// What joins two GPUs (a, b ordered; NVML reports each direction's links on its own GPU).
struct PairTopology {
  int a = 0, b = 0;
  int nvlinks = 0;                              // pair_nvlinks: direct links, or through NVSwitches
  bool via_nvswitch = false;                    // the links reach b through NVSwitches (HGX boards)
  std::optional<unsigned> nvlink_version_nvml;  // raw nvmlNvlinkVersion_t of the first link
  int nvlink_generation = 0;                    // derive_limits: nvlink_generation()
  std::string pcie_path;                        // PIX/PXB/PHB/NODE/SYS where NVML says
  std::optional<double> limit_gbps;             // per direction (derive_limits)
  std::string limit_basis;  // "18 x NVLink 4 at 25 GB/s per direction", "PCIe ..."
};

struct Topology {
  Status nvml;  // ok, or unsupported with why NVML told nothing
  std::vector<LinkGpu> gpus;
  std::vector<PairTopology> pairs;
  const PairTopology* pair(int a, int b) const;
  const LinkGpu* gpu(int index) const;
};

// The NVLinks joining GPUs a and b: those whose remote end is b (`direct`), else, where
// both GPUs' links end on NVSwitches (HGX boards: every GPU's links go to the switches and
// nvidia-smi topo shows NV18 between every pair), the fewer of the two GPUs' switch links,
// unless NVML says NVLink P2P does not work between them (`nvlink_p2p` false).
struct PairLinks {
  int links = 0;
  bool via_switch = false;
};
PairLinks pair_nvlinks(int direct, int switch_links_a, int switch_links_b,
                       std::optional<bool> nvlink_p2p);

// Fills every GPU's PCIe limit and every pair's NVLink generation and limit from the raw
// fields: NVLinks where a pair has any, else the slower of the two GPUs' PCIe links (their
// max generation and width: the current ones drop while a GPU idles).
void derive_limits(Topology& t);

// ---- NCCL collectives: what nccl-tests reports ----

enum class Collective { all_reduce, all_gather, reduce_scatter, broadcast, all_to_all };
std::string to_string(Collective c);  // "all_reduce" ...
const std::vector<Collective>& all_collectives();

// nccl-tests' bus bandwidth factor (doc/PERFORMANCE.md): busbw = algbw x factor, with
// all-reduce 2(n-1)/n, all-gather, reduce-scatter and all-to-all (n-1)/n, broadcast 1.
double bus_factor(Collective c, int ranks);

// The arguments of one collective of size S bytes over n ranks, as nccl-tests sizes them:
// S is the all-reduce's and broadcast's buffer, the all-gather's whole output (send count
// per rank = S/elem/n), the reduce-scatter's whole input (receive count per rank =
// S/elem/n), the all-to-all's whole send buffer of a rank (S/elem/n to each peer).
// algbw = S / time. Nullopt where S gives fewer than one element per rank's piece.
struct CollectiveCounts {
  uint64_t send_count = 0;   // elements each rank sends (its send buffer)
  uint64_t recv_count = 0;   // elements each rank's receive buffer holds
  uint64_t chunk_count = 0;  // elements of one rank's piece (all-gather, reduce-scatter,
                             // all-to-all), else the whole count
  uint64_t bytes = 0;        // S actually used (rounded down to whole pieces)
};
std::optional<CollectiveCounts> collective_counts(Collective c, uint64_t bytes, int ranks,
                                                  uint64_t elem_bytes = 4);

// The float each rank's send buffer holds at element i (in piece i / chunk_count), and the
// one the receive buffer must hold afterwards: the host checks a collective by these.
// Send: all-reduce, reduce-scatter rank+1; all-gather rank+1; broadcast (root 0) 1 on the
// root, 0 elsewhere; all-to-all 1 + rank x n + piece.
float collective_send_value(Collective c, int ranks, int rank, uint64_t piece);
float collective_expected_value(Collective c, int ranks, int rank, uint64_t piece);

// ---- the kernel contract ----

enum class PeerCopyMode { read, write, bidir };
std::string to_string(PeerCopyMode m);

// `iterations` copies of `bytes` from src to dst (bidir: also dst to src at once) per timed
// repeat, after one untimed one. Read: issued on dst (cudaMemcpyPeerAsync pulls), write:
// issued on src (pushes); bidir: each direction on its destination's stream.
struct PeerCopyRequest {
  int src = 0, dst = 1;
  PeerCopyMode mode = PeerCopyMode::read;
  uint64_t bytes = 0;
  int iterations = 1;
  int repeats = 5;
  double timeout_s = 10;
};

// SM kernels: `write` false: a kernel on dst loads src's memory (16-byte loads, every
// value summed and the sum checked), true: a kernel on src stores into dst's memory
// (sampled words checked).
struct PeerSmRequest {
  int src = 0, dst = 1;
  bool write = false;
  uint64_t bytes = 0;
  // The kernel's shape: blocks of 512 threads per SM, and 16-byte accesses each thread keeps
  // in flight per loop step (4, 8 or 12). The probe tries a few at the largest size.
  int blocks_per_sm = 4;
  int loads_per_thread = 4;
  // Passes over the buffer per timed repeat; a read makes them in one launch (no launch gap
  // or ramp between passes), a write one launch each.
  int iterations = 1;
  int repeats = 5;
  double timeout_s = 10;
};

struct TransferTiming {
  std::vector<double> seconds;  // per timed repeat (all its iterations)
  uint64_t bytes_per_repeat = 0;
  std::string check_error;  // empty when every check passed
  std::string instruction;  // SASS of an SM kernel, where read
};

// One thread of `executor` chases `next` laid out in `owner`'s memory (line i at i x
// stride). Reuses the chase timing model of the latency probe.
struct PeerChaseRequest {
  int executor = 1, owner = 0;
  int sm = -1;  // the executor's SM that chases (-1: wherever the one block lands)
  const std::vector<uint32_t>* next = nullptr;
  uint64_t stride_bytes = 256;
  uint64_t warmup_hops = 0;
  uint64_t hops_per_repeat = 0;
  int repeats = 5;
  double timeout_s = 10;
};

// One thread on GPU a and one on GPU b hand a counter back and forth, each flag in its
// reader's memory and written by the other GPU. `round_trips` per repeat, after a warm-up.
struct PeerPingPongRequest {
  int a = 0, b = 1;
  uint32_t round_trips = 1000;
  int repeats = 5;
  double timeout_s = 10;
};
struct PeerPingPongTiming {
  std::vector<double> ns_per_handoff;      // one per repeat: a round trip / 2
  std::vector<double> cycles_per_handoff;  // on a's clock
  std::optional<double> clock_mhz;
  std::string check_error;  // a flag that did not end where the hand-overs put it, a timeout
};

// Host transfers: every GPU of `gpus` at once, each its own stream, pinned host memory.
enum class HostLinkDir { h2d, d2h, both };
std::string to_string(HostLinkDir d);
struct HostCopyRequest {
  std::vector<int> gpus;
  HostLinkDir dir = HostLinkDir::h2d;
  uint64_t bytes = 0;  // per GPU and direction
  int iterations = 1;
  int repeats = 5;
  double timeout_s = 20;
};
struct HostCopyTiming {
  std::vector<double> wall_seconds;  // per repeat: from the first issue to the last finish
  std::vector<std::vector<double>> gpu_seconds;  // [gpu of the request][repeat], its events
  uint64_t bytes_per_gpu_per_repeat = 0;         // both directions counted in `both`
  std::string check_error;
};

struct CollectiveRequest {
  Collective op = Collective::all_reduce;
  uint64_t bytes = 0;  // S (collective_counts)
  int warmup = 5;
  int iterations = 20;  // per timed repeat
  int repeats = 3;
  bool check = true;
  double timeout_s = 30;
};
struct CollectiveTiming {
  std::vector<double> seconds_per_op;  // per repeat: slowest GPU's time / iterations
  std::string check_error;
  bool checked = false;
};

class LinksKernels : public KernelSet {
 public:
  static constexpr const char* kProbe = "links";
  virtual ~LinksKernels() = default;
  virtual int gpu_count() = 0;
  // Every GPU with NVML's view of its links (Topology::nvml says why not where absent);
  // derive_limits is the probe's to call.
  virtual Topology topology() = 0;
  virtual Support peer_access(int src, int dst) = 0;  // cudaDeviceCanAccessPeer + enable
  virtual TransferTiming peer_copy(const PeerCopyRequest& r) = 0;
  virtual TransferTiming peer_sm(const PeerSmRequest& r) = 0;
  virtual ChaseTiming peer_chase(const PeerChaseRequest& r) = 0;
  virtual PeerPingPongTiming peer_ping_pong(const PeerPingPongRequest& r) = 0;
  virtual HostCopyTiming host_copy(const HostCopyRequest& r) = 0;
  // Loads NCCL (GD_NCCL_LIBRARY, else libnccl.so.2), sets NCCL_NVLS_ENABLE=0 and creates
  // one communicator per GPU (ncclCommInitAll); no with the reason where it cannot.
  virtual Support nccl_open() = 0;
  virtual std::string nccl_description() = 0;  // "libnccl.so.2 2.28.3"
  virtual CollectiveTiming collective(const CollectiveRequest& r) = 0;
  virtual void release() {}  // frees buffers and communicators
};

// ---- the result model ----

struct LinkLatency {
  Status status{StatusCode::skipped, "not measured"};
  std::optional<Summary> ns;
  std::optional<Summary> cycles;
  std::optional<double> clock_mhz;
  uint64_t footprint_bytes = 0;  // chase
  uint64_t hops_or_round_trips = 0;
  std::string note;
  // The chase again from chosen SMs of the reader (CUDA): how far an SM sits from the link
  // moves the latency (the H200 pair read 802 to 857 ns per hop from whichever SM one block
  // landed on, over three leases).
  struct BySm {
    int sm = 0;
    double ns = 0;
    std::optional<double> cycles;
  };
  std::vector<BySm> by_sm;
};

struct LinkPair {
  int src = 0, dst = 1;
  Status status;  // unsupported: no peer access
  // ce.read, ce.write, ce.bidir, sm.read, sm.write: GB/s against transfer bytes
  std::map<std::string, BandwidthCurve> curves;
  LinkLatency chase, ping_pong;
};

struct CollectivePoint {
  uint64_t bytes = 0;  // S
  uint64_t count = 0;  // elements per rank's send buffer
  Status status;       // ok, skipped or error
  std::optional<Summary> time_us;
  std::optional<Summary> algbw_gbps, busbw_gbps;
  bool checked = false;
};

struct CollectiveCurve {
  Status status;
  std::vector<CollectivePoint> points;
};

struct NcclResult {
  Status status{StatusCode::skipped, "not measured"};
  std::string library;  // what was loaded, with its version
  int ranks = 0;
  std::map<std::string, std::string> environment;      // set by the probe: NCCL_NVLS_ENABLE=0
  std::map<std::string, CollectiveCurve> collectives;  // by to_string(Collective)
};

struct HostLinks {
  Status status{StatusCode::skipped, "not measured"};
  // "h2d", "d2h", "both": every GPU at once, GB/s summed over GPUs, against bytes per GPU
  std::map<std::string, BandwidthCurve> all;
  // "<gpu>.h2d" ...: each GPU alone
  std::map<std::string, BandwidthCurve> single;
};

struct LinksProbeResult {
  static constexpr const char* kProbe = "links";
  Status status;
  double wall_seconds = 0;
  int gpus = 0;
  Topology topology;
  Status p2p{StatusCode::skipped, "not measured"};
  std::vector<LinkPair> pairs;
  HostLinks host;
  NcclResult nccl;
};

// The transfer size at which a curve's headline is read: its largest ok point.
const BandwidthPoint* largest_ok_point(const BandwidthCurve& c);

// Headline figures (docs/probes/links.md): each P2P figure is the pair with the lowest
// bandwidth (highest latency) at the largest size measured, so a weak link is what shows;
// `where` names that pair, the median over pairs and the limit the topology implies.
std::vector<Figure> links_figures(const LinksProbeResult& r);

// A row-major n x n matrix of one curve's headline (GB/s) per (src, dst); NaN where absent.
std::vector<double> links_matrix(const LinksProbeResult& r, const std::string& curve);

void to_json(nlohmann::json& j, const LinkGpu& g);
void from_json(const nlohmann::json& j, LinkGpu& g);
void to_json(nlohmann::json& j, const PairTopology& p);
void from_json(const nlohmann::json& j, PairTopology& p);
void to_json(nlohmann::json& j, const Topology& t);
void from_json(const nlohmann::json& j, Topology& t);
void to_json(nlohmann::json& j, const LinkLatency& l);
void from_json(const nlohmann::json& j, LinkLatency& l);
void to_json(nlohmann::json& j, const LinkPair& p);
void from_json(const nlohmann::json& j, LinkPair& p);
void to_json(nlohmann::json& j, const CollectivePoint& p);
void from_json(const nlohmann::json& j, CollectivePoint& p);
void to_json(nlohmann::json& j, const CollectiveCurve& c);
void from_json(const nlohmann::json& j, CollectiveCurve& c);
void to_json(nlohmann::json& j, const NcclResult& n);
void from_json(const nlohmann::json& j, NcclResult& n);
void to_json(nlohmann::json& j, const HostLinks& h);
void from_json(const nlohmann::json& j, HostLinks& h);
void to_json(nlohmann::json& j, const LinksProbeResult& r);
void from_json(const nlohmann::json& j, LinksProbeResult& r);

}  // namespace gd
