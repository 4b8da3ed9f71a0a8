// Bandwidth at every level: the backend-neutral contract of the bandwidth probe, the one
// place where bytes moved are counted, and the result model.
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "gpudissect/device.hpp"
#include "gpudissect/stats.hpp"
#include "gpudissect/status.hpp"

namespace gd {

// ---- what a stream kernel does ----

enum class BwOp { read, write, copy };
// How a read reaches memory: through L1 (the default load), around it (L2 only), through
// the read-only/non-coherent path, or through the texture unit; no_allocate: a weak load
// that never allocates in L1 (so re-reads cannot hit there, unlike `cached`, and without the
// strong GPU-scope semantics of `l2_only`); bulk: the copy engine moves whole chunks from
// memory into shared memory (completing on an mbarrier) and the threads sum them there;
// a bulk copy stores each chunk back from shared memory by the copy engine as well
// (cp.async.bulk.global.shared::cta), leaving the destination equal to the source.
enum class BwLoad { cached, l2_only, readonly, texture, no_allocate, bulk };

std::string to_string(BwOp op);
std::string to_string(BwLoad l);

// How a stream kernel lays its work out: `blocks` blocks, each moving `chunk_bytes` per
// step (threads x vector width x unroll, so one step is fully coalesced). The buffer is
// `chunks` chunks. With fewer chunks than blocks every block re-reads one chunk (block b:
// chunk b mod chunks), so each SM's blocks stay on a few KiB; otherwise block b moves
// chunks b, b + blocks, b + 2*blocks ... (chunks_per_block of them): every block does the
// same work, no tail skews the time, and at any moment the grid works on one compact
// window of memory (DRAM pages; 528 scattered streams cost writes ~7%).
struct StreamLayout {
  uint64_t chunk_bytes = 0;
  uint64_t blocks = 0;
  uint64_t chunks = 0;
  uint64_t chunks_per_block = 0;
  uint64_t buffer_bytes() const { return chunks * chunk_bytes; }
};

// The layout nearest below `buffer_bytes` (at least one chunk): above `blocks` chunks the
// count is rounded down to a multiple of `blocks`.
StreamLayout stream_layout(uint64_t buffer_bytes, uint64_t blocks, uint64_t chunk_bytes);
// The chunk block `b` moves at its step j (0 <= j < chunks_per_block).
uint64_t stream_chunk(const StreamLayout& l, uint64_t block, uint64_t j);
// A kernel that flattens (pass, step) into one sequence of passes x chunks_per_block loads
// per thread (so it can keep several chunks in flight even with one chunk per block): its
// k-th load is step k mod chunks_per_block of pass k / chunks_per_block. Same chunks, same
// bytes as the nested loop: stream_traffic counts it unchanged.
uint64_t stream_chunk_flattened(const StreamLayout& l, uint64_t block, uint64_t k);
// A non-persistent ("flat") grid: one block per chunk and pass, each block moves one chunk
// once, as gpu-stream and BabelStream do; the layout has blocks = chunks and one chunk per
// block, and the backend launches blocks x passes blocks (block i: pass i / chunks, chunk
// i mod chunks), so stream_traffic counts it like any other layout.
StreamLayout stream_layout_flat(uint64_t buffer_bytes, uint64_t chunk_bytes);

struct Traffic {
  uint64_t read_bytes = 0, write_bytes = 0;
  uint64_t total() const { return read_bytes + write_bytes; }
};

// THE byte accounting of every stream kernel: what one launch moves per direction, when
// every block makes `passes` passes over its chunks. A copy reads one buffer and writes
// another of the same layout, and both directions count.
Traffic stream_traffic(BwOp op, const StreamLayout& l, uint64_t passes);
// Bytes of memory the kernel touches: one buffer, two for a copy.
uint64_t stream_footprint(BwOp op, const StreamLayout& l);

// Checks: a buffer is filled with word i = i (32-bit words). A read sums every word it
// loads (mod 2^32); a write or copy leaves word i = i + passes - 1 (pass p stores i + p;
// a copy stores src + p), which a trusted kernel sums afterwards.
uint32_t stream_read_checksum(const StreamLayout& l, uint64_t passes);
uint32_t stream_written_checksum(const StreamLayout& l, uint64_t passes);

// Shared (local) memory: every thread makes `loads_per_iteration` loads of `width_bytes`
// per iteration, thread t's k-th at element (t*stride + k*33) mod elements (a uniform
// shift per k keeps the warp's bank pattern that of the stride). Elements are width-sized;
// the array is filled with word i = shared_word(i), a hash: with word i = i the sums had
// large power-of-two factors and a kernel that made a fraction of its loads could still
// match the expected sum mod 2^32.
struct SharedLayout {
  uint64_t blocks = 0, threads = 0;  // threads per block
  uint32_t width_bytes = 16;         // 4, 8 or 16
  uint32_t stride = 1;               // in elements
  uint32_t elements = 0;             // array size in elements (a power of two)
  uint32_t loads_per_iteration = 8;
  uint64_t iterations = 0;
};
// Odd iterations flip the top element bit (uniform across the warp: the bank pattern is
// unchanged), so every iteration's loads differ from the last and none can be hoisted.
uint32_t shared_element(const SharedLayout& l, uint64_t thread, uint32_t k, uint64_t iteration);
// Loads one thread makes in one launch: iterations x loads_per_iteration, exactly what the
// kernel's loop executes (odd iteration counts included).
uint64_t shared_loads_per_thread(const SharedLayout& l);
uint64_t shared_bytes(const SharedLayout& l);  // bytes delivered to registers by one launch

// The host-transfer sizes: 4 KiB to `max_bytes` every 4x; with --quick every 16x plus 16 MiB,
// to 256 MiB, where the pinned link reaches its plateau.
std::vector<uint64_t> host_transfer_sizes(bool quick, uint64_t max_bytes);
// The fill: a 32-bit mix of the word index (the kernels compute the same function).
constexpr uint32_t shared_word(uint32_t i) {
  uint32_t x = i * 0x9E3779B1u + 0x7F4A7C15u;
  x ^= x >> 16;
  x *= 0x85EBCA6Bu;
  x ^= x >> 13;
  return x;
}
uint32_t shared_checksum(const SharedLayout& l);
// What one SM's shared memory can deliver per clock: 32 banks x 4 bytes on every NVIDIA
// GPU since Kepler's 4-byte mode and on AMD's LDS. A measured figure above it (plus 2% for
// clock-reading noise) means the kernel made fewer loads than were counted, e.g. the
// compiler merged re-reads of unchanged shared memory; the probe marks such a point as an
// error rather than report it.
constexpr double kSharedBytesPerClkSmLimit = 128.0;
// The point's status from its bytes per clock per SM: empty when plausible, else why not.
std::string shared_plausibility(double bytes_per_clk_sm);

// ---- the contract a backend fulfils ----

struct StreamRequest {
  BwOp op = BwOp::read;
  BwLoad load = BwLoad::cached;  // reads and the read half of a copy
  uint64_t buffer_bytes = 0;     // per buffer; rounded by the backend's layout
  uint64_t passes = 1;
  // 0: fill the device (the backend's blocks per SM). Otherwise exactly this many blocks,
  // at most one per SM (for SM scaling); the backend reports the SMs they ran on.
  int blocks = 0;
  int repeats = 5;
  bool flush_l2 = false;          // evict the caches before each repeat (DRAM-resident scaling)
  bool streaming_stores = false;  // evict-first stores (st.global.cs) for writes and copies
  // Writes and copies: a non-persistent grid (stream_layout_flat) instead of `blocks`
  // persistent blocks, with `unroll` 16-byte vectors per thread (0: the backend's default).
  bool flat = false;
  int unroll = 0;
  // Flat grids: threads per block (0: the backend's default; CUDA also runs 512 with
  // unroll 2 on copies).
  int threads = 0;
  // Reads on the persistent grid with unroll == 1: one vector per thread per chunk (a
  // 4 KiB chunk), several chunks in flight per thread (stream_chunk_flattened), so blocks
  // read data of their own from a 4x smaller footprint.
  // prefetch_256: loads carry the L2 prefetch-size hint (PTX .L2::256B).
  bool prefetch_256 = false;
  // Tests only: a flat grid launched with this many blocks fewer than its chunks x passes,
  // so that chunks go unwritten and the backend's check must report it.
  int drop_blocks = 0;
};

struct StreamTiming {
  StreamLayout layout;
  std::vector<double> seconds;    // per repeat, one launch each
  std::vector<double> clock_mhz;  // SM clock seen during each launch, where measurable
  int distinct_sms = 0;           // SMs the blocks ran on (0: not known)
  std::string check_error;        // empty: the result matched what the host expected
};

struct SharedRequest {
  uint32_t width_bytes = 16;
  uint32_t stride = 1;
  uint64_t iterations = 0;  // 0: the backend's default for a ~1 ms launch
  int repeats = 5;
};

struct SharedTiming {
  SharedLayout layout;
  std::vector<double> seconds;
  std::vector<double> clock_mhz;
  std::string check_error;
};

// Constant memory: every thread of a warp reads the same word (a broadcast).
struct ConstantTiming {
  uint64_t bytes_delivered = 0;  // per launch: threads x loads x 4 bytes
  std::vector<double> seconds;
  std::vector<double> clock_mhz;
  std::string check_error;
};

enum class HostDir { to_device, to_host, both };
std::string to_string(HostDir d);

// What a host link transfer delivered, checked the same way on every backend: the words of
// both buffers hold their own index. `device_sum` is the sum of the words that arrived on the
// device (needed unless dir is to_host); `host_words` the buffer that arrived on the host
// (needed unless dir is to_device), sampled every 1021st word. Empty when all is right.
std::string host_transfer_error(HostDir dir, std::optional<uint32_t> device_sum,
                                const uint32_t* host_words, uint64_t bytes);

struct HostRequest {
  HostDir dir = HostDir::to_device;
  bool pinned = true;
  uint64_t bytes = 0;  // per direction
  int repeats = 5;
};

struct HostTiming {
  std::vector<double> seconds;  // per repeat: the whole transfer (both, for `both`)
  std::string check_error;
  std::string note;  // what was timed, where a backend says so (becomes the curve's note)
};

// What a backend offers the bandwidth probe. A backend without it returns nullptr from
// Device::bandwidth(). Calls throw AllocationFailed when memory cannot be had and
// BackendError on any other API error.
class BandwidthKernels : public KernelSet {
 public:
  static constexpr const char* kProbe = "bandwidth";
  virtual ~BandwidthKernels() = default;
  // Threads per block x vector x unroll: the chunk a block moves per step.
  virtual uint64_t stream_chunk_bytes(const StreamRequest& r) const = 0;
  // Blocks that fill the device.
  virtual int stream_blocks() const = 0;
  virtual Support supports(BwOp op, BwLoad load) const = 0;
  virtual StreamTiming stream(const StreamRequest& r) = 0;
  // Flat grids (StreamRequest::flat) for writes and copies, swept by the probe beside the
  // persistent ones; CUDA's are its own curves (run.cpp: add_flat_curves).
  virtual Support supports_flat() const {
    return Support::no("this backend has no flat-grid stream kernels");
  }
  // SM scaling needs blocks placed one per SM (StreamRequest::blocks).
  virtual Support supports_scaling() const { return Support::yes(); }
  virtual Support supports_shared() const { return Support::no("not implemented by this backend"); }
  virtual SharedTiming shared(const SharedRequest&) { throw BackendError("no shared kernel"); }
  virtual Support supports_constant() const {
    return Support::no("not implemented by this backend");
  }
  virtual ConstantTiming constant(int) { throw BackendError("no constant kernel"); }
  // Evict-first or non-temporal stores for StreamRequest::streaming_stores; a backend
  // without them would run plain stores under a streaming curve's name.
  virtual Support supports_streaming_stores() const {
    return Support::no("this backend has no evict-first or non-temporal stores");
  }
  virtual Support supports_host(bool pinned) const = 0;
  // One direction of it (`both` needs two copies at once, which a backend may not have).
  virtual Support supports_host(HostDir, bool pinned) const { return supports_host(pinned); }
  virtual HostTiming host(const HostRequest& r) = 0;
  // The SASS/ISA instruction a kernel times, e.g. "LDG.E.128", where the backend can read
  // its own code. kind: "read.cached", "write", "write.streaming", "copy.l2_only.streaming",
  // "scale.l2_only", "shared.16", "constant".
  virtual std::optional<std::string> instruction(const std::string&) { return std::nullopt; }
};

// ---- the result model ----

struct BandwidthPoint {
  double x = 0;   // footprint bytes, active SMs, stride or transfer bytes (see the curve)
  Status status;  // ok, skipped or error
  uint64_t read_bytes = 0, write_bytes = 0;  // per launch
  std::optional<Summary> gbps;               // 1e9 bytes/s, read + write
  std::optional<Summary> bytes_per_clk_sm;   // at the clock seen, over the SMs used
  std::optional<double> clock_mhz;
  std::optional<Summary> seconds;  // per launch / transfer
  int sms = 0;                     // SMs used (measured where known)
};

struct BandwidthLevel {
  std::string name;  // "L1", "L2", "device memory", ...
  std::optional<uint64_t> capacity_lo_bytes, capacity_hi_bytes;
  double gbps = 0;
  std::optional<double> bytes_per_clk_sm;
  double confidence = 0;
};

struct BandwidthCurve {
  Status status;
  std::string x_unit;  // footprint_bytes | active_sms | stride | transfer_bytes
  std::optional<std::string> timed_instruction;
  std::string note;
  std::vector<BandwidthPoint> points;
  std::vector<BandwidthLevel> levels;
  double wall_seconds = 0;
};

// A headline figure: the best a level delivers, with where it was seen.
struct BandwidthFigure {
  std::string name;  // "L1 read", "device memory copy", "host->device pinned", ...
  Summary gbps;
  std::optional<Summary> bytes_per_clk_sm;
  std::optional<double> clock_mhz;
  std::optional<std::string> timed_instruction;
  std::string where;  // curve and point: "read at 8 MiB"
};

struct BandwidthProbeResult {
  static constexpr const char* kProbe = "bandwidth";
  Status status;
  double wall_seconds = 0;
  std::optional<double> clock_mhz_measured;  // median SM clock over the probe's kernels
  std::optional<double> peak_gbps_api;       // bus width x memory clock x 2 / 8
  std::optional<Telemetry> telemetry_before, telemetry_after;
  std::map<std::string, BandwidthCurve> footprint;  // by op: read, write, copy, read_l2 ...
  std::map<std::string, BandwidthCurve> scaling;    // l2, dram: against active SMs
  std::map<std::string, BandwidthCurve> shared;     // 32bit, 64bit, 128bit: against stride
  std::map<std::string, BandwidthCurve> host;       // h2d_pinned, d2h_pageable, both_pinned...
  std::map<std::string, BandwidthCurve> other;      // constant broadcast ...
  std::vector<BandwidthFigure> figures;
  std::optional<Summary> host_latency_us;  // a 4 KiB pinned host->device transfer
  // The cache device-memory figures are read past (4x it), where it is not the API's size
  // (probes/bandwidth/run.hpp: last_cache), and where that came from.
  std::optional<uint64_t> last_cache_bytes;
  std::string last_cache_source;
};

// Device memory as a bandwidth-vs-footprint curve shows it, whatever cache size an API
// reports: the curve ends on a plateau that stays within kMemoryPlateauFlatness (max/min)
// over at least kMemoryPlateauSpan in footprint and kMemoryPlateauPoints points, entered from
// a point at least kMemoryPlateauStep times faster within the kMemoryPlateauReach footprints
// below it (the last cache). Why: a VM's CPU through PoCL reports its host's 480 MiB L3, while
// its reads run at memory speed from 128 MiB on (26-28 GB/s from 128 MiB to 512 MiB after 57
// GB/s to 32 MiB); the rule finds memory from 128 MiB and the cache up to 64 MiB there, and on
// the H100 and H200 read curves it finds what their API's L2 says. Two doublings and three
// points: with one doubling and two, a 16-core VM's read curve took 107-112 GB/s at 128-256
// MiB (its L3) for memory, which reads 65-82 from 512 MiB on.
constexpr double kMemoryPlateauFlatness = 1.2, kMemoryPlateauSpan = 3.9, kMemoryPlateauStep = 1.5,
                 kMemoryPlateauReach = 16;
constexpr std::size_t kMemoryPlateauPoints = 3;
struct FootprintRate {
  double footprint_bytes = 0;
  double gbps = 0;
};
struct MemoryPlateau {
  double first_bytes = 0;        // the plateau's first footprint
  double last_cached_bytes = 0;  // the largest footprint below it still served by a cache
  double gbps = 0;               // the median of the plateau's points
  std::size_t points = 0;
};
// `curve`: a curve's measured points, footprints strictly increasing, rates > 0.
std::optional<MemoryPlateau> find_memory_plateau(const std::vector<FootprintRate>& curve);

// Device-memory peak from the API's numbers (DDR: two transfers per clock), GB/s.
std::optional<double> api_memory_peak_gbps(const DeviceInfo& info);

// The peak a headline figure is compared with: that of its own level, never another's.
// Device memory: the API peak (api_memory_peak_gbps). L1 (NVIDIA) and shared memory (NVIDIA,
// AMD): 128 B/clk per SM (32 banks x 4 B, kSharedBytesPerClkSmLimit) x SMs x the SM clock
// the figure's kernel saw (no clock seen: no peak). Everything else (L2, constant, host link)
// has no documented per-level peak: nullopt, shown as "-".
struct BandwidthPeak {
  double gbps = 0;
  std::string basis;  // how it was obtained, e.g. "128 B/clk/SM x 132 SMs x 1979 MHz"
};
std::optional<BandwidthPeak> figure_peak(const BandwidthFigure& f, const DeviceInfo& info,
                                         std::optional<double> api_peak_gbps);

void to_json(nlohmann::json& j, const BandwidthPoint& p);
void from_json(const nlohmann::json& j, BandwidthPoint& p);
void to_json(nlohmann::json& j, const BandwidthLevel& l);
void from_json(const nlohmann::json& j, BandwidthLevel& l);
void to_json(nlohmann::json& j, const BandwidthCurve& c);
void from_json(const nlohmann::json& j, BandwidthCurve& c);
void to_json(nlohmann::json& j, const BandwidthFigure& f);
void from_json(const nlohmann::json& j, BandwidthFigure& f);
void to_json(nlohmann::json& j, const BandwidthProbeResult& r);
void from_json(const nlohmann::json& j, BandwidthProbeResult& r);

}  // namespace gd
