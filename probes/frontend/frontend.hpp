// How work reaches the SM and how the SM is fed: instruction caches (straight-line loops of
// growing code footprint), kernel launch latency and rate, block dispatch, and occupancy
// measured by running. This header holds the backend-neutral contract of the frontend
// probe (FrontendKernels), its result model, the kernel-source generator and the pure
// logic (levels of an instruction-throughput curve, resident blocks from block intervals,
// host/GPU clock offset), so that all of it is tested without a GPU.
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "gpudissect/device.hpp"
#include "gpudissect/levels.hpp"
#include "gpudissect/stats.hpp"
#include "gpudissect/status.hpp"

namespace gd {

// ---- the instruction-cache kernels ----

// Independent chains the generated loop body rotates through: each FFMA depends on the one
// kIcacheChains instructions before it, so one warp can issue every cycle.
inline constexpr int kIcacheChains = 8;
// FFMAs per inline-asm statement: NVVM's time grows with the number of asm statements, so
// the body is emitted in blocks (ptxas sees the same straight-line code either way).
inline constexpr int kIcacheAsmBlock = 256;

// One generated kernel: a loop whose body is `body_instructions` FFMAs (rounded up to a
// multiple of kIcacheChains), in `regions` copies that differ in their immediates (so no
// compiler can merge them); warp w runs region (mode ? w % regions : 0).
struct IcacheKernelSpec {
  int body_instructions = 1024;
  int regions = 1;
};

// The FFMA's multiplier of region r (its immediate operand), and the addend (a register).
float icache_multiplier(int region);
inline constexpr float kIcacheAddend = 0.001f;
inline constexpr float kIcacheSeed = 1.0f;

int icache_body_instructions(int requested);  // rounded up to a multiple of kIcacheChains
std::string icache_kernel_name();             // "gd_icache"
// CUDA C++ for NVRTC. Kernel signature:
//   extern "C" __global__ void gd_icache(unsigned* out, unsigned long long* tim, int iters,
//                                        int mode, float seed, float addend)
// The loop runs `iters` passes of the body. Per warp (global warp index g): tim[4g] =
// cycles of the loop (clock64), tim[4g+1] = %smid, tim[4g+2] / tim[4g+3] = %globaltimer
// before / after the loop.
// out[thread] = checksum of the chains (the same in every lane of a warp).
std::string generate_icache_cuda(const IcacheKernelSpec& spec);
// OpenCL C, same loop and arguments (no clock: tim unused but kept), kernel gd_icache.
// (The probe times passes by difference: a launch of 2P passes minus one of P, so the
// first pass of a launch, its code not yet in the near caches, drops out.)
std::string generate_icache_opencl(const IcacheKernelSpec& spec);
// The checksum a thread of region `region` writes after `passes` passes of the body,
// replayed on the host (IEEE fma is correctly rounded on both sides).
uint32_t icache_reference(const IcacheKernelSpec& spec, int region, uint64_t passes);

// The occupancy kernel that forces `regs` registers (compiled with --maxrregcount=regs;
// blocks of at most 128 threads):
//   extern "C" __global__ void gd_occ(unsigned long long* rec, unsigned long long spin_ns,
//                                     float seed, unsigned* sink)
// keeps max(4, regs - 16) floats live while it spins spin_ns from its block's start; per
// block rec[4b..4b+3] = {%smid | %warpid << 32, start, end (%globaltimer), kOccupancyMagic}.
inline constexpr unsigned long long kOccupancyMagic = 0x600DB10C;
std::string generate_occupancy_cuda(int regs);

// The loops of each kernel in a `cuobjdump -sass` listing: every backward branch's body,
// from the branch target to the branch, in address order. Bytes are from the addresses
// (16 per instruction on sm_70 and later).
struct SassLoop {
  uint64_t begin = 0, end = 0;  // byte addresses: first instruction, the branch itself
  int instructions = 0;         // in [begin, end]
  std::map<std::string, int> opcodes;
  uint64_t bytes() const { return end >= begin ? end - begin + 16 : 0; }
};
std::map<std::string, std::vector<SassLoop>> parse_sass_all_loops(const std::string& sass);
// The loops of a region kernel: the `regions` largest loops, in address order.
std::vector<SassLoop> region_loops(const std::vector<SassLoop>& loops, int regions);

// ---- pure logic ----

// Levels of an instructions-per-clock curve against code bytes: the latency map's detector
// on cycles per instruction (1 / IPC), which rises where a cache level ends. The levels come
// back with IPC (not CPI) in `latency`'s place.
struct IcachePoint {
  double code_bytes = 0;
  double ipc = 0;     // warp-instructions per clock, one warp
  double spread = 0;  // relative IQR of the repeats
};
std::vector<DetectedLevel> detect_icache_levels(const std::vector<IcachePoint>& curve);
// Names of detected levels, by where each ends (not by position: seed 002 reports that the
// L1i can fully feed one partition, so one warp may show no L0i step at all): a level whose
// edge (geometric middle of its capacity interval) lies below 64 KiB is "L0i", below 1 MiB
// "L1i", the last level (no end) "L2" (code
// streaming from L2), anything else "level N". A name that repeats gets " (2)". A curve
// with no edge is one level, "all sizes".
std::vector<std::string> icache_level_names(const std::vector<DetectedLevel>& levels);

// One block as a kernel recorded it: the SM, %globaltimer at its start and end.
struct BlockRecord {
  uint32_t sm = 0;
  uint32_t warp_slot = 0;  // %warpid of the block's first warp
  uint64_t start_ns = 0, end_ns = 0;
};
// Per SM, the most blocks whose [start, end) intervals overlap at one time (end == start
// of another does not overlap). SM id -> count.
std::map<uint32_t, int> max_resident_blocks(const std::vector<BlockRecord>& blocks);
// The resident count the whole launch shows: the largest per-SM count reached on at least
// half the SMs that ran blocks (an SM that saw fewer blocks does not lower it).
int resident_blocks(const std::vector<BlockRecord>& blocks);

// Offset of the GPU timer against a host clock from round trips: each sample is
// (host before, GPU time, host after); the offset (gpu - host) of the sample with the
// shortest round trip, whose half is the uncertainty.
struct ClockSync {
  double offset_ns = 0;       // gpu_ns - host_ns
  double uncertainty_ns = 0;  // half the shortest round trip
  int samples = 0;
};
struct SyncSample {
  double host_before_ns = 0, gpu_ns = 0, host_after_ns = 0;
};
std::optional<ClockSync> sync_clocks(const std::vector<SyncSample>& samples);

// Dispatch: from block start times, blocks per microsecond (blocks after the first over
// the time to the last start) and per-SM first-start skew.
struct DispatchStats {
  double blocks_per_us = 0;
  double span_us = 0;        // first start to last start
  double first_wave_us = 0;  // first start to the moment every SM that ran has started
  double sm_skew_median_us = 0, sm_skew_max_us = 0;  // per SM first start - first start
  int sms_seen = 0;
};
std::optional<DispatchStats> dispatch_stats(const std::vector<BlockRecord>& blocks);
// The GPU timer's step seen in a trace: the smallest gap between two distinct block starts
// (nullopt with fewer than two). Every start is a multiple of it, so a span of starts is
// known to within one step at each end.
std::optional<double> timer_step_ns(const std::vector<BlockRecord>& blocks);

// Refill after the first wave: a grid of several waves of blocks that each spin a fixed time,
// recorded like the occupancy part's blocks. Per SM, with R the most blocks resident at once
// there (max_resident_blocks), the k-th start in time order (k >= R, from 0) needed a slot
// that the (k-R)-th end freed: its refill latency is start[k] - end[k-R] (never negative
// with R counted from the same records, [start, end) intervals). The SM's refill rate is its
// starts after the R-th over the time from the R-th start (the first wave resident) to its
// last start. Latencies are means: a gap is the difference of two reads of a timer that
// steps by 32 ns on Hopper, so a median could only be a multiple of the step, while the mean
// of many gaps, at random phases to the step, is not.
struct RefillSm {
  uint32_t sm = 0;
  int resident = 0;  // R
  int refills = 0;   // starts after the first wave
  double latency_mean_us = 0;
  double blocks_per_us = 0;
};
struct RefillStats {
  std::vector<RefillSm> per_sm;  // SMs with at least one refill, by SM id
  int resident_median = 0;       // R, median over those SMs
  int refills = 0;               // all SMs
  double latency_mean_us = 0;    // every refill of every SM
  double latency_median_us = 0, latency_p10_us = 0, latency_p90_us = 0;
  double sm_rate_median = 0, sm_rate_min = 0, sm_rate_max = 0;  // blocks/us per SM
  double blocks_per_us = 0;                                     // the SMs' rates summed: GPU-wide
  double block_us_median = 0;                                   // one block's own start to end
};
// nullopt: no SM started a block after its first wave.
std::optional<RefillStats> refill_stats(const std::vector<BlockRecord>& blocks);

// Warps per SM the register file allows: floor(regs_per_sm / (ceil(regs*32 / gran) * gran))
// capped at max_warps (documented for sm_90: 64K registers, allocation per warp in units of
// 256, 64 warps). The prediction the measured staircase is drawn against.
int predicted_warps_by_registers(int regs_per_thread, int block_threads, int regs_per_sm = 65536,
                                 int unit = 256, int max_warps = 64, int max_blocks = 32);

// Warps per SM that shared memory allows: each block takes its shared bytes plus the
// per-block reservation (1 KiB on sm_8x/sm_90, cudaDevAttrReservedSharedMemoryPerBlock) out of
// the SM's shared memory (228 KiB on sm_90 at the largest carveout), capped by the warp and
// block limits. 0 when one block does not fit.
int predicted_warps_by_shared(uint64_t shared_bytes_per_block, int block_threads,
                              uint64_t shared_per_sm, uint64_t reserved_per_block = 1024,
                              int max_warps = 64, int max_blocks = 32);

// ---- backend contract ----

struct IcacheRun {
  IcacheKernelSpec spec;
  int warps = 1;           // one block of `warps` warps on one SM
  bool different = false;  // warp w runs region w % regions (else all run region 0)
  uint64_t iters = 1;      // timed passes after the first
};

struct IcacheTiming {
  std::vector<double> cycles_per_warp;  // the whole loop (iters passes), each warp
  std::optional<double> clock_mhz;      // cycles / %globaltimer ns
  double ns = 0;                        // the loop, longest warp
  int loop_instructions = 0;            // per region, from the machine code (0: unknown)
  uint64_t code_bytes = 0;              // per region, from the machine code (0: unknown)
  std::string code_bytes_source;        // "sass" | "program binary" | ""
  std::vector<std::string> opcodes;     // "FFMA x1024" ...
  bool check_ok = true;
  std::string check;
};

// Percentiles of every launch sample of one part (the batches' medians make the figure).
struct LaunchDistribution {
  double min = 0, p10 = 0, median = 0, p90 = 0, max = 0;
  std::size_t n = 0;
};
LaunchDistribution launch_distribution(const std::vector<double>& samples);

// Backends that poll for a launch's end take this many samples of the API's blocking wait
// after each batch, and name what it took (LaunchTiming::wait): "polling the fence; with
// vkWaitForFences instead: median 48.2 us (50 samples)". `how` says how the samples waited.
inline constexpr int kBlockingWaitSamples = 50;
std::string blocking_wait_note(const std::string& how, const std::string& blocking_call,
                               const std::vector<double>& blocking_round_trip_ns);

struct LaunchSample {
  double api_ns = 0;         // duration of the launch call on the host
  double start_ns = 0;       // host clock before the call -> kernel start (GPU timer, synced)
  double round_trip_ns = 0;  // host: before the launch call -> synchronize returned
  double kernel_ns = 0;      // kernel start -> end on the GPU timer
};
struct LaunchTiming {
  std::vector<LaunchSample> samples;
  // Launch + synchronize of an empty kernel (no arguments, no work), host clock: the round
  // trip as the peers define it, where the backend times it apart from `samples` (whose
  // kernel writes the GPU timer); empty: `samples`' round trips are that figure.
  std::vector<double> empty_round_trip_ns;
  std::string empty_round_trip_api;  // the call that launched it, e.g. "cuLaunchKernel"
  std::optional<ClockSync> sync;
  std::optional<double> timer_resolution_ns;  // smallest step of the GPU timer seen
  std::string start_source;  // "globaltimer synced to steady_clock" | "event profiling"
  // How the host waited for the kernel where that is not the API's plain synchronize, and
  // what the API's blocking wait took instead (OpenCL, Vulkan: they poll).
  std::string wait;
};

struct RateTiming {
  int kernels = 0;
  double host_ns = 0;                 // first launch call -> synchronize returned
  std::optional<double> gpu_span_ns;  // first kernel start -> last kernel start (GPU timer)
};

struct OccupancyRequest {
  int block_threads = 128;
  int regs = 0;               // 0: the plain kernel; else a kernel built with maxrregcount = regs
  uint64_t shared_bytes = 0;  // dynamic shared memory per block
  int blocks_per_sm = 0;      // grid = SMs x this (0: backend picks 2 x the API's occupancy + 2)
  int waves = 0;              // > 0: grid = SMs x waves x the API's occupancy (over blocks_per_sm)
  double spin_us = 30;
};
struct OccupancyTrace {
  std::vector<BlockRecord> blocks;
  int regs_per_thread = 0;               // cudaFuncGetAttributes
  std::optional<int> api_blocks_per_sm;  // cudaOccupancyMaxActiveBlocksPerMultiprocessor
  uint64_t static_shared_bytes = 0;      // the kernel's own __shared__ variables
  uint64_t dynamic_shared_bytes = 0;     // what the launch asked for (may be trimmed to fit)
  bool check_ok = true;
  std::string check;
};

class FrontendKernels : public KernelSet {
 public:
  static constexpr const char* kProbe = "frontend";
  virtual ~FrontendKernels() = default;
  virtual std::string language() const = 0;  // "cuda" | "opencl" | "vulkan"
  // Which parts this backend measures: "icache", "partitions", "launch", "rate.plain",
  // "rate.streams", "rate.graph", "dispatch", "occupancy", and each occupancy kind
  // ("occupancy.block", "occupancy.regs", "occupancy.shared"; a refused kind's points say why).
  virtual Support supports(const std::string& part) = 0;
  // Compiles ahead (in parallel where it can) the kernels these runs need.
  // Stops starting new compiles once `cancel` (optional) is set (likewise below).
  virtual void prepare_icache(const std::vector<IcacheKernelSpec>&,
                              const std::atomic<bool>* /*cancel*/ = nullptr) {}
  virtual IcacheTiming icache(const IcacheRun& run) = 0;
  // Compiles ahead the register-forcing occupancy kernels of these register counts.
  virtual void prepare_occupancy(const std::vector<int>& /*regs*/,
                                 const std::atomic<bool>* /*cancel*/ = nullptr) {}
  virtual LaunchTiming launch_latency(int launches) = 0;
  // `mode`: "plain" (one stream), "streams" (round robin over `streams`), "graph".
  virtual RateTiming launch_rate(const std::string& mode, int kernels, int streams) = 0;
  // A backend without %smid-style block records says why through supports() and need not
  // override these (the probe asks supports() first; a call anyway throws that reason).
  virtual std::vector<BlockRecord> dispatch(int /*blocks*/, int /*block_threads*/) {
    throw BackendError(supports("dispatch").reason);
  }
  virtual OccupancyTrace occupancy(const OccupancyRequest& /*r*/) {
    throw BackendError(supports("occupancy").reason);
  }
};

// ---- result model ----

struct IcacheCurvePoint {
  int instructions = 0;       // generated per region
  int loop_instructions = 0;  // from the machine code where read
  uint64_t code_bytes = 0;
  Status status;                         // with its reason
  std::optional<Summary> ipc;            // warp-instructions per clock, one warp
  std::optional<double> first_pass_ipc;  // the cold first pass
  std::optional<double> clock_mhz;
};

struct IcacheLevel {
  std::string name;  // L0i, L1i, L2 ...
  std::optional<uint64_t> capacity_bytes, capacity_lo_bytes, capacity_hi_bytes;
  double ipc = 0;  // sustained warp-instructions per clock of one warp on this level
  double confidence = 0;
};

struct PartitionPoint {
  int warps = 1;
  bool different = false;
  std::optional<Summary> ipc_per_warp;  // median over warps, repeats summarised
  Status status;                        // with its reason
};

struct FrontendOccupancyPoint {
  std::string kind;  // "regs" | "shared" | "block"
  int block_threads = 0;
  int regs_requested = 0, regs_per_thread = 0;
  uint64_t shared_bytes = 0;
  std::optional<int> blocks_per_sm, warps_per_sm;  // measured
  std::optional<int> api_blocks_per_sm;
  std::optional<int> predicted_warps_per_sm;
  int max_warp_slot = -1;  // largest %warpid seen + its block's warps - 1
  Status status;           // with its reason
};

struct FrontendProbeResult {
  static constexpr const char* kProbe = "frontend";
  Status status;
  double wall_seconds = 0;
  std::string language;
  int sms = 0;
  std::string note;  // e.g. PoCL: the figures are the CPU's
  std::optional<double> clock_mhz;
  std::string clock_source;  // measured | reported
  double compile_seconds = 0;

