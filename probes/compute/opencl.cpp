// OpenCL kernels of the compute probe: the core generator's OpenCL C, one program per
// (op, ILP) built on first use (PoCL's LLVM is slow per statement: build only what runs),
// timed with event profiling. OpenCL has no cycle counter: the probe gets no clock here and
// falls back to the driver's reported maximum clock, flagged "reported" on every figure.
// NVIDIA's OpenCL is the exception: its compiler takes inline PTX, so the kernels read
// %clock64, %globaltimer and %smid as CUDA's do (clock "measured"), and its program binary
// is PTX, assembled to SASS where ptxas and cuobjdump are installed. AMD's ROCm platform
// gets the same record through clang's amdgcn builtins (cl_vendor.hpp), not validated on
// AMD hardware by this project: its figures say so.
#include <algorithm>
#include <cstring>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "compute/cl_vendor.hpp"
#include "compute/compute.hpp"
#include "compute/ptx_sass.hpp"
#include "gpudissect/build_once.hpp"
#include "gpudissect/parallel.hpp"
#include "opencl_probes.hpp"

namespace gd::opencl {

namespace {

// Why OpenCL C (1.2, with any Khronos extension) cannot state an op that has no OpenCL
// version: the API or language limit, by op (or by class for the matrix units).
std::string opencl_limit(const ComputeOp& op) {
  if (op.klass == "tensor")
    return "OpenCL C has no matrix-multiply-accumulate operation (no Khronos extension offers "
           "one; the tensor cores are reached through inline PTX only)";
  if (op.name.rfind("bf16", 0) == 0)
    return "OpenCL C has no bfloat16 type (no Khronos extension offers bfloat16 arithmetic)";
  if (op.name == "int32.dp2a")
    return "OpenCL C has no 2x16-bit dot product: cl_khr_integer_dot_product offers 4x8-bit "
           "ones only";
  if (op.name == "warp.match")
    return "OpenCL C has no match-any sub-group operation (no Khronos extension offers one)";
  if (op.name == "warp.syncwarp")
    return "OpenCL C has no masked warp barrier: sub_group_barrier (cl_khr_subgroups) always "
           "covers the whole sub-group and takes no mask";
  return "OpenCL C cannot state this op: its CUDA kernel is inline PTX with no OpenCL C or "
         "Khronos-extension equivalent";
}

// The major version in a PoCL platform version ("OpenCL 3.0 PoCL 5.0+debian ..."), 0 for
// another platform.
int pocl_major_version(const std::string& platform_version) {
  const std::size_t at = platform_version.find("PoCL ");
  if (at == std::string::npos) return 0;
  try {
    return std::stoi(platform_version.substr(at + 5));
  } catch (const std::exception&) {
    return 0;
  }
}

class OpenCLCompute final : public ComputeKernels {
 public:
  OpenCLCompute(const Handles& h, const DeviceInfo& info) : h_(h), info_(info) {
    extensions_ = device_string_or_empty(h.device, CL_DEVICE_EXTENSIONS);
    pocl_major_ = pocl_major_version(info.toolkit_version);
    clGetDeviceInfo(h.device, CL_DEVICE_MAX_WORK_GROUP_SIZE, sizeof max_wg_, &max_wg_, nullptr);
    cl_device_type type = 0;
    clGetDeviceInfo(h.device, CL_DEVICE_TYPE, sizeof type, &type, nullptr);
    gpu_ = (type & CL_DEVICE_TYPE_GPU) != 0;
    cl_device_fp_config fp32 = 0;
    clGetDeviceInfo(h.device, CL_DEVICE_SINGLE_FP_CONFIG, sizeof fp32, &fp32, nullptr);
    fp32_ieee_div_sqrt_ = (fp32 & CL_FP_CORRECTLY_ROUNDED_DIVIDE_SQRT) != 0;
    const std::string pname = platform_string_or_empty(h.platform, CL_PLATFORM_NAME),
                      pvendor = platform_string_or_empty(h.platform, CL_PLATFORM_VENDOR);
    nv_ = is_nvidia_opencl(pname, pvendor);
    clock_ = opencl_clock_for(pname, pvendor, gpu_);
  }
  ~OpenCLCompute() override {
    if (out_) clReleaseMemObject(out_);
    if (tim_) clReleaseMemObject(tim_);
  }

