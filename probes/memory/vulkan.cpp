// Vulkan kernels of the memory probe (mem_chase.comp): one invocation per subgroup-sized slice
// of one workgroup walks its own chain through a plain storage-buffer load (ca), a coherent
// one (cg: served from L2, no SM-private cache can be coherent across workgroups), a uniform
// buffer (constant) or a uniform texel buffer (texture). With VK_KHR_shader_clock each
// repeat is timed in shader clock ticks inside one dispatch, so the caches stay warm from the
// warm-up through the repeats. Without it (lavapipe) the time per hop is in ns, from the
// timestamps of walks of warmup + r x hops hops, r = 0..repeats (vulkan_walk.hpp), and the
// figures say ns. Every walk's end is checked against the host's walk of the chain.
#include <algorithm>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "compute/vulkan_listing.hpp"
#include "gpu_clock.hpp"
#include "gpudissect/chain.hpp"
#include "gpudissect/units.hpp"
#include "memory/memory.hpp"
#include "memory/vulkan_walk.hpp"
#include "vulkan_probes.hpp"

namespace gd::vulkan {

namespace {

using vulkan_memory::WalkPiece;
constexpr VkDescriptorType kStorage = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;

struct ChasePush {
  uint32_t warmup, hops, repeats, prefetch_words;
};

std::string shader_of(MemLoad l) {
  switch (l) {
    case MemLoad::ca:
      return "mem_chase_ca";
    case MemLoad::cg:
      return "mem_chase_cg";
    case MemLoad::constant:
      return "mem_chase_uniform";
    case MemLoad::texture:
      return "mem_chase_texel";
    default:
      throw BackendError("the Vulkan memory chase has no " + to_string(l) + " load");
  }
}

// The timed load as SPIR-V states it (the machine code, where the driver gives it, follows).
std::string spirv_load(MemLoad l) {
  switch (l) {
    case MemLoad::ca:
      return "SPIR-V OpLoad (StorageBuffer, NonWritable)";
    case MemLoad::cg:
      return "SPIR-V OpLoad (StorageBuffer, Coherent)";
    case MemLoad::constant:
      return "SPIR-V OpLoad (Uniform)";
    default:
      return "SPIR-V OpImageFetch (uniform texel buffer)";
  }
}

class VulkanMemory final : public MemoryKernels {
 public:
  VulkanMemory(Context& ctx, const DeviceInfo& info) : ctx_(ctx), info_(info) {
    const Facts& f = ctx.facts();
    cpu_ = f.props.deviceType == VK_PHYSICAL_DEVICE_TYPE_CPU;
    subgroup_ = std::max<uint32_t>(1, f.subgroup_size);
    // The clock is only read inside one dispatch: a loop limit would cut that dispatch up.
    clock_ = f.shader_clock && !f.loop_iteration_limit;
  }

  Support supports(const std::string& part) override {
    const Facts& f = ctx_.facts();
    if (!f.timing().ok) return f.timing();
    if (part == "carveout")
      return Support::no(
          "Vulkan has no carve-out preference: the driver splits L1 and shared memory by the "
          "pipeline's workgroup memory, and no API reads the split back");
    if (part == "partition.readonly")
      return Support::no(
          "GLSL states no read-only data path apart from the plain storage-buffer load "
          "(readonly and restrict are hints; partition.global is that load)");
    if (part == "partition.texture" && !f.supports(MemPath::image).ok)
      return f.supports(MemPath::image);
    if (part == "tlb.chunks")
      return Support::no(
          "Vulkan cannot map separate 2 MiB allocations side by side at a chosen page size "
          "(sparse binding places memory at the driver's block size, in pages it picks)");
    if (part == "constant" && constant_bank_bytes() < 2048)
      return Support::no("maxUniformBufferRange is below 2 KiB");
    if (subgroup_ * 2 > f.props.limits.maxComputeWorkGroupSize[0])
      return Support::no("a workgroup cannot hold two subgroups");
    return Support::yes();
  }

