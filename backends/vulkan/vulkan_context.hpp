// The small Vulkan layer the backend's kernels share: one instance, one compute queue,
// buffers, compute pipelines from the embedded SPIR-V, and a dispatch timed by timestamp
// queries. Only backends/vulkan includes it (it pulls in vulkan.h).
#pragma once

#include <vulkan/vulkan.h>

#include <chrono>
#include <cstdint>
#include <future>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "compute/compute.hpp"
#include "gpudissect/device.hpp"
#include "gpudissect/nv_shader_cache.hpp"
#include "gpudissect/sass.hpp"
#include "vk_newer.hpp"

namespace gd::vulkan {

std::string result_name(VkResult r);
// Throws AllocationFailed for out-of-memory results (the probe skips the point) and
// BackendError for anything else; `what` names the call and what it was for.
void check(VkResult r, const std::string& what);
// Whether the physical device lists the extension (vulkan_facts.cpp).
bool has_extension(VkPhysicalDevice pd, const char* name);

// The loader's instance, shared by enumeration and every device opened from it.
class Instance {
 public:
  // Throws BackendError when there is no loader or no instance can be made.
  static std::shared_ptr<Instance> create();
  ~Instance();
  VkInstance get() const { return instance_; }
  std::vector<VkPhysicalDevice> physical_devices() const;

 private:
  VkInstance instance_ = VK_NULL_HANDLE;
};

// What the API says about one physical device, read once; `list` and the device share it.
struct Facts {
  int index = 0;
  std::string uuid;  // VkPhysicalDeviceIDProperties::deviceUUID, 32 hex digits
  VkPhysicalDeviceProperties props{};
  VkPhysicalDeviceMemoryProperties memory{};
  std::optional<uint32_t> compute_queue_family;  // the first family with compute
  uint32_t timestamp_valid_bits = 0;             // of that family
  // The first family with TRANSFER but neither GRAPHICS nor COMPUTE (a copy engine's queue),
  // where the device has one; the context opens one queue there for copies beside the first.
  std::optional<uint32_t> transfer_queue_family;
  uint32_t transfer_queue_count = 0;     // queues that family offers
  bool shader_clock = false;             // VK_KHR_shader_clock with shaderSubgroupClock, and used
  std::string shader_clock_note;         // why a clock the device offers is not used
  std::optional<uint32_t> sm_count;      // VK_NV_shader_sm_builtins
  uint64_t device_local_bytes = 0;       // the largest DEVICE_LOCAL heap
  uint64_t max_allocation_bytes = 0;     // VkPhysicalDeviceMaintenance3Properties
  bool texel_r32ui = false;              // R32_UINT usable as a uniform texel buffer
  std::string driver_name, driver_info;  // VkPhysicalDeviceDriverProperties, where offered
  // llvmpipe (lavapipe) ends a shader's loops after this many iterations in all (Mesa's
  // LP_MAX_TGSI_LOOP_ITERATIONS); kernels split their work to stay under it. None elsewhere.
  std::optional<uint64_t> loop_iteration_limit;
  // Arithmetic the compute probe's modules declare as capabilities; enabled on the device
  // where offered, since a module that needs a feature not enabled must not be loaded.
  bool shader_float64 = false;  // VkPhysicalDeviceFeatures::shaderFloat64
  bool shader_float16 = false;  // VK_KHR_shader_float16_int8's shaderFloat16
  bool shader_int64 = false;    // VkPhysicalDeviceFeatures::shaderInt64
  // VK_KHR_shader_integer_dot_product's shaderIntegerDotProduct (core in Vulkan 1.3)
  bool shader_integer_dot_product = false;
  // VK_KHR_pipeline_executable_properties' pipelineExecutableInfo: enabled where offered, and
  // pipelines are then created capturing their statistics and internal representations.
  bool pipeline_executable_info = false;
  // VK_KHR_buffer_device_address's bufferDeviceAddress: the global and l2 chases walk chains
  // of device addresses (GL_EXT_buffer_reference); without it, chains of element indices.
  bool buffer_device_address = false;
  // VK_KHR_uniform_buffer_standard_layout's uniformBufferStandardLayout: the constant chase
  // reads its uniform block as a plain uint array (std430) instead of std140's uvec4s.
  bool uniform_standard_layout = false;
  // Vulkan 1.1 subgroups: the size, VK_SUBGROUP_FEATURE_* bits, and whether compute has them.
  uint32_t subgroup_size = 0;
  uint32_t subgroup_operations = 0;
  bool subgroup_in_compute = false;
  // VK_NV_shader_sm_builtins' shaderSMBuiltins (gl_SMIDNV in shaders) and VK_KHR_shader_clock's
  // shaderDeviceClock (clockRealtimeEXT): enabled where offered, for the front end's block
  // records, which need both.
  bool sm_builtins = false;
  bool shader_device_clock = false;
  // VK_KHR_cooperative_matrix: the matrix shapes and types the driver lists (subgroup scope
  // and others), with the features the listed types need (shaderInt8; VK_KHR_shader_bfloat16's
  // and VK_EXT_shader_float8's cooperative-matrix features); cooperative_matrix_why says why
  // the list is empty. Read by query_cooperative_matrix (it needs the instance).
  bool cooperative_matrix = false;
  std::vector<CoopMatShape> cooperative_matrix_shapes;
  std::string cooperative_matrix_why;
  bool shader_int8 = false;
  bool vulkan_memory_model = false;  // the modules declare it, as Vulkan requires with them
  bool bfloat16_cooperative_matrix = false;
  bool float8_cooperative_matrix = false;
  // VK_EXT_calibrated_timestamps: enabled where offered; the context then reads the device's
  // timestamps against the host clock where both time domains are offered (calibrate()).
  bool calibrated_timestamps = false;

