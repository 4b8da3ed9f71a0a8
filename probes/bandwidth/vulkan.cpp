// Vulkan kernels of the bandwidth probe: streams (read/write/copy through storage buffers)
// and workgroup memory at a stride, timed with timestamp queries. Byte counts, layouts and
// checks are gpudissect/bandwidth.hpp's, as on CUDA and OpenCL. No SM clock is given here,
// so the probe reports GB/s and no bytes per clock (never from an assumed clock).
#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <future>
#include <limits>
#include <string>
#include <thread>

#include "bandwidth/bandwidth.hpp"
#include "compute/compute.hpp"
#include "compute/vulkan_listing.hpp"
#include "vulkan_probes.hpp"

namespace gd::vulkan {

namespace {

// stream_common.glsl: 256 invocations x 4 uvec4s per step.
constexpr uint64_t kWorkgroup = 256, kUnroll = 4, kChunkBytes = kWorkgroup * kUnroll * 16;
// The flat grids (stream_*_flat.comp): one uvec4 per invocation, a 4 KiB chunk a workgroup.
constexpr uint64_t kFlatChunkBytes = kWorkgroup * 16;
constexpr uint32_t kSharedBytes = 16384;  // shared_read.comp's array
constexpr uint32_t kSumGroups = 64;       // workgroups of the (untimed) fill and sum

// The push constants of every stream shader (stream_common.glsl's Layout block).
struct StreamPush {
  uint32_t chunks, groups, chunks_per_group, first_pass, pass_count;
};
// Loop iterations a stream shader spends outside its pass loop (the reduction), kept free
// under llvmpipe's limit.
constexpr uint64_t kLoopHeadroom = 64;

uint32_t narrow(uint64_t v, const char* what) {
  if (v > std::numeric_limits<uint32_t>::max())
    throw BackendError(std::string("stream: ") + what + " (" + std::to_string(v) +
                       ") does not fit the shader's 32-bit counter");
  return static_cast<uint32_t>(v);
}

constexpr VkDescriptorType kStorage = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;

class VulkanBandwidth final : public BandwidthKernels {
 public:
  VulkanBandwidth(Context& ctx, const DeviceInfo& info) : ctx_(ctx), info_(info) {
    const auto& limits = ctx.facts().props.limits;
    max_buffer_ = limits.maxStorageBufferRange;
    if (ctx.facts().max_allocation_bytes)
      max_buffer_ = std::min<uint64_t>(max_buffer_, ctx.facts().max_allocation_bytes);
    shared_ok_ = limits.maxComputeSharedMemorySize >= kSharedBytes + kWorkgroup * 4;
    timing_ = ctx.facts().timing();  // without timestamps nothing here can be timed
    read_ = ctx.pipeline("stream_read", {kStorage, kStorage}, sizeof(StreamPush));
    read_l2_ = ctx.pipeline("stream_read_l2", {kStorage, kStorage}, sizeof(StreamPush));
    write_ = ctx.pipeline("stream_write", {kStorage}, sizeof(StreamPush));
    copy_ = ctx.pipeline("stream_copy", {kStorage, kStorage}, sizeof(StreamPush));
    write_flat_ = ctx.pipeline("stream_write_flat", {kStorage}, sizeof(StreamPush));
    copy_flat_ = ctx.pipeline("stream_copy_flat", {kStorage, kStorage}, sizeof(StreamPush));
    max_groups_ = limits.maxComputeWorkGroupCount[0];
    fill_ = ctx.pipeline("buffer_fill", {kStorage}, sizeof(uint32_t));
    sum_ = ctx.pipeline("buffer_sum", {kStorage, kStorage}, sizeof(StreamPush));
    sum_word_ = ctx.buffer(4, VK_BUFFER_USAGE_STORAGE_BUFFER_BIT, Context::Memory::device);
    // NVIDIA's machine code, disassembled while the probe measures (instruction() reads it).
    for (const auto* p : {&read_, &read_l2_, &write_, &copy_, &write_flat_, &copy_flat_})
      if (auto f = ctx.nv_sass_ahead(**p); f.valid()) ahead_.push_back(std::move(f));
  }

  uint64_t stream_chunk_bytes(const StreamRequest& r) const override {
    return flat(r) ? kFlatChunkBytes : kChunkBytes;
  }
  Support supports_flat() const override { return timing_; }

