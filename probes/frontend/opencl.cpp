// OpenCL kernels of the frontend probe: the generator's instruction-cache loops (built on
// first use, one program per size), timed with event profiling, their size read from the
// program binary; launch latency from event profiling (queued to start) and the host
// clock; back-to-back launch rate on one queue. Block dispatch and occupancy on NVIDIA's
// OpenCL only, where inline PTX reads %smid and %globaltimer (blocks.hpp's kernel, CUDA's
// records); OpenCL C itself has no SM id. Graphs, the register staircase and the partition
// test on a CPU device are unsupported.
#include <algorithm>
#include <chrono>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "compute/ptx_sass.hpp"
#include "frontend/blocks.hpp"
#include "frontend/host_clock.hpp"
#include "gpudissect/build_once.hpp"
#include "gpudissect/parallel.hpp"
#include "gpudissect/sass.hpp"
#include "opencl_probes.hpp"

namespace gd::opencl {

namespace {

using gd::frontend::now_ns;

constexpr const char* kEmpty =
    "__kernel void gd_fe_empty(__global ulong* p) { if (get_global_id(0) == 0) p[0] = 1; }\n";

class OpenCLFrontend final : public FrontendKernels {
 public:
  OpenCLFrontend(const Handles& h, const DeviceInfo& info) : h_(h), info_(info) {
    clGetDeviceInfo(h.device, CL_DEVICE_MAX_WORK_GROUP_SIZE, sizeof max_wg_, &max_wg_, nullptr);
    cl_device_type type = 0;
    clGetDeviceInfo(h.device, CL_DEVICE_TYPE, sizeof type, &type, nullptr);
    gpu_ = (type & CL_DEVICE_TYPE_GPU) != 0;
    nv_ = is_nvidia_opencl(platform_string_or_empty(h.platform, CL_PLATFORM_NAME),
                           platform_string_or_empty(h.platform, CL_PLATFORM_VENDOR));
    clGetDeviceInfo(h.device, CL_DEVICE_LOCAL_MEM_SIZE, sizeof local_mem_, &local_mem_, nullptr);
  }
  ~OpenCLFrontend() override {
    for (cl_mem m : {out_, tim_, flag_, rec_})
      if (m) clReleaseMemObject(m);
  }

  std::string language() const override { return "opencl"; }

  Support supports(const std::string& part) override {
    if (part == "icache" || part == "launch" || part == "rate.plain") return Support::yes();
    if (part == "partitions")
      return gpu_ ? Support::yes()
                  : Support::no("a CPU device has no scheduler partitions to put warps on");
    if (part == "rate.streams") return Support::no("several queues are not measured on OpenCL");
    if (part == "rate.graph")
      return Support::no("OpenCL has no graph launch (cl_khr_command_buffer is not used)");
    if (part == "dispatch" || part == "occupancy" || part == "occupancy.block" ||
        part == "occupancy.shared") {
      if (nv_) return Support::yes();
      return Support::no(
          "OpenCL C has no SM id: only NVIDIA's OpenCL (inline PTX %smid and %globaltimer) lets a "
          "work-group record which SM ran it and when");
    }
    if (part == "occupancy.regs")
      return Support::no(
          "OpenCL has no per-kernel register cap (CUDA's --maxrregcount) and reports no "
          "registers per kernel: the register staircase is CUDA's");
    return Support::no("unknown part " + part);
  }

  // A GPU's programs build on the host (build_program touches the context, not the queue), so
  // they start with the run, beside the probes before this one (HeadStart, Probe::ahead): on
  // an H200 they took 12.5 s of the probe's 13 s even built in parallel. Not on a CPU device,
  // whose compiles would share the cores being measured.
  bool compiles_beside_measurements() const override { return gpu_; }

  // A GPU's driver compiles on the host's cores: the sweep's programs are built in parallel
  // here, where one after the other they took a third of the probe's time on an H200. PoCL's
  // LLVM is slow per statement and shares the cores measured: it builds only what runs, on
  // first use.
  void prepare_icache(const std::vector<IcacheKernelSpec>& specs,
                      const std::atomic<bool>* cancel) override {
    if (!gpu_) return;
    parallel_for(specs.size(), cancel, [&](std::size_t i) { icache_program(specs[i]); });
  }