  std::string language() const override { return "opencl"; }

  Support supports(const ComputeOp& op) override {
    if (op.cl_step.empty()) return Support::no(opencl_limit(op));
    if (op.cl_options.find("-cl-fp32-correctly-rounded-divide-sqrt") != std::string::npos &&
        !fp32_ieee_div_sqrt_)
      return Support::no(
          "the device does not report CL_FP_CORRECTLY_ROUNDED_DIVIDE_SQRT: its x / y and sqrt "
          "are only within OpenCL C's 2.5 and 3 ulp, not the IEEE operations this figure times");
    if (!op.cl_ext.empty() && !has_extension(extensions_, op.cl_ext))
      return Support::no("the device lacks " + op.cl_ext);
    // The sub-group built-ins (size, local id) come with cl_khr_subgroups.
    if (op.cl_ext.rfind("cl_khr_subgroup", 0) == 0 &&
        !has_extension(extensions_, "cl_khr_subgroups"))
      return Support::no("the device lacks cl_khr_subgroups");
    // PoCL 5.0 (Ubuntu 24.04's, on the GPU machines' CPUs) offers sub-group shuffles, but the
    // kernel it builds for them fails to load (undefined __pocl_work_group_alloca) and PoCL
    // aborts the process, losing the rest of the run. No version after 5 was tried; 3.1 does
    // not offer them.
    if (op.cl_ext.rfind("cl_khr_subgroup", 0) == 0 && pocl_major_ > 0 && pocl_major_ <= 5)
      return Support::no("PoCL " + std::to_string(pocl_major_) +
                         " aborts on its own sub-group kernels (undefined "
                         "__pocl_work_group_alloca); not run");
    return Support::yes();
  }

  // A GPU's driver compiles on the host's cores: every program of the plan (its ILP and the
  // latency chain's ILP 1) is built, and on NVIDIA assembled to SASS, in parallel here, where
  // one after the other they took most of the probe (27 s of an H200's OpenCL run); and they
  // start with the run, beside the probes before this one (HeadStart, Probe::ahead), as the
  // front end's programs do: built in parallel in the probe's turn they still took about 14
  // of its 17 s. A CPU device (PoCL) builds each when it runs: its LLVM shares the cores
  // being measured.
  bool compiles_beside_measurements() const override { return gpu_; }
  void prepare(const std::vector<ComputeLaunch>& ls, const std::atomic<bool>* cancel) override {
    if (!gpu_) return;
    std::vector<std::pair<const ComputeOp*, int>> keys;
    auto add = [&](const ComputeOp* op, int ilp) {
      if (std::find(keys.begin(), keys.end(), std::make_pair(op, ilp)) == keys.end())
        keys.emplace_back(op, ilp);
    };
    for (const auto& l : ls)
      if (const ComputeOp* op = find_compute_op(l.op); op && l.mix.empty() && supports(*op).ok) {
        add(op, std::max(1, l.ilp));
        add(op, 1);
      }
    parallel_for(keys.size(), cancel,
                 [&](std::size_t i) { build(*keys[i].first, keys[i].second); });
  }