  // Four workgroups per SM where the SM count is known (NVIDIA); on a CPU driver four per
  // host core (lavapipe runs workgroups on one worker thread per core); 1024 elsewhere.
  int stream_blocks() const override {
    if (info_.compute_units > 0) return info_.compute_units * 4;
    if (cpu_device())
      return 4 * static_cast<int>(std::max(2u, std::thread::hardware_concurrency()));
    return 1024;
  }

  Support supports(BwOp op, BwLoad load) const override {
    if (!timing_.ok) return timing_;
    if (load == BwLoad::cached) return Support::yes();
    if (load == BwLoad::l2_only && op == BwOp::read) {
      if (cpu_device())
        return Support::no(
            "a CPU's caches serve coherent loads at every level: no load skips its L1");
      return Support::yes();
    }
    return Support::no(
        "GLSL has no cache operators or bulk copies; the Vulkan backend streams "
        "through storage buffers with plain loads (and coherent reads: the L2 path) only");
  }

  StreamTiming stream(const StreamRequest& r) override {
    // The coherent read runs on a CPU too (tests check its sum there), though the probe does
    // not sweep it as an L2 read on one.
    const bool l2_read = r.op == BwOp::read && r.load == BwLoad::l2_only;
    const Support s = supports(r.op, r.load);
    if (!s.ok && !(l2_read && timing_.ok)) throw BackendError("stream: " + s.reason);
    if (r.blocks > 0) throw BackendError("stream: Vulkan cannot place workgroups on chosen SMs");
    if (r.repeats < 1) throw BackendError("stream: bad repeat count");
    if (flat(r)) return stream_flat(r);
    StreamTiming t;
    t.layout = stream_layout(r.buffer_bytes, uint64_t(stream_blocks()), kChunkBytes);
    const StreamLayout& l = t.layout;
    const uint64_t bytes = l.buffer_bytes();
    check_fits(bytes);
    narrow(r.passes, "passes");
    // One launch is one dispatch, except on llvmpipe where its passes are split into as few
    // dispatches as keep every invocation under the loop limit (passes x chunks per group
    // iterations); the launch's time is then the sum of theirs.
    uint64_t passes_per_dispatch = r.passes;
    if (const auto limit = ctx_.facts().loop_iteration_limit) {
      // Per pass: the pass loop's own iteration, and per chunk the chunk loop's and, where
      // the compiler kept them, the two unroll loops' (1 + 2 x 4).
      const uint64_t per_pass = 1 + (1 + 2 * kUnroll) * std::max<uint64_t>(1, l.chunks_per_block);
      if (per_pass + kLoopHeadroom > *limit)
        throw AllocationFailed("a buffer of " + std::to_string(bytes) +
                               " bytes needs more loop iterations per pass than llvmpipe allows");
      passes_per_dispatch = std::min(r.passes, (*limit - kLoopHeadroom) / per_pass);
    }
    if (r.op != BwOp::write) prepare_source(bytes);
    if (r.op != BwOp::read) grow(destination_, bytes);

    const Pipeline* pipeline = nullptr;
    std::vector<Binding> bindings;
    switch (r.op) {
      case BwOp::read:
        pipeline = l2_read ? read_l2_.get() : read_.get();
        bindings = {{&source_, 0}, {&sum_word_, 0}};
        break;
      case BwOp::write:
        pipeline = write_.get();
        bindings = {{&destination_, 0}};
        break;
      case BwOp::copy:
        pipeline = copy_.get();
        bindings = {{&source_, 0}, {&destination_, 0}};
        break;
    }
    zero_sum();
    int launches = 0;
    for (int rep = -1; rep < r.repeats; ++rep) {  // -1: untimed warm-up
      double ns = 0;
      for (uint64_t first = 0; first < r.passes; first += passes_per_dispatch) {
        const StreamPush push{
            narrow(l.chunks, "chunks"), narrow(l.blocks, "workgroups"),
            narrow(l.chunks_per_block, "chunks per workgroup"), static_cast<uint32_t>(first),
            static_cast<uint32_t>(std::min(passes_per_dispatch, r.passes - first))};
        ns +=
            ctx_.dispatch(*pipeline, bindings, &push, sizeof push, static_cast<uint32_t>(l.blocks));
      }
      if (rep >= 0) t.seconds.push_back(ns * 1e-9);
      ++launches;
    }
    if (r.op == BwOp::read) {
      const uint32_t want = stream_read_checksum(l, r.passes) * uint32_t(launches);
      const uint32_t got = read_sum();
      if (got != want)
        t.check_error = "read checksum " + std::to_string(got) + ", expected " +
                        std::to_string(want) + ": loads were lost";
    } else {
      const uint32_t got = sum_of(destination_, bytes);
      const uint32_t want = stream_written_checksum(l, r.passes);
      if (got != want)
        t.check_error = "written data sums to " + std::to_string(got) + ", expected " +
                        std::to_string(want) + ": stores were lost";
    }
    return t;
  }