  IcacheTiming icache(const IcacheRun& run) override {
    const Program& p = icache_program(run.spec);
    const std::size_t items =
        std::min<std::size_t>(static_cast<std::size_t>(std::max(1, run.warps)) * 32, max_wg_);
    ensure(items);
    const cl_uint fill = 0xA5A5A5A5u;
    check(clEnqueueFillBuffer(h_.queue, out_, &fill, sizeof fill, 0, items * sizeof(cl_uint), 0,
                              nullptr, nullptr),
          "clEnqueueFillBuffer");
    cl_int iters = static_cast<cl_int>(std::min<uint64_t>(run.iters, 1u << 30));
    cl_int mode = run.different ? 1 : 0;
    cl_float seed = kIcacheSeed, addend = kIcacheAddend;
    check(clSetKernelArg(p.kernel, 0, sizeof(cl_mem), &out_), "clSetKernelArg");
    check(clSetKernelArg(p.kernel, 1, sizeof(cl_mem), &tim_), "clSetKernelArg");
    check(clSetKernelArg(p.kernel, 2, sizeof iters, &iters), "clSetKernelArg");
    check(clSetKernelArg(p.kernel, 3, sizeof mode, &mode), "clSetKernelArg");
    check(clSetKernelArg(p.kernel, 4, sizeof seed, &seed), "clSetKernelArg");
    check(clSetKernelArg(p.kernel, 5, sizeof addend, &addend), "clSetKernelArg");
    const double ns =
        run_timed_ns(h_.queue, p.kernel, items, items, "the instruction-cache kernel");
    std::vector<cl_uint> out(items);
    check(clEnqueueReadBuffer(h_.queue, out_, CL_TRUE, 0, items * sizeof(cl_uint), out.data(), 0,
                              nullptr, nullptr),
          "clEnqueueReadBuffer");
    IcacheTiming r;
    r.ns = ns;
    int bad = 0;
    std::ostringstream msg;
    for (std::size_t i = 0; i < items; ++i) {
      const int region =
          run.different
              ? static_cast<int>((i / 32) % static_cast<std::size_t>(std::max(1, run.spec.regions)))
              : 0;
      const uint32_t want = reference(run.spec, region, static_cast<uint64_t>(iters));
      if (out[i] != want && bad++ == 0)
        msg << "work-item " << i << " wrote 0x" << std::hex << out[i] << ", host reference 0x"
            << want << std::dec;
    }
    r.check_ok = bad == 0;
    r.check = bad ? msg.str() + " (" + std::to_string(bad) + " wrong)" : "every work-item matched";
    // The timed loop's machine code where NVIDIA's tools read it (as CUDA's figure: its SASS
    // loop bytes); else the program binary's size, which on NVIDIA is PTX text, about twice
    // the machine code, and named so.
    const auto loops = region_loops(p.loops, std::max(1, run.spec.regions));
    if (!loops.empty()) {
      r.loop_instructions = loops.front().instructions;
      r.code_bytes = loops.front().bytes();
      r.code_bytes_source = "sass (ptxas of the program's PTX)";
      r.opcodes = top_opcodes(loops.front().opcodes, 4);
    } else {
      r.code_bytes = p.binary_bytes;
      r.code_bytes_source = p.binary_bytes ? "program binary" : "";
    }
    return r;
  }

