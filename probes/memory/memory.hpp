// The memory probe (issue 9): the L1 under each shared-memory carve-out, caches private to a
// scheduler partition, the fetch granularity (sector) of L1 and L2, the line and ways of L1
// and L2, and the constant cache beyond its first level. This header holds the backend-neutral
// contract (MemoryKernels), the result model and the pure logic (plans, capacity and granularity
// estimates, the partition verdict), so that all of it is tested without a GPU.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "gpudissect/device.hpp"
#include "gpudissect/figure.hpp"
#include "gpudissect/stats.hpp"
#include "gpudissect/status.hpp"

namespace gd {

// ---- backend contract ----

// The load a chase uses: `ca` caches in L1 (ld.global.ca), `nc` takes the read-only path
// (ld.global.nc), `cg` bypasses L1 (ld.global.cg: L2 and beyond), `constant` walks the
// probe's own __constant__ bank and then its kernel parameters (LDC), `texture` fetches 32-bit
// element indices through a texture object (tex1Dfetch).
enum class MemLoad { ca, nc, cg, constant, texture };
std::string to_string(MemLoad l);

// One launch: a block of `warps` warps; lane 0 of warp w walks its own chain from line
// starts[w] (the warps' chains are disjoint cycles of one permutation `next`). Line i lies at
// byte i * stride_bytes of one buffer. Each warp walks warmup_hops, then `repeats` timed
// segments of hops_per_repeat.
struct MemChaseRequest {
  MemLoad load = MemLoad::ca;
  int carveout_percent = -1;          // cudaFuncAttributePreferredSharedMemoryCarveout; -1: unset
  uint64_t dynamic_shared_bytes = 0;  // per block, to force the split (unused by the chase)
  int warps = 1;
  const std::vector<uint32_t>* next = nullptr;
  std::vector<uint32_t> starts;  // one per warp
  uint64_t stride_bytes = 128;
  uint64_t warmup_hops = 0, hops_per_repeat = 0;
  int repeats = 5;
  bool flush_l2 = false;  // evict the chain from L2 after writing it (a buffer of 3 x L2 written)
  // Before the walk, read every 32-byte sector of the chain's buffer through L2 only (CUDA:
  // ld.global.cg by warp 0's lanes), so each L1 miss of the timed walk is an L2 hit rather than
  // an L2 hit or a device-memory access depending on where the chain landed.
  bool l2_prefetch = false;
  // > 0: the chain's buffer is mapped from separate physical allocations of this many bytes
  // each (CUDA: cuMemCreate per chunk, cuMemMap side by side), so that no translation can
  // cover more than one chunk; 0: one ordinary allocation (the driver picks its page sizes).
  uint64_t chunk_bytes = 0;
};

struct MemChaseTiming {
  std::vector<std::vector<double>> cycles_per_hop;  // [warp][repeat], in `unit`
  std::vector<uint32_t> end_lines;                  // per warp, checked against a host walk
  std::optional<double> clock_mhz;                  // cycles / %globaltimer ns over the launch
  // The carve-out as the API reports it after it was set: blocks of kCarveoutProbeBlockBytes
  // (dynamic) + the per-block reservation that the occupancy calculator puts on one SM.
  std::optional<int> api_probe_blocks;
  std::optional<int> attr_carveout_percent;    // cudaFuncAttributes::preferredShmemCarveout
  std::optional<uint64_t> reserved_per_block;  // cudaDevAttrReservedSharedMemoryPerBlock
  std::string instruction;                     // the timed load in the kernel's SASS
  // What cycles_per_hop counts: "cycles", or "ns" where the kernel can read no cycle counter
  // (OpenCL off NVIDIA, Vulkan without VK_KHR_shader_clock): curves and latencies then say ns.
  std::string unit = "cycles";
};

// Blocks of this much dynamic shared memory (+1 KiB reserved on sm_8x/sm_90) count the shared
// carve-out in 8 KiB steps through the occupancy calculator (32 blocks at most per SM: 256 KiB).
inline constexpr uint64_t kCarveoutProbeBlockBytes = 7 * 1024;

class MemoryKernels : public KernelSet {
 public:
  static constexpr const char* kProbe = "memory";
  virtual ~MemoryKernels() = default;
  // "carveout", "partition", "partition.global", "partition.readonly", "partition.texture",
  // "granularity", "granularity.l1", "granularity.l2",
  // "constant", "tlb", "tlb.chunks", "tlb.malloc",
  // "l2_line" (ld.global.cg chases by several warps of one block, disjoint chains),
  // "l2_ways" (ld.global.cg conflict chains).
  virtual Support supports(const std::string& part) = 0;
  // Throws AllocationFailed or BackendError.
  virtual MemChaseTiming chase(const MemChaseRequest& r) = 0;
  // Bytes of constant memory the constant chase can span (CUDA: its own 64 KiB __constant__
  // bank, then 31 KiB of kernel parameters, bank c[0x0]).
  virtual uint64_t constant_bank_bytes() const = 0;
  // Gives back the TLB part's buffers (many GiB: the chunk-mapped one and the chain's).
  virtual void release_tlb_buffers() {}
};

// ---- plans ----

// One carve-out point: the shared memory per SM aimed at, the preference that asks for it and
// the dynamic shared memory per block that forces it (a block that needs `shared_kib` cannot
// run under a smaller split), and the L1 documented for that split.
struct CarveoutPoint {
  int shared_kib = -1;  // -1: the driver's own choice (no preference, no dynamic shared)
  int percent = -1;
  uint64_t dynamic_shared_bytes = 0;
  std::optional<uint64_t> predicted_l1_bytes;
  // The preference alone (no dynamic shared memory): what the driver makes of the hint, beside
  // the forced point of the same split.
  bool preference_only = false;
  std::string label() const;  // "228 KiB shared" | "228 KiB shared, preference only" | ...
  std::string key() const;    // "228" | "228.hint" | "50pct" | "default"
};
// The splits of the device's compute capability (sm_90: 0, 8, 16, 32, 64, 100, 132, 164, 196,
// 228 KiB of shared out of 256 KiB; sm_80: up to 164 of 192; sm_86/89: up to 100 of 128;
// sm_70: up to 96 of 128), each with percent = floor(shared / max x 100) so that rounding up
// lands on it, and dynamic shared = shared - reserved (1 KiB) - static; others: 0/25/50/75/100 %
// with no forcing and no prediction. The driver's default first. With `hints`, each split above
// 0 comes twice: its preference alone, then the preference with the forcing dynamic shared.
std::vector<CarveoutPoint> carveout_plan(const DeviceInfo& info, uint64_t static_shared = 0,
                                         bool hints = false);
// Unified L1 + shared per SM documented for a compute capability ("9.0" -> 256 KiB); nullopt
// where not known.
std::optional<uint64_t> unified_l1_bytes(const std::string& compute_capability);

// The shared-memory splits of compute capability `cc` (KiB) that an L1 measured in [capacity,
// next) leaves, with `slack` bytes either side for where a plateau's end is read: the split
// the driver really chose, read back from the L1. Empty where the device's splits are unknown.
std::vector<int> shared_splits(const std::string& cc);
std::vector<int> splits_for_l1(const std::string& cc, uint64_t capacity, uint64_t next,
                               uint64_t slack = 4096);

// Footprints of a capacity sweep: `per_doubling` geometric points from lo to hi (both
// included), multiples of `stride`, increasing, no repeats.
std::vector<uint64_t> capacity_footprints(uint64_t lo, uint64_t hi, int per_doubling,
                                          uint64_t stride);
// Footprints to add inside (lo, hi): `n` evenly spaced, multiples of stride, not in `have`.
std::vector<uint64_t> refine_footprints(uint64_t lo, uint64_t hi, int n, uint64_t stride,
                                        const std::vector<uint64_t>& have);

// `warps` disjoint single cycles of `lines` lines each in one permutation (warp w owns lines
// [w*lines, (w+1)*lines), starts at w*lines); deterministic.
std::vector<uint32_t> disjoint_chains(uint32_t lines, int warps, uint64_t seed = 0x3e3017ULL);
// A sequential cycle 0 -> 1 -> ... -> n-1 -> 0 (the granularity walk: each hop the next
// element at the stride, so hops per new sector = sector / stride).
std::vector<uint32_t> sequential_chain(uint32_t n);

// ---- analysis ----

struct MemPoint {
  uint64_t footprint_bytes = 0;     // per warp (capacity curves) or the stride (granularity)
  std::optional<Summary> cycles;    // per hop: median over warps of each repeat
  std::vector<double> warp_cycles;  // per warp: median over its repeats
  Status status;                    // ok, skipped or error
};

// Where the first plateau of a latency curve ends: the plateau is the median of the first
// three points; the edge is the first point that, with the point after it, lies more than
// `tolerance` above the plateau (one spike does not end it). capacity = the last footprint on
// the plateau, interval [capacity, first footprint past it]. No edge: capacity absent and the
// note says the curve never left the plateau.
struct CapacityEstimate {
  std::optional<double> plateau_cycles;
  std::optional<uint64_t> capacity_bytes, next_bytes;  // next: the first footprint past the edge
  std::optional<double> beyond_cycles;                 // median of the points past the edge
  std::string note;
};
CapacityEstimate estimate_capacity(const std::vector<MemPoint>& curve, double tolerance = 0.10);

// The level after the first edge of `first`: the estimate over the points from twice the first
// capacity on (past the transition). Without a first edge, an empty estimate with a note.
CapacityEstimate next_level(const std::vector<MemPoint>& curve, const CapacityEstimate& first,
                            double tolerance = 0.10);

// Fetch granularity from a sequential walk at growing strides: each new sector costs a miss,
// so the latency per hop rises with the stride until the stride reaches the bytes fetched per
// miss and then stays. The granularity is the smallest stride whose latency is within
// `tolerance` of the largest strides' (median of the two largest). Absent, with the reason,
// when the curve does not rise (the walk never missed, or always did).
struct GranularityEstimate {
  std::optional<uint64_t> bytes;
  std::optional<double> hit_cycles, miss_cycles;  // smallest stride's, the largest strides'
  std::string note;
};
GranularityEstimate estimate_granularity(const std::vector<MemPoint>& by_stride,
                                         double tolerance = 0.10);

// The line (tag) size from capacities seen at several strides of a random chain: while the
// stride is within a line, every byte of a line is used and the capacity seen is the data
// array; past the line, each line holds one element, so the capacity seen grows with the
// stride (as far as the set index spreads the lines). The line is the largest stride whose
// capacity stays within 25 % of the smallest stride's, given that a larger stride's is at
// least 1.6 times it, and that every stride past the line sees the smallest stride's capacity
// times stride / line within 25 %; otherwise absent, with the reason.
struct LineEstimate {
  std::optional<uint64_t> bytes;
  std::string note;
};
LineEstimate estimate_line(
    const std::vector<std::pair<uint64_t, std::optional<uint64_t>>>& capacity_by_stride);

// Associativity from conflict chains: N lines `stride` bytes apart (a multiple of the set
// stride, so with a plain set index all N share one set) stay hits while N <= ways. The ways
// are the plateau's end (estimate_capacity on footprint N x stride) over the stride; absent,
// with the reason, where no step shows (a hashed set index spreads the lines, or the ways
// exceed the largest N).
struct WaysEstimate {
  std::optional<int> ways;
  std::string note;
};
WaysEstimate estimate_ways(const std::vector<MemPoint>& curve, uint64_t stride);
// N of the conflict chains: 1..16, then steps to 128 (around 32 and 64 finely: 8 KiB or 4 KiB
// ways, the granularity of the carve-out splits, would end there).
std::vector<int> conflict_counts();

// Per-SM or per-partition: the total capacity (warps x per-warp capacity) of each warp count
// against one warp's. Scales ~n (each warp ~ the 1-warp capacity): "per partition"; stays
// (per-warp capacity ~ 1/n): "per SM"; otherwise "unclear". nullopt ratios where missing.
struct PartitionVerdict {
  std::string verdict;  // "per SM" | "per partition" | "unclear" | "" (not enough data)
  std::vector<std::optional<double>> total_ratio;  // [n-1]: total capacity(n) / capacity(1)
  std::string note;
};
PartitionVerdict partition_verdict(const std::vector<std::optional<uint64_t>>& per_warp_capacity);

// TLB levels of a chase with one line per page-sized stride (all lines fit the L2, so a rise
// can only be translation): the latency map's level finder on (footprint, cycles). Each level:
// its plateau latency and where it ends (absent for the last). `step_cycles`: the rise from the
// level before (the miss cost of that TLB level).
struct TlbLevel {
  double cycles = 0;
  std::optional<uint64_t> reach_lo_bytes, reach_hi_bytes;
  std::optional<double> step_cycles;
};
// A TLB level's miss costs at least this fraction of the level before it; smaller rises are
// not levels (tlb_levels merges them into the level before).
constexpr double kTlbMinStep = 0.10;
std::vector<TlbLevel> tlb_levels(const std::vector<MemPoint>& curve);

// ---- result model ----

struct MemCurve {
  std::string key;  // "carveout.228", "partition.global.2", "granularity.l1", "constant"
  Status status;
  MemLoad load = MemLoad::ca;
  int warps = 1;
  uint64_t stride_bytes = 128;  // of the capacity curves (granularity: per point)
  std::string instruction;
  std::optional<double> clock_mhz;
  std::string unit = "cycles";  // of the points' latencies (MemChaseTiming::unit)
  std::vector<MemPoint> points;
  CapacityEstimate capacity;
};

struct CarveoutResult {
  CarveoutPoint point;
  std::optional<int> api_probe_blocks;
  std::optional<uint64_t> api_shared_bytes;  // api_probe_blocks x (probe block + reserved)
  std::optional<int> attr_carveout_percent;
  MemCurve curve;
  // Read back: the shared split the L1 found implies (unified - L1, on the 8 KiB grid where
  // known), and whether it, the API's and the one aimed at agree.
  std::optional<uint64_t> implied_shared_bytes;
  std::string agreement;  // "agrees" | "differs: ..." | ""
};

struct PartitionResult {
  std::string path;  // "global" | "readonly" | "texture"
  Status status;
  std::vector<MemCurve> by_warps;  // 1..4 warps
  PartitionVerdict verdict;
};

struct GranularityResult {
  std::string level;  // "l1" | "l2"
  Status status;
  MemCurve curve;  // points: footprint_bytes = the stride
  GranularityEstimate estimate;
};

struct LineResult {
  Status status;
  std::vector<MemCurve> by_stride;  // capacity curves, one per stride (footprint per warp)
  LineEstimate estimate;
};

// The total capacity of a curve whose footprints are per warp: capacity and next footprint
// times the curve's warps (the L2 line curves: n warps, one disjoint chain each).
CapacityEstimate total_capacity(const MemCurve& c);

// The L2 line part's sweep, total footprint over all warps: from a quarter of the L2 the API
// reports to 3 x L2 x stride / 128 (past the edge a 128-byte line puts there at the stride).
std::pair<uint64_t, uint64_t> l2_line_range(uint64_t l2_bytes, uint64_t stride);

struct WaysResult {
  Status status;
  std::vector<MemCurve> by_stride;      // footprint = N x stride
  std::vector<WaysEstimate> estimates;  // one per curve
};

struct TlbResult {
  std::string mapping;  // "chunks" (separate 2 MiB physical allocations) | "malloc" (one)
  Status status;
  MemCurve curve;  // footprint_bytes = pages x stride_bytes, one line per page
  std::vector<TlbLevel> levels;
  std::string note;  // e.g. no step within the sweep: every level's reach exceeds it
};

struct MemoryProbeResult {
  static constexpr const char* kProbe = "memory";
  Status status;
  double wall_seconds = 0;
  std::optional<double> clock_mhz;
  Status carveout_status, partition_status, granularity_status, constant_status, tlb_status;
  std::vector<CarveoutResult> carveouts;
  std::vector<PartitionResult> partitions;
  std::vector<GranularityResult> granularity;
  LineResult l1_line;  // part of the granularity part
  WaysResult l1_ways;  // likewise
  // The L2's line by capacity at strides of 64, 128 and 256 bytes (ld.global.cg, several warps
  // of one block), and its ways by conflict chains 1 MiB and 4 MiB apart; each its own part
  // (status: the part's).
  LineResult l2_line;
  WaysResult l2_ways;
  std::optional<MemCurve> constant;
  std::optional<uint64_t> constant_bank_bytes;
  std::vector<TlbResult> tlb;
};

void to_json(nlohmann::json& j, const MemPoint& p);
void from_json(const nlohmann::json& j, MemPoint& p);
void to_json(nlohmann::json& j, const MemCurve& c);
void from_json(const nlohmann::json& j, MemCurve& c);
void to_json(nlohmann::json& j, const MemoryProbeResult& r);
void from_json(const nlohmann::json& j, MemoryProbeResult& r);

// ---- headline figures (figures.cpp) ----

// memory.carveout.<shared KiB|default|<p>pct>[.hint].{l1_capacity,l1_latency},
// memory.partition.<path>.capacity_<n>warps (bytes per warp), memory.{l1,l2}.sector_bytes
// (fetch granularity), memory.{l1,l2}.line_bytes, memory.constant.L1.capacity,
// memory.constant.L1_5.{capacity | capacity_min, latency}, memory.tlb.L<n>.{reach,miss_cycles}.
// memory.carveout.default.shared_bytes: the split the driver chose by itself, where the L1 found
// fits exactly one split of the device's compute capability. memory_figure_ids() declares them.
std::vector<Figure> memory_figures(const MemoryProbeResult& m, const DeviceInfo& device);
std::vector<std::string> memory_figure_ids();

}  // namespace gd
