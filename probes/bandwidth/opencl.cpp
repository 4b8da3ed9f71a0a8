// OpenCL kernels of the bandwidth probe: streams (read/write/copy, and image reads where
// the device has image1d_buffer), local memory at a stride, and the host link, all timed
// with profiling events. OpenCL has no SM clock: no clock is reported, so the probe gives
// GB/s and no bytes per clock (it never derives one from an assumed clock).
#include <CL/cl.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "bandwidth/bandwidth.hpp"
#include "compute/ptx_sass.hpp"
#include "gpudissect/sass.hpp"
#include "opencl_kernels.hpp"
#include "opencl_probes.hpp"

namespace gd::opencl {

namespace {

constexpr uint64_t kWg = 256, kUnroll = 4, kChunk = kWg * kUnroll * 16;
// Flat grids: one 16-byte vector per work-item, a 4 KiB chunk per group (CUDA's flat1).
constexpr uint64_t kFlatChunk = kWg * 16;
// 32-bit element indices (bw_read on a GPU, the flat kernels) and group ids.
constexpr uint64_t kMax32 = 0xffffffffull;
constexpr uint32_t kLocalBytes = 16384;
constexpr int kGroupsPerCu = 4;

// A buffer that grows and is reused.
struct Buf {
  cl_mem mem = nullptr;
  uint64_t size = 0;
  void release() {
    if (mem) clReleaseMemObject(mem);
    mem = nullptr;
    size = 0;
  }
  cl_mem get(cl_context ctx, uint64_t bytes, cl_mem_flags flags = CL_MEM_READ_WRITE) {
    if (bytes <= size) return mem;
    release();
    cl_int err = CL_SUCCESS;
    mem = clCreateBuffer(ctx, flags, bytes, nullptr, &err);
    check(err, "clCreateBuffer of " + std::to_string(bytes) + " bytes");
    size = bytes;
    return mem;
  }
};

class OpenCLBandwidth final : public BandwidthKernels {
 public:
  OpenCLBandwidth(const Handles& h, const DeviceInfo& info) : h_(h), info_(info) {
    cl_bool images = CL_FALSE;
    clGetDeviceInfo(h.device, CL_DEVICE_IMAGE_SUPPORT, sizeof images, &images, nullptr);
    clGetDeviceInfo(h.device, CL_DEVICE_IMAGE_MAX_BUFFER_SIZE, sizeof image_texels_, &image_texels_,
                    nullptr);
    clGetDeviceInfo(h.device, CL_DEVICE_MAX_MEM_ALLOC_SIZE, sizeof max_alloc_, &max_alloc_,
                    nullptr);
    cl_ulong local = 0;
    clGetDeviceInfo(h.device, CL_DEVICE_LOCAL_MEM_SIZE, sizeof local, &local, nullptr);
    local_ok_ = local >= kLocalBytes + kWg * 4;
    // A CPU device runs a work-group's items one after another on one thread: each item gets
    // a contiguous range and each thread one work-group (bandwidth.cl, GD_CPU_LANES).
    cl_device_type type = 0;
    clGetDeviceInfo(h.device, CL_DEVICE_TYPE, sizeof type, &type, nullptr);
    cpu_ = (type & CL_DEVICE_TYPE_CPU) != 0;
    const std::string base = std::string("-cl-std=CL1.2") + (cpu_ ? " -DGD_CPU_LANES=1" : "");
    // Images and (on a CPU) non-temporal stores first; a compiler that rejects
    // image1d_buffer_t or __builtin_nontemporal_store gets a program without them.
    for (const bool nt : {true, false}) {
      if (nt && !cpu_) continue;
      const std::string opts = base + (nt ? " -DGD_NT=1" : "");
      if (images) {
        build(opts + " -DGD_IMAGES=1");
        if (program_) image_ok_ = true;
      }
      if (!program_) build(opts);
      if (program_) {
        nt_ok_ = nt;
        break;
      }
    }
    if (!program_) throw BackendError("building the bandwidth kernels: " + log_);
    cl_int err = CL_SUCCESS;
    sum_ = clCreateBuffer(h.context, CL_MEM_READ_WRITE, 4, nullptr, &err);
    check(err, "clCreateBuffer(sum)");
    for (const char* n :
         {"bw_read", "bw_read_l2", "bw_write", "bw_copy", "bw_write_flat", "bw_copy_flat",
          "bw_fill", "bw_sum", "bw_local4", "bw_local8", "bw_local16"})
      kernel(n);
    if (image_ok_) kernel("bw_image_read");
    if (nt_ok_)
      for (const char* n : {"bw_write_nt", "bw_copy_nt"}) kernel(n);
  }
  ~OpenCLBandwidth() override {
    for (auto& [n, k] : kernels_) clReleaseKernel(k);
    if (program_) clReleaseProgram(program_);
    if (pinned_ptr_) {
      clEnqueueUnmapMemObject(h_.queue, pinned_.mem, pinned_ptr_, 0, nullptr, nullptr);
      clFinish(h_.queue);
    }
    for (Buf* b : {&src_, &dst_, &host_in_, &host_out_, &pinned_}) b->release();
    if (image_) clReleaseMemObject(image_);
    if (sum_) clReleaseMemObject(sum_);
    if (queue2_) clReleaseCommandQueue(queue2_);
  }

