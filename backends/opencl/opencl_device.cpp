// The OpenCL backend: device discovery and the pointer chase through global, l2 (volatile
// loads), constant, shared and local (__local) and image memory, timed with event profiling
// (OpenCL has no cycle counter).
#include <CL/cl.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <exception>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "compute/cl_vendor.hpp"
#include "compute/compute.hpp"
#include "gpudissect/chase_chain.hpp"
#include "gpudissect/kernel_sets.hpp"
#include "gpudissect/sass.hpp"
#include "gpudissect/units.hpp"
#include "memory/listing.hpp"
#include "opencl_backend.hpp"
#include "opencl_constant_chase.hpp"
#include "opencl_internal.hpp"
#include "opencl_kernels.hpp"
#include "opencl_probes.hpp"

namespace gd::opencl {

namespace {

using namespace detail;

// ---- the device ----

class OpenCLDevice final : public Device {
 public:
  OpenCLDevice(cl_platform_id p, cl_device_id d, int pi, int di) : platform_(p), device_(d) {
    ctx_ = make_context(p, d);
    facts_ = query_facts(p, d, pi, di, ctx_.get());
    info_ = device_info(facts_, d);

    cl_int err = CL_SUCCESS;
    queue_ = Queue(clCreateCommandQueue(ctx_.get(), d, CL_QUEUE_PROFILING_ENABLE, &err));
    check(err, "clCreateCommandQueue");

    std::string options;
    if (at_least(parse_version(facts_.c_version), 1, 2)) options += "-cl-std=CL1.2";
    if (facts_.image_path.ok) options += " -DGD_IMAGES=1";
    // The in-kernel local array of chase_local_static: the device's local memory, at most the
    // 48 KiB a kernel may declare statically on NVIDIA's OpenCL.
    static_local_words_ = std::min<cl_ulong>(facts_.local_mem, 48 * 1024) / 4;
    if (static_local_words_ > 0)
      options += " -DGD_LOCAL_WORDS=" + std::to_string(static_local_words_);
    // NVIDIA: the chase also counts its cycles (inline PTX); AMD's ROCm platform through
    // clang's amdgcn builtins (not validated on AMD hardware: the facts say so). Should the
    // driver refuse that, the chase runs as elsewhere, in ns only, and the facts say why.
    const OpenCLClock vendor_clock = opencl_clock_for(facts_.platform_name, facts_.vendor,
                                                      (facts_.type & CL_DEVICE_TYPE_GPU) != 0);
    nv_ = vendor_clock == OpenCLClock::nvidia;
    std::string built = options;  // the options the chase program was built with
    if (vendor_clock != OpenCLClock::none) {
      const bool nv = nv_;
      const std::string clocked = options + (nv ? " -DGD_NV_CLOCK=1" : " -DGD_AMD_CLOCK=1");
      err = build_chase(clocked);
      const std::string what =
          nv ? "clock64 (inline PTX)" : "s_memtime (" + opencl_clock_note(vendor_clock) + ")";
      info_.extra["opencl_chase_clock"] =
          err == CL_SUCCESS ? what : "none: " + describe("clBuildProgram", err);
      nv_clock_ = err == CL_SUCCESS;
      if (nv_clock_) built = clocked;
    }
    if (!nv_clock_ && (err = build_chase(options)) != CL_SUCCESS) {
      throw BackendError(describe("clBuildProgram", err) + " on " + facts_.name + " (options \"" +
                         options + "\"); build log:\n" + build_log());
    }
    // NVIDIA: the constant chase through a program-scope array (opencl_constant_chase.hpp),
    // built as the chase program was. Elsewhere a `__constant` argument is what the platform
    // makes of it, and one build per chain would only cost time (PoCL: 0.8 -> 9.4 s for the
    // constant path); tests force it (GD_TEST_CONSTANT_BANK=1) where AMD's clock is not used.
    if (nv_ || (constant_bank_forced() && vendor_clock != OpenCLClock::amd))
      bank_ = std::make_unique<ConstantBankChase>(ctx_.get(), d, built);

    kernels_[MemPath::global] = make_kernel("chase_global");
    kernels_[MemPath::constant] = make_kernel("chase_constant");
    kernels_[MemPath::l2] = make_kernel("chase_l2");
    address_kernels_[MemPath::global] = make_kernel("chase_global_addr");
    address_kernels_[MemPath::l2] = make_kernel("chase_l2_addr");
    to_addresses_ = make_kernel("chain_to_addresses");
    kernels_[MemPath::local] = make_kernel("chase_local");
    kernels_[MemPath::shared] = make_kernel("chase_local");  // CUDA's name for __local
    if (static_local_words_ > 0) local_static_ = make_kernel("chase_local_static");
    if (facts_.image_path.ok) kernels_[MemPath::image] = make_kernel("chase_image");

    // The local kernel copies with a work-group and chases with work-item 0.
    std::size_t wg = 1;
    check(clGetKernelWorkGroupInfo(kernels_[MemPath::local].get(), d, CL_KERNEL_WORK_GROUP_SIZE,
                                   sizeof(wg), &wg, nullptr),
          "clGetKernelWorkGroupInfo(WORK_GROUP_SIZE)");
    local_group_ = std::clamp<std::size_t>(wg, 1, 64);

    // The element or address reached; ulongs 1 and 2: the cycles and ns where the chase
    // counts them; ulong 3: the chain's address (chain_to_addresses).
    const std::size_t out_bytes = 4 * sizeof(cl_ulong);
    out_ = Mem(clCreateBuffer(ctx_.get(), CL_MEM_WRITE_ONLY, out_bytes, nullptr, &err));
    check_alloc(err, "clCreateBuffer(out)", out_bytes);
  }