  std::string id() const { return "vulkan:" + std::to_string(index); }
  std::string device_type() const;
  std::string api_version() const;
  // Timing needs timestamps on the compute queue; everything is refused without them.
  Support timing() const;
  Support supports(MemPath p) const;
  uint64_t max_footprint(MemPath p) const;
  std::string summary() const;
};

Facts query_facts(VkPhysicalDevice pd, int index);
// Fills f's cooperative-matrix fields (vkGetPhysicalDeviceCooperativeMatrixPropertiesKHR is
// reached through the instance: the loader's headers here predate it).
void query_cooperative_matrix(VkInstance instance, VkPhysicalDevice pd, Facts& f);

// What the device is created with (vulkan_facts.cpp): the extensions, the core features and
// the feature structs chained from `chain`, which point into this object (hence no copies).
// robustBufferAccess stays off: it would put a bounds check on every load the chases time.
struct DeviceFeatures {
  DeviceFeatures(VkPhysicalDevice pd, const Facts& f);
  DeviceFeatures(const DeviceFeatures&) = delete;
  DeviceFeatures& operator=(const DeviceFeatures&) = delete;
  std::vector<const char*> extensions;
  VkPhysicalDeviceFeatures core{};
  void* chain = nullptr;
  VkPhysicalDeviceShaderFloat16Int8Features f16{
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_FLOAT16_INT8_FEATURES};
  VkPhysicalDevicePipelineExecutablePropertiesFeaturesKHR executables{
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PIPELINE_EXECUTABLE_PROPERTIES_FEATURES_KHR};
  VkPhysicalDeviceBufferDeviceAddressFeaturesKHR addresses{
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_BUFFER_DEVICE_ADDRESS_FEATURES_KHR};
  VkPhysicalDeviceUniformBufferStandardLayoutFeaturesKHR uniform_layout{
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_UNIFORM_BUFFER_STANDARD_LAYOUT_FEATURES_KHR};
  VkPhysicalDeviceShaderClockFeaturesKHR clock{
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_CLOCK_FEATURES_KHR};
  VkPhysicalDeviceShaderSMBuiltinsFeaturesNV sm_builtins{
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_SM_BUILTINS_FEATURES_NV};
  VkPhysicalDeviceShaderAtomicInt64Features i64_atomics{
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_ATOMIC_INT64_FEATURES};
  VkPhysicalDeviceShaderAtomicFloatFeaturesEXT float_atomics{
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_ATOMIC_FLOAT_FEATURES_EXT};
  VkPhysicalDeviceShaderIntegerDotProductFeaturesKHR int_dot{
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_INTEGER_DOT_PRODUCT_FEATURES_KHR};
  CooperativeMatrixFeatures cooperative_matrix;
  VkPhysicalDeviceVulkanMemoryModelFeaturesKHR memory_model{
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_MEMORY_MODEL_FEATURES_KHR};
  BFloat16Features bfloat16;
  Float8Features float8;