  Support supports_shared() const override {
    if (!timing_.ok) return timing_;
    if (!shared_ok_) return Support::no("less than 17 KiB of workgroup memory");
    return Support::yes();
  }

  SharedTiming shared(const SharedRequest& r) override {
    if (r.width_bytes != 4 && r.width_bytes != 8 && r.width_bytes != 16)
      throw BackendError("shared: width must be 4, 8 or 16 bytes");
    if (!shared_ok_) throw BackendError("shared: " + supports_shared().reason);
    SharedTiming t;
    SharedLayout& l = t.layout;
    l.blocks = uint64_t(std::max(8, info_.compute_units)) * 2;
    l.threads = kWorkgroup;
    l.width_bytes = r.width_bytes;
    l.stride = r.stride;
    l.elements = kSharedBytes / r.width_bytes;
    l.loads_per_iteration = 8;
    l.iterations = r.iterations ? r.iterations : 2048;
    // On llvmpipe the loop limit caps the iterations (9 loop iterations each, counting the
    // 8 loads' loop, and the fill's); the layout says how many ran, so the bytes count right.
    if (const auto limit = ctx_.facts().loop_iteration_limit)
      l.iterations = std::min<uint64_t>(l.iterations, (*limit - kLoopHeadroom - 64) / 9);
    // shared_read.comp reads its values from the stream push-constant block.
    const StreamPush push{l.elements, l.stride, narrow(l.iterations, "iterations"), 0, 0};
    auto& pipeline = shared_[r.width_bytes];
    if (!pipeline)
      pipeline = ctx_.pipeline("shared_read_" + std::to_string(r.width_bytes), {kStorage},
                               sizeof(StreamPush));
    zero_sum();
    int launches = 0;
    for (int rep = -1; rep < r.repeats; ++rep) {
      const double ns = ctx_.dispatch(*pipeline, {{&sum_word_, 0}}, &push, sizeof push,
                                      static_cast<uint32_t>(l.blocks));
      if (rep >= 0) t.seconds.push_back(ns * 1e-9);
      ++launches;
    }
    const uint32_t want = shared_checksum(l) * uint32_t(launches), got = read_sum();
    if (got != want)
      t.check_error =
          "workgroup-memory checksum " + std::to_string(got) + ", expected " + std::to_string(want);
    return t;
  }

  Support supports_scaling() const override {
    return Support::no("Vulkan cannot place workgroups on chosen SMs");
  }

  // Host-link transfers the Vulkan way. Pinned: a mapped host-visible buffer (HOST_CACHED
  // for the host to read from, where a type offers it) copied to or from a device-local one
  // by vkCmdCopyBuffer. Pageable: ordinary host memory, memcpy'd into or out of that mapped
  // buffer around the same copy, as a driver stages pageable memory.
  Support supports_host(bool) const override { return timing_; }

  Support supports_host(HostDir d, bool pinned) const override {
    const Support s = supports_host(pinned);
    if (!s.ok || d != HostDir::both || ctx_.has_transfer_queue()) return s;
    return Support::no(
        "the device has no dedicated transfer queue family (TRANSFER without GRAPHICS or "
        "COMPUTE), so there is no second queue to run the device->host copy beside the "
        "host->device one: a single queue runs its copies one after the other");
  }