  // Members are released in reverse order of declaration: buffers and kernels before the
  // program, queue and context. Finish first so nothing is in flight.
  ~OpenCLDevice() override {
    if (queue_) clFinish(queue_.get());
    kernel_sets_.clear();
  }

  void release_memory() override { buffers_.clear(); }

  KernelSet* kernel_set(const std::string& probe) override {
    return kernel_set_of(kernel_sets_, kernel_factories(), probe, handles(), info_);
  }

  const DeviceInfo& info() const override { return info_; }
  Support supports(MemPath p) const override { return facts_.supports(p); }
  uint64_t max_footprint(MemPath p) const override { return facts_.max_footprint(p); }
  std::optional<ClockSample> sample_clock() override { return std::nullopt; }

  // NVIDIA: the chase kernel's load as its program's PTX holds it, and the SASS ptxas makes of
  // that where CUDA's tools are installed: the evidence of what each path times (the l2
  // path's volatile load is LDG...STRONG.SYS, which the L1 does not serve).
  std::optional<std::string> timed_instruction(MemPath p) override {
    // The local chase's kernel also loads the chain from global memory to copy it, so its
    // load is read from the chase loop (chase_local_static's only; not the other kernel's).
    // The address chases where the last chain of the path was one (chain_kind).
    const bool addr = last_kind_[p] == ChainKind::address;
    const std::map<MemPath, std::string> kKernel = {
        {MemPath::global, addr ? "chase_global_addr" : "chase_global"},
        {MemPath::l2, addr ? "chase_l2_addr" : "chase_l2"},
        {MemPath::constant, "chase_constant"},
        {MemPath::image, "chase_image"}};
    if (p == MemPath::constant && last_bank_ && nv_ && bank_) return bank_instruction();
    const bool local = (p == MemPath::shared || p == MemPath::local) && last_local_static_;
    auto k = kKernel.find(p);
    if (!nv_ || (k == kKernel.end() && !local)) return std::nullopt;
    if (!machine_read_) {
      machine_read_ = true;
      ProgramSass ps = program_sass(program_.get(), device_);
      ptx_ = std::move(ps.ptx);
      sass_ = std::move(ps.sass);
      sass_loops_ = parse_sass_loops(sass_);
      machine_why_ = std::move(ps.why);
    }
    if (local) {
      // The chase loop's local load (the copy's LDG is in another loop).
      const auto it = sass_loops_.find("chase_local_static");
      if (it == sass_loops_.end()) return std::nullopt;
      for (const auto& [op, n] : it->second.opcodes)
        if (op.rfind("LDS", 0) == 0) return op + loop_listing(sass_loops_, "chase_local_static");
      return std::nullopt;
    }
    return kernel_listing(sass_, sass_loops_, ptx_, machine_why_, k->second);
  }