  uint64_t constant_bank_bytes() const override {
    return ctx_.facts().max_footprint(MemPath::constant);
  }

  void release_tlb_buffers() override {
    chain_.reset();
    texel_.reset();
    next_.reset();
    flush_.reset();
  }

  MemChaseTiming chase(const MemChaseRequest& r) override;

 private:
  struct Prepared {
    Buffer* chain = nullptr;
    uint64_t words_per_line = 1, prefetch_words = 0;
    uint32_t prefetch_sum = 0;  // what the prefetch must add up to
  };
  Prepared prepare(const MemChaseRequest& r);
  const Pipeline& pipeline(MemLoad l, int warps);
  double dispatch(const Pipeline& p, const Prepared& c, MemLoad l, const WalkPiece& piece,
                  uint32_t prefetch_words);
  void reset_state(const MemChaseRequest& r, const Prepared& c);
  std::vector<uint32_t> read_ends(const MemChaseRequest& r, const Prepared& c);
  std::string instruction(MemLoad l, int warps);

  Buffer& grow(Buffer& b, uint64_t bytes, VkBufferUsageFlags usage, Context::Memory where,
               bool texel = false) {
    if (b && b.size() >= bytes) return b;
    b.reset();
    b = ctx_.buffer(bytes, usage, where, texel);
    return b;
  }

