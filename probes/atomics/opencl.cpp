// OpenCL kernels of the atomics probe: atomic_add / atomic_cmpxchg throughput on global and
// local memory, atomic_min / atomic_max, 64-bit atom_add (cl_khr_int64_base_atomics), the add
// at work-group scope (OpenCL C 2.0 / 3.0) and float adds (cl_ext_float_atomics) where the
// device has them, and CAS ping-pong through global memory (two work-groups) and local memory
// (two work-items of one group). OpenCL has no clock: latencies are in ns only, from the
// difference of a launch of N and one of 2N round trips (the launch overhead cancels).
// Global figures are measured as CUDA's: the target at the placements the request asks for
// and the flag at its locations (gd::placement_stride, gd::kLocationStride), in launches of
// CUDA's shape (8 groups of 256 per compute unit, 8 atomics per loop trip, ~1.5 ms), at most
// gd::kPlacedRepeats repeats over the placements.
#include <CL/cl.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "compute/ptx_sass.hpp"
#include "gpudissect/sass.hpp"
#include "opencl_kernels.hpp"
#include "opencl_probes.hpp"

namespace gd::opencl {

namespace {

constexpr std::size_t kWg = 256;
// A spin gives up after this many attempts (seconds on any device, not forever).
constexpr cl_uint kSpinLimit = 1u << 22;
// A throughput launch, after calibration, as CUDA's: 2 ms, 1.5 ms with placements (each
// repeat visits every placement, so a figure is placements x repeats launches).
constexpr double kTargetSeconds = 2e-3, kPlacedTargetSeconds = 1.5e-3;
// Local memory per compute unit where the device does not say (OpenCL has no query for it):
// what CUDA assumes, and what AMD, Intel and NVIDIA GPUs have at least.
constexpr uint64_t kLocalPerCu = 64 * 1024;

class OpenCLAtomics final : public AtomicsKernels {
 public:
  OpenCLAtomics(const Handles& h, const DeviceInfo& info) : h_(h), info_(info) {
    cl_device_type type = 0;
    clGetDeviceInfo(h.device, CL_DEVICE_TYPE, sizeof type, &type, nullptr);
    cpu_ = (type & CL_DEVICE_TYPE_CPU) != 0;
    clGetDeviceInfo(h.device, CL_DEVICE_LOCAL_MEM_SIZE, sizeof local_bytes_, &local_bytes_,
                    nullptr);
    std::size_t max_wg = 0;
    clGetDeviceInfo(h.device, CL_DEVICE_MAX_WORK_GROUP_SIZE, sizeof max_wg, &max_wg, nullptr);
    wg_ok_ = max_wg >= kWg;
    cl_int err = CL_SUCCESS;
    const char* src = kernels::atomics;
    program_ = clCreateProgramWithSource(h.context, 1, &src, nullptr, &err);
    check(err, "clCreateProgramWithSource(atomics)");
    if (clBuildProgram(program_, 1, &h.device, "-cl-std=CL1.2", nullptr, nullptr) != CL_SUCCESS) {
      const std::string log = program_build_log(program_, h.device);
      clReleaseProgram(program_);
      program_ = nullptr;
      throw BackendError("building the atomics kernels: " + log);
    }
    for (const char* n :
         {"at_global_add", "at_global_cas", "at_local_add", "at_local_cas", "at_global_min",
          "at_global_max", "at_pingpong_global", "at_pingpong_local"}) {
      kernels_[n] = clCreateKernel(program_, n, &err);
      check(err, std::string("clCreateKernel(") + n + ")");
    }
    // Kernels the compiler built only where the device has their extension.
    add_optional_kernels(program_, {"at_global_add_u64"});
    has_float_atomics_ =
        device_extensions(h.device).find(" cl_ext_float_atomics ") != std::string::npos;
  }

  ~OpenCLAtomics() override {
    for (auto& [n, k] : kernels_) clReleaseKernel(k);
    if (program_) clReleaseProgram(program_);
    if (cl2_program_) clReleaseProgram(cl2_program_);
    for (cl_mem m : {target_, aux_, flag_, res_})
      if (m) clReleaseMemObject(m);
  }