  uint64_t stream_chunk_bytes(const StreamRequest& r) const override {
    return flat(r) ? kFlatChunk : kChunk;
  }
  Support supports_flat() const override { return Support::yes(); }
  // A CPU: one work-group per compute unit (PoCL runs one per thread), so that all groups run
  // at once and each pass of a stream kernel sweeps the whole footprint before the next
  // (with 4 per unit, a group made all its passes over its quarter of a unit's share first).
  int stream_blocks() const override {
    return std::max(1, info_.compute_units) * (cpu_ ? 1 : kGroupsPerCu);
  }

  Support supports(BwOp op, BwLoad load) const override {
    if (load == BwLoad::cached) return Support::yes();
    if (load == BwLoad::texture && op == BwOp::read) {
      if (image_ok_) return Support::yes();
      return Support::no("the device has no image1d_buffer support");
    }
    if (load == BwLoad::l2_only && op == BwOp::read) {
      if (cpu_)
        return Support::no(
            "a CPU's caches serve volatile loads at every level: no load skips its L1");
      return Support::yes();
    }
    return Support::no(
        "OpenCL C has no cache operators; only plain loads, volatile reads (the L2 path) and "
        "image reads");
  }

  StreamTiming stream(const StreamRequest& r) override {
    // The volatile read runs on a CPU too (tests check its sum there), though the probe does
    // not sweep it as an L2 read on one.
    const bool l2_read = r.op == BwOp::read && r.load == BwLoad::l2_only;
    if (!supports(r.op, r.load).ok && !l2_read) throw BackendError("stream: unsupported load");
    if (r.blocks > 0) throw BackendError("stream: OpenCL cannot place work-groups on SMs");
    if (r.repeats < 1) throw BackendError("stream: bad repeat count");
    if (r.streaming_stores && r.op != BwOp::read && !nt_ok_)
      throw BackendError("stream: " + supports_streaming_stores().reason);
    if (flat(r)) return stream_flat(r);
    StreamTiming t;
    t.layout = stream_layout(r.buffer_bytes, uint64_t(stream_blocks()), kChunk);
    const StreamLayout& l = t.layout;
    const uint64_t bytes = l.buffer_bytes();
    if (bytes > max_alloc_) throw AllocationFailed("buffer above CL_DEVICE_MAX_MEM_ALLOC_SIZE");
    if (!cpu_ && r.op == BwOp::read && (bytes / 16 > kMax32 || r.passes > kMax32))
      throw AllocationFailed("a read of 2^32 vectors or passes or more (32-bit indices)");
    if (r.op != BwOp::write) prepare_source(bytes);
    cl_mem dst = r.op == BwOp::read ? nullptr : dst_.get(h_.context, bytes);
    cl_kernel k = nullptr;
    cl_ulong chunks = l.chunks, groups = l.blocks, cpb = l.chunks_per_block, passes = r.passes;
    int a = 0;
    if (r.op == BwOp::read && r.load == BwLoad::texture) {
      k = kernels_.at("bw_image_read");
      if (bytes / 16 > image_texels_) throw AllocationFailed("above the image1d_buffer size");
      make_image(bytes);
      check(clSetKernelArg(k, a++, sizeof(cl_mem), &image_), "clSetKernelArg");
    } else if (r.op == BwOp::read) {
      k = kernels_.at(l2_read ? "bw_read_l2" : "bw_read");
      check(clSetKernelArg(k, a++, sizeof(cl_mem), &src_.mem), "clSetKernelArg");
    } else if (r.op == BwOp::write) {
      k = kernels_.at(r.streaming_stores ? "bw_write_nt" : "bw_write");
      check(clSetKernelArg(k, a++, sizeof(cl_mem), &dst), "clSetKernelArg");
    } else {
      k = kernels_.at(r.streaming_stores ? "bw_copy_nt" : "bw_copy");
      check(clSetKernelArg(k, a++, sizeof(cl_mem), &src_.mem), "clSetKernelArg");
      check(clSetKernelArg(k, a++, sizeof(cl_mem), &dst), "clSetKernelArg");
    }
    for (cl_ulong* v : {&chunks, &groups, &cpb, &passes})
      check(clSetKernelArg(k, a++, sizeof(cl_ulong), v), "clSetKernelArg");
    if (r.op == BwOp::read) check(clSetKernelArg(k, a++, sizeof(cl_mem), &sum_), "clSetKernelArg");
    zero_sum();
    t.seconds = timed_launches(k, std::size_t(l.blocks * kWg), r.repeats, "stream", "a stream");
    const int launches = r.repeats + 1;  // the warm-up added to the sum too
    if (r.op == BwOp::read) {
      const uint32_t want = stream_read_checksum(l, r.passes) * uint32_t(launches);
      const uint32_t got = read_sum();
      if (got != want)
        t.check_error = "read checksum " + std::to_string(got) + ", expected " +
                        std::to_string(want) + ": loads were lost";
    } else {
      const uint32_t got = sum_of(dst, bytes), want = stream_written_checksum(l, r.passes);
      if (got != want)
        t.check_error = "written data sums to " + std::to_string(got) + ", expected " +
                        std::to_string(want) + ": stores were lost";
    }
    return t;
  }

