// OpenCL kernels of the memory probe (memory.cl): the chase of CUDA's probes/memory/cuda.cu
// by the first work-item of each warp (sub-group) of one work-group, through the loads OpenCL
// C can state: a plain __global load (ca), a volatile one that L1 does not serve (cg, checked
// in the PTX on NVIDIA), a const restrict one (nc, where the PTX shows the read-only path), a
// __constant buffer and a 1D image buffer. OpenCL has no carve-out attribute and no
// physical-memory mapping: those parts stay unsupported with that reason.
//
// Time: on NVIDIA the kernel reads %clock64 and %globaltimer around each timed segment
// (nv_clock.cl), so hops are in cycles as CUDA's. Elsewhere OpenCL has no cycle counter:
// launch k walks the warm-up and k segments, and a segment's ns per hop is the difference of
// launches k and k - 1 (the launch overhead and the warm-up cancel), the latency probe's way.
// Every warp gets that launch's time per hop. A CPU runs a group's work-items one after
// another, so there n walkers' hops read n times one's: the levels scale, the edges do not.
#include <CL/cl.h>

#include <algorithm>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "compute/ptx_sass.hpp"
#include "gpudissect/chain.hpp"
#include "gpudissect/units.hpp"
#include "memory/listing.hpp"
#include "memory/memory.hpp"
#include "opencl_kernels.hpp"
#include "opencl_probes.hpp"

namespace gd::opencl {

namespace {

// cl_nv_device_attribute_query: the warp width of an NVIDIA device.
constexpr cl_device_info kWarpSizeNv = 0x4003;

// A buffer that grows to the largest size asked for and is reused after that.
class Grow {
 public:
  Grow() = default;
  Grow(const Grow&) = delete;
  Grow& operator=(const Grow&) = delete;
  ~Grow() { release(); }
  cl_mem get(cl_context ctx, uint64_t bytes, uint64_t max_alloc, cl_mem_flags flags,
             const char* what) {
    if (mem_ && bytes_ >= bytes) return mem_;
    release();
    if (bytes > max_alloc)
      throw AllocationFailed(std::string(what) + ": " + format_bytes(double(bytes)) +
                             " is past the device's CL_DEVICE_MAX_MEM_ALLOC_SIZE of " +
                             format_bytes(double(max_alloc)));
    cl_int err = CL_SUCCESS;
    mem_ = clCreateBuffer(ctx, flags, std::max<uint64_t>(bytes, 8), nullptr, &err);
    check(err, std::string("clCreateBuffer (") + what + ")");
    bytes_ = bytes;
    return mem_;
  }
  void release() {
    if (mem_) clReleaseMemObject(mem_);
    mem_ = nullptr;
    bytes_ = 0;
  }

 private:
  cl_mem mem_ = nullptr;
  uint64_t bytes_ = 0;
};

const char* kernel_name(MemLoad l) {
  switch (l) {
    case MemLoad::ca:
      return "mem_chase_ca";
    case MemLoad::nc:
      return "mem_chase_nc";
    case MemLoad::cg:
      return "mem_chase_cg";
    case MemLoad::constant:
      return "mem_chase_const";
    case MemLoad::texture:
      return "mem_chase_tex";
  }
  return "";
}

class OpenCLMemory final : public MemoryKernels {
 public:
  OpenCLMemory(const Handles& h, const DeviceInfo& info) : h_(h), info_(info) {
    cl_device_type type = 0;
    clGetDeviceInfo(h.device, CL_DEVICE_TYPE, sizeof type, &type, nullptr);
    cpu_ = (type & CL_DEVICE_TYPE_CPU) != 0;
    clGetDeviceInfo(h.device, CL_DEVICE_MAX_MEM_ALLOC_SIZE, sizeof max_alloc_, &max_alloc_,
                    nullptr);
    clGetDeviceInfo(h.device, CL_DEVICE_MAX_CONSTANT_BUFFER_SIZE, sizeof const_max_, &const_max_,
                    nullptr);
    clGetDeviceInfo(h.device, CL_DEVICE_MAX_WORK_GROUP_SIZE, sizeof max_wg_, &max_wg_, nullptr);
    auto extra = [&](const char* k) {
      auto it = info.extra.find(k);
      return it == info.extra.end() ? std::string() : it->second;
    };
    images_ = extra("image_path") == "yes";
    image_why_ = extra("image_path");
    nv_ = is_nvidia_opencl(platform_string_or_empty(h.platform, CL_PLATFORM_NAME),
                           platform_string_or_empty(h.platform, CL_PLATFORM_VENDOR));
    std::string options;
    const std::string cv = extra("opencl_c_version");
    if (cv.find("OpenCL C 1.0") == std::string::npos &&
        cv.find("OpenCL C 1.1") == std::string::npos)
      options += "-cl-std=CL1.2";
    if (images_) options += " -DGD_IMAGES=1";
    // NVIDIA: clocked kernels; should its compiler refuse the inline PTX, the ns path.
    clocked_ = nv_ && build(options + " -DGD_NV_CLOCK=1") == CL_SUCCESS;
    if (!clocked_ && build(options) != CL_SUCCESS)
      throw BackendError("building the memory kernels failed: " +
                         program_build_log(program_, h.device).substr(0, 600));
    cl_int err = CL_SUCCESS;
    for (const char* n :
         {"mem_chase_ca", "mem_chase_cg", "mem_chase_nc", "mem_chase_const", "mem_fill"}) {
      kernels_[n] = clCreateKernel(program_, n, &err);
      check(err, std::string("clCreateKernel(") + n + ")");
    }
    if (images_) {
      kernels_["mem_chase_tex"] = clCreateKernel(program_, "mem_chase_tex", &err);
      check(err, "clCreateKernel(mem_chase_tex)");
    }
    width_ = warp_width(type);
    if (nv_) read_machine_code();
  }