  bool has_clock() const override { return false; }

  Support supports(PingPong kind) const override {
    switch (kind) {
      case PingPong::global_cas:
        return Support::yes();
      case PingPong::shared_cas:
        // A CPU runtime runs a work-group's work-items one after the other between
        // barriers: one spinning on another of its own group would never see it move.
        if (cpu_)
          return Support::no(
              "a CPU OpenCL device may serialize a work-group's work-items, so two of them "
              "cannot wait on each other");
        if (!wg_ok_) return Support::no("work-groups of 256 are not allowed");
        return Support::yes();
      default:
        return Support::no("the OpenCL backend measures the CAS ping-pong only");
    }
  }

  PingPongTiming ping_pong(const PingPongRequest& r) override {
    if (!supports(r.kind).ok) throw BackendError("ping_pong: unsupported kind");
    if (r.round_trips == 0 || r.repeats < 1) throw BackendError("ping_pong: empty request");
    PingPongRequest q = r;
    q.locations = r.kind == PingPong::global_cas ? r.locations : 1;
    if (q.locations < 1 || q.locations > kMaxLocations)
      throw BackendError("ping_pong: bad location count");
    ensure_small_buffers(q.locations);
    return time_pingpong_on_host(q, [&](int loc, uint32_t rounds, PingPongOutcome* out) {
      return play(r.kind, loc, rounds, out);
    });
  }

  Support supports(const ThroughputRequest& r) const override {
    if (!wg_ok_) return Support::no("work-groups of 256 are not allowed");
    if (!r.use_return) return Support::no("OpenCL C has no result-less atomic (red)");
    // Scopes: a 1.2 atomic and an OpenCL C 2.0 one of memory_scope_device are CUDA's gpu;
    // memory_scope_work_group is its cta (on global memory, as CUDA's figure). Shared memory
    // has one scope, as in the CUDA backend.
    if (r.space == AtomicSpace::global && r.scope == AtomicScope::sys)
      return Support::no(
          "OpenCL's widest scope, memory_scope_all_svm_devices, reaches the host only in "
          "fine-grained SVM buffers with atomics; on a device buffer it is device scope");
    if (r.space == AtomicSpace::global && r.contention == Contention::bank_conflict)
      return Support::no("bank conflicts are a local-memory pattern");
    const Support k = kernel_support(r);
    if (!k.ok) return k;
    if (r.space == AtomicSpace::shared) {
      if (r.contention == Contention::same_gpu)
        return Support::no("local memory is per work-group");
      if (r.contention == Contention::bank_conflict &&
          (r.ways < 2 || r.ways > 32 || (32 % r.ways) != 0))
        return Support::no("conflict ways must divide 32");
      ThroughputLayout l = layout(r, 1);
      if (shared_words_per_block(l) * type_bytes(r.type) > local_bytes_)
        return Support::no("not enough local memory for the pattern");
    }
    return Support::yes();
  }