  Support supports_streaming_stores() const override {
    if (nt_ok_) return Support::yes();
    return Support::no(cpu_ ? "the CPU compiler rejected __builtin_nontemporal_store"
                            : "OpenCL C has no streaming stores (non-temporal stores are "
                              "measured on CPU devices only)");
  }

  Support supports_shared() const override {
    if (!local_ok_) return Support::no("less than 17 KiB of local memory");
    return Support::yes();
  }

  SharedTiming shared(const SharedRequest& r) override {
    if (r.width_bytes != 4 && r.width_bytes != 8 && r.width_bytes != 16)
      throw BackendError("shared: width must be 4, 8 or 16 bytes");
    SharedTiming t;
    SharedLayout& l = t.layout;
    l.blocks = uint64_t(std::max(1, info_.compute_units)) * 2;
    l.threads = kWg;
    l.width_bytes = r.width_bytes;
    l.stride = r.stride;
    l.elements = kLocalBytes / r.width_bytes;
    l.loads_per_iteration = 8;
    l.iterations = r.iterations ? r.iterations : 2048;
    cl_kernel k = kernels_.at("bw_local" + std::to_string(r.width_bytes));
    cl_uint elements = l.elements, stride = l.stride, it = cl_uint(l.iterations), zero = 0;
    int a = 0;
    for (cl_uint* v : {&elements, &stride, &it, &zero})
      check(clSetKernelArg(k, a++, sizeof(cl_uint), v), "clSetKernelArg");
    check(clSetKernelArg(k, a++, sizeof(cl_mem), &sum_), "clSetKernelArg");
    zero_sum();
    t.seconds =
        timed_launches(k, std::size_t(l.blocks * kWg), r.repeats, "local", "the local-memory");
    const int launches = r.repeats + 1;  // the warm-up added to the sum too
    const uint32_t want = shared_checksum(l) * uint32_t(launches), got = read_sum();
    if (got != want)
      t.check_error =
          "local checksum " + std::to_string(got) + ", expected " + std::to_string(want);
    return t;
  }