  ~OpenCLMemory() override {
    if (h_.queue) clFinish(h_.queue);
    for (auto& [n, k] : kernels_) clReleaseKernel(k);
    if (program_) clReleaseProgram(program_);
  }

  Support supports(const std::string& part) override {
    if (part == "carveout")
      return Support::no(
          "OpenCL has no shared-memory carve-out: no API sets or reports how an SM splits its "
          "L1 and local memory");
    if (part == "tlb.chunks")
      return Support::no(
          "OpenCL has no physical-memory mapping API: a buffer cannot be built from separate "
          "2 MiB physical allocations");
    if (part == "partition.readonly") return nc_support();
    if (part == "partition.texture")
      return images_ ? Support::yes()
                     : Support::no("the device has no image path for 1D image buffers (" +
                                   image_why_ + ")");
    if (part == "granularity.l2" || part == "l2_line" || part == "l2_ways" || part == "tlb.malloc")
      return cg_support();
    if (part == "partition" || part == "partition.global" || part == "granularity" ||
        part == "granularity.l1" || part == "constant" || part == "tlb")
      return Support::yes();
    return Support::no("no OpenCL kernel for the memory part " + part);
  }

  uint64_t constant_bank_bytes() const override {
    return std::min<uint64_t>(const_max_, max_alloc_);
  }

  void release_tlb_buffers() override {
    chain_.release();
    flush_.release();
  }

  MemChaseTiming chase(const MemChaseRequest& r) override;

 private:
  cl_int build(const std::string& options) {
    if (program_) clReleaseProgram(program_);
    // The clock prologue first: memory.cl reads its counters.
    const char* src[] = {kernels::nv_clock, kernels::memory};
    cl_int err = CL_SUCCESS;
    program_ = clCreateProgramWithSource(h_.context, 2, src, nullptr, &err);
    check(err, "clCreateProgramWithSource (memory)");
    return clBuildProgram(program_, 1, &h_.device, options.c_str(), nullptr, nullptr);
  }

  // Work-items per warp: NVIDIA's warp; a CPU runs each work-item as a thread of its own (1);
  // another GPU its SIMD width, which the preferred work-group multiple gives (a sub-group).
  std::size_t warp_width(cl_device_type) {
    if (nv_) {
      cl_uint w = 0;
      if (clGetDeviceInfo(h_.device, kWarpSizeNv, sizeof w, &w, nullptr) == CL_SUCCESS && w > 0)
        return w;
      return 32;
    }
    if (cpu_) return 1;
    std::size_t m = 1;
    clGetKernelWorkGroupInfo(kernels_.at("mem_chase_ca"), h_.device,
                             CL_KERNEL_PREFERRED_WORK_GROUP_SIZE_MULTIPLE, sizeof m, &m, nullptr);
    return std::max<std::size_t>(1, m);
  }