  // The constant-bank chase's load and loop, from the last chain's own program.
  std::optional<std::string> bank_instruction() {
    const ProgramSass ps = program_sass(bank_->program(), device_);
    return kernel_listing(ps.sass, parse_sass_loops(ps.sass), ps.ptx, ps.why,
                          "chase_constant_bank");
  }

  // `kernel`'s load in a program's SASS with its loop (loop_listing: what one hop costs beside the
  // load), else the load its PTX holds and why there is no SASS (`why`); nullopt where neither has
  // one.
  static std::optional<std::string> kernel_listing(const std::string& sass,
                                                   const std::map<std::string, LoopSass>& loops,
                                                   const std::string& ptx, const std::string& why,
                                                   const std::string& kernel) {
    if (const std::string s = sass_function_load(sass, kernel); !s.empty())
      return s + loop_listing(loops, kernel);
    const std::string load = ptx_entry_load(ptx, kernel);
    if (load.empty()) return std::nullopt;
    return load + " (" + (why.empty() ? "no SASS" : why) + ": PTX only)";
  }

  // Hop accounting: one launch of warmup_hops (skipped when 0), then for each repeat one
  // launch of N = hops_per_repeat hops and one of 2N, each starting where the previous one
  // ended. In all warmup_hops + repeats * 3N hops are walked from line 0, and end_line is
  // the line reached after the last of them: walk(next, 0, warmup + repeats * 3 * N). That
  // total is returned in ChaseTiming::hops_walked, from which the probe recomputes the end.
  ChaseTiming chase(const ChaseRequest& req) override {
    validate_index_chase(req);
    require_support(req.path);
    const uint64_t bytes = req.footprint_bytes();
    check_chase_footprint(req, max_footprint(req.path), facts_.name);
    const uint64_t words_per_line = req.stride_bytes / 4;
    const auto& next = *req.next;
    const ChainKind kind = opencl_chain_kind(req.path, req.stride_bytes, index_chase_forced());
    last_kind_[req.path] = kind;
    std::vector<uint32_t> image = index_chase_image(req);
    if (kind == ChainKind::bytes)
      for (uint32_t& w : image) w *= 4;  // element index to byte offset (a small chain)

    PathBuffer& pb = buffer_for(req.path, bytes);
    check_alloc(clEnqueueWriteBuffer(queue_.get(), pb.buf.get(), CL_TRUE, 0, bytes, image.data(), 0,
                                     nullptr, nullptr),
                "clEnqueueWriteBuffer", bytes);

    Launch launch{req.path, pb, bytes, words_per_line, next.size(), kind, 0};
    if (req.path == MemPath::constant) last_bank_ = false;
    if (req.path == MemPath::constant && bank_ && kind == ChainKind::bytes) {
      try {
        launch.bank = bank_->kernel_for(image);
        last_bank_ = true;
      } catch (const BackendError& e) {
        // A chain the array cannot hold once others built (NVIDIA: 64 KiB, the whole bank)
        // is skipped, not walked by the other kernel; a bank that never built gives way to
        // the argument kernel for the path, and the run says why.
        if (bank_->built_once())
          throw AllocationFailed(std::string("the constant chain as a program-scope array: ") +
                                 e.what());
        info_.extra["opencl_constant_chase"] = std::string("__constant argument: ") + e.what();
        bank_.reset();
      }
    }
    if (kind == ChainKind::address) launch.base = to_addresses(launch);
    cl_uint idx = 0;  // line 0
    if (req.warmup_hops > 0) run(launch, idx, req.warmup_hops);

    ChaseTiming t;
    const uint64_t n = req.hops_per_repeat;
    double cycles = 0, timer_ns = 0;
    for (int r = 0; r < req.repeats; ++r) {
      LoopClock c1, c2;
      const double t1 = run(launch, idx, n, &c1);
      const double t2 = run(launch, idx, 2 * n, &c2);
      // Both launches pay the same fixed cost (launch, the local copy), so the difference is
      // the time of N hops alone. When noise in that fixed cost is larger than N hops take,
      // the difference can come out zero or negative; then the launch overhead cannot be
      // separated and t(2N)/(2N), an upper bound, is the honest fallback.
      double ns = (t2 - t1) / static_cast<double>(n);
      if (!(ns > 0)) ns = t2 / static_cast<double>(2 * n);
      t.ns_per_hop.push_back(ns);
      // The loop's own cycles, by the same difference (the first hops' misses cancel).
      if (nv_clock_ && c2.cycles > c1.cycles && c2.ns > c1.ns) {
        const double dc = static_cast<double>(c2.cycles - c1.cycles);
        t.cycles_per_hop.push_back(dc / static_cast<double>(n));
        cycles += dc;
        timer_ns += static_cast<double>(c2.ns - c1.ns);
      }
    }
    if (timer_ns > 0 && t.cycles_per_hop.size() == static_cast<std::size_t>(req.repeats))
      t.clock_mhz = cycles / timer_ns * 1000.0;
    else
      t.cycles_per_hop.clear();  // all repeats or none: one per repeat
    t.end_line = static_cast<uint32_t>(idx / words_per_line);
    t.hops_walked = req.warmup_hops + static_cast<uint64_t>(req.repeats) * 3 * n;
    return t;
  }