  HostTiming host(const HostRequest& r) override {
    const Support s = supports_host(r.dir, r.pinned);
    if (!s.ok) throw BackendError("host: " + s.reason);
    if (r.bytes == 0 || r.bytes % 16)
      throw BackendError("host: size must be a positive multiple of 16 bytes");
    if (r.repeats < 1) throw BackendError("host: bad repeat count");
    const bool to_dev = r.dir != HostDir::to_host, to_host = r.dir != HostDir::to_device;
    const uint64_t words = r.bytes / 4;
    using Host = Context::Memory;
    const bool pair = r.dir == HostDir::both;
    // Host-visible staging (send from, receive into), device-local ends; the device source
    // holds word i = i, the device destination is zeroed, the host one set to all ones, so a
    // copy that did not happen cannot pass the check.
    if (to_dev) {
      grow_link(stage_in_, r.bytes, Host::host);
      grow_link(dev_in_, r.bytes, Host::device);
      ctx_.fill(dev_in_, r.bytes, 0);
    }
    if (to_host) {
      grow_link(stage_out_, r.bytes, Host::host_cached);
      if (!dev_out_ || dev_out_.size() < r.bytes) {
        grow_link(dev_out_, r.bytes, Host::device);
        const uint32_t n = narrow(dev_out_.size() / 4, "words");
        ctx_.dispatch(*fill_, {{&dev_out_, 0}}, &n, sizeof n, groups_for(n));
      }
    }
    uint32_t* h_in = to_dev ? static_cast<uint32_t*>(stage_in_.mapped()) : nullptr;
    uint32_t* h_out = to_host ? static_cast<uint32_t*>(stage_out_.mapped()) : nullptr;
    if (!r.pinned) {
      // Kept for the next point and curve, as the mapped ones are: a fresh vector per point
      // zeroed (page faults on) the transfer's bytes, most of a pageable curve's time.
      if (to_dev) grow_pageable(pageable_in_, words);
      if (to_host) grow_pageable(pageable_out_, words);
      h_in = to_dev ? pageable_in_.data() : nullptr;
      h_out = to_host ? pageable_out_.data() : nullptr;
    }
    if (to_dev)
      for (uint64_t i = 0; i < words; ++i) h_in[i] = static_cast<uint32_t>(i);
    if (to_host) std::memset(h_out, 0xff, r.bytes);
    // Pageable: the staging buffer may still hold the pattern from a pinned run; clear it, so
    // that only the memcpy can put the data there.
    if (!r.pinned && to_dev) std::memset(stage_in_.mapped(), 0, r.bytes);

    using Clock = std::chrono::steady_clock;
    HostTiming t;
    for (int rep = -1; rep < r.repeats; ++rep) {  // -1: untimed warm-up (first touch)
      const auto t0 = Clock::now();
      double gpu_ns = 0;
      if (!r.pinned && !pair) {
        pageable_in_pieces(to_dev, h_in, h_out, r.bytes);
      } else if (pair) {
        if (!r.pinned) std::memcpy(stage_in_.mapped(), h_in, r.bytes);
        ctx_.copy_pair(stage_in_, dev_in_, dev_out_, stage_out_, r.bytes);
        if (!r.pinned) std::memcpy(h_out, stage_out_.mapped(), r.bytes);
      } else {
        gpu_ns = to_dev ? ctx_.copy(stage_in_, dev_in_, r.bytes)
                        : ctx_.copy(dev_out_, stage_out_, r.bytes);
      }
      const double wall = std::chrono::duration<double>(Clock::now() - t0).count();
      if (rep < 0) continue;
      // Pinned, one direction: the copy's own time between its timestamps, which cannot be
      // longer than the host waited for it (a cross-check of the timestamp period).
      if (r.pinned && !pair) {
        if (gpu_ns * 1e-9 > wall * 1.25 + 1e-4 && t.check_error.empty())
          t.check_error = "the copy's timestamps span " + std::to_string(gpu_ns * 1e-3) +
                          " us, more than the " + std::to_string(wall * 1e6) +
                          " us the host waited for it: timestamps are not to be trusted";
        t.seconds.push_back(gpu_ns * 1e-9);
      } else {
        t.seconds.push_back(wall);
      }
    }
    t.note = host_note(r);
    std::optional<uint32_t> arrived;
    if (to_dev) arrived = sum_of(dev_in_, r.bytes);
    const std::string err = host_transfer_error(r.dir, arrived, h_out, r.bytes);
    if (!err.empty()) t.check_error = err;
    return t;
  }