  Context& ctx_;
  DeviceInfo info_;
  bool cpu_ = false, clock_ = false, started_ = false;
  uint32_t subgroup_ = 32;
  Buffer chain_, texel_, uniform_, next_, flush_, state_, clocks_;
  std::unique_ptr<Pipeline> fill_;
  std::map<std::pair<std::string, int>, std::unique_ptr<Pipeline>> pipelines_;
  std::map<std::pair<std::string, int>, std::string> instructions_;
};

VulkanMemory::Prepared VulkanMemory::prepare(const MemChaseRequest& r) {
  const Facts& f = ctx_.facts();
  const uint64_t lines = r.next->size();
  const uint64_t bytes = lines * r.stride_bytes;
  Prepared c;
  c.words_per_line = r.stride_bytes / 4;
  if (r.load == MemLoad::constant) {
    const uint64_t bank = constant_bank_bytes();
    if (bytes > bank)
      throw BackendError("constant chase: " + std::to_string(bytes) + " bytes do not fit the " +
                         std::to_string(bank) + "-byte uniform buffer (maxUniformBufferRange)");
    std::vector<uint32_t> image(bank / 4, 0);
    for (uint64_t i = 0; i < lines; ++i)
      image[i * c.words_per_line] = static_cast<uint32_t>((*r.next)[i] * c.words_per_line);
    grow(uniform_, bank, VK_BUFFER_USAGE_UNIFORM_BUFFER_BIT, Context::Memory::device);
    ctx_.upload(uniform_, image.data(), bank);
    c.chain = &uniform_;
    return c;
  }
  const bool texel = r.load == MemLoad::texture;
  const uint64_t limit =
      texel ? f.max_footprint(MemPath::image)
            : std::min<uint64_t>(f.props.limits.maxStorageBufferRange,
                                 f.max_allocation_bytes ? f.max_allocation_bytes : UINT64_MAX);
  if (bytes > limit)
    throw AllocationFailed("a chain of " + format_bytes(double(bytes)) + " is past the " +
                           format_bytes(double(limit)) + " one " +
                           (texel ? "texel buffer (maxTexelBufferElements)"
                                  : "storage buffer (maxStorageBufferRange, "
                                    "maxMemoryAllocationSize)") +
                           " can span");
  const VkBufferUsageFlags usage =
      VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | (texel ? VK_BUFFER_USAGE_UNIFORM_TEXEL_BUFFER_BIT : 0);
  Buffer& chain = texel ? grow(texel_, bytes, usage, Context::Memory::device, true)
                        : grow(chain_, bytes, usage, Context::Memory::device);
  c.chain = &chain;
  grow(next_, lines * 4, VK_BUFFER_USAGE_STORAGE_BUFFER_BIT, Context::Memory::device);
  ctx_.upload(next_, r.next->data(), lines * 4);
  if (r.l2_prefetch && !texel) {
    // The prefetch reads every 8th word of the chain: zero where no line starts, so the sum
    // it must come to is known.
    ctx_.fill(chain, (bytes + 3) / 4 * 4, 0);
    c.prefetch_words = bytes / 4;
    for (uint64_t i = 0; i < lines; ++i)
      if ((i * c.words_per_line) % 8 == 0)
        c.prefetch_sum += static_cast<uint32_t>((*r.next)[i] * c.words_per_line);
  }
  if (!fill_) fill_ = ctx_.pipeline("mem_fill", {kStorage, kStorage}, 2 * sizeof(uint32_t));
  const uint32_t push[2] = {static_cast<uint32_t>(lines), static_cast<uint32_t>(c.words_per_line)};
  const uint32_t groups = static_cast<uint32_t>(std::min<uint64_t>(65535, (lines + 255) / 256));
  ctx_.dispatch(*fill_, {{&next_, 0}, {&chain, 0}}, push, sizeof push, groups);
  // Writes allocate in L2: three times its size written elsewhere evicts the chain. A CPU
  // driver has no GPU L2 to flush, and the writes would only cost CI time.
  if (r.flush_l2 && !cpu_) {
    const uint64_t l2 = info_.l2_bytes.value_or(64ull << 20);
    grow(flush_, 3 * l2, VK_BUFFER_USAGE_STORAGE_BUFFER_BIT, Context::Memory::device);
    ctx_.fill(flush_, 3 * l2, 0x5a5a5a5au);
  }
  return c;
}

const Pipeline& VulkanMemory::pipeline(MemLoad l, int warps) {
  // The uniform chase as a std430 uint array where the device has the layout.
  const bool flat = l == MemLoad::constant && ctx_.facts().uniform_standard_layout;
  const std::string name = shader_of(l) + (flat ? "_std430" : "") + (clock_ ? "_clock" : "");
  auto key = std::make_pair(name, warps);
  auto have = pipelines_.find(key);
  if (have != pipelines_.end()) return *have->second;
  const VkDescriptorType chain_type = l == MemLoad::constant ? VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER
                                      : l == MemLoad::texture
                                          ? VK_DESCRIPTOR_TYPE_UNIFORM_TEXEL_BUFFER
                                          : kStorage;
  auto made = ctx_.pipeline(name, {chain_type, kStorage, kStorage, kStorage}, sizeof(ChasePush),
                            {subgroup_, subgroup_ * static_cast<uint32_t>(warps)});
  return *(pipelines_[key] = std::move(made));
}

std::string VulkanMemory::instruction(MemLoad l, int warps) {
  const auto key = std::make_pair(shader_of(l), warps);
  auto have = instructions_.find(key);
  if (have != instructions_.end()) return have->second;
  std::string s = spirv_load(l);
  if (l == MemLoad::constant && ctx_.facts().uniform_standard_layout)
    s = "SPIR-V OpLoad (Uniform, std430 uint array)";
  if (ctx_.facts().pipeline_executable_info)
    s += executables_suffix(ctx_.device(), pipeline(l, warps).pipeline, true);
  return instructions_[key] = s;
}

void VulkanMemory::reset_state(const MemChaseRequest& r, const Prepared& c) {
  auto* pos = static_cast<uint32_t*>(state_.mapped());
  for (int w = 0; w < r.warps; ++w) pos[w] = static_cast<uint32_t>(r.starts[w] * c.words_per_line);
  std::fill(pos + r.warps, pos + r.warps + subgroup_, 0u);  // the prefetch's sums
}

std::vector<uint32_t> VulkanMemory::read_ends(const MemChaseRequest& r, const Prepared& c) {
  const auto* pos = static_cast<const uint32_t*>(state_.mapped());
  std::vector<uint32_t> lines;
  for (int w = 0; w < r.warps; ++w) {
    if (pos[w] % c.words_per_line != 0 || pos[w] / c.words_per_line >= r.next->size())
      throw BackendError("memory chase (" + to_string(r.load) + "): walker " + std::to_string(w) +
                         " ended at element " + std::to_string(pos[w]) +
                         ", not the start of one of the " + std::to_string(r.next->size()) +
                         " lines");
    lines.push_back(static_cast<uint32_t>(pos[w] / c.words_per_line));
  }
  return lines;
}

double VulkanMemory::dispatch(const Pipeline& p, const Prepared& c, MemLoad l,
                              const WalkPiece& piece, uint32_t prefetch_words) {
  const ChasePush push{static_cast<uint32_t>(piece.warmup), static_cast<uint32_t>(piece.hops),
                       piece.repeats, prefetch_words};
  // The texel chain is bound through its view; the prefetch binding then gets any storage
  // buffer (it reads nothing with prefetch_words 0).
  const Buffer* whole = l == MemLoad::ca || l == MemLoad::cg ? c.chain : &state_;
  const uint64_t range = l == MemLoad::constant ? constant_bank_bytes() : 0;
  return ctx_.dispatch(p, {{c.chain, range}, {&state_, 0}, {&clocks_, 0}, {whole, 0}}, &push,
                       sizeof push, 1);
}

// shape: validate, prepare, then the clocked walk or the timestamped prefixes, checked
MemChaseTiming VulkanMemory::chase(const MemChaseRequest& r) {
  if (!r.next || r.next->empty()) throw BackendError("memory chase: empty chain");
  const auto& limits = ctx_.facts().props.limits;
  if (r.warps < 1 || r.warps > 32 || static_cast<int>(r.starts.size()) != r.warps ||
      subgroup_ * uint32_t(r.warps) > limits.maxComputeWorkGroupSize[0] ||
      subgroup_ * uint32_t(r.warps) > limits.maxComputeWorkGroupInvocations)
    throw BackendError("memory chase: " + std::to_string(r.warps) + " walkers of " +
                       std::to_string(subgroup_) + " invocations, " +
                       std::to_string(r.starts.size()) + " starts, for a workgroup of at most " +
                       std::to_string(limits.maxComputeWorkGroupInvocations));
  if (r.chunk_bytes) throw BackendError("memory chase: no chunk-mapped buffers through Vulkan");
  if (r.stride_bytes < 4 || r.stride_bytes % 4 != 0)
    throw BackendError("memory chase: the stride must be a multiple of 4 bytes");
  for (uint32_t s : r.starts)
    if (s >= r.next->size()) throw BackendError("memory chase: a start past the chain");
  if (r.warmup_hops + r.hops_per_repeat * uint64_t(r.repeats) > 0xFFFFFFFFull)
    throw BackendError("memory chase: more than 2^32 hops in one walk");
  ctx_.clock().prepare(!started_);  // the clock brought up once, before the first chase
  started_ = true;
  const Prepared c = prepare(r);
  const Pipeline& p = pipeline(r.load, r.warps);
  grow(state_, 4 * (r.warps + subgroup_), VK_BUFFER_USAGE_STORAGE_BUFFER_BIT,
       Context::Memory::host);
  grow(clocks_, 16ull * r.warps * (r.repeats + 1), VK_BUFFER_USAGE_STORAGE_BUFFER_BIT,
       Context::Memory::host);
  const auto limit = ctx_.facts().loop_iteration_limit;
  // A prefetch whose loop would run into the driver's loop limit is left out (the limit is
  // llvmpipe's, which has no GPU L2 to fill).
  uint32_t prefetch = static_cast<uint32_t>(c.prefetch_words);
  if (limit && c.prefetch_words / (8 * subgroup_) + 64 > *limit / 2) prefetch = 0;
  auto check_prefetch = [&] {
    if (!prefetch) return;
    const auto* sums = static_cast<const uint32_t*>(state_.mapped()) + r.warps;
    uint32_t got = 0;
    for (uint32_t i = 0; i < subgroup_; ++i) got += sums[i];
    if (got != c.prefetch_sum)
      throw BackendError("memory chase: the L2 prefetch read a sum of " + std::to_string(got) +
                         ", the chain's words add up to " + std::to_string(c.prefetch_sum));
  };

  MemChaseTiming t;
  t.instruction = instruction(r.load, r.warps);
  const WalkPiece whole{r.warmup_hops, r.hops_per_repeat, static_cast<uint32_t>(r.repeats)};
  if (clock_) {
    reset_state(r, c);
    const double ns = dispatch(p, c, r.load, whole, prefetch);
    check_prefetch();
    t.end_lines = read_ends(r, c);
    const auto* clk = static_cast<const uint32_t*>(clocks_.mapped());
    auto ticks = [&](std::size_t slot) {
      const uint32_t* q = clk + 4 * slot;
      return (q[2] | (uint64_t(q[3]) << 32)) - (q[0] | (uint64_t(q[1]) << 32));
    };
    for (int w = 0; w < r.warps; ++w) {
      std::vector<double> v;
      for (int k = 0; k < r.repeats; ++k)
        v.push_back(r.hops_per_repeat
                        ? double(ticks(w * (r.repeats + 1) + 1 + k)) / double(r.hops_per_repeat)
                        : 0);
      t.cycles_per_hop.push_back(v);
    }
    // Walker 0's ticks from its first reading to its last against the dispatch's timestamps:
    // a little under the clock (the launch is in the timestamps only), so only over a
    // dispatch long enough (1 ms) for the launch not to count.
    if (ns >= 1e6 && ticks(0) > 0) {
      t.clock_mhz = double(ticks(0)) / ns * 1e3;
      ctx_.clock().observe(*t.clock_mhz);
    }
    return t;
  }
  // No shader clock: walks of warmup + k x hops hops, k = 0..repeats, each from the starts.
  t.unit = "ns";
  std::vector<double> prefix_ns;
  for (uint32_t k = 0; k <= whole.repeats; ++k) {
    reset_state(r, c);
    const WalkPiece prefix{r.warmup_hops, r.hops_per_repeat, k};
    const uint64_t hops = vulkan_memory::piece_hops(prefix);
    double ns = 0;
    bool first = true;
    for (const WalkPiece& piece : vulkan_memory::split_walk(prefix, limit)) {
      ns += dispatch(p, c, r.load, piece, first ? prefetch : 0);
      first = false;
    }
    check_prefetch();
    prefix_ns.push_back(ns);
    t.end_lines = read_ends(r, c);
    for (int w = 0; w < r.warps; ++w) {
      const uint32_t want = walk(*r.next, r.starts[w], hops);
      if (k < whole.repeats && t.end_lines[w] != want)
        throw BackendError("memory chase (" + to_string(r.load) + "): walker " + std::to_string(w) +
                           " ended at line " + std::to_string(t.end_lines[w]) + " after " +
                           std::to_string(hops) + " hops, the chain says " + std::to_string(want));
    }
  }
  const std::vector<double> ns =
      vulkan_memory::ns_per_hop_from_prefixes(prefix_ns, r.warmup_hops, r.hops_per_repeat);
  // One dispatch times all walkers together: each gets the same time per hop.
  t.cycles_per_hop.assign(r.warps, ns);
  return t;
}

}  // namespace

std::unique_ptr<MemoryKernels> make_memory_kernels(Context& ctx, const DeviceInfo& info) {
  return std::make_unique<VulkanMemory>(ctx, info);
}

}  // namespace gd::vulkan