 private:
  struct PathBuffer {
    Mem buf;
    Mem image;  // image path: a 1D image over buf
    uint64_t bytes = 0;
  };
  struct Launch {
    MemPath path;
    PathBuffer& pb;
    uint64_t bytes;
    uint64_t words_per_line;
    std::size_t lines;
    ChainKind kind;
    uint64_t base;             // the chain's device address (address chains)
    cl_kernel bank = nullptr;  // constant: chase_constant_bank over this chain
  };

  // Converts the launch's index chain in place into addresses (chase.cl's
  // chain_to_addresses); returns the buffer's device address.
  uint64_t to_addresses(const Launch& l) {
    cl_kernel k = to_addresses_.get();
    cl_mem buf = l.pb.buf.get(), out = out_.get();
    const cl_uint wpl = static_cast<cl_uint>(l.words_per_line);
    const cl_uint lines = static_cast<cl_uint>(l.lines);
    check(clSetKernelArg(k, 0, sizeof(cl_mem), &buf), "clSetKernelArg(chain)");
    check(clSetKernelArg(k, 1, sizeof(cl_uint), &wpl), "clSetKernelArg(words_per_line)");
    check(clSetKernelArg(k, 2, sizeof(cl_uint), &lines), "clSetKernelArg(lines)");
    check(clSetKernelArg(k, 3, sizeof(cl_mem), &out), "clSetKernelArg(out)");
    const std::size_t global = l.lines;
    check(
        clEnqueueNDRangeKernel(queue_.get(), k, 1, nullptr, &global, nullptr, 0, nullptr, nullptr),
        "clEnqueueNDRangeKernel(chain_to_addresses)");
    cl_ulong base = 0;
    check(clEnqueueReadBuffer(queue_.get(), out, CL_TRUE, 3 * sizeof(cl_ulong), sizeof base, &base,
                              0, nullptr, nullptr),
          "clEnqueueReadBuffer(chain address)");
    return base;
  }

  void require_support(MemPath p) const {
    const Support s = supports(p);
    if (!s.ok)
      throw BackendError("the " + to_string(p) + " path is not supported on " + facts_.name + ": " +
                         s.reason);
  }

  Kernel make_kernel(const char* name) {
    cl_int err = CL_SUCCESS;
    Kernel k(clCreateKernel(program_.get(), name, &err));
    if (err != CL_SUCCESS) throw BackendError(describe("clCreateKernel", err) + " for " + name);
    return k;
  }

  std::string build_log() const {
    std::size_t n = 0;
    if (clGetProgramBuildInfo(program_.get(), device_, CL_PROGRAM_BUILD_LOG, 0, nullptr, &n) !=
        CL_SUCCESS)
      return "(no build log)";
    std::string log(n, '\0');
    if (n && clGetProgramBuildInfo(program_.get(), device_, CL_PROGRAM_BUILD_LOG, n, log.data(),
                                   nullptr) != CL_SUCCESS)
      return "(no build log)";
    log = trim(std::move(log));
    return log.empty() ? "(empty build log)" : log;
  }