  Status icache_status;
  std::string timed_instruction;  // "FFMA"
  std::string code_bytes_source;  // "sass" (loop addresses), "program binary" (whole program)
  std::vector<IcacheCurvePoint> icache;
  std::vector<IcacheLevel> icache_levels;

  Status partitions_status;
  int partition_region_instructions = 0;
  uint64_t partition_region_bytes = 0;
  std::vector<PartitionPoint> partitions;
  std::optional<double> partition_halving;  // ipc(2 different)/ipc(1)

  Status launch_status;
  std::string launch_api;           // "cudaLaunchKernel" | "clEnqueueNDRangeKernel"
  std::string launch_start_source;  // how kernel start was timed against the host call
  std::optional<Summary> launch_api_us, launch_start_us, launch_round_trip_us, launch_kernel_us;
  // Round trip = start (host call -> kernel start) + kernel + completion (kernel end ->
  // synchronize returned on the host), per sample.
  std::optional<Summary> launch_completion_us;
  std::optional<double> sync_uncertainty_us, timer_resolution_ns;
  std::vector<double> launch_start_samples_us, launch_round_trip_samples_us;
  // Every sample's distribution (min, p10, median, p90, max) by part: "api", "start",
  // "round_trip", "completion". The figures are the batches' medians (launch_batches).
  std::map<std::string, LaunchDistribution> launch_distribution_us;
  int launch_batches = 0;
  std::string launch_round_trip_api;                  // LaunchTiming::empty_round_trip_api
  std::string launch_wait;                            // LaunchTiming::wait
  bool launch_round_trip_empty_kernel = false;        // round trip from LaunchTiming's empty kernel
  std::map<std::string, Status> rate_status;          // plain | streams | graph
  std::map<std::string, Summary> rate_kernels_per_s;  // host-timed
  std::map<std::string, double> rate_gpu_kernels_per_s;  // GPU timer, first to last start

