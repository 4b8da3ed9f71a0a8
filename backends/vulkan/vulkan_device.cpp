// The Vulkan backend: device discovery and the pointer chase through a storage buffer
// (global), a coherent storage buffer (l2), a uniform buffer (constant), workgroup memory (shared)
// and a uniform texel buffer (image), timed with timestamp queries; cycles from VK_KHR_shader_clock
// where the device has it, none otherwise.
#include <algorithm>
#include <cstdio>
#include <future>
#include <limits>
#include <map>
#include <stdexcept>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "compute/compute.hpp"
#include "compute/vulkan_listing.hpp"
#include "gpu_clock.hpp"
#include "gpudissect/chase_chain.hpp"
#include "gpudissect/kernel_sets.hpp"
#include "gpudissect/units.hpp"
#include "vulkan_backend.hpp"
#include "vulkan_context.hpp"
#include "vulkan_probes.hpp"

namespace gd::vulkan {

namespace {

std::string vendor_name(uint32_t id) {
  switch (id) {
    case 0x10DE:
      return "NVIDIA";
    case 0x1002:
      return "AMD";
    case 0x8086:
      return "Intel";
    case 0x13B5:
      return "ARM";
    case 0x5143:
      return "Qualcomm";
    case 0x106B:
      return "Apple";
    case 0x10005:
      return "Mesa";
    default: {
      char hex[16];
      std::snprintf(hex, sizeof hex, "0x%04X", id);
      return std::string("vendor ") + hex;
    }
  }
}

// One launch's times: nanoseconds from the timestamps, ticks of the shader clock.
struct LaunchTime {
  double ns = 0;
  uint64_t ticks = 0;
};

// The largest hop count one dispatch takes: 32768 iterations of the shader's 32-hop loop body,
// under llvmpipe's limit of 65535 loop iterations per shader (chase_common.glsl). Longer
// walks are split into several dispatches.
constexpr uint64_t kMaxHopsPerDispatch = 1ull << 20;

class VulkanDevice final : public Device {
 public:
  VulkanDevice(std::shared_ptr<Instance> instance, VkPhysicalDevice pd, const Facts& facts,
               const BorrowedFacts& borrowed)
      : facts_(facts), ctx_(std::move(instance), pd, facts) {
    fill_info();
    // Vulkan reports no L2 size; where another API sees the same GPU (the same UUID), its L2
    // size names the levels as that API's run does (L2 near / far on Hopper), and says where
    // it came from.
    if (borrowed.l2_bytes) {
      info_.l2_bytes = borrowed.l2_bytes;
      info_.extra["l2_bytes"] = borrowed.source;
    }
    keep_machine_code(borrowed);
    result_ =
        ctx_.buffer(sizeof(ChaseResult), VK_BUFFER_USAGE_STORAGE_BUFFER_BIT, Context::Memory::host);
  }

  ~VulkanDevice() override {
    kernel_sets_.clear();  // before the context they borrow
  }

  // NVIDIA's driver gives no ISA text, but its pipeline cache holds the machine code, which
  // CUDA's nvdisasm reads given the SM architecture (from CUDA's view of the same GPU):
  // pipelines then keep their cache data, and the device says where the listings come from.
  void keep_machine_code(const BorrowedFacts& borrowed) {
    if (facts_.props.vendorID != 0x10de) return;
    std::string why;
    if (borrowed.sm_arch.empty())
      why = "no SM architecture: no CUDA device with the same UUID";
    else if (nvdisasm_tool().empty())
      why = "no nvdisasm found (CUDA's tools, on PATH or under CUDA_HOME)";
    if (why.empty()) {
      ctx_.keep_nv_machine_code(borrowed.sm_arch);
      info_.extra["machine_code"] = "SASS: the driver's pipeline cache (" + borrowed.sm_arch +
                                    ", " + borrowed.sm_arch_source + ") disassembled by " +
                                    nvdisasm_tool();
    } else {
      ctx_.set_nv_machine_code_why(why);
      info_.extra["machine_code"] = "none: " + why;
    }
  }