  // shape: calibration, the repeats over the placements, and every placement's exact check
  ThroughputTiming throughput(const ThroughputRequest& r) override {
    const Support s = supports(r);
    if (!s.ok) throw BackendError("throughput: " + s.reason);
    if (r.repeats < 1) throw BackendError("throughput: bad repeat count");
    // Local memory has no placement to vary: its arrays are the group's own.
    const int places = r.space == AtomicSpace::shared ? 1 : r.placements;
    if (places < 1 || places > kMaxPlacements)
      throw BackendError("throughput: bad placement count");
    const int repeats = places > 1 ? std::min(r.repeats, kPlacedRepeats) : r.repeats;
    ThroughputTiming t;
    const uint64_t cap = max_exact_iterations(r, layout(r, 1));
    uint64_t it = r.iterations;
    if (it == 0) {
      // Calibrate as CUDA: a warm launch (first-launch costs), a timed one of 64 iterations,
      // then as many iterations as fill the target time.
      const uint64_t probe_it = std::min<uint64_t>(64, cap);
      launch_throughput(r, layout(r, probe_it), places, 0);
      const double s0 = launch_throughput(r, layout(r, probe_it), places, 0);
      const double want = places > 1 ? kPlacedTargetSeconds : kTargetSeconds;
      it = s0 > 0 ? uint64_t(double(probe_it) * want / s0) : probe_it;
      it = std::clamp<uint64_t>(it, 8, 1u << 22);
    }
    t.layout = layout(r, std::min(it, cap));
    time_placements(t, repeats, places,
                    [&](int, int p) { return launch_throughput(r, t.layout, places, p); });
    t.sms = 0;  // compute units are not SMs; the probe uses the device's count
    // Every placement's memory after its last launch, word by word, and (CAS) its successes.
    const uint64_t words = target_words(t.layout), threads = t.layout.blocks * t.layout.threads;
    const uint64_t bytes = uint64_t(type_bytes(r.type));
    for (int p = 0; p < places && t.check_error.empty(); ++p) {
      std::vector<unsigned char> raw(words * bytes);
      check(clEnqueueReadBuffer(h_.queue, target_, CL_TRUE,
                                placement_stride(words * bytes) * uint64_t(p), raw.size(),
                                raw.data(), 0, nullptr, nullptr),
            "reading the atomics target");
      std::vector<uint64_t> finals(words, 0);
      for (uint64_t w = 0; w < words; ++w) std::memcpy(&finals[w], &raw[w * bytes], bytes);
      std::vector<uint32_t> successes;
      if (r.op == AtomicOp::cas) {
        successes.resize(threads);
        check(clEnqueueReadBuffer(h_.queue, aux_, CL_TRUE, threads * 4 * uint64_t(p), threads * 4,
                                  successes.data(), 0, nullptr, nullptr),
              "reading the CAS successes");
      }
      const std::string err = throughput_check(r, t.layout, finals, successes);
      if (!err.empty())
        t.check_error = places > 1 ? "placement " + std::to_string(p) + ": " + err : err;
    }
    return t;
  }

 private:
  static std::string device_extensions(cl_device_id d) {
    std::size_t n = 0;
    clGetDeviceInfo(d, CL_DEVICE_EXTENSIONS, 0, nullptr, &n);
    std::string ext(n, '\0');
    clGetDeviceInfo(d, CL_DEVICE_EXTENSIONS, n, ext.data(), nullptr);
    return " " + std::string(ext.c_str()) + " ";
  }

  // Kernels whose source the compiler keeps only under a feature macro: those it built.
  void add_optional_kernels(cl_program p, const std::vector<const char*>& names) {
    for (const char* n : names) {
      cl_int err = CL_SUCCESS;
      cl_kernel k = clCreateKernel(p, n, &err);
      if (err == CL_SUCCESS && k) kernels_[n] = k;
    }
  }

  // Scopes and cl_ext_float_atomics need OpenCL C 2.0's atomics: those kernels are a second
  // program of the same source, built where the device takes -cl-std=CL3.0 or CL2.0 (an
  // OpenCL 1.2 device takes neither).
  // Built at the first request that needs it (cold, ~1 s on PoCL; the quick plan needs none).
  void build_cl2_program() {
    if (cl2_tried_) return;
    cl2_tried_ = true;
    cl_int err = CL_SUCCESS;
    const char* src = kernels::atomics;
    for (const char* std : {"-cl-std=CL3.0", "-cl-std=CL2.0"}) {
      cl_program p = clCreateProgramWithSource(h_.context, 1, &src, nullptr, &err);
      check(err, "clCreateProgramWithSource(atomics, OpenCL C 2.0)");
      const std::string opts = std::string(std) + " -DGD_CL2_ATOMICS";
      if (clBuildProgram(p, 1, &h_.device, opts.c_str(), nullptr, nullptr) == CL_SUCCESS) {
        cl2_program_ = p;
        add_optional_kernels(
            p, {"at_global_add_cta", "at_global_add_f32", "at_global_add_f64", "at_local_add_f32"});
        return;
      }
      clReleaseProgram(p);
    }
    cl2_build_failed_ = true;
  }