  Status dispatch_status;
  int dispatch_blocks = 0, dispatch_block_threads = 0;
  std::optional<Summary> dispatch_blocks_per_us;
  std::optional<double> dispatch_first_wave_us, dispatch_sm_skew_median_us, dispatch_sm_skew_max_us;
  std::vector<BlockRecord> dispatch_trace;  // one launch, for the timeline chart

  // Refill after the first wave (occupancy's spin kernel, several waves of small blocks).
  Status refill_status;
  int refill_blocks = 0, refill_block_threads = 0, refill_waves = 0;
  double refill_spin_us = 0;
  int refill_resident_per_sm = 0;
  std::optional<Summary> refill_latency_us;    // mean refill latency, per repeat
  std::optional<Summary> refill_sm_rate;       // median SM's blocks/us, per repeat
  std::optional<double> refill_blocks_per_us;  // GPU-wide, median over repeats
  std::optional<double> refill_latency_p10_us, refill_latency_p90_us, refill_block_us;
  std::vector<RefillSm> refill_per_sm;  // the last repeat

  Status occupancy_status;
  std::vector<FrontendOccupancyPoint> occupancy;
  std::optional<int> max_warps_per_sm, max_blocks_per_sm;
};

void to_json(nlohmann::json& j, const BlockRecord& b);
void from_json(const nlohmann::json& j, BlockRecord& b);
void to_json(nlohmann::json& j, const FrontendProbeResult& r);
void from_json(const nlohmann::json& j, FrontendProbeResult& r);

}  // namespace gd