 private:
  void add(const char* extension, void* feature_struct);
};

// A buffer and its own memory allocation.
class Buffer {
 public:
  Buffer() = default;
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
  Buffer(Buffer&& o) noexcept;
  Buffer& operator=(Buffer&& o) noexcept;
  ~Buffer() { reset(); }
  void reset();
  VkBuffer get() const { return buffer_; }
  uint64_t size() const { return size_; }
  void* mapped() const { return mapped_; }                       // host-visible buffers only
  VkMemoryPropertyFlags memory_flags() const { return flags_; }  // of the memory type chosen
  explicit operator bool() const { return buffer_ != VK_NULL_HANDLE; }

 private:
  friend class Context;
  VkDevice device_ = VK_NULL_HANDLE;
  VkBuffer buffer_ = VK_NULL_HANDLE;
  VkDeviceMemory memory_ = VK_NULL_HANDLE;
  VkBufferView view_ = VK_NULL_HANDLE;  // R32_UINT view, for uniform texel buffers
  uint64_t size_ = 0;
  void* mapped_ = nullptr;
  VkMemoryPropertyFlags flags_ = 0;
  friend struct Binding;
};

// A compute pipeline: one module, its descriptor set layout (bindings 0..n-1 of the given
// types) and push constants.
struct Pipeline {
  VkDevice device = VK_NULL_HANDLE;
  VkShaderModule module = VK_NULL_HANDLE;
  VkDescriptorSetLayout set_layout = VK_NULL_HANDLE;
  VkPipelineLayout layout = VK_NULL_HANDLE;
  VkPipeline pipeline = VK_NULL_HANDLE;
  std::vector<VkDescriptorType> bindings;
  // vkGetPipelineCacheData of a cache that saw only this pipeline, where the context keeps
  // NVIDIA's machine code (Context::keep_nv_machine_code): nv_shader_cache.hpp reads it.
  std::vector<uint8_t> nv_cache;
  // Context::nv_sass's answer, made once (nvdisasm takes ~0.1 s).
  mutable std::once_flag nv_sass_once;
  mutable NvCacheSass nv_sass;
  Pipeline() = default;
  Pipeline(const Pipeline&) = delete;
  Pipeline& operator=(const Pipeline&) = delete;
  ~Pipeline();
};

// One descriptor of a dispatch: a buffer (storage or uniform) or a texel-buffer view.
struct Binding {
  const Buffer* buffer = nullptr;
  uint64_t range = 0;  // 0: the whole buffer
};

// The embedded SPIR-V module of that name; throws BackendError when there is none.
std::vector<uint32_t> shader_words(const std::string& name);

// What one chase dispatch leaves in its result buffer (chase_common.glsl's Result block).
struct ChaseResult {
  uint32_t end;
  uint32_t pad;
  uint32_t clock_before[2];
  uint32_t clock_after[2];
};
// Shader clock ticks between the two readings (0 without a clock).
inline uint64_t clock_ticks(const ChaseResult& r) {
  const uint64_t before = r.clock_before[0] | (uint64_t(r.clock_before[1]) << 32);
  const uint64_t after = r.clock_after[0] | (uint64_t(r.clock_after[1]) << 32);
  return after - before;
}

class GpuClock;

class Context {
 public:
  Context(std::shared_ptr<Instance> instance, VkPhysicalDevice pd, const Facts& facts);
  ~Context();
  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;

  const Facts& facts() const { return facts_; }
  VkDevice device() const { return device_; }
  // From now on every pipeline is created through a pipeline cache of its own and keeps the
  // cache's data (NVIDIA: its machine code), disassembled for `sm_arch` ("sm_90") by the
  // probes that show it (nv_sass).
  void keep_nv_machine_code(const std::string& sm_arch) { nv_sm_arch_ = sm_arch; }
  bool keeps_nv_machine_code() const { return !nv_sm_arch_.empty(); }
  // The SASS of a pipeline created keeping its machine code, in cuobjdump's form
  // (nv_cache_sass); why there is none otherwise. Runs nvdisasm the first time (~0.1 s):
  // a probe asks from a background thread first (nv_sass_ahead), never between timed launches.
  const NvCacheSass& nv_sass(const Pipeline& p) const;
  // nv_sass(p) started on a thread of its own where the context keeps machine code (an
  // invalid future otherwise): a probe keeps the future until it no longer needs `p`.
  std::future<void> nv_sass_ahead(const Pipeline& p) const;
  // The memory instructions of a pipeline's SASS (sass.hpp's reading of its one function);
  // nullopt without machine code.
  std::optional<KernelMemoryOps> nv_memory_ops(const Pipeline& p) const;
  // Why pipelines carry no machine code (empty where they do).
  std::string nv_machine_code_why() const { return nv_why_; }
  void set_nv_machine_code_why(const std::string& why) { nv_why_ = why; }
  VkPhysicalDevice physical_device() const { return physical_; }
  // The GPU's clock as the kernel sets see it (gpu_clock.hpp), made on first use.
  GpuClock& clock();
  // When the last submission's wait returned (the context's creation before any): how long
  // the GPU has been idle, as far as this process knows.
  std::chrono::steady_clock::time_point last_done() const { return last_done_; }