  // The buffer of a path grows to the largest footprint seen and is reused after that.
  PathBuffer& buffer_for(MemPath p, uint64_t bytes) {
    PathBuffer& pb = buffers_[p];
    if (pb.buf && pb.bytes >= bytes) return pb;
    pb.image.reset();
    pb.buf.reset();
    pb.bytes = 0;
    if (bytes > facts_.max_alloc)
      throw AllocationFailed("cannot allocate " + format_bytes(static_cast<double>(bytes)) + " (" +
                             std::to_string(bytes) + " bytes): larger than the " +
                             format_bytes(static_cast<double>(facts_.max_alloc)) +
                             " CL_DEVICE_MAX_MEM_ALLOC_SIZE of " + facts_.name);
    cl_int err = CL_SUCCESS;
    // Global and l2: chain_to_addresses writes the addresses in place, so not read-only
    // (the chase kernels' own code does not depend on the flag).
    const bool written = p == MemPath::global || p == MemPath::l2;
    Mem buf(clCreateBuffer(ctx_.get(), written ? CL_MEM_READ_WRITE : CL_MEM_READ_ONLY, bytes,
                           nullptr, &err));
    check_alloc(err, "clCreateBuffer", bytes);
    if (p == MemPath::image) {
      cl_image_format fmt{CL_R, CL_UNSIGNED_INT32};
      cl_image_desc desc{};
      desc.image_type = CL_MEM_OBJECT_IMAGE1D_BUFFER;
      desc.image_width = bytes / 4;
      desc.buffer = buf.get();
      Mem img(clCreateImage(ctx_.get(), CL_MEM_READ_ONLY, &fmt, &desc, nullptr, &err));
      check_alloc(err, "clCreateImage(1D buffer)", bytes);
      pb.image = std::move(img);
    }
    pb.buf = std::move(buf);
    pb.bytes = bytes;
    return pb;
  }

  cl_int build_chase(const std::string& options) {
    cl_int err = CL_SUCCESS;
    // The clock prologue first: the chase's GD_CLOCK_* use its counters.
    const char* src[] = {kernels::nv_clock, kernels::chase};
    program_ = Program(clCreateProgramWithSource(ctx_.get(), 2, src, nullptr, &err));
    check(err, "clCreateProgramWithSource");
    return clBuildProgram(program_.get(), 1, &device_, options.c_str(), nullptr, nullptr);
  }

  // The chase loop's cycles and %globaltimer ns, as the clocked kernels write them.
  struct LoopClock {
    uint64_t cycles = 0, ns = 0;
  };

  // The local chase's kernel with its arguments set: chase_local_static where the chain fits
  // its array, else chase_local (the array an argument).
  cl_kernel set_local_args(const Launch& l, cl_uint start, cl_ulong h) {
    cl_mem src = l.pb.buf.get(), out = out_.get();
    const cl_uint n_words = static_cast<cl_uint>(l.bytes / 4);
    last_local_static_ = local_static_ && l.bytes / 4 <= static_local_words_;
    cl_kernel k = last_local_static_ ? local_static_.get() : kernels_.at(l.path).get();
    cl_uint arg = 0;
    check(clSetKernelArg(k, arg++, sizeof(cl_mem), &src), "clSetKernelArg(src)");
    check(clSetKernelArg(k, arg++, sizeof(cl_uint), &n_words), "clSetKernelArg(n_words)");
    if (!last_local_static_)
      check_alloc(clSetKernelArg(k, arg++, l.bytes, nullptr), "clSetKernelArg(local buffer)",
                  l.bytes);
    check(clSetKernelArg(k, arg++, sizeof(cl_uint), &start), "clSetKernelArg(start)");
    check(clSetKernelArg(k, arg++, sizeof(cl_ulong), &h), "clSetKernelArg(hops)");
    check(clSetKernelArg(k, arg++, sizeof(cl_mem), &out), "clSetKernelArg(out)");
    if (!last_local_static_) {
      const cl_uint wpl = static_cast<cl_uint>(l.words_per_line);
      check(clSetKernelArg(k, arg, sizeof(cl_uint), &wpl), "clSetKernelArg(words_per_line)");
    }
    return k;
  }