  // Whether a kernel of (space, op, type) exists and the device built it.
  Support kernel_support(const ThroughputRequest& r) const {
    const bool local = r.space == AtomicSpace::shared;
    const Support none = Support::no("no OpenCL kernel for " + r.key() + " (not part of the plan)");
    const std::string name = kernel_name(r);
    // The OpenCL C 2.0 program holds the scoped add and the float adds.
    auto cl2 = [&] { const_cast<OpenCLAtomics*>(this)->build_cl2_program(); };
    if (!local && r.scope == AtomicScope::cta && r.type == AtomicType::i32 &&
        r.op == AtomicOp::add) {
      cl2();
      if (!kernels_.count(name))
        return Support::no(
            "OpenCL C 1.2 atomics have no scopes, and the device builds no OpenCL C 2.0 or 3.0 "
            "program");
    }
    switch (r.type) {
      case AtomicType::i32:
        return kernels_.count(name) ? Support::yes() : none;
      case AtomicType::u64:
        if (local || r.op != AtomicOp::add) return none;
        if (!kernels_.count(name))
          return Support::no("the device lacks cl_khr_int64_base_atomics (64-bit atom_add)");
        return Support::yes();
      case AtomicType::f32:
      case AtomicType::f64: {
        if (r.op != AtomicOp::add || (local && r.type == AtomicType::f64)) return none;
        if (has_float_atomics_) cl2();
        if (kernels_.count(name)) return Support::yes();
        const std::string feature = std::string("__opencl_c_ext_fp") +
                                    (r.type == AtomicType::f32 ? "32" : "64") +
                                    (local ? "_local" : "_global") + "_atomic_add";
        if (!has_float_atomics_)
          return Support::no("the device lacks cl_ext_float_atomics (" + feature +
                             "): OpenCL C has no float atomic add without it");
        if (cl2_build_failed_)
          return Support::no(
              "cl_ext_float_atomics is listed but the device builds no OpenCL C 2.0 or 3.0 "
              "program");
        return Support::no("the device's cl_ext_float_atomics lacks " + feature +
                           " (or its device scope, __opencl_c_atomic_scope_device)");
      }
      case AtomicType::f16x2:
      case AtomicType::bf16x2:
        return Support::no(
            "OpenCL C has no packed 16-bit pair atomic add: cl_ext_float_atomics offers scalar "
            "half only");
    }
    return none;
  }

  // NVIDIA: the SASS of the kernel a figure ran (the programs' PTX assembled by ptxas where
  // CUDA's tools are installed), read once after the measurements; nullopt elsewhere.
  std::optional<std::string> instruction(const std::string& what) override {
    const auto k = timed_.find(what);
    if (k == timed_.end()) return std::nullopt;
    if (!machine_read_) {
      machine_read_ = true;
      const std::string pname = platform_string_or_empty(h_.platform, CL_PLATFORM_NAME),
                        pvendor = platform_string_or_empty(h_.platform, CL_PLATFORM_VENDOR);
      if (!cpu_ && is_nvidia_opencl(pname, pvendor))
        for (cl_program p : {program_, cl2_program_})
          if (p)
            for (auto& [fn, ops] : kernel_memory_ops(program_sass(p, h_.device).sass))
              machine_code_[fn] = ops;
    }
    const auto it = machine_code_.find(k->second);
    if (it == machine_code_.end()) return std::nullopt;
    const std::string sass = atomic_listing(it->second, what);
    return sass.empty() ? std::nullopt : std::optional<std::string>(sass);
  }

  static std::string kernel_name(const ThroughputRequest& r) {
    std::string n =
        std::string(r.space == AtomicSpace::shared ? "at_local_" : "at_global_") + to_string(r.op);
    if (r.type != AtomicType::i32) n += "_" + to_string(r.type);
    if (r.space == AtomicSpace::global && r.scope == AtomicScope::cta) n += "_cta";
    return n;
  }

  ThroughputLayout layout(const ThroughputRequest& r, uint64_t iterations) const {
    ThroughputLayout l;
    l.space = r.space;
    l.contention = r.contention;
    l.ways = r.contention == Contention::bank_conflict ? r.ways : 1;
    l.threads = kWg;
    l.iterations = iterations;
    // CUDA's shape; a local-memory pattern at least the 4 groups per unit it had before.
    l.blocks = uint64_t(std::max(1, info_.compute_units)) *
               throughput_groups_per_unit(l, info_.shared_per_sm_bytes.value_or(kLocalPerCu), 4);
    return l;
  }