  Support supports_scaling() const override {
    return Support::no("OpenCL cannot place work-groups on chosen compute units");
  }

  Support supports_host(bool) const override { return Support::yes(); }

  HostTiming host(const HostRequest& r) override {
    if (r.bytes == 0 || r.bytes % 4) throw BackendError("host: size must be a multiple of 4");
    if (r.bytes > max_alloc_) throw AllocationFailed("transfer above CL_DEVICE_MAX_MEM_ALLOC_SIZE");
    HostTiming t;
    const uint64_t words = r.bytes / 4;
    // One device buffer receives, another is sent from.
    cl_mem in = host_in_.get(h_.context, r.bytes);
    cl_mem out = host_out_.get(h_.context, r.bytes);
    cl_int err = CL_SUCCESS;
    unsigned int* h = nullptr;
    if (r.pinned) {
      // Pinned host memory the OpenCL way: a CL_MEM_ALLOC_HOST_PTR buffer, mapped.
      if (pinned_.size < 2 * r.bytes) {
        if (pinned_ptr_)
          clEnqueueUnmapMemObject(h_.queue, pinned_.mem, pinned_ptr_, 0, nullptr, nullptr);
        pinned_ptr_ = nullptr;
        clFinish(h_.queue);
        pinned_.get(h_.context, 2 * r.bytes, CL_MEM_READ_WRITE | CL_MEM_ALLOC_HOST_PTR);
        pinned_ptr_ = clEnqueueMapBuffer(h_.queue, pinned_.mem, CL_TRUE, CL_MAP_READ | CL_MAP_WRITE,
                                         0, 2 * r.bytes, 0, nullptr, nullptr, &err);
        check(err, "clEnqueueMapBuffer");
      }
      h = static_cast<unsigned int*>(pinned_ptr_);
    } else {
      // Kept for the next point and curve, as the pinned buffer is: a fresh vector per point
      // zeroed (page faults on) twice the transfer's bytes, most of a pageable curve's time.
      if (pageable_.size() < 2 * words) {
        std::vector<unsigned int>().swap(pageable_);  // freed before the larger one is taken
        pageable_.resize(2 * words);
      }
      h = pageable_.data();
    }
    unsigned int* h_in = h;
    unsigned int* h_out = h + words;
    if (r.dir != HostDir::to_host)  // only what is sent needs the pattern
      for (uint64_t i = 0; i < words; ++i) h_in[i] = static_cast<unsigned int>(i);
    fill(out, words);
    clFinish(h_.queue);
    if (!queue2_) {
      queue2_ = clCreateCommandQueue(h_.context, h_.device, CL_QUEUE_PROFILING_ENABLE, &err);
      check(err, "clCreateCommandQueue");
    }
    auto once = [&](bool timed) {
      cl_event e1 = nullptr, e2 = nullptr;
      const auto t0 = std::chrono::steady_clock::now();
      if (r.dir != HostDir::to_host)
        check(clEnqueueWriteBuffer(h_.queue, in, CL_FALSE, 0, r.bytes, h_in, 0, nullptr, &e1),
              "clEnqueueWriteBuffer");
      if (r.dir != HostDir::to_device)
        check(clEnqueueReadBuffer(r.dir == HostDir::both ? queue2_ : h_.queue, out, CL_FALSE, 0,
                                  r.bytes, h_out, 0, nullptr, &e2),
              "clEnqueueReadBuffer");
      clFlush(h_.queue);
      clFlush(queue2_);
      for (cl_event e : {e1, e2})
        if (e) check(clWaitForEvents(1, &e), "host-link copy");
      const double wall =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      // One direction: the transfer's own event time. Both at once: the wall time of the
      // pair (events of two queues share no timeline to subtract).
      // Pageable: the wall time too, since a driver may stage pageable memory on the host
      // before the command starts (NVIDIA's did: events showed 49 GB/s pageable, H200).
      if (timed)
        t.seconds.push_back(r.dir == HostDir::both || !r.pinned ? wall
                                                                : event_seconds(e1 ? e1 : e2));
      for (cl_event e : {e1, e2})
        if (e) clReleaseEvent(e);
    };
    once(false);
    for (int rep = 0; rep < r.repeats; ++rep) once(true);
    std::optional<uint32_t> arrived;
    if (r.dir != HostDir::to_host) arrived = sum_of(in, r.bytes);
    t.check_error = host_transfer_error(r.dir, arrived, h_out, r.bytes);
    return t;
  }