  // device-local; host-visible and coherent; host-visible and coherent, and also
  // HOST_CACHED where a type offers it (for the host to read from).
  enum class Memory { device, host, host_cached };
  // usage: VK_BUFFER_USAGE_* bits; transfer src/dst are always added. texel: also make an
  // R32_UINT view for a uniform texel buffer. both_queues: usable by the transfer queue too
  // (VK_SHARING_MODE_CONCURRENT over both families, where there is a transfer queue).
  Buffer buffer(uint64_t bytes, VkBufferUsageFlags usage, Memory where, bool texel = false,
                bool both_queues = false);
  // Through a host-visible staging buffer and a copy on the queue; `offset`: into the buffer.
  void upload(const Buffer& dst, const void* data, uint64_t bytes, uint64_t offset = 0);
  void download(const Buffer& src, void* data, uint64_t bytes, uint64_t offset = 0);

  // spec: specialization constants 0..n-1 (uint32).
  std::unique_ptr<Pipeline> pipeline(const std::string& shader,
                                     const std::vector<VkDescriptorType>& bindings,
                                     uint32_t push_bytes, const std::vector<uint32_t>& spec = {});
  // The same from SPIR-V written at run time (the matrix units' modules); `name` names it in
  // errors.
  std::unique_ptr<Pipeline> pipeline_from_words(const std::string& name,
                                                const std::vector<uint32_t>& words,
                                                const std::vector<VkDescriptorType>& bindings,
                                                uint32_t push_bytes,
                                                const std::vector<uint32_t>& spec = {});
  // Sets `bytes` bytes (a multiple of 4) from `offset` (one too) to `word`; waits.
  void fill(const Buffer& dst, uint64_t bytes, uint32_t word, uint64_t offset = 0);
  // Records, submits and waits for one vkCmdCopyBuffer of `bytes` bytes on the compute queue;
  // returns the nanoseconds between the timestamps written before and after it.
  double copy(const Buffer& src, const Buffer& dst, uint64_t bytes);
  bool has_transfer_queue() const { return transfer_queue_ != VK_NULL_HANDLE; }
  // Two copies at once, each in its own command buffer, submitted one after the other;
  // returns when both fences signal. a on the transfer family's second queue where it has
  // two (each queue of a copy-engine family may drive its own engine: on NVIDIA's driver a
  // copy on the graphics and compute queue ran one after the other with the transfer queue's),
  // else on the compute queue; b on the transfer queue (needs one). Not timed here:
  // timestamps of two queues share no timeline to subtract.
  // copy_pair_queues: which queue each ran on, in words.
  void copy_pair(const Buffer& a_src, const Buffer& a_dst, const Buffer& b_src, const Buffer& b_dst,
                 uint64_t bytes);
  std::string copy_pair_queues() const;
  // One transfer in pieces (backends/vulkan/copy_pieces.cpp): piece i (< kMaxPieces) copies
  // [offset, offset + bytes) of src to the same range of dst on the compute queue, submitted
  // at once and not waited for, so the host can stage the next piece meanwhile, as a driver
  // stages a pageable copy; wait_piece(i) returns when piece i has landed.
  static constexpr std::size_t kMaxPieces = 8;
  void copy_piece(std::size_t i, const Buffer& src, const Buffer& dst, uint64_t offset,
                  uint64_t bytes);
  void wait_piece(std::size_t i);