  // The GLSL access by name, and what the driver compiled the kernel to: NVIDIA's SASS load
  // and store where the context keeps its machine code, else what
  // VK_KHR_pipeline_executable_properties gives (NVIDIA: statistics only; Mesa drivers,
  // lavapipe included: the ISA's most frequent opcodes).
  std::optional<std::string> instruction(const std::string& kind) override {
    std::string s;
    if (kind.rfind("shared.", 0) == 0)
      s = "shared " + kind.substr(7) + "-byte load";
    else if (kind.rfind("read.l2_only", 0) == 0)
      s = "coherent storage-buffer uvec4 load";
    else if (kind.rfind("read", 0) == 0)
      s = "storage-buffer uvec4 load";
    else if (kind.rfind("write", 0) == 0)
      s = "storage-buffer uvec4 store";
    else if (kind.rfind("copy", 0) == 0)
      s = "storage-buffer uvec4 load + store";
    else
      return std::nullopt;
    const Pipeline* p = pipeline_of(kind);
    if (!p) return s;
    // The timed loop's own load and store (a reduction after it may load more often); a
    // kernel without a loop (the flat grids: one access per invocation) by its whole code.
    if (const auto ops = ctx_.nv_memory_ops(*p)) {
      std::string load = ops->load, store = ops->store;
      const auto loops = parse_sass_loops(ctx_.nv_sass(*p).sass);
      if (const auto it = loops.find("main"); it != loops.end()) {
        int loads = 0, stores = 0;
        for (const auto& [op, n] : it->second.opcodes) {
          if (op.rfind("LD", 0) == 0 && op.rfind("LDC", 0) != 0 && n > loads) load = op, loads = n;
          if (op.rfind("ST", 0) == 0 && n > stores) store = op, stores = n;
        }
      }
      const bool copy = kind.rfind("copy", 0) == 0, write = kind.rfind("write", 0) == 0;
      const std::string sass = copy ? load + " + " + store : write ? store : load;
      if (!(copy ? load.empty() || store.empty() : sass.empty())) return sass + " (" + s + ")";
    }
    s += executables_suffix(ctx_.device(), p->pipeline, ctx_.facts().pipeline_executable_info);
    return s;
  }

 private:
  static bool flat(const StreamRequest& r) { return r.flat && r.op != BwOp::read; }
  // The pipeline a sweep kind (plan_sweep's names) runs; null for none made yet.
  const Pipeline* pipeline_of(const std::string& kind) const {
    const bool is_flat = kind.find(".flat") != std::string::npos;
    if (kind.rfind("read.l2_only", 0) == 0) return read_l2_.get();
    if (kind.rfind("read", 0) == 0) return read_.get();
    if (kind.rfind("write", 0) == 0) return is_flat ? write_flat_.get() : write_.get();
    if (kind.rfind("copy", 0) == 0) return is_flat ? copy_flat_.get() : copy_.get();
    if (kind.rfind("shared.", 0) == 0) {
      const auto it = shared_.find(static_cast<uint32_t>(std::atoi(kind.c_str() + 7)));
      return it != shared_.end() ? it->second.get() : nullptr;
    }
    return nullptr;
  }
  bool cpu_device() const { return ctx_.facts().props.deviceType == VK_PHYSICAL_DEVICE_TYPE_CPU; }

  // A stream buffer of `bytes` within what one binding and one allocation reach.
  void check_fits(uint64_t bytes) const {
    if (bytes > max_buffer_)
      throw AllocationFailed("a " + std::to_string(bytes) +
                             "-byte buffer is above maxStorageBufferRange / "
                             "maxMemoryAllocationSize (" +
                             std::to_string(max_buffer_) + " bytes)");
  }