  // On NVIDIA the instruction ptxas makes of the kernel's PTX (where CUDA's tools are
  // installed), as CUDA's figures show theirs; elsewhere the OpenCL C access by name.
  std::optional<std::string> instruction(const std::string& kind) override {
    if (const auto it = machine_code().find(kernel_of(kind)); it != machine_code().end()) {
      const std::string load = most_frequent(it->second, {"LDG", "LD.", "TLD", "TEX", "SULD"});
      const std::string store = most_frequent(it->second, {"STG", "ST."});
      const std::string s = kind.rfind("write", 0) == 0  ? store
                            : kind.rfind("copy", 0) == 0 ? load + " + " + store
                                                         : load;
      if (!s.empty() && s != " + ") return s;
    }
    if (kind.rfind("read.texture", 0) == 0) return "read_imageui (image1d_buffer)";
    if (kind.rfind("read.l2_only", 0) == 0) return "global volatile uint4 load";
    if (kind.rfind("shared.", 0) == 0) return "local " + kind.substr(7) + "-byte load";
    if (kind.rfind("read", 0) == 0) return "global uint4 load";
    const bool nt = kind.find(".streaming") != std::string::npos;
    if (kind.rfind("write", 0) == 0)
      return nt ? "global uint4 non-temporal store" : "global uint4 store";
    if (kind.rfind("copy", 0) == 0)
      return nt ? "global uint4 load + non-temporal store" : "global uint4 load + store";
    return std::nullopt;
  }

 private:
  // The kernel that runs a sweep kind (plan_sweep's names), empty for none.
  std::string kernel_of(const std::string& kind) const {
    const bool nt = kind.find(".streaming") != std::string::npos;
    const bool flat = kind.find(".flat") != std::string::npos;
    if (kind.rfind("read.texture", 0) == 0) return "bw_image_read";
    if (kind.rfind("read.l2_only", 0) == 0) return "bw_read_l2";
    if (kind.rfind("read", 0) == 0) return "bw_read";
    if (kind.rfind("shared.", 0) == 0) return "bw_local" + kind.substr(7);
    if (kind.rfind("write", 0) == 0)
      return flat ? "bw_write_flat" : nt ? "bw_write_nt" : "bw_write";
    if (kind.rfind("copy", 0) == 0) return flat ? "bw_copy_flat" : nt ? "bw_copy_nt" : "bw_copy";
    return "";
  }

  // Each kernel's instructions in the SASS of the program's PTX, read once; empty off
  // NVIDIA or without ptxas and cuobjdump.
  const std::map<std::string, std::vector<SassInstruction>>& machine_code() {
    if (machine_read_) return machine_code_;
    machine_read_ = true;
    const std::string pname = platform_string_or_empty(h_.platform, CL_PLATFORM_NAME),
                      pvendor = platform_string_or_empty(h_.platform, CL_PLATFORM_VENDOR);
    if (cpu_ || !is_nvidia_opencl(pname, pvendor)) return machine_code_;
    machine_code_ = sass_functions(program_sass(program_, h_.device).sass);
    return machine_code_;
  }

  // The most frequent opcode of `fn` that starts with one of `prefixes` (global memory
  // only: the read kernels' local-memory reduction holds more LDS than the loop holds LDG).
  static std::string most_frequent(const std::vector<SassInstruction>& fn,
                                   std::initializer_list<const char*> prefixes) {
    std::map<std::string, int> counts;
    for (const SassInstruction& in : fn)
      for (const char* p : prefixes)
        if (in.opcode.rfind(p, 0) == 0) ++counts[in.opcode];
    const auto top = top_opcodes(counts, 1);
    return top.empty() ? "" : top.front().substr(0, top.front().rfind(" x"));
  }

