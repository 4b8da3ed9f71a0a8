// The one interface every backend implements. Probes are written against it and
// never see CUDA or OpenCL; a backend only knows how to run its kernels and time them.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace gd {

// The kernels one probe needs from one backend. Each probe declares its own subclass with
// `static constexpr const char* kProbe = "<probe name>"` (BandwidthKernels, ComputeKernels,
// AtomicsKernels ...); each backend keeps one table of factories, probe name -> kernel set,
// so a new probe adds its kernels and one line there, and no virtual to Device.
class KernelSet {
 public:
  virtual ~KernelSet() = default;
  // Whether this set's compile-ahead calls (ComputeKernels::prepare, FrontendKernels::
  // prepare_icache ...) may run on another thread while other probes measure: true where
  // they only compile on the host (NVRTC) and touch neither the device nor state the
  // measuring thread uses. A run then starts them at its beginning (Probe::ahead).
  virtual bool compiles_beside_measurements() const { return false; }
};

// A way of reaching memory that the latency probe can chase through.
enum class MemPath { global, l2, readonly, texture, constant, shared, local, image };

std::string to_string(MemPath p);
std::optional<MemPath> parse_mem_path(std::string_view s);
const std::vector<MemPath>& all_mem_paths();

struct Support {
  bool ok = false;
  std::string reason;  // why not, when !ok
  static Support yes() { return {true, {}}; }
  static Support no(std::string why) { return {false, std::move(why)}; }
};

// Facts as the API reports them. Optional fields are absent where the API says nothing;
// they are never filled with a guess.
struct DeviceInfo {
  std::string backend;  // "cuda" or "opencl"
  std::string id;       // "cuda:0", "opencl:0.1"
  std::string name;
  std::string vendor;
  int compute_units = 0;  // SMs (CUDA) or compute units (OpenCL)
  std::optional<double> clock_mhz_reported;
  std::optional<double> memory_clock_mhz;
  std::optional<int> memory_bus_width_bits;
  std::optional<uint64_t> memory_bytes;
  std::optional<uint64_t> l2_bytes;  // last-level cache the API reports (OpenCL: global mem cache)
  std::optional<uint64_t> l1_or_cacheline_bytes;
  std::optional<uint64_t> shared_per_sm_bytes;
  std::optional<uint64_t> shared_per_block_bytes;
  std::optional<uint64_t> shared_per_block_optin_bytes;
  std::optional<uint64_t> constant_bytes;
  std::string compute_capability;  // "9.0" (CUDA), OpenCL version string otherwise
  std::string driver_version;
  std::string toolkit_version;  // CUDA runtime / OpenCL platform version
  std::map<std::string, std::string> extra;
};

// Clock and throttle state as reported by management software (NVML), where available.
struct Telemetry {
  std::optional<double> sm_clock_mhz;
  std::optional<double> memory_clock_mhz;
  std::optional<double> temperature_c;
  std::optional<double> power_w;
  std::vector<std::string> throttle_reasons;  // empty: none active
};

// Another process with a context on the GPU, as the management library lists it.
struct GpuProcess {
  uint32_t pid = 0;
  std::string name;  // empty where it cannot be read
  std::string kind;  // "compute" | "graphics"
  std::optional<uint64_t> used_memory_bytes;
};

// Who else uses the GPU (gpu_state.hpp judges it).
struct GpuActivity {
  std::optional<double> utilization_percent;  // of the last sample period, 0..100
  bool processes_known = false;               // whether the process lists could be read
  std::vector<GpuProcess> processes;          // other processes; this one is never listed
};

// A chain of lines: next[i] is the line visited after line i. Line i lies at byte offset
// i * stride_bytes from the start of the buffer. The chain is one cycle over all lines.
struct ChaseRequest {
  MemPath path = MemPath::global;
  const std::vector<uint32_t>* next = nullptr;
  uint64_t stride_bytes = 128;
  uint64_t warmup_hops = 0;      // hops before timing starts (fills the caches)
  uint64_t hops_per_repeat = 0;  // hops in one timed segment
  int repeats = 1;               // timed segments, run back to back along the chain
  uint64_t footprint_bytes() const { return next ? next->size() * stride_bytes : 0; }
};

// Throws std::invalid_argument where a chase cannot be walked by a backend whose chains hold
// 32-bit element indices (OpenCL, Vulkan): no chain, a stride that is not a positive multiple
// of 4 bytes, no hops or repeats, a footprint past 2^32 elements, an entry out of range.
void validate_index_chase(const ChaseRequest& req);
// Throws AllocationFailed (the point is skipped) where the request's chain is larger than
// `limit_bytes`, the most `path` can hold on the device named `device_name`.
void check_chase_footprint(const ChaseRequest& req, uint64_t limit_bytes,
                           const std::string& device_name);