  // A flat grid: chunks x passes workgroups of one chunk each, in as few dispatches of whole
  // passes as maxComputeWorkGroupCount[0] allows (one on NVIDIA; 65535 workgroups on
  // lavapipe), into a destination poisoned first, so that a chunk no workgroup wrote fails the
  // check. A launch's time is the sum of its dispatches'.
  StreamTiming stream_flat(const StreamRequest& r) {
    if (r.unroll > 1 || (r.threads != 0 && uint64_t(r.threads) != kWorkgroup) || r.prefetch_256 ||
        r.streaming_stores)
      throw BackendError("stream: the flat shaders move one plain uvec4 per invocation of 256");
    StreamTiming t;
    t.layout = stream_layout_flat(r.buffer_bytes, kFlatChunkBytes);
    const StreamLayout& l = t.layout;
    const uint64_t bytes = l.buffer_bytes();
    check_fits(bytes);
    if (l.chunks > max_groups_)
      throw AllocationFailed("one pass of the flat grid (" + std::to_string(l.chunks) +
                             " workgroups) is above maxComputeWorkGroupCount[0] (" +
                             std::to_string(max_groups_) + ")");
    const uint64_t groups = l.chunks * r.passes;
    if (groups > std::numeric_limits<uint32_t>::max())
      throw AllocationFailed("a flat grid of 2^32 workgroups or more");
    if (r.drop_blocks < 0 || uint64_t(r.drop_blocks) >= groups)
      throw BackendError("stream: bad drop_blocks");
    if (r.op == BwOp::copy) prepare_source(bytes);
    grow(destination_, bytes);
    ctx_.fill(destination_, bytes, 0xffffffffu);
    const Pipeline* pipeline = r.op == BwOp::write ? write_flat_.get() : copy_flat_.get();
    std::vector<Binding> bindings = {{&destination_, 0}};
    if (r.op == BwOp::copy) bindings = {{&source_, 0}, {&destination_, 0}};
    const StreamPush push{narrow(l.chunks, "chunks"), 0, 1, 0, 1};
    const uint64_t per_dispatch = l.chunks * std::max<uint64_t>(1, max_groups_ / l.chunks);
    const uint64_t launched = groups - uint64_t(r.drop_blocks);
    for (int rep = -1; rep < r.repeats; ++rep) {  // -1: untimed warm-up
      double ns = 0;
      for (uint64_t first = 0; first < launched; first += per_dispatch)
        ns += ctx_.dispatch(*pipeline, bindings, &push, sizeof push,
                            static_cast<uint32_t>(std::min(per_dispatch, launched - first)));
      if (rep >= 0) t.seconds.push_back(ns * 1e-9);
    }
    // Every pass stores the same values: the result is one pass's.
    const uint32_t got = sum_of(destination_, bytes), want = stream_written_checksum(l, 1);
    if (got != want)
      t.check_error = "written data sums to " + std::to_string(got) + ", expected " +
                      std::to_string(want) + ": stores were lost";
    return t;
  }

  void grow(Buffer& b, uint64_t bytes) {
    if (b && b.size() >= bytes) return;
    b.reset();
    b = ctx_.buffer(bytes, VK_BUFFER_USAGE_STORAGE_BUFFER_BIT, Context::Memory::device);
  }

  // A buffer of the host link, usable by the compute and the transfer queue.
  void grow_link(Buffer& b, uint64_t bytes, Context::Memory where) {
    if (b && b.size() >= bytes) return;
    b.reset();
    b = ctx_.buffer(bytes, VK_BUFFER_USAGE_STORAGE_BUFFER_BIT, where, false, true);
  }

  // A pageable copy one way, in pieces of at least 1 MiB (at most Context::kMaxPieces): to
  // the device, each piece is copied as soon as the host has staged it; to the host, every
  // piece is submitted at once and each taken out of the staging buffer as it lands. The
  // host's memcpy and the copy engine work side by side, not one after the other.
  void pageable_in_pieces(bool to_dev, const uint32_t* h_in, uint32_t* h_out, uint64_t bytes) {
    const uint64_t pieces = std::clamp<uint64_t>(bytes >> 20, 1, Context::kMaxPieces);
    const uint64_t piece = (bytes / pieces + 15) / 16 * 16;
    auto* in = static_cast<char*>(stage_in_.mapped());
    const auto* out = static_cast<const char*>(stage_out_.mapped());
    std::size_t n = 0;
    for (uint64_t off = 0; off < bytes; off += piece, ++n) {
      const uint64_t len = std::min(piece, bytes - off);
      if (to_dev) {
        std::memcpy(in + off, reinterpret_cast<const char*>(h_in) + off, len);
        ctx_.copy_piece(n, stage_in_, dev_in_, off, len);
      } else {
        ctx_.copy_piece(n, dev_out_, stage_out_, off, len);
      }
    }
    for (std::size_t i = 0; i < n; ++i) {
      ctx_.wait_piece(i);
      if (to_dev) continue;
      const uint64_t off = i * piece;
      std::memcpy(reinterpret_cast<char*>(h_out) + off, out + off, std::min(piece, bytes - off));
    }
  }

  // Host memory of the pageable transfers, grown to `words` (the old one freed first).
  static void grow_pageable(std::vector<uint32_t>& v, uint64_t words) {
    if (v.size() >= words) return;
    std::vector<uint32_t>().swap(v);
    v.resize(words);
  }