  // NVIDIA: the program binary is PTX. Each kernel's timed load from it, and from the SASS
  // ptxas makes of it where CUDA's tools are installed.
  void read_machine_code() {
    const ProgramSass ps = program_sass(program_, h_.device);
    machine_why_ = ps.why;
    if (ps.ptx.empty()) return;
    for (MemLoad l : {MemLoad::ca, MemLoad::nc, MemLoad::cg, MemLoad::constant, MemLoad::texture})
      ptx_load_[l] = ptx_entry_load(ps.ptx, kernel_name(l));
    for (MemLoad l : {MemLoad::ca, MemLoad::nc, MemLoad::cg, MemLoad::constant, MemLoad::texture})
      if (!ps.sass.empty()) sass_load_[l] = sass_function_load(ps.sass, kernel_name(l));
  }

  // The timed load beside each figure: the SASS instruction, else the PTX one and why no more.
  std::string instruction(MemLoad l) const {
    if (!nv_) return {};
    auto s = sass_load_.find(l);
    if (s != sass_load_.end() && !s->second.empty()) return s->second;
    auto p = ptx_load_.find(l);
    if (p == ptx_load_.end() || p->second.empty()) return {};
    return p->second + " (" + (machine_why_.empty() ? "no SASS" : machine_why_) + ": PTX only)";
  }

  Support cg_support() const {
    if (cpu_)
      return Support::no(
          "a CPU has no load that bypasses its first-level data cache: OpenCL C's volatile only "
          "stops the compiler from keeping the value");
    if (!nv_) return Support::yes();
    const auto it = ptx_load_.find(MemLoad::cg);
    const std::string ld = it == ptx_load_.end() ? "" : it->second;
    if (ld.rfind("ld.volatile.global", 0) == 0) return Support::yes();
    return Support::no(
        "NVIDIA's compiler made no ld.volatile.global of the volatile __global load (" +
        (ld.empty() ? machine_why_ : ld) + "): no load is known to bypass L1");
  }

  Support nc_support() const {
    if (!nv_)
      return Support::no(
          "OpenCL C has no read-only-path load: a const restrict pointer is a hint, and without "
          "the program's PTX (NVIDIA only) no load is shown to take that path");
    const auto it = ptx_load_.find(MemLoad::nc);
    const std::string ld = it == ptx_load_.end() ? "" : it->second;
    if (ld.rfind("ld.global.nc", 0) == 0) return Support::yes();
    return Support::no("NVIDIA's compiler made no ld.global.nc of the const restrict load (" +
                       (ld.empty() ? machine_why_ : ld) +
                       "): OpenCL C has no other way to the read-only path");
  }

  cl_kernel kernel(const char* name) const {
    auto it = kernels_.find(name);
    if (it == kernels_.end()) throw BackendError(std::string("no OpenCL kernel ") + name);
    return it->second;
  }

  // Where each warp's walk starts, per kind; the chain in place.
  struct Chain {
    cl_mem mem = nullptr;    // the buffer the chase kernel reads
    cl_mem image = nullptr;  // texture: the 1D image over it (released after the chase)
    uint64_t base = 0;       // ca, cg: the buffer's device address
    uint64_t unit = 1;       // bytes per position (texture: 4-byte elements)
    std::vector<cl_ulong> starts;
  };
  Chain place_chain(const MemChaseRequest& r);
  void fill_on_device(const MemChaseRequest& r, cl_mem buf, bool absolute, bool index, Chain& c);
  // One launch; its profiled ns.
  double launch(const MemChaseRequest& r, const Chain& c, uint64_t warmup, uint64_t hops,
                int repeats, std::vector<cl_ulong>& out);