  const DeviceInfo& info() const override { return info_; }
  Support supports(MemPath p) const override { return facts_.supports(p); }
  uint64_t max_footprint(MemPath p) const override { return facts_.max_footprint(p); }
  void release_memory() override { buffers_.clear(); }

  KernelSet* kernel_set(const std::string& probe) override {
    return kernel_set_of(kernel_sets_, kernel_factories(), probe, ctx_, info_);
  }

  // The SPIR-V load, which chain the last chase of the path walked, and where the driver
  // gives them (VK_KHR_pipeline_executable_properties) its compiled code's most frequent
  // opcodes: the per-hop code, as the memory probe shows beside its figures.
  std::optional<std::string> timed_instruction(MemPath p) override {
    std::string s;
    // Before any chase of the path: the chain a line of 8 bytes or more would get.
    const auto last = last_kind_.find(p);
    const bool addr = last != last_kind_.end() ? last->second == ChainKind::address
                                               : chain_kind(p, 64) == ChainKind::address;
    switch (p) {
      case MemPath::global:
        s = addr ? "SPIR-V OpLoad (PhysicalStorageBuffer: a chain of buffer device addresses)"
                 : "SPIR-V OpLoad (StorageBuffer: " + index_chain_why() + ")";
        break;
      case MemPath::l2:
        s = addr ? "SPIR-V OpLoad (PhysicalStorageBuffer, Coherent: a chain of buffer device "
                   "addresses)"
                 : "SPIR-V OpLoad (StorageBuffer, Coherent: " + index_chain_why() + ")";
        break;
      case MemPath::constant:
        s = facts_.uniform_standard_layout
                ? "SPIR-V OpLoad (Uniform, std430 uint array)"
                : "SPIR-V OpLoad (Uniform, std140 uvec4 component: no uniformBufferStandardLayout)";
        break;
      case MemPath::shared:
        s = "SPIR-V OpLoad (Workgroup)";
        break;
      case MemPath::image:
        s = "SPIR-V OpImageFetch (uniform texel buffer)";
        break;
      default:
        return std::nullopt;
    }
    const Pipeline* made = last_pipeline_[p];
    if (!made) return s;
    // NVIDIA: the chase loop's SASS, as OpenCL's listing gives it ("LDS; loop: LDS x16, ...").
    if (const auto ops = ctx_.nv_memory_ops(*made); ops && !ops->load.empty()) {
      return ops->load + loop_listing(parse_sass_loops(ctx_.nv_sass(*made).sass), "main") + " (" +
             s + ")";
    }
    s += executables_suffix(ctx_.device(), made->pipeline, facts_.pipeline_executable_info);
    return s;
  }

  // The shader clock against the timestamps: a one-line chain walked for ~1M hops.
  std::optional<ClockSample> sample_clock() override {
    if (!facts_.shader_clock || !facts_.timing().ok) return std::nullopt;
    const std::vector<uint32_t> self_loop = {0};
    ChaseRequest r;
    r.next = &self_loop;
    r.stride_bytes = 64;
    r.hops_per_repeat = 1 << 20;
    r.repeats = 1;
    const ChaseTiming t = chase(r);
    if (!t.clock_mhz) return std::nullopt;
    const double window_us = t.ns_per_hop.front() * 2.0 * double(r.hops_per_repeat) * 1e-3;
    return ClockSample{*t.clock_mhz, window_us};
  }