  // An untimed warm-up launch of `global` work-items in groups of kWg, then `repeats` timed
  // ones, each waited for and timed by its profiling event; the timed launches' seconds.
  // tag and kernel name the enqueue and the wait in an error ("clEnqueueNDRangeKernel(tag)",
  // "running <kernel> kernel").
  std::vector<double> timed_launches(cl_kernel k, std::size_t global, int repeats, const char* tag,
                                     const char* kernel) {
    const std::size_t local = kWg;
    std::vector<double> seconds;
    for (int rep = -1; rep < repeats; ++rep) {
      cl_event e = nullptr;
      check(clEnqueueNDRangeKernel(h_.queue, k, 1, nullptr, &global, &local, 0, nullptr, &e),
            std::string("clEnqueueNDRangeKernel(") + tag + ")");
      check(clWaitForEvents(1, &e), std::string("running ") + kernel + " kernel");
      if (rep >= 0) seconds.push_back(event_seconds(e));
      clReleaseEvent(e);
    }
    return seconds;
  }

  static bool flat(const StreamRequest& r) { return r.flat && r.op != BwOp::read; }

  // A flat grid (bw_write_flat, bw_copy_flat): chunks x passes groups of one chunk each, into
  // a destination poisoned first, so that a chunk no group wrote fails the check.
  StreamTiming stream_flat(const StreamRequest& r) {
    if (r.unroll > 1 || (r.threads != 0 && uint64_t(r.threads) != kWg) || r.prefetch_256 ||
        r.streaming_stores || r.load != BwLoad::cached)
      throw BackendError("stream: the flat kernels move one plain uint4 per work-item of 256");
    StreamTiming t;
    t.layout = stream_layout_flat(r.buffer_bytes, kFlatChunk);
    const StreamLayout& l = t.layout;
    const uint64_t bytes = l.buffer_bytes();
    if (bytes > max_alloc_) throw AllocationFailed("buffer above CL_DEVICE_MAX_MEM_ALLOC_SIZE");
    const uint64_t groups = l.chunks * r.passes;
    if (groups > kMax32) throw AllocationFailed("a flat grid of 2^32 work-groups or more");
    if (r.drop_blocks < 0 || uint64_t(r.drop_blocks) >= groups)
      throw BackendError("stream: bad drop_blocks");
    if (r.op == BwOp::copy) prepare_source(bytes);
    cl_mem dst = dst_.get(h_.context, bytes);
    const cl_uint poison = 0xffffffffu;
    check(clEnqueueFillBuffer(h_.queue, dst, &poison, sizeof poison, 0, bytes, 0, nullptr, nullptr),
          "poisoning the destination");
    cl_kernel k = kernels_.at(r.op == BwOp::write ? "bw_write_flat" : "bw_copy_flat");
    int a = 0;
    if (r.op == BwOp::copy)
      check(clSetKernelArg(k, a++, sizeof(cl_mem), &src_.mem), "clSetKernelArg");
    check(clSetKernelArg(k, a++, sizeof(cl_mem), &dst), "clSetKernelArg");
    const cl_uint chunks = cl_uint(l.chunks);
    check(clSetKernelArg(k, a++, sizeof chunks, &chunks), "clSetKernelArg");
    t.seconds = timed_launches(k, std::size_t((groups - uint64_t(r.drop_blocks)) * kWg), r.repeats,
                               "flat stream", "a flat stream");
    // Every pass stores the same values: the result is one pass's.
    const uint32_t got = sum_of(dst, bytes), want = stream_written_checksum(l, 1);
    if (got != want)
      t.check_error = "written data sums to " + std::to_string(got) + ", expected " +
                      std::to_string(want) + ": stores were lost";
    return t;
  }