  // shape: one timed launch: program, arguments, warm-up, events, checksum, in the order they run
  ComputeTiming run(const ComputeLaunch& l) override {
    const ComputeOp* op = find_compute_op(l.op);
    if (!op) throw BackendError("unknown compute op " + l.op);
    if (!l.mix.empty()) throw BackendError("mixed pairs are CUDA only");
    const Support s = supports(*op);
    if (!s.ok) throw BackendError(s.reason);
    cl_kernel k = kernel(*op, l.ilp);
    // Work sizes: a GPU gets 2048 work-items per compute unit in groups of 256 (or what the
    // sweep asks for); a CPU (PoCL) one group per core is enough to fill it.
    std::size_t local = std::min<std::size_t>(gpu_ ? 256 : 64, max_wg_);
    std::size_t global = 0;
    if (l.latency) {
      local = global = static_cast<std::size_t>(std::max(1, l.block_threads));
    } else {
      std::size_t per_cu = gpu_ ? 2048 : local;
      if (l.warps_per_sm > 0) {
        per_cu = static_cast<std::size_t>(l.warps_per_sm) * 32;
        local = std::min(local, per_cu);
      }
      global = static_cast<std::size_t>(std::max(1, info_.compute_units)) * per_cu;
      global = (global + local - 1) / local * local;
    }
    const std::size_t groups = global / local;
    ensure(global, groups);
    const cl_uint fill = 0xA5A5A5A5u;
    check(clEnqueueFillBuffer(h_.queue, out_, &fill, sizeof fill, 0, global * sizeof(cl_uint), 0,
                              nullptr, nullptr),
          "clEnqueueFillBuffer");
    const ComputeSeeds z;
    cl_int iters = static_cast<cl_int>(std::min<uint64_t>(l.iters ? l.iters : 1, 1u << 30));
    cl_float fs = z.fs, fb = z.fb, fc = z.fc;
    cl_uint ub = z.ub, uc = z.uc;
    check(clSetKernelArg(k, 0, sizeof(cl_mem), &out_), "clSetKernelArg");
    check(clSetKernelArg(k, 1, sizeof(cl_mem), &tim_), "clSetKernelArg");
    check(clSetKernelArg(k, 2, sizeof iters, &iters), "clSetKernelArg");
    check(clSetKernelArg(k, 3, sizeof fs, &fs), "clSetKernelArg");
    check(clSetKernelArg(k, 4, sizeof fb, &fb), "clSetKernelArg");
    check(clSetKernelArg(k, 5, sizeof fc, &fc), "clSetKernelArg");
    check(clSetKernelArg(k, 6, sizeof ub, &ub), "clSetKernelArg");
    check(clSetKernelArg(k, 7, sizeof uc, &uc), "clSetKernelArg");
    const double ns = run_timed_ns(h_.queue, k, global, local, "a compute kernel");
    std::vector<cl_uint> out(global);
    check(clEnqueueReadBuffer(h_.queue, out_, CL_TRUE, 0, global * sizeof(cl_uint), out.data(), 0,
                              nullptr, nullptr),
          "clEnqueueReadBuffer");
    ComputeTiming t;
    t.span_ns = ns;
    if (clock_ != OpenCLClock::none) {
      // Each work-group's clock record, read as CUDA's blocks' are.
      std::vector<uint64_t> tim(groups * 4);
      check(clEnqueueReadBuffer(h_.queue, tim_, CL_TRUE, 0, tim.size() * sizeof(cl_ulong),
                                tim.data(), 0, nullptr, nullptr),
            "clEnqueueReadBuffer (compute timings)");
      apply_block_clocks(t, tim, groups, l.latency);
      if (t.clock_mhz) t.clock_note = opencl_clock_note(clock_);
    }
    t.threads = global;
    t.sms = l.latency ? 1 : std::max(1, info_.compute_units);
    t.warps_per_sm = static_cast<int>(l.latency ? (global + 31) / 32
                                                : global / static_cast<std::size_t>(t.sms) / 32);
    const uint64_t steps = static_cast<uint64_t>(iters) * opencl_steps_per_iteration(*op, l.ilp);
    t.ops_per_thread = steps * (l.latency ? 1 : static_cast<uint64_t>(l.ilp)) *
                       static_cast<uint64_t>(op->insts_per_step);
    if (l.latency) t.ops_per_thread = steps * static_cast<uint64_t>(op->insts_per_step);
    // Seeds depend at most on the sub-group lane: every work-group folds the same values.
    const std::size_t period = local;
    std::size_t differ = 0, unwritten = 0;
    for (std::size_t i = 0; i < global; ++i) {
      differ += out[i] != out[i % period];
      unwritten += out[i] == fill;
    }
    t.check_ok = differ == 0 && unwritten == 0;
    std::ostringstream m;
    m << "value 0x" << std::hex << out[0] << std::dec << ", " << differ << " of " << global
      << " work-items differ, " << unwritten << " unwritten";
    if (steps * static_cast<uint64_t>(l.ilp) <= (uint64_t{1} << 26))
      if (auto ref = reference_checksum(*op, l.ilp, steps, z)) {
        m << ", host reference 0x" << std::hex << *ref << std::dec;
        if (*ref != out[0]) {
          t.check_ok = false;
          m << " MISMATCH";
        }
      }
    t.check = m.str();
    return t;
  }