  LaunchTiming launch_latency(int launches) override {
    const Program& p = program("empty", kEmpty, "gd_fe_empty");
    ensure(32);
    check(clSetKernelArg(p.kernel, 0, sizeof(cl_mem), &tim_), "clSetKernelArg");
    LaunchTiming out;
    out.start_source = "event profiling, queued to start";
    const std::size_t one = 1;
    // The wait polls the event, as CUDA's synchronize spins where the host has a core to
    // spare; clFinish may sleep, and what it takes is measured after the samples and named.
    std::vector<double> blocking_ns;
    for (int i = 0; i < launches + 5 + kBlockingWaitSamples; ++i) {
      const bool blocking = i >= launches + 5;
      cl_event ev = nullptr;
      const double t0 = now_ns();
      const cl_int e =
          clEnqueueNDRangeKernel(h_.queue, p.kernel, 1, nullptr, &one, &one, 0, nullptr, &ev);
      const double t1 = now_ns();
      check(e, "clEnqueueNDRangeKernel (empty)");
      cl_int f = CL_SUCCESS;
      if (blocking) {
        f = clFinish(h_.queue);
      } else if ((f = clFlush(h_.queue)) == CL_SUCCESS) {
        cl_int st = CL_QUEUED;
        while ((f = clGetEventInfo(ev, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof st, &st,
                                   nullptr)) == CL_SUCCESS &&
               st > CL_COMPLETE) {
        }
        if (f == CL_SUCCESS && st < 0) f = st;  // the command ended in an error
      }
      const double t2 = now_ns();
      if (!blocking && f == CL_SUCCESS) f = clFinish(h_.queue);
      cl_ulong q = 0, s = 0, en = 0;
      clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_QUEUED, sizeof q, &q, nullptr);
      clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_START, sizeof s, &s, nullptr);
      clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_END, sizeof en, &en, nullptr);
      clReleaseEvent(ev);
      check(f, "waiting for the empty kernel");
      if (i < 5) continue;  // warm-up
      if (blocking) {
        blocking_ns.push_back(t2 - t0);
        continue;
      }
      LaunchSample smp;
      smp.api_ns = t1 - t0;
      smp.round_trip_ns = t2 - t0;
      smp.start_ns = s > q ? static_cast<double>(s - q) : 0;
      smp.kernel_ns = en > s ? static_cast<double>(en - s) : 0;
      out.samples.push_back(smp);
    }
    out.wait =
        blocking_wait_note("polling the event (clFlush, clGetEventInfo)", "clFinish", blocking_ns);
    return out;
  }

  RateTiming launch_rate(const std::string& mode, int kernels, int) override {
    if (mode != "plain") throw BackendError("launch rate " + mode + " is not measured on OpenCL");
    const Program& p = program("empty", kEmpty, "gd_fe_empty");
    ensure(32);
    check(clSetKernelArg(p.kernel, 0, sizeof(cl_mem), &tim_), "clSetKernelArg");
    const std::size_t one = 1;
    RateTiming r;
    r.kernels = kernels;
    const double t0 = now_ns();
    for (int i = 0; i < kernels; ++i)
      check(clEnqueueNDRangeKernel(h_.queue, p.kernel, 1, nullptr, &one, &one, 0, nullptr, nullptr),
            "clEnqueueNDRangeKernel (empty)");
    check(clFinish(h_.queue), "clFinish (launch rate)");
    r.host_ns = now_ns() - t0;
    return r;
  }

  // One record per work-group of 64-thread groups, started back to back (spin 0).
  std::vector<BlockRecord> dispatch(int blocks, int block_threads) override {
    const Support s = supports("dispatch");
    if (!s.ok) throw BackendError(s.reason);
    return run_blocks(blocks, block_threads, 0, sizeof(cl_uint), "dispatch");
  }

  // Groups of req.block_threads spinning req.spin_us, with req.shared_bytes of dynamic local
  // memory (at least one word: OpenCL takes no empty local argument), trimmed as CUDA's
  // request is when the kernel's own local variables would push it past the device's limit.
  OccupancyTrace occupancy(const OccupancyRequest& req) override {
    const Support s = supports(req.regs > 0 ? "occupancy.regs" : "occupancy");
    if (!s.ok) throw BackendError(s.reason);
    const Program& p = program("blocks", generate_blocks_opencl(), kBlocksKernel);
    OccupancyTrace t;
    std::size_t dynamic = std::max<std::size_t>(req.shared_bytes, sizeof(cl_uint));
    check(clSetKernelArg(p.kernel, 2, sizeof(cl_uint), nullptr), "clSetKernelArg (local)");
    cl_ulong total = 0;
    std::size_t wg = 0;
    clGetKernelWorkGroupInfo(p.kernel, h_.device, CL_KERNEL_LOCAL_MEM_SIZE, sizeof total, &total,
                             nullptr);
    clGetKernelWorkGroupInfo(p.kernel, h_.device, CL_KERNEL_WORK_GROUP_SIZE, sizeof wg, &wg,
                             nullptr);
    t.static_shared_bytes = total > sizeof(cl_uint) ? total - sizeof(cl_uint) : 0;
    if (local_mem_ && dynamic + t.static_shared_bytes > local_mem_ && dynamic <= local_mem_)
      dynamic = local_mem_ - std::min<uint64_t>(local_mem_, t.static_shared_bytes);
    t.dynamic_shared_bytes = dynamic;
    if (wg && static_cast<std::size_t>(req.block_threads) > wg)
      throw BackendError("work-groups of " + std::to_string(req.block_threads) +
                         " work-items exceed the kernel's CL_KERNEL_WORK_GROUP_SIZE " +
                         std::to_string(wg));
    const int per_sm = occupancy_grid_per_sm(req.blocks_per_sm, req.waves, req.block_threads);
    const int blocks = std::max(1, info_.compute_units) * per_sm;
    t.blocks = run_blocks(blocks, req.block_threads, static_cast<uint64_t>(req.spin_us * 1000),
                          dynamic, "occupancy");
    return t;
  }

 private:
  // One program, built once from any thread (prepare_icache builds in parallel); a failed
  // build keeps its error, thrown whenever the program is asked for.
  struct Program {
    std::shared_ptr<_cl_program> program_owner;
    std::shared_ptr<_cl_kernel> kernel_owner;
    cl_program program = nullptr;
    cl_kernel kernel = nullptr;
    uint64_t binary_bytes = 0;
    std::vector<SassLoop> loops;  // the kernel's loops in its SASS (NVIDIA with ptxas only)
    std::string error;
  };

  const Program& icache_program(const IcacheKernelSpec& spec) {
    return build_program(
        "icache_" + std::to_string(icache_body_instructions(spec.body_instructions)) + "_" +
            std::to_string(spec.regions),
        [&] { return generate_icache_opencl(spec); }, icache_kernel_name());
  }
  const Program& program(const std::string& key, const std::string& src, const std::string& name) {
    return build_program(
        key, [&] { return src; }, name);
  }

  // The loops of `kernel` in the machine code of the program's PTX, assembled by ptxas where
  // CUDA's tools are installed; empty otherwise.
  std::vector<SassLoop> sass_loops(cl_program program, const std::string& kernel) const {
    if (!sass_tools().found()) return {};
    const auto all = parse_sass_all_loops(program_sass(program, h_.device).sass);
    const auto it = all.find(kernel);
    return it == all.end() ? std::vector<SassLoop>{} : it->second;
  }

  // Thread-safe: OpenCL calls on the context only (no queue).
  template <class Source>
  const Program& build_program(const std::string& key, Source&& source, const std::string& name) {
    const Program& built = programs_.get(key, [&] {
      Program p;
      const std::string src = source();
      const char* text = src.c_str();
      const std::size_t len = src.size();
      cl_int err = CL_SUCCESS;
      p.program = clCreateProgramWithSource(h_.context, 1, &text, &len, &err);
      p.program_owner.reset(p.program, [](cl_program q) {
        if (q) clReleaseProgram(q);
      });
      if (err != CL_SUCCESS) {
        p.error = describe("clCreateProgramWithSource (frontend)", err);
        return p;
      }
      err = clBuildProgram(p.program, 1, &h_.device, "", nullptr, nullptr);
      if (err != CL_SUCCESS) {
        p.error = "building the OpenCL frontend kernel " + key + " failed (" + std::to_string(err) +
                  "): " + program_build_log(p.program, h_.device).substr(0, 600);
        return p;
      }
      std::size_t sizes[1] = {0};
      if (clGetProgramInfo(p.program, CL_PROGRAM_BINARY_SIZES, sizeof sizes, sizes, nullptr) ==
          CL_SUCCESS)
        p.binary_bytes = sizes[0];
      if (nv_ && key.rfind("icache_", 0) == 0) p.loops = sass_loops(p.program, name);
      p.kernel = clCreateKernel(p.program, name.c_str(), &err);
      p.kernel_owner.reset(p.kernel, [](cl_kernel k) {
        if (k) clReleaseKernel(k);
      });
      if (err != CL_SUCCESS) p.error = describe("clCreateKernel (frontend)", err);
      return p;
    });
    if (!built.error.empty()) throw BackendError(built.error);
    return built;
  }

  // One launch of the block-record kernel: `blocks` groups of `threads`, each spinning
  // spin_ns, with `local_bytes` of dynamic local memory; the records read back and checked.
  std::vector<BlockRecord> run_blocks(int blocks, int threads, uint64_t spin_ns,
                                      std::size_t local_bytes, const char* what) {
    const Program& p = program("blocks", generate_blocks_opencl(), kBlocksKernel);
    const std::size_t words = static_cast<std::size_t>(std::max(1, blocks)) * 4;
    cl_int err = CL_SUCCESS;
    if (words > rec_cap_) {
      if (rec_) clReleaseMemObject(rec_);
      rec_ = clCreateBuffer(h_.context, CL_MEM_READ_WRITE, words * sizeof(cl_ulong), nullptr, &err);
      check(err, "clCreateBuffer (block records)");
      rec_cap_ = words;
    }
    const cl_ulong zero = 0, spin = spin_ns;
    check(clEnqueueFillBuffer(h_.queue, rec_, &zero, sizeof zero, 0, words * sizeof(cl_ulong), 0,
                              nullptr, nullptr),
          "clEnqueueFillBuffer (block records)");
    check(clSetKernelArg(p.kernel, 0, sizeof(cl_mem), &rec_), "clSetKernelArg");
    check(clSetKernelArg(p.kernel, 1, sizeof spin, &spin), "clSetKernelArg");
    check(clSetKernelArg(p.kernel, 2, local_bytes, nullptr), "clSetKernelArg (local)");
    const std::size_t local = static_cast<std::size_t>(std::max(1, threads));
    const std::size_t global = local * static_cast<std::size_t>(std::max(1, blocks));
    check(clEnqueueNDRangeKernel(h_.queue, p.kernel, 1, nullptr, &global, &local, 0, nullptr,
                                 nullptr),
          std::string("clEnqueueNDRangeKernel (") + what + ")");
    check(clFinish(h_.queue), std::string("clFinish (") + what + ")");
    std::vector<uint64_t> h(words);
    check(clEnqueueReadBuffer(h_.queue, rec_, CL_TRUE, 0, words * sizeof(cl_ulong), h.data(), 0,
                              nullptr, nullptr),
          "clEnqueueReadBuffer (block records)");
    return parse_block_records(h, static_cast<std::size_t>(std::max(1, blocks)), 1.0, what);
  }

  uint32_t reference(const IcacheKernelSpec& spec, int region, uint64_t passes) {
    const std::string key = std::to_string(icache_body_instructions(spec.body_instructions)) + "|" +
                            std::to_string(region) + "|" + std::to_string(passes);
    auto it = refs_.find(key);
    if (it != refs_.end()) return it->second;
    return refs_[key] = icache_reference(spec, region, passes);
  }

  void ensure(std::size_t n) {
    cl_int err = CL_SUCCESS;
    if (n > cap_) {
      if (out_) clReleaseMemObject(out_);
      out_ = clCreateBuffer(h_.context, CL_MEM_READ_WRITE, n * sizeof(cl_uint), nullptr, &err);
      check(err, "clCreateBuffer (frontend results)");
      cap_ = n;
    }
    if (!tim_) {
      tim_ = clCreateBuffer(h_.context, CL_MEM_READ_WRITE, 64 * sizeof(cl_ulong), nullptr, &err);
      check(err, "clCreateBuffer (frontend timings)");
    }
  }

  Handles h_;
  DeviceInfo info_;
  std::size_t max_wg_ = 1;
  bool gpu_ = false;
  bool nv_ = false;  // NVIDIA's platform: inline PTX for the block records
  cl_ulong local_mem_ = 0;
  BuildOnce<Program> programs_;
  std::map<std::string, uint32_t> refs_;
  cl_mem out_ = nullptr, tim_ = nullptr, flag_ = nullptr;
  std::size_t cap_ = 0;
  cl_mem rec_ = nullptr;
  std::size_t rec_cap_ = 0;
};

}  // namespace

std::unique_ptr<FrontendKernels> make_frontend_kernels(const Handles& h, const DeviceInfo& info) {
  return std::make_unique<OpenCLFrontend>(h, info);
}

}  // namespace gd::opencl