  cl_mem grow(cl_mem& m, uint64_t& have, uint64_t bytes) {
    if (bytes <= have && m) return m;
    if (m) clReleaseMemObject(m);
    m = nullptr;
    have = 0;
    cl_int err = CL_SUCCESS;
    m = clCreateBuffer(h_.context, CL_MEM_READ_WRITE, bytes, nullptr, &err);
    check(err, "clCreateBuffer(" + std::to_string(bytes) + " bytes)");
    have = bytes;
    return m;
  }

  // One launch on placement `p` of `places` (global: one buffer holds them all, gd's
  // placement_stride apart; the per-work-item results one after the other) from a freshly
  // reset target; returns the kernel's time.
  double launch_throughput(const ThroughputRequest& r, const ThroughputLayout& l, int places,
                           int p) {
    const uint64_t words = target_words(l), threads = l.blocks * l.threads;
    const uint64_t wb = uint64_t(type_bytes(r.type)), bytes = words * wb;
    const uint64_t offset = placement_stride(bytes) * uint64_t(p);
    grow(target_, target_bytes_, placements_bytes(bytes, places));
    grow(aux_, aux_bytes_, threads * 4 * uint64_t(places));
    // Every word at gd::initial_word (min / max: 32-bit; 0 for every other type).
    const cl_uint init = cl_uint(initial_word(r));
    check(clEnqueueFillBuffer(h_.queue, target_, &init, 4, offset, bytes, 0, nullptr, nullptr),
          "setting the atomics target");
    const bool local = r.space == AtomicSpace::shared;
    cl_kernel k = kernels_.at(kernel_name(r));
    timed_[r.key()] = kernel_name(r);
    const cl_uint contention = cl_uint(r.contention), ways = cl_uint(l.ways), place = cl_uint(p);
    const cl_ulong iterations = l.iterations, base = offset / wb;
    const cl_uint wpb = cl_uint(shared_words_per_block(l));
    int a = 0;
    check(clSetKernelArg(k, a++, sizeof(cl_mem), &target_), "clSetKernelArg");
    if (!local) check(clSetKernelArg(k, a++, sizeof(cl_ulong), &base), "clSetKernelArg");
    check(clSetKernelArg(k, a++, sizeof(cl_uint), &contention), "clSetKernelArg");
    if (local) check(clSetKernelArg(k, a++, sizeof(cl_uint), &ways), "clSetKernelArg");
    check(clSetKernelArg(k, a++, sizeof(cl_ulong), &iterations), "clSetKernelArg");
    if (local) check(clSetKernelArg(k, a++, sizeof(cl_uint), &wpb), "clSetKernelArg");
    check(clSetKernelArg(k, a++, sizeof(cl_mem), &aux_), "clSetKernelArg");
    if (!local) check(clSetKernelArg(k, a++, sizeof(cl_uint), &place), "clSetKernelArg");
    if (local)
      check(clSetKernelArg(k, a++, std::size_t(wpb) * type_bytes(r.type), nullptr),
            "clSetKernelArg");
    const std::size_t global = std::size_t(threads), group = kWg;
    cl_event e = nullptr;
    check(clEnqueueNDRangeKernel(h_.queue, k, 1, nullptr, &global, &group, 0, nullptr, &e),
          "clEnqueueNDRangeKernel(atomics throughput)");
    const cl_int rc = clWaitForEvents(1, &e);
    const double s = rc == CL_SUCCESS ? event_seconds(e) : 0;
    clReleaseEvent(e);
    check(rc, "running an atomics throughput kernel");
    return s;
  }

  // The flag buffer holds `locations` flag locations (gd::kLocationStride apart).
  void ensure_small_buffers(int locations) {
    cl_int err = CL_SUCCESS;
    grow(flag_, flag_bytes_, locations_bytes(locations));
    if (!res_) {
      res_ = clCreateBuffer(h_.context, CL_MEM_READ_WRITE, 8 * 4, nullptr, &err);
      check(err, "clCreateBuffer(result)");
    }
  }