  // NVIDIA: the loop of the PTX assembled to SASS, with the ops one iteration counts (the
  // OpenCL body is shorter than CUDA's). Without the tools the PTX still has to hold the
  // intended instruction; a kernel whose PTX lacks it is not that instruction's figure.
  LoopSass sass(const ComputeLaunch& l) override {
    if (!nv_) return {};
    const ComputeOp* op = find_compute_op(l.op);
    if (!op) throw BackendError("unknown compute op " + l.op);
    const Machine& m = machine(*op, l.ilp);
    if (m.loop.read) return m.loop;
    // A binary that is not PTX says nothing either way.
    if (!m.ptx.empty() && !ptx_holds(m.ptx, op->ptx_expect))
      throw BackendError("the PTX of the timed kernel holds no " + op->ptx_expect + " (" + m.why +
                         ": PTX only); the figure is not that instruction's");
    return {};
  }

  // Where no SASS was read on NVIDIA: the PTX instruction, and why no more.
  std::string instruction(const ComputeOp& op) override {
    if (!nv_ || op.cl_step.empty()) return {};
    try {
      const Machine& m = machine(op, 8);
      if (!m.loop.read && !m.ptx.empty() && ptx_holds(m.ptx, op.ptx_expect))
        return op.ptx_expect + " (" + m.why + ": PTX only)";
    } catch (const std::exception&) {
      // The build fails again, and is reported, when the figure runs.
    }
    return {};
  }

 private:
  // What a program's binary says on NVIDIA.
  struct Machine {
    std::string ptx, why;  // ptx: empty where the program binary is no PTX
    LoopSass loop;
  };
  // One (op, ILP) program, built once from any thread (prepare builds them in parallel):
  // immutable once built. A failed build keeps its error, reported when a launch asks.
  struct Built {
    std::shared_ptr<_cl_program> program;
    std::shared_ptr<_cl_kernel> kernel;
    std::string error;
    Machine machine;  // NVIDIA only
  };

  const Machine& machine(const ComputeOp& op, int ilp) { return built(op, ilp).machine; }

  cl_kernel kernel(const ComputeOp& op, int ilp) { return built(op, ilp).kernel.get(); }

  // The program of (op, ILP), built on first use; throws its build error.
  const Built& built(const ComputeOp& op, int ilp) {
    const Built& b = build(op, ilp);
    if (!b.error.empty()) throw BackendError(b.error);
    return b;
  }