  // Hop accounting, as on OpenCL: one launch of warmup_hops (skipped when 0), then for each
  // repeat one launch of N = hops_per_repeat hops and one of 2N, each starting where the
  // previous one ended; the difference of the two is the time of N hops with the launch and
  // any copy into shared memory cancelled. hops_walked = warmup + repeats * 3N.
  ChaseTiming chase(const ChaseRequest& req) override {
    validate_index_chase(req);
    const Support s = supports(req.path);
    if (!s.ok)
      throw BackendError("the " + to_string(req.path) + " path is not supported on " + info_.name +
                         ": " + s.reason);
    const uint64_t bytes = req.footprint_bytes();
    check_chase_footprint(req, max_footprint(req.path), info_.name);
    const uint64_t words_per_line = req.stride_bytes / 4;
    const ChainKind kind = chain_kind(req.path, req.stride_bytes);
    Buffer& chain = buffer_for(req.path, bytes);
    const uint64_t base = kind == ChainKind::address ? device_address(chain) : 0;
    const std::vector<uint32_t> image =
        kind == ChainKind::address ? address_chase_image(req, base) : index_chase_image(req);
    ctx_.upload(chain, image.data(), bytes);

    const Pipeline& pipeline = pipeline_for(req.path, bytes, kind);
    last_kind_[req.path] = kind;
    last_pipeline_[req.path] = &pipeline;
    Walk walk{req.path, pipeline, chain, words_per_line, req.next->size(), kind, base};
    uint32_t idx = 0;  // line 0
    if (req.warmup_hops > 0) run(walk, idx, req.warmup_hops);

    ChaseTiming t;
    std::vector<double> cycles, mhz;
    bool clock_sane = facts_.shader_clock;
    const uint64_t n = req.hops_per_repeat;
    for (int r = 0; r < req.repeats; ++r) {
      const LaunchTime once = run(walk, idx, n);
      const LaunchTime twice = run(walk, idx, 2 * n);
      // When noise in the fixed cost is larger than N hops take, the difference can come out
      // zero or negative; t(2N)/(2N), an upper bound, is then the honest fallback.
      double ns = (twice.ns - once.ns) / static_cast<double>(n);
      if (!(ns > 0)) ns = twice.ns / static_cast<double>(2 * n);
      t.ns_per_hop.push_back(ns);
      if (clock_sane) {
        // The clock is read inside the shader around the loop only, so the ticks of N hops
        // are twice.ticks - once.ticks without any launch cost. A difference that is not
        // positive means the clock did not count the loop: no cycles at all, never a guess.
        if (twice.ticks <= once.ticks) {
          clock_sane = false;
          continue;
        }
        const double dticks = static_cast<double>(twice.ticks - once.ticks);
        cycles.push_back(dticks / static_cast<double>(n));
        if (twice.ns > once.ns) mhz.push_back(dticks / (twice.ns - once.ns) * 1e3);
      }
    }
    // Repeats whose clock rates disagree by more than 2x did not count the same thing: no
    // cycles then either.
    if (clock_sane && mhz.size() == cycles.size()) {
      std::sort(mhz.begin(), mhz.end());
      if (mhz.back() <= 2 * mhz.front()) {
        t.cycles_per_hop = cycles;
        t.clock_mhz = mhz[mhz.size() / 2];
        // The chases' clock is the highest the compute and atomics probes aim at (GpuClock).
        ctx_.clock().observe(*t.clock_mhz);
      }
    }
    t.end_line = static_cast<uint32_t>(idx / words_per_line);
    t.hops_walked = req.warmup_hops + static_cast<uint64_t>(req.repeats) * 3 * n;
    return t;
  }

 private:
  struct Walk {
    MemPath path;
    const Pipeline& pipeline;
    const Buffer& chain;
    uint64_t words_per_line;
    std::size_t lines;
    ChainKind kind;
    uint64_t base;  // the chain's device address (address chains)
  };

  // Addresses for global and l2 where the device has buffer device addresses and the lines
  // hold them (GD_TEST_INDEX_CHASE=1 forces indices, for the tests); indices elsewhere.
  ChainKind chain_kind(MemPath p, uint64_t stride_bytes) const {
    const bool addressable = p == MemPath::global || p == MemPath::l2;
    return addressable && facts_.buffer_device_address && address_chain_fits(stride_bytes) &&
                   !index_chase_forced()
               ? ChainKind::address
               : ChainKind::index;
  }
  std::string index_chain_why() const {
    if (!facts_.buffer_device_address) return "element indices: no bufferDeviceAddress";
    return "element indices: lines too small for addresses, or forced";
  }