// The chain as a backend with 32-bit element indices walks it: the first word of line i holds
// the element index of line next[i]; the other words are 0. Call validate_index_chase first.
std::vector<uint32_t> index_chase_image(const ChaseRequest& req);

struct ChaseTiming {
  std::vector<double> cycles_per_hop;  // one per repeat; empty where the backend has no clock
  std::vector<double> ns_per_hop;      // one per repeat
  std::optional<double> clock_mhz;     // SM clock measured during the chase (cycles / time)
  uint32_t end_line = 0;               // line reached after all hops walked, checked by the probe
  // Hops walked in all, from line 0; 0 means warmup_hops + repeats * hops_per_repeat.
  // (A backend that times by differences walks more than that, and says so here.)
  uint64_t hops_walked = 0;
  int sm = -1;  // the SM that chased, where the backend knows it
};

// Measured SM clock: cycles counted on the SM against the device's nanosecond timer.
struct ClockSample {
  double mhz = 0;
  double window_us = 0;
};

// Thrown by a backend when memory for a request cannot be had; the probe marks the point
// skipped and goes on.
struct AllocationFailed : std::runtime_error {
  using std::runtime_error::runtime_error;
};
// Thrown on any other API error; message says what failed.
struct BackendError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

class Device {
 public:
  virtual ~Device() = default;
  virtual const DeviceInfo& info() const = 0;
  virtual Support supports(MemPath p) const = 0;
  // Largest footprint a chase on this path can use (constant bank, shared per block, memory).
  virtual uint64_t max_footprint(MemPath p) const = 0;
  virtual ChaseTiming chase(const ChaseRequest& req) = 0;
  // nullopt where the backend has no cycle counter (OpenCL).
  virtual std::optional<ClockSample> sample_clock() = 0;
  // nullopt where there is no management library (no NVML, or not an NVIDIA device).
  virtual std::optional<Telemetry> telemetry() { return std::nullopt; }
  // Other processes on the GPU and its utilisation; nullopt where there is no management
  // library (the GPU's state is then unknown, not idle).
  virtual std::optional<GpuActivity> activity() { return std::nullopt; }
  // The machine instruction the chase of this path executes (e.g. "LDG.E.64"), where the
  // backend can read its own code; nullopt otherwise.
  virtual std::optional<std::string> timed_instruction(MemPath) { return std::nullopt; }
  // The kernel set of probe `probe`, created on first use and owned by the device; nullptr
  // where this backend has none for that probe.
  virtual KernelSet* kernel_set(const std::string& /*probe*/) { return nullptr; }
  // Typed access: dev.kernels<BandwidthKernels>() (nullptr where the backend has none).
  template <class K>
  K* kernels() {
    return dynamic_cast<K*>(kernel_set(K::kProbe));
  }
  // Gives back the memory a probe's requests left allocated (buffers are kept between
  // requests for speed); a probe calls it when it finishes, so the next starts with it free.
  virtual void release_memory() {}
  // Free device memory now, if the API says.
  virtual std::optional<uint64_t> free_memory() const { return std::nullopt; }
};

// One entry of `gpudissect list`.
struct DeviceEntry {
  std::string id;  // "cuda:0", "opencl:0.0"
  std::string name;
  std::string summary;  // one line: what it supports
  std::vector<std::pair<MemPath, Support>> paths;
  // The device's UUID as 32 lower-case hex digits, where the API gives one (CUDA's
  // cudaDeviceProp::uuid, Vulkan's VkPhysicalDeviceIDProperties::deviceUUID: the same 16
  // bytes for the same NVIDIA GPU), and the L2 size where the API reports it.
  std::string uuid;
  std::optional<uint64_t> l2_bytes;
  // The SM architecture as CUDA's tools name it ("sm_90"), where the API gives one (CUDA).
  std::string sm_arch;
};

// Facts one API does not report, taken from another API's view of the same GPU.
struct BorrowedFacts {
  std::optional<uint64_t> l2_bytes;
  std::string source;  // "L2 size of cuda:0 (the same UUID)"
  // The SM architecture ("sm_90"), which disassembling NVIDIA's Vulkan machine code needs.
  std::string sm_arch;
  std::string sm_arch_source;  // "SM architecture of cuda:0 (the same UUID)"
};
// What `target` lacks and another entry with the same UUID has (Vulkan reports no L2 size
// and no SM architecture; CUDA does, for the same GPU). Empty where no other entry matches.
BorrowedFacts borrow_facts(const DeviceEntry& target, const std::vector<DeviceEntry>& all);

}  // namespace gd