  // One launch of `hops` hops from element idx; idx becomes the element reached. Returns the
  // kernel's execution time in ns from event profiling; the loop's clock into `clock`.
  double run(const Launch& l, cl_uint& idx, uint64_t hops, LoopClock* clock = nullptr) {
    const bool addr = l.kind == ChainKind::address;
    cl_kernel k = (addr ? address_kernels_ : kernels_).at(l.path).get();
    const cl_ulong h = hops;
    const cl_uint start = l.kind == ChainKind::bytes ? idx * 4 : idx;
    cl_mem out = out_.get();
    std::size_t global = 1, local = 1;
    if (addr) {
      cl_mem mem = l.pb.buf.get();
      const cl_ulong base = l.base, start_addr = l.base + cl_ulong(idx) * 4;
      check(clSetKernelArg(k, 0, sizeof(cl_mem), &mem), "clSetKernelArg(buffer)");
      check(clSetKernelArg(k, 1, sizeof(cl_ulong), &base), "clSetKernelArg(base)");
      check(clSetKernelArg(k, 2, sizeof(cl_ulong), &start_addr), "clSetKernelArg(start)");
      check(clSetKernelArg(k, 3, sizeof(cl_ulong), &h), "clSetKernelArg(hops)");
      check(clSetKernelArg(k, 4, sizeof(cl_mem), &out), "clSetKernelArg(out)");
    } else if (l.bank) {
      k = l.bank;
      check(clSetKernelArg(k, 0, sizeof(cl_uint), &start), "clSetKernelArg(start)");
      check(clSetKernelArg(k, 1, sizeof(cl_ulong), &h), "clSetKernelArg(hops)");
      check(clSetKernelArg(k, 2, sizeof(cl_mem), &out), "clSetKernelArg(out)");
    } else if (l.path == MemPath::local || l.path == MemPath::shared) {
      k = set_local_args(l, start, h);
      global = local = local_group_;
    } else {
      cl_mem mem = l.path == MemPath::image ? l.pb.image.get() : l.pb.buf.get();
      check(clSetKernelArg(k, 0, sizeof(cl_mem), &mem), "clSetKernelArg(buffer)");
      check(clSetKernelArg(k, 1, sizeof(cl_uint), &start), "clSetKernelArg(start)");
      check(clSetKernelArg(k, 2, sizeof(cl_ulong), &h), "clSetKernelArg(hops)");
      check(clSetKernelArg(k, 3, sizeof(cl_mem), &out), "clSetKernelArg(out)");
    }
    cl_event raw = nullptr;
    check_alloc(
        clEnqueueNDRangeKernel(queue_.get(), k, 1, nullptr, &global, &local, 0, nullptr, &raw),
        "clEnqueueNDRangeKernel", l.bytes);
    Event ev(raw);
    cl_ulong words[4] = {};
    check(clEnqueueReadBuffer(queue_.get(), out, CL_TRUE, 0, sizeof words, words, 0, nullptr,
                              nullptr),
          "clEnqueueReadBuffer(out)");
    if (addr && words[3] != l.base)
      throw BackendError("the " + to_string(l.path) +
                         " chain's buffer moved between launches (OpenCL 1.2 does not promise "
                         "a buffer one address): its addresses are stale, no chase");
    cl_uint word0 = 0;
    std::memcpy(&word0, words, sizeof word0);  // the uint at byte 0
    const uint64_t reached = addr ? words[0] : word0;
    const std::optional<uint64_t> at = chase_end_element(l.kind, reached, l.base);
    if (!at)
      throw BackendError("chase kernel (" + to_string(l.path) + ") reached " +
                         std::to_string(reached) + ", not a word of its chain of " +
                         to_string(l.kind));
    const uint64_t end = *at;
    if (clock && nv_clock_) *clock = {words[1], words[2]};
    const double ns = event_seconds(ev.get()) * 1e9;
    // The next launch starts here: an index that is not a line start would read out of
    // bounds, so stop rather than go on.
    if (end % l.words_per_line != 0 || end / l.words_per_line >= l.lines)
      throw BackendError("chase kernel (" + to_string(l.path) + ") ended at element " +
                         std::to_string(end) + ", which is not the start of one of the " +
                         std::to_string(l.lines) + " lines");
    idx = static_cast<cl_uint>(end);
    return ns;
  }

  Handles handles() const { return {platform_, device_, ctx_.get(), queue_.get()}; }