  VkBufferUsageFlags address_usage() const {
    return facts_.buffer_device_address
               ? VkBufferUsageFlags{VK_BUFFER_USAGE_SHADER_DEVICE_ADDRESS_BIT_KHR}
               : VkBufferUsageFlags{0};
  }

  uint64_t device_address(const Buffer& b) {
    if (!get_address_) {
      get_address_ = reinterpret_cast<PFN_vkGetBufferDeviceAddressKHR>(
          vkGetDeviceProcAddr(ctx_.device(), "vkGetBufferDeviceAddressKHR"));
      if (!get_address_) throw BackendError("vkGetBufferDeviceAddressKHR not found");
    }
    VkBufferDeviceAddressInfoKHR info{VK_STRUCTURE_TYPE_BUFFER_DEVICE_ADDRESS_INFO_KHR};
    info.buffer = b.get();
    return get_address_(ctx_.device(), &info);
  }

  // The chain of a path lives in a buffer that grows to the largest footprint seen. The
  // uniform buffer is always the whole 64 KiB block chase_uniform.comp declares (or the
  // device's limit), so the shader's block is backed by memory throughout.
  // The l2 path's chain is a storage buffer like the global path's: they share it.
  Buffer& buffer_for(MemPath p, uint64_t bytes) {
    Buffer& b = buffers_[p == MemPath::l2 ? MemPath::global : p];
    if (b && b.size() >= bytes) return b;
    b.reset();
    switch (p) {
      case MemPath::constant:
        b = ctx_.buffer(max_footprint(p), VK_BUFFER_USAGE_UNIFORM_BUFFER_BIT,
                        Context::Memory::device);
        break;
      case MemPath::image:
        b = ctx_.buffer(bytes, VK_BUFFER_USAGE_UNIFORM_TEXEL_BUFFER_BIT, Context::Memory::device,
                        true);
        break;
      default:
        // Global and l2 also by address where the device has them (chase_global.comp).
        b = ctx_.buffer(bytes, VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | address_usage(),
                        Context::Memory::device);
    }
    return b;
  }

  // One pipeline per path; the shared path's array is sized to the chain (a specialization
  // constant), so it has one per footprint.
  const Pipeline& pipeline_for(MemPath p, uint64_t bytes, ChainKind kind) {
    const uint32_t shared_words = p == MemPath::shared ? static_cast<uint32_t>(bytes / 4) : 0;
    auto key = std::make_tuple(p, shared_words, kind);
    auto have = pipelines_.find(key);
    if (have != pipelines_.end()) return *have->second;
    std::string shader;
    VkDescriptorType chain_type = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
    switch (p) {
      case MemPath::global:
        shader = "chase_global";
        break;
      case MemPath::l2:
        shader = "chase_l2";
        break;
      case MemPath::constant:
        shader = "chase_uniform";
        chain_type = VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER;
        break;
      case MemPath::shared:
        shader = "chase_shared";
        break;
      case MemPath::image:
        shader = "chase_texel";
        chain_type = VK_DESCRIPTOR_TYPE_UNIFORM_TEXEL_BUFFER;
        break;
      default:
        throw BackendError("no chase shader for the " + to_string(p) + " path");
    }
    if (kind == ChainKind::address) shader += "_addr";
    if (p == MemPath::constant && facts_.uniform_standard_layout) shader += "_std430";
    if (facts_.shader_clock) shader += "_clock";
    std::vector<uint32_t> spec;
    if (p == MemPath::shared) spec.push_back(shared_words);
    auto made = ctx_.pipeline(shader, {chain_type, VK_DESCRIPTOR_TYPE_STORAGE_BUFFER},
                              4 * sizeof(uint32_t), spec);
    // NVIDIA's machine code, disassembled while the chase runs (timed_instruction reads it).
    if (auto f = ctx_.nv_sass_ahead(*made); f.valid()) ahead_.push_back(std::move(f));
    return *(pipelines_[key] = std::move(made));
  }