  void build(const std::string& options) {
    cl_int err = CL_SUCCESS;
    const char* src = kernels::bandwidth;
    cl_program p = clCreateProgramWithSource(h_.context, 1, &src, nullptr, &err);
    if (err != CL_SUCCESS) return;
    if (clBuildProgram(p, 1, &h_.device, options.c_str(), nullptr, nullptr) != CL_SUCCESS) {
      log_ = program_build_log(p, h_.device);
      clReleaseProgram(p);
      return;
    }
    program_ = p;
  }
  void kernel(const char* name) {
    cl_int err = CL_SUCCESS;
    kernels_[name] = clCreateKernel(program_, name, &err);
    check(err, std::string("clCreateKernel(") + name + ")");
  }
  void zero_sum() {
    const cl_uint z = 0;
    check(clEnqueueWriteBuffer(h_.queue, sum_, CL_TRUE, 0, 4, &z, 0, nullptr, nullptr),
          "clearing the sum");
  }
  uint32_t read_sum() {
    cl_uint got = 0;
    check(clEnqueueReadBuffer(h_.queue, sum_, CL_TRUE, 0, 4, &got, 0, nullptr, nullptr),
          "reading the sum");
    return got;
  }
  void fill(cl_mem m, uint64_t words) {
    cl_kernel k = kernels_.at("bw_fill");
    cl_ulong w = words;
    check(clSetKernelArg(k, 0, sizeof(cl_mem), &m), "clSetKernelArg");
    check(clSetKernelArg(k, 1, sizeof(cl_ulong), &w), "clSetKernelArg");
    const std::size_t global = std::size_t(std::max(1, info_.compute_units)) * 8 * kWg;
    check(clEnqueueNDRangeKernel(h_.queue, k, 1, nullptr, &global, nullptr, 0, nullptr, nullptr),
          "filling a buffer");
  }
  uint32_t sum_of(cl_mem m, uint64_t bytes) {
    zero_sum();
    cl_kernel k = kernels_.at("bw_sum");
    cl_ulong vecs = bytes / 16;
    check(clSetKernelArg(k, 0, sizeof(cl_mem), &m), "clSetKernelArg");
    check(clSetKernelArg(k, 1, sizeof(cl_ulong), &vecs), "clSetKernelArg");
    check(clSetKernelArg(k, 2, sizeof(cl_mem), &sum_), "clSetKernelArg");
    const std::size_t global = std::size_t(std::max(1, info_.compute_units)) * 8 * kWg, local = kWg;
    check(clEnqueueNDRangeKernel(h_.queue, k, 1, nullptr, &global, &local, 0, nullptr, nullptr),
          "summing a buffer");
    return read_sum();
  }
  // The source holds word i = i; refilled only when it grows.
  void prepare_source(uint64_t bytes) {
    if (bytes <= src_filled_) return;
    src_.get(h_.context, bytes);
    fill(src_.mem, src_.size / 4);
    src_filled_ = src_.size;
    if (image_) clReleaseMemObject(image_);
    image_ = nullptr;
  }
  void make_image(uint64_t bytes) {
    if (image_ && image_bytes_ == bytes) return;
    if (image_) clReleaseMemObject(image_);
    image_ = nullptr;
    cl_image_format f{CL_RGBA, CL_UNSIGNED_INT32};
    cl_image_desc d{};
    d.image_type = CL_MEM_OBJECT_IMAGE1D_BUFFER;
    d.image_width = bytes / 16;
    d.buffer = src_.mem;
    cl_int err = CL_SUCCESS;
    image_ = clCreateImage(h_.context, CL_MEM_READ_ONLY, &f, &d, nullptr, &err);
    check(err, "clCreateImage(image1d_buffer)");
    image_bytes_ = bytes;
  }

  Handles h_;
  DeviceInfo info_;
  cl_program program_ = nullptr;
  std::string log_;
  std::map<std::string, cl_kernel> kernels_;
  cl_mem sum_ = nullptr;
  cl_mem image_ = nullptr;
  uint64_t image_bytes_ = 0;
  cl_command_queue queue2_ = nullptr;
  Buf src_, dst_, host_in_, host_out_, pinned_;
  void* pinned_ptr_ = nullptr;
  std::vector<unsigned int> pageable_;  // host(): the pageable buffers (send, receive)
  uint64_t src_filled_ = 0;
  std::size_t image_texels_ = 0;
  cl_ulong max_alloc_ = 0;
  bool image_ok_ = false, local_ok_ = false, cpu_ = false, nt_ok_ = false;
  bool machine_read_ = false;  // machine_code_ looked for (once)
  std::map<std::string, std::vector<SassInstruction>> machine_code_;
};

}  // namespace

std::unique_ptr<BandwidthKernels> make_bandwidth_kernels(const Handles& h, const DeviceInfo& info) {
  return std::make_unique<OpenCLBandwidth>(h, info);
}

}  // namespace gd::opencl