  cl_platform_id platform_;
  cl_device_id device_;
  Facts facts_;
  DeviceInfo info_;
  Context ctx_;
  Queue queue_;
  Program program_;
  std::map<MemPath, Kernel> kernels_;
  std::map<MemPath, Kernel> address_kernels_;  // global, l2: the address chases
  Kernel to_addresses_;
  std::map<MemPath, ChainKind> last_kind_;  // of each path's last chase, for its listing
  std::size_t local_group_ = 1;
  // chase_local_static and the words of its array (0: not built).
  Kernel local_static_;
  cl_ulong static_local_words_ = 0;
  bool last_local_static_ = false;           // the last local chase ran chase_local_static
  std::unique_ptr<ConstantBankChase> bank_;  // null: the constant chase takes an argument
  bool last_bank_ = false;                   // the last constant chase ran through bank_
  bool nv_clock_ = false;  // the chase kernels count cycles (GD_NV_CLOCK, GD_AMD_CLOCK)
  bool nv_ = false;        // NVIDIA's platform: the program binary is PTX
  bool machine_read_ = false;
  std::string ptx_, sass_, machine_why_;        // the chase program's, read once on NVIDIA
  std::map<std::string, LoopSass> sass_loops_;  // sass_'s loops, by kernel
  Mem out_;
  std::map<MemPath, PathBuffer> buffers_;
  std::map<std::string, std::unique_ptr<KernelSet>> kernel_sets_;
};

}  // namespace

std::vector<DeviceEntry> enumerate(std::string* why) {
  auto say = [&](std::string s) {
    if (why) *why = std::move(s);
  };
  std::vector<DeviceEntry> out;
  try {
    cl_int err = CL_SUCCESS;
    const auto platforms = list_platforms(&err);
    if (platforms.empty()) {
      say(err == CL_SUCCESS
              ? "no OpenCL platform found (is an ICD installed, e.g. pocl-opencl-icd?)"
              : "no OpenCL platform found: " + describe("clGetPlatformIDs", err) +
                    " (is an ICD installed, e.g. pocl-opencl-icd?)");
      return {};
    }
    std::string errors;
    for (std::size_t pi = 0; pi < platforms.size(); ++pi) {
      std::vector<cl_device_id> devices;
      try {
        devices = list_devices(platforms[pi]);
      } catch (const std::exception& e) {
        errors += "platform " + std::to_string(pi) + ": " + e.what() + "; ";
        continue;
      }
      for (std::size_t di = 0; di < devices.size(); ++di) {
        DeviceEntry e;
        e.id = "opencl:" + std::to_string(pi) + "." + std::to_string(di);
        try {
          const Facts f = query_facts(platforms[pi], devices[di], static_cast<int>(pi),
                                      static_cast<int>(di), nullptr);
          e.name = f.name;
          e.summary = f.summary();
          for (MemPath p : all_mem_paths()) e.paths.emplace_back(p, f.supports(p));
        } catch (const std::exception& ex) {
          // A device that cannot even be queried is listed, with the reason, as unusable.
          e.name = "(unknown)";
          e.summary = std::string("cannot query device: ") + ex.what();
          for (MemPath p : all_mem_paths()) e.paths.emplace_back(p, Support::no(e.summary));
        }
        out.push_back(std::move(e));
      }
    }
    if (out.empty())
      say(std::to_string(platforms.size()) + " OpenCL platform(s) but no device" +
          (errors.empty() ? "" : ": " + errors));
    else if (!errors.empty())
      say(errors);
  } catch (const std::exception& e) {
    say(std::string("OpenCL enumeration failed: ") + e.what());
  } catch (...) {
    say("OpenCL enumeration failed");
  }
  return out;
}

std::unique_ptr<Device> open(int platform, int device) {
  cl_int err = CL_SUCCESS;
  const auto platforms = list_platforms(&err);
  if (platform < 0 || static_cast<std::size_t>(platform) >= platforms.size())
    throw BackendError("no OpenCL platform " + std::to_string(platform) + " (" +
                       std::to_string(platforms.size()) + " platforms" +
                       (err != CL_SUCCESS
                            ? "; " + describe("clGetPlatformIDs", err) + ", is an ICD installed?"
                            : "") +
                       ")");
  const auto devices = list_devices(platforms[platform]);
  if (device < 0 || static_cast<std::size_t>(device) >= devices.size())
    throw BackendError("no OpenCL device " + std::to_string(device) + " on platform " +
                       std::to_string(platform) + " (" + std::to_string(devices.size()) +
                       " devices)");
  return std::make_unique<OpenCLDevice>(platforms[platform], devices[device], platform, device);
}

}  // namespace gd::opencl