  Handles h_;
  DeviceInfo info_;
  bool cpu_ = false, nv_ = false, clocked_ = false, images_ = false;
  std::string image_why_, machine_why_;
  cl_ulong max_alloc_ = 0, const_max_ = 0;
  std::size_t max_wg_ = 1, width_ = 1;
  cl_program program_ = nullptr;
  std::map<std::string, cl_kernel> kernels_;
  std::map<MemLoad, std::string> ptx_load_, sass_load_;
  Grow chain_, next_, starts_, out_, flush_, base_, const_;
};

void OpenCLMemory::fill_on_device(const MemChaseRequest& r, cl_mem buf, bool absolute, bool index,
                                  Chain& c) {
  const uint64_t lines = r.next->size();
  cl_mem next = next_.get(h_.context, lines * 4, max_alloc_, CL_MEM_READ_ONLY, "chase next");
  check(clEnqueueWriteBuffer(h_.queue, next, CL_TRUE, 0, lines * 4, r.next->data(), 0, nullptr,
                             nullptr),
        "clEnqueueWriteBuffer (chase next)");
  cl_mem base = base_.get(h_.context, 8, max_alloc_, CL_MEM_READ_WRITE, "chase base");
  cl_kernel k = kernel("mem_fill");
  const cl_uint n = static_cast<cl_uint>(lines);
  const cl_ulong stride = r.stride_bytes;
  const cl_int abs = absolute ? 1 : 0, idx = index ? 1 : 0;
  check(clSetKernelArg(k, 0, sizeof(cl_mem), &buf), "clSetKernelArg (fill)");
  check(clSetKernelArg(k, 1, sizeof(cl_mem), &next), "clSetKernelArg (fill)");
  check(clSetKernelArg(k, 2, sizeof n, &n), "clSetKernelArg (fill)");
  check(clSetKernelArg(k, 3, sizeof stride, &stride), "clSetKernelArg (fill)");
  check(clSetKernelArg(k, 4, sizeof abs, &abs), "clSetKernelArg (fill)");
  check(clSetKernelArg(k, 5, sizeof idx, &idx), "clSetKernelArg (fill)");
  check(clSetKernelArg(k, 6, sizeof(cl_mem), &base), "clSetKernelArg (fill)");
  const std::size_t global = (lines + 63) / 64 * 64;
  check(clEnqueueNDRangeKernel(h_.queue, k, 1, nullptr, &global, nullptr, 0, nullptr, nullptr),
        "clEnqueueNDRangeKernel (filling the chain)");
  cl_ulong addr = 0;
  check(clEnqueueReadBuffer(h_.queue, base, CL_TRUE, 0, sizeof addr, &addr, 0, nullptr, nullptr),
        "clEnqueueReadBuffer (chain base)");
  c.base = absolute ? addr : 0;
}

// shape: one chain per kind of load, each placed and its starts computed, in one place
OpenCLMemory::Chain OpenCLMemory::place_chain(const MemChaseRequest& r) {
  const uint64_t lines = r.next->size();
  const uint64_t bytes = lines * r.stride_bytes;
  Chain c;
  if (r.load == MemLoad::constant) {
    if (r.stride_bytes < 4 || r.stride_bytes % 4 != 0 || bytes > constant_bank_bytes())
      throw BackendError("constant chase: " + std::to_string(bytes) + " bytes at stride " +
                         std::to_string(r.stride_bytes) + " does not fit the " +
                         std::to_string(constant_bank_bytes()) +
                         " bytes of CL_DEVICE_MAX_CONSTANT_BUFFER_SIZE");
    std::vector<cl_uint> image(bytes / 4, 0);
    for (uint64_t i = 0; i < lines; ++i)
      image[i * r.stride_bytes / 4] = static_cast<cl_uint>((*r.next)[i] * r.stride_bytes);
    // Exactly the chain's size: a __constant argument may not exceed the device's limit.
    const_.release();
    c.mem = const_.get(h_.context, bytes, max_alloc_, CL_MEM_READ_ONLY, "constant chain");
    check(
        clEnqueueWriteBuffer(h_.queue, c.mem, CL_TRUE, 0, bytes, image.data(), 0, nullptr, nullptr),
        "clEnqueueWriteBuffer (constant chain)");
    for (int w = 0; w < r.warps; ++w) c.starts.push_back(r.starts[w] * r.stride_bytes);
    return c;
  }
  if (r.load == MemLoad::texture) {
    if (!images_) throw BackendError("texture chase: the device has no 1D image buffers");
    if (r.stride_bytes < 4 || r.stride_bytes % 4 != 0)
      throw BackendError("texture chase: stride must be a multiple of 4 bytes");
    cl_mem buf = chain_.get(h_.context, bytes, max_alloc_, CL_MEM_READ_WRITE, "memory chase chain");
    fill_on_device(r, buf, false, true, c);
    cl_image_format fmt{CL_R, CL_UNSIGNED_INT32};
    cl_image_desc desc{};
    desc.image_type = CL_MEM_OBJECT_IMAGE1D_BUFFER;
    desc.image_width = bytes / 4;
    desc.buffer = buf;
    cl_int err = CL_SUCCESS;
    c.image = clCreateImage(h_.context, CL_MEM_READ_ONLY, &fmt, &desc, nullptr, &err);
    check(err, "clCreateImage (1D image buffer of " + std::to_string(bytes) + " bytes)");
    c.mem = c.image;
    c.unit = 4;
    for (int w = 0; w < r.warps; ++w) c.starts.push_back(r.starts[w] * (r.stride_bytes / 4));
    return c;
  }
  if (r.stride_bytes < 8 || r.stride_bytes % 8 != 0)
    throw BackendError("memory chase: stride must be a multiple of 8 bytes");
  c.mem = chain_.get(h_.context, bytes, max_alloc_, CL_MEM_READ_WRITE, "memory chase chain");
  // ca and cg walk addresses (one load per hop, as CUDA's); nc offsets from its restrict base.
  fill_on_device(r, c.mem, r.load != MemLoad::nc, false, c);
  for (int w = 0; w < r.warps; ++w)
    c.starts.push_back(c.base + uint64_t(r.starts[w]) * r.stride_bytes);
  if (r.flush_l2) {
    // Writes allocate in L2: three times its size evicts the chain.
    const uint64_t l2 = 3 * info_.l2_bytes.value_or(64ull << 20);
    cl_mem f = flush_.get(h_.context, l2, max_alloc_, CL_MEM_READ_WRITE, "L2 flush buffer");
    const cl_uint pattern = 0x5a5a5a5au;
    check(clEnqueueFillBuffer(h_.queue, f, &pattern, sizeof pattern, 0, l2, 0, nullptr, nullptr),
          "clEnqueueFillBuffer (flushing L2)");
  }
  return c;
}

double OpenCLMemory::launch(const MemChaseRequest& r, const Chain& c, uint64_t warmup,
                            uint64_t hops, int repeats, std::vector<cl_ulong>& out) {
  cl_kernel k = kernel(kernel_name(r.load));
  const uint64_t per_warp = 2 * static_cast<uint64_t>(repeats) + 1;
  cl_mem st = starts_.get(h_.context, r.warps * 8, max_alloc_, CL_MEM_READ_ONLY, "chase starts");
  check(clEnqueueWriteBuffer(h_.queue, st, CL_TRUE, 0, r.warps * 8, c.starts.data(), 0, nullptr,
                             nullptr),
        "clEnqueueWriteBuffer (starts)");
  cl_mem o =
      out_.get(h_.context, r.warps * per_warp * 8, max_alloc_, CL_MEM_READ_WRITE, "chase out");
  const bool global = r.load == MemLoad::ca || r.load == MemLoad::cg || r.load == MemLoad::nc;
  cl_mem pf = global ? c.mem : st;
  const cl_ulong pf_bytes = global && r.l2_prefetch ? r.next->size() * r.stride_bytes : 0;
  const cl_ulong wu = warmup, hp = hops;
  const cl_int reps = repeats;
  const cl_uint width = static_cast<cl_uint>(width_);
  cl_uint a = 0;
  auto arg = [&](std::size_t size, const void* v) {
    check(clSetKernelArg(k, a++, size, v), "clSetKernelArg (memory chase)");
  };
  if (r.load != MemLoad::ca && r.load != MemLoad::cg) arg(sizeof(cl_mem), &c.mem);
  arg(sizeof(cl_mem), &st);
  arg(sizeof(cl_mem), &o);
  arg(sizeof wu, &wu);
  arg(sizeof hp, &hp);
  arg(sizeof reps, &reps);
  arg(sizeof width, &width);
  arg(sizeof(cl_mem), &pf);
  arg(sizeof pf_bytes, &pf_bytes);
  const std::size_t items = static_cast<std::size_t>(r.warps) * width_;
  const double ns = run_timed_ns(h_.queue, k, items, items, "the memory chase");
  out.assign(r.warps * per_warp, 0);
  check(
      clEnqueueReadBuffer(h_.queue, o, CL_TRUE, 0, out.size() * 8, out.data(), 0, nullptr, nullptr),
      "clEnqueueReadBuffer (chase out)");
  return ns;
}

// shape: one chase for every load: chain, launches, readback, ends, in the order they happen
MemChaseTiming OpenCLMemory::chase(const MemChaseRequest& r) {
  if (!r.next || r.next->empty()) throw BackendError("memory chase: empty chain");
  if (r.warps < 1 || static_cast<int>(r.starts.size()) != r.warps)
    throw BackendError("memory chase: " + std::to_string(r.warps) + " warps, " +
                       std::to_string(r.starts.size()) + " starts");
  if (static_cast<std::size_t>(r.warps) * width_ > max_wg_)
    throw BackendError("memory chase: " + std::to_string(r.warps) + " warps of " +
                       std::to_string(width_) + " work-items exceed the device's work-group of " +
                       std::to_string(max_wg_));
  if (r.chunk_bytes)
    throw BackendError("OpenCL has no physical-memory mapping: no chunk-mapped chase");
  Chain c = place_chain(r);
  struct ImageGuard {
    cl_mem m;
    ~ImageGuard() {
      if (m) clReleaseMemObject(m);
    }
  } image_guard{c.image};
  const uint64_t lines = r.next->size();
  MemChaseTiming t;
  t.instruction = instruction(r.load);
  std::vector<cl_ulong> out;
  std::vector<cl_ulong> ends(r.warps);
  if (clocked_) {
    launch(r, c, r.warmup_hops, r.hops_per_repeat, r.repeats, out);
    const uint64_t per_warp = 2 * static_cast<uint64_t>(r.repeats) + 1;
    double cyc = 0, ns = 0;
    for (int w = 0; w < r.warps; ++w) {
      const cl_ulong* o = out.data() + w * per_warp;
      std::vector<double> v;
      for (int k = 0; k < r.repeats; ++k) {
        v.push_back(r.hops_per_repeat ? double(o[2 * k]) / double(r.hops_per_repeat) : 0);
        if (w == 0) {
          cyc += double(o[2 * k]);
          ns += double(o[2 * k + 1]);
        }
      }
      t.cycles_per_hop.push_back(v);
      ends[w] = o[2 * r.repeats];
    }
    if (ns > 0) t.clock_mhz = cyc / ns * 1000.0;
  } else {
    // Launch k walks the warm-up and k segments; each launch's ends are checked against the
    // host's walk, the last one's returned (it walked what the probe checks).
    t.unit = "ns";
    t.cycles_per_hop.assign(r.warps, {});
    std::vector<uint32_t> at(r.starts.begin(), r.starts.end());
    for (int w = 0; w < r.warps; ++w) at[w] = walk(*r.next, at[w], r.warmup_hops);
    double before = 0;
    for (int k = 0; k <= r.repeats; ++k) {
      const uint64_t hops = static_cast<uint64_t>(k) * r.hops_per_repeat;
      const double ns = launch(r, c, r.warmup_hops, hops, 1, out);
      if (k > 0) {
        const double n = double(r.hops_per_repeat);
        double per_hop = (ns - before) / n;
        // Noise in the launch larger than a segment: the whole launch per hop, an upper bound.
        if (!(per_hop > 0)) per_hop = ns / (double(r.warmup_hops) + double(hops));
        for (int w = 0; w < r.warps; ++w) t.cycles_per_hop[w].push_back(per_hop);
        for (int w = 0; w < r.warps; ++w) at[w] = walk(*r.next, at[w], r.hops_per_repeat);
      }
      before = ns;
      for (int w = 0; w < r.warps; ++w) {
        ends[w] = out[3 * w + 2];
        const uint32_t line = chase_end_line(ends[w], c.base, r.stride_bytes, c.unit, lines);
        if (k < r.repeats && line != at[w])
          throw BackendError("memory chase (" + to_string(r.load) + "): warp " + std::to_string(w) +
                             " ended launch " + std::to_string(k) + " at line " +
                             std::to_string(line) + ", the chain says " + std::to_string(at[w]));
      }
    }
  }
  for (int w = 0; w < r.warps; ++w)
    t.end_lines.push_back(chase_end_line(ends[w], c.base, r.stride_bytes, c.unit, lines));
  return t;
}

}  // namespace

std::unique_ptr<MemoryKernels> make_memory_kernels(const Handles& h, const DeviceInfo& info) {
  return std::make_unique<OpenCLMemory>(h, info);
}

}  // namespace gd::opencl