  // `hops` hops from element idx, in dispatches of at most kMaxHopsPerDispatch; idx becomes
  // the element reached.
  LaunchTime run(const Walk& w, uint32_t& idx, uint64_t hops) {
    LaunchTime total;
    while (hops > 0) {
      const uint64_t now = std::min(hops, kMaxHopsPerDispatch);
      // chase_common.glsl's Params: start, hops, and the start's address (address chains).
      const uint64_t at = w.base + uint64_t{idx} * 4;
      const uint32_t push[4] = {idx, static_cast<uint32_t>(now), static_cast<uint32_t>(at),
                                static_cast<uint32_t>(at >> 32)};
      auto* out = static_cast<ChaseResult*>(result_.mapped());
      *out = ChaseResult{0xFFFFFFFFu, 0, {0, 0}, {0, 0}};
      uint64_t range = 0;
      if (w.path == MemPath::constant) range = w.chain.size();
      total.ns +=
          ctx_.dispatch(w.pipeline, {{&w.chain, range}, {&result_, 0}}, push, sizeof push, 1);
      const ChaseResult got = *out;
      // The address chases leave the address reached in end (low) and pad (high).
      const uint64_t reached =
          w.kind == ChainKind::address ? got.end | (uint64_t{got.pad} << 32) : got.end;
      const std::optional<uint64_t> end = chase_end_element(w.kind, reached, w.base);
      // The next launch starts here: an index that is not a line start would read out of
      // bounds, so stop rather than go on.
      if (!end || *end % w.words_per_line != 0 || *end / w.words_per_line >= w.lines)
        throw BackendError("chase shader (" + to_string(w.path) + ", " + to_string(w.kind) +
                           ") reached " + std::to_string(reached) +
                           ", which is not the start of one of the " + std::to_string(w.lines) +
                           " lines");
      total.ticks += clock_ticks(got);
      idx = static_cast<uint32_t>(*end);
      hops -= now;
    }
    return total;
  }

  void fill_info() {
    const Facts& f = facts_;
    const auto& limits = f.props.limits;
    info_.backend = "vulkan";
    info_.id = f.id();
    info_.name = f.props.deviceName;
    info_.vendor = vendor_name(f.props.vendorID);
    // Vulkan has no count of compute units; NVIDIA's VK_NV_shader_sm_builtins gives the SMs.
    info_.compute_units = f.sm_count ? static_cast<int>(*f.sm_count) : 0;
    if (f.device_local_bytes) info_.memory_bytes = f.device_local_bytes;
    info_.shared_per_block_bytes = limits.maxComputeSharedMemorySize;
    info_.constant_bytes = limits.maxUniformBufferRange;
    info_.compute_capability = f.api_version();
    info_.driver_version =
        f.driver_info.empty() ? std::to_string(f.props.driverVersion) : f.driver_info;
    info_.toolkit_version = "Vulkan loader " + loader_version();
    if (!f.uuid.empty()) info_.extra["uuid"] = f.uuid;
    info_.extra["device_type"] = f.device_type();
    info_.extra["driver_name"] = f.driver_name;
    info_.extra["compute_units"] = f.sm_count ? "VK_NV_shader_sm_builtins shaderSMCount"
                                              : "not reported by Vulkan (0 = unknown)";
    info_.extra["timestamp_period_ns"] = std::to_string(limits.timestampPeriod);
    info_.extra["timestamp_valid_bits"] = std::to_string(f.timestamp_valid_bits);
    info_.extra["timestamp_compute_and_graphics"] =
        limits.timestampComputeAndGraphics ? "true" : "false";
    info_.extra["timing"] = f.timing().ok ? "timestamp queries" : "none: " + f.timing().reason;
    info_.extra["shader_clock"] = f.shader_clock
                                      ? "VK_KHR_shader_clock (subgroup clock): cycles are its ticks"
                                      : "no VK_KHR_shader_clock: no cycles";
    info_.extra["max_allocation_bytes"] = std::to_string(f.max_allocation_bytes);
    info_.extra["max_storage_buffer_range"] = std::to_string(limits.maxStorageBufferRange);
    info_.extra["max_texel_buffer_elements"] = std::to_string(limits.maxTexelBufferElements);
    std::string shapes;
    for (const CoopMatShape& c : f.cooperative_matrix_shapes)
      shapes += (shapes.empty() ? "" : "; ") + c.name();
    info_.extra["cooperative_matrix"] = shapes.empty() ? "none: " + f.cooperative_matrix_why
                                                       : "VK_KHR_cooperative_matrix: " + shapes;
    info_.extra["image_path"] = f.supports(MemPath::image).ok
                                    ? "yes (R32_UINT uniform texel buffer)"
                                    : "no: " + f.supports(MemPath::image).reason;
  }