  // One ping-pong launch of `rounds` round trips from a reset flag (global: at flag location
  // `loc`); fills `outcome` (when given) from what the players left, and returns the kernel's
  // time.
  double play(PingPong kind, int loc, cl_uint rounds, PingPongOutcome* outcome) {
    const cl_uint zeros[64] = {};
    const uint64_t at = kLocationStride * uint64_t(loc);
    const cl_ulong base = at / 4;
    check(clEnqueueWriteBuffer(h_.queue, flag_, CL_FALSE, at, sizeof zeros, zeros, 0, nullptr,
                               nullptr),
          "resetting the flag");
    check(clEnqueueWriteBuffer(h_.queue, res_, CL_FALSE, 0, 8 * 4, zeros, 0, nullptr, nullptr),
          "resetting the result");
    const bool global = kind == PingPong::global_cas;
    cl_kernel k = kernels_.at(global ? "at_pingpong_global" : "at_pingpong_local");
    timed_["pingpong." + to_string(kind)] = global ? "at_pingpong_global" : "at_pingpong_local";
    const cl_uint spin = kSpinLimit;
    int a = 0;
    if (global) {
      check(clSetKernelArg(k, a++, sizeof(cl_mem), &flag_), "clSetKernelArg");
      check(clSetKernelArg(k, a++, sizeof(cl_ulong), &base), "clSetKernelArg");
    }
    check(clSetKernelArg(k, a++, sizeof(cl_mem), &res_), "clSetKernelArg");
    check(clSetKernelArg(k, a++, sizeof(cl_uint), &rounds), "clSetKernelArg");
    check(clSetKernelArg(k, a++, sizeof(cl_uint), &spin), "clSetKernelArg");
    // Global: two groups of one work-item; local: one group of 128 (players 0 and 64).
    const std::size_t gsize = global ? 2 : 128, lsize = global ? 1 : 128;
    cl_event e = nullptr;
    check(clEnqueueNDRangeKernel(h_.queue, k, 1, nullptr, &gsize, &lsize, 0, nullptr, &e),
          "clEnqueueNDRangeKernel(ping-pong)");
    const cl_int rc = clWaitForEvents(1, &e);
    const double s = rc == CL_SUCCESS ? event_seconds(e) : 0;
    clReleaseEvent(e);
    check(rc, "running the ping-pong kernel");
    cl_uint res[8] = {}, flag = 0;
    check(clEnqueueReadBuffer(h_.queue, res_, CL_TRUE, 0, sizeof res, res, 0, nullptr, nullptr),
          "reading the ping-pong result");
    if (global)
      check(clEnqueueReadBuffer(h_.queue, flag_, CL_TRUE, at, 4, &flag, 0, nullptr, nullptr),
            "reading the flag");
    else
      flag = res[4];
    if (outcome) {
      outcome->final_value = flag;
      outcome->handoffs_a = res[0];
      outcome->handoffs_b = res[1];
      outcome->timeouts = uint64_t(res[2]) + res[3];
      outcome->payload_errors = 0;
    }
    return s;
  }

  Handles h_;
  DeviceInfo info_;
  bool cpu_ = false, wg_ok_ = false;
  cl_ulong local_bytes_ = 0;
  cl_program program_ = nullptr;
  cl_program cl2_program_ = nullptr;  // GD_CL2_ATOMICS, where the device builds it
  bool cl2_tried_ = false, cl2_build_failed_ = false;
  bool has_float_atomics_ = false;  // the device lists cl_ext_float_atomics
  std::map<std::string, cl_kernel> kernels_;
  std::map<std::string, std::string> timed_;  // figure key -> the kernel it ran
  bool machine_read_ = false;
  std::map<std::string, KernelMemoryOps> machine_code_;  // by kernel (NVIDIA only)
  cl_mem target_ = nullptr, aux_ = nullptr, flag_ = nullptr, res_ = nullptr;
  uint64_t target_bytes_ = 0, aux_bytes_ = 0, flag_bytes_ = 0;
};

}  // namespace

std::unique_ptr<AtomicsKernels> make_atomics_kernels(const Handles& h, const DeviceInfo& info) {
  return std::make_unique<OpenCLAtomics>(h, info);
}

}  // namespace gd::opencl