  // `count` (>= 1) dispatches of `groups` workgroups each, in one command buffer, each after
  // a barrier on the one before (in order, as kernels on one stream); recorded, submitted
  // once and waited for: by polling the fence (vkGetFenceStatus), as CUDA's synchronize spins
  // where the host has a core to spare, or with `blocking_wait` by vkWaitForFences (which
  // may sleep). Host clock: record_ns the recording, submit_ns the vkQueueSubmit call,
  // round_trip_ns from before vkQueueSubmit until the fence was seen signalled. gpu_ns:
  // between timestamps written before the first dispatch and after the last (count 1: the
  // dispatch's own span) or after the last but one (count > 1: first start to last start).
  // submit_at_ns: the host's steady_clock (CLOCK_MONOTONIC) before vkQueueSubmit, in ns since
  // its epoch; start_device_ns: the first timestamp in ns of the device's clock, for
  // calibrate()'s offset.
  struct BatchTiming {
    double record_ns = 0, submit_ns = 0, round_trip_ns = 0, gpu_ns = 0;
    double submit_at_ns = 0, start_device_ns = 0;
  };
  BatchTiming dispatch_batch(const Pipeline& p, const std::vector<Binding>& bindings,
                             uint32_t groups, int count, bool blocking_wait = false);

  // The device's timestamp clock against the host's steady_clock (CLOCK_MONOTONIC on Linux),
  // from VK_EXT_calibrated_timestamps where the device offers both time domains and 64-bit
  // timestamps: offset_ns = device ns - host ns, the best (smallest deviation) of `tries`
  // calibrations; deviation_ns the driver's bound on how far apart the two readings were.
  // nullopt elsewhere.
  struct Calibration {
    double offset_ns = 0, deviation_ns = 0;
  };
  std::optional<Calibration> calibrate(int tries = 16);

  // Records, submits and waits for one dispatch; returns the nanoseconds between the
  // timestamps written before and after it.
  double dispatch(const Pipeline& p, const std::vector<Binding>& bindings, const void* push,
                  uint32_t push_bytes, uint32_t groups);

 private:
  void submit_and_wait(const char* what);
  double elapsed_ns();  // between timestamps 0 and 1 of the last submission
  // Timestamps 0 and 1 of the last submission, raw ticks.
  void read_timestamps(uint64_t ticks[2]);
  double span_ns(const uint64_t ticks[2]) const;  // from the first to the second, in ns
  // Where the device calibrates its timestamps (vulkan_calibration.cpp): sets get_calibrated_.
  void find_calibration(VkPhysicalDevice pd);
  PFN_vkGetCalibratedTimestampsEXT get_calibrated_ = nullptr;  // null: no calibration
  VkDescriptorSet descriptor_set(const Pipeline& p, const std::vector<Binding>& bindings);

  std::shared_ptr<Instance> instance_;
  VkPhysicalDevice physical_;
  Facts facts_;
  std::string nv_sm_arch_;  // keep_nv_machine_code's; empty: pipelines keep no cache data
  std::string nv_why_;
  VkDevice device_ = VK_NULL_HANDLE;
  VkQueue queue_ = VK_NULL_HANDLE;
  VkCommandPool pool_ = VK_NULL_HANDLE;
  VkCommandBuffer cmd_ = VK_NULL_HANDLE;
  VkFence fence_ = VK_NULL_HANDLE;
  VkQueryPool timestamps_ = VK_NULL_HANDLE;
  // The transfer queue's own (null without a transfer family).
  VkQueue transfer_queue_ = VK_NULL_HANDLE;
  VkCommandPool transfer_pool_ = VK_NULL_HANDLE;
  VkCommandBuffer transfer_cmd_ = VK_NULL_HANDLE;
  VkFence transfer_fence_ = VK_NULL_HANDLE;
  // copy_piece's command buffers (from pool_) and fences, made as first needed.
  struct Piece {
    VkCommandBuffer cmd = VK_NULL_HANDLE;
    VkFence fence = VK_NULL_HANDLE;
  };
  std::vector<Piece> pieces_;
  // The transfer family's second queue, where it has one (copy_pair's first copy).
  VkQueue transfer_queue2_ = VK_NULL_HANDLE;
  VkCommandBuffer transfer_cmd2_ = VK_NULL_HANDLE;
  VkFence transfer_fence2_ = VK_NULL_HANDLE;
  VkDescriptorPool descriptors_ = VK_NULL_HANDLE;
  std::chrono::steady_clock::time_point last_done_ = std::chrono::steady_clock::now();
  std::unique_ptr<GpuClock> clock_;
};

}  // namespace gd::vulkan