  Facts facts_;
  Context ctx_;
  DeviceInfo info_;
  Buffer result_;
  std::map<MemPath, Buffer> buffers_;
  std::map<std::tuple<MemPath, uint32_t, ChainKind>, std::unique_ptr<Pipeline>> pipelines_;
  std::map<MemPath, ChainKind> last_kind_;            // of each path's last chase
  std::map<MemPath, const Pipeline*> last_pipeline_;  // for its listing
  std::vector<std::future<void>> ahead_;  // nv_sass_ahead's: each waits, before the pipelines go
  PFN_vkGetBufferDeviceAddressKHR get_address_ = nullptr;
  std::map<std::string, std::unique_ptr<KernelSet>> kernel_sets_;
};

}  // namespace

std::string loader_version() {
  uint32_t v = 0;
  if (vkEnumerateInstanceVersion(&v) != VK_SUCCESS) return "unknown";
  return std::to_string(VK_API_VERSION_MAJOR(v)) + "." + std::to_string(VK_API_VERSION_MINOR(v)) +
         "." + std::to_string(VK_API_VERSION_PATCH(v));
}

std::vector<DeviceEntry> enumerate(std::string* why) {
  auto say = [&](std::string s) {
    if (why) *why = std::move(s);
  };
  std::vector<DeviceEntry> out;
  try {
    const auto instance = Instance::create();
    const auto devices = instance->physical_devices();
    if (devices.empty()) {
      say("Vulkan: no physical device (is a driver installed, e.g. mesa-vulkan-drivers?)");
      return {};
    }
    for (std::size_t i = 0; i < devices.size(); ++i) {
      Facts f = query_facts(devices[i], static_cast<int>(i));
      query_cooperative_matrix(instance->get(), devices[i], f);
      DeviceEntry e;
      e.id = f.id();
      e.name = f.props.deviceName;
      e.summary = f.summary();
      e.uuid = f.uuid;
      for (MemPath p : all_mem_paths()) e.paths.emplace_back(p, f.supports(p));
      out.push_back(std::move(e));
    }
  } catch (const std::exception& e) {
    say(std::string("Vulkan: ") + e.what() + " (is a driver installed, e.g. mesa-vulkan-drivers?)");
  }
  return out;
}

std::unique_ptr<Device> open(int index, const BorrowedFacts& borrowed) {
  const auto instance = Instance::create();
  const auto devices = instance->physical_devices();
  if (index < 0 || static_cast<std::size_t>(index) >= devices.size())
    throw BackendError("no Vulkan device " + std::to_string(index) + " (" +
                       std::to_string(devices.size()) + " devices)");
  Facts f = query_facts(devices[index], index);
  query_cooperative_matrix(instance->get(), devices[index], f);
  return std::make_unique<VulkanDevice>(instance, devices[index], f, borrowed);
}

}  // namespace gd::vulkan