  // What a host-link figure timed, in words (the curve's note).
  std::string host_note(const HostRequest& r) const {
    std::string staging;
    if (r.dir != HostDir::to_host)
      staging += "host->device from " + memory_name(stage_in_.memory_flags());
    if (r.dir != HostDir::to_device)
      staging += std::string(staging.empty() ? "" : ", ") + "device->host into " +
                 memory_name(stage_out_.memory_flags());
    std::string what;
    if (r.dir == HostDir::both)
      what = "host clock from the first vkQueueSubmit until both fences signalled: " +
             ctx_.copy_pair_queues();
    else if (r.pinned)
      what =
          "GPU time between timestamps around one vkCmdCopyBuffer (checked against the "
          "host clock)";
    else
      what = "host clock over the copy's submit and fence wait";
    if (!r.pinned)
      what += r.dir == HostDir::to_device
                  ? ", plus the memcpy from ordinary host memory into the mapped staging buffer, "
                    "in pieces of at least 1 MiB, each copied as soon as it is staged"
              : r.dir == HostDir::to_host
                  ? ", plus the memcpy from the mapped staging buffer into ordinary host memory, "
                    "in pieces of at least 1 MiB, each taken out as soon as it has landed"
                  : ", plus both memcpys between ordinary host memory and the mapped staging "
                    "buffers";
    const Buffer& stage = r.dir == HostDir::to_host ? stage_out_ : stage_in_;
    if (stage.memory_flags() & VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT)
      staging +=
          " (the only host-visible memory here is device-local: no link between host "
          "and device memory is crossed)";
    return what + "; " + staging;
  }

  static std::string memory_name(VkMemoryPropertyFlags f) {
    std::string s = "HOST_VISIBLE|HOST_COHERENT";
    if (f & VK_MEMORY_PROPERTY_HOST_CACHED_BIT) s += "|HOST_CACHED";
    if (f & VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT) s += "|DEVICE_LOCAL";
    return s + " memory";
  }

  void zero_sum() {
    const uint32_t zero = 0;
    ctx_.upload(sum_word_, &zero, 4);
  }

  uint32_t read_sum() {
    uint32_t got = 0;
    ctx_.download(sum_word_, &got, 4);
    return got;
  }

  // The source holds word i = i; refilled only when it grows.
  void prepare_source(uint64_t bytes) {
    if (source_ && source_.size() >= bytes) return;
    grow(source_, bytes);
    const uint32_t words = narrow(source_.size() / 4, "words");
    ctx_.dispatch(*fill_, {{&source_, 0}}, &words, sizeof words, groups_for(words));
  }

  // Workgroups of the fill and sum shaders over `items` items: at least kSumGroups, and
  // enough that no invocation loops more than 16384 times (llvmpipe's loop limit).
  static uint32_t groups_for(uint64_t items) {
    const uint64_t per_pass = kWorkgroup * 16384;
    return static_cast<uint32_t>(std::max<uint64_t>(kSumGroups, (items + per_pass - 1) / per_pass));
  }

  // The trusted sum of a buffer's first `bytes` bytes.
  uint32_t sum_of(const Buffer& b, uint64_t bytes) {
    zero_sum();
    const StreamPush push{narrow(bytes / 16, "vectors"), 0, 0, 0, 0};
    ctx_.dispatch(*sum_, {{&b, 0}, {&sum_word_, 0}}, &push, sizeof push, groups_for(bytes / 16));
    return read_sum();
  }

  Context& ctx_;
  DeviceInfo info_;
  uint64_t max_buffer_ = 0;
  bool shared_ok_ = false;
  Support timing_;
  std::unique_ptr<Pipeline> read_, read_l2_, write_, copy_, write_flat_, copy_flat_, fill_, sum_;
  uint64_t max_groups_ = 0;  // maxComputeWorkGroupCount[0]
  std::map<uint32_t, std::unique_ptr<Pipeline>> shared_;
  std::vector<std::future<void>> ahead_;  // destroyed (each waits) before the pipelines
  Buffer source_, destination_, sum_word_;
  // Host-link transfers: mapped staging buffers and their device-local ends.
  Buffer stage_in_, stage_out_, dev_in_, dev_out_;
  std::vector<uint32_t> pageable_in_, pageable_out_;  // host(): pageable send and receive
};

}  // namespace

std::unique_ptr<BandwidthKernels> make_bandwidth_kernels(Context& ctx, const DeviceInfo& info) {
  return std::make_unique<VulkanBandwidth>(ctx, info);
}

}  // namespace gd::vulkan