  // Thread-safe: OpenCL calls on the context only (no queue), and the SASS tools.
  const Built& build(const ComputeOp& op, int ilp) {
    return built_.get(op.name + "|" + std::to_string(ilp), [&] {
      Built b;
      OpenCLSourceOptions so;
      so.nv_clock = nv_;
      so.clock = clock_;
      const std::string src = generate_opencl_source(op, {ilp}, so);
      const char* text = src.c_str();
      const std::size_t len = src.size();
      cl_int err = CL_SUCCESS;
      b.program.reset(clCreateProgramWithSource(h_.context, 1, &text, &len, &err),
                      [](cl_program p) {
                        if (p) clReleaseProgram(p);
                      });
      if (err != CL_SUCCESS) {
        b.error = describe("clCreateProgramWithSource (compute)", err);
        return b;
      }
      // No fast-math: native_* are the approximate ops under test; the rest stays IEEE.
      err = clBuildProgram(b.program.get(), 1, &h_.device, op.cl_options.c_str(), nullptr, nullptr);
      if (err != CL_SUCCESS) {
        b.error = "building the OpenCL kernel of " + op.name + " failed (" + std::to_string(err) +
                  "): " + program_build_log(b.program.get(), h_.device).substr(0, 600);
        return b;
      }
      b.kernel.reset(clCreateKernel(b.program.get(), compute_kernel_name(ilp).c_str(), &err),
                     [](cl_kernel k) {
                       if (k) clReleaseKernel(k);
                     });
      if (err != CL_SUCCESS) {
        b.error = describe("clCreateKernel (compute)", err);
        return b;
      }
      if (nv_) b.machine = read_machine(op, ilp, b.program.get());
      return b;
    });
  }

  Machine read_machine(const ComputeOp& op, int ilp, cl_program program) const {
    Machine m;
    ProgramSass ps = program_sass(program, h_.device);
    m.ptx = std::move(ps.ptx);
    m.why = std::move(ps.why);
    if (!ps.sass.empty()) {
      auto loops = parse_sass_loops(ps.sass);
      auto found = loops.find(compute_kernel_name(ilp));
      if (found != loops.end() && found->second.loop_instructions > 0) {
        m.loop = found->second;
        m.loop.ops_per_iteration =
            opencl_steps_per_iteration(op, ilp) * std::max(1, ilp) * op.insts_per_step;
      } else {
        m.why = "no loop of " + compute_kernel_name(ilp) + " in cuobjdump's listing";
      }
    }
    return m;
  }

  // n work-items' results; 4 words of timings per work-group (the clocked kernels').
  void ensure(std::size_t n, std::size_t groups) {
    cl_int err = CL_SUCCESS;
    if (n > cap_) {
      if (out_) clReleaseMemObject(out_);
      out_ = nullptr;
      out_ = clCreateBuffer(h_.context, CL_MEM_READ_WRITE, n * sizeof(cl_uint), nullptr, &err);
      check(err, "clCreateBuffer (compute results)");
      cap_ = n;
    }
    // Elsewhere the kernels write tim[0] only.
    groups = clock_ != OpenCLClock::none ? std::max<std::size_t>(groups, 1) : 1;
    if (groups > tim_cap_) {
      if (tim_) clReleaseMemObject(tim_);
      tim_ = nullptr;
      tim_ = clCreateBuffer(h_.context, CL_MEM_READ_WRITE, groups * 4 * sizeof(cl_ulong), nullptr,
                            &err);
      check(err, "clCreateBuffer (compute timings)");
      tim_cap_ = groups;
    }
  }

  Handles h_;
  DeviceInfo info_;
  std::string extensions_;
  int pocl_major_ = 0;  // 0: not PoCL
  std::size_t max_wg_ = 1;
  bool gpu_ = false;
  bool fp32_ieee_div_sqrt_ = false;  // CL_FP_CORRECTLY_ROUNDED_DIVIDE_SQRT
  bool nv_ = false;                  // NVIDIA's platform: clocked kernels, PTX binaries
  // The kernels' counter: NVIDIA's, AMD's (clocked kernels), or none.
  OpenCLClock clock_ = OpenCLClock::none;
  BuildOnce<Built> built_;
  cl_mem out_ = nullptr, tim_ = nullptr;
  std::size_t cap_ = 0, tim_cap_ = 0;
};

}  // namespace

std::unique_ptr<ComputeKernels> make_compute_kernels(const Handles& h, const DeviceInfo& info) {
  return std::make_unique<OpenCLCompute>(h, info);
}

}  // namespace gd::opencl
