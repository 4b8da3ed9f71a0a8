// Vulkan kernels of the atomics probe, the OpenCL backend's set in GLSL: atomicAdd and
// atomicCompSwap throughput on a storage buffer and on workgroup memory, and a CAS ping-pong
// through a storage buffer (two workgroups) and through workgroup memory (two invocations of
// one workgroup). No cycles: latencies are in ns only, from the difference of a launch of N
// and one of 2N round trips (the dispatch overhead cancels). Every kernel's memory is checked
// exactly on the host (gd::throughput_check, gd::pingpong_check). On a GPU the clock is
// brought up before the probe's first launch, a throughput launch lasts ~10 ms, and with
// VK_KHR_shader_clock the clock is read after each figure's launches (gpu_clock.hpp says why).
#include <algorithm>
#include <limits>
#include <string>
#include <thread>
#include <vector>

#include "gpu_clock.hpp"
#include "atomics/atomics.hpp"
#include "vulkan_probes.hpp"

namespace gd::vulkan {

namespace {

constexpr uint32_t kWg = 256;
constexpr int kGroupsPerCu = 4;
// A spin gives up after this many attempts (seconds on any device, not forever).
constexpr uint32_t kSpinLimit = 1u << 22;
// A throughput launch, after calibration: 2 ms on a CPU driver (CI time); 10 ms on a GPU,
// whose clock stayed near idle through 2 ms launches with host work between them (an H200:
// 118.7 GOP/s of global atomicAdd against CUDA's 438; gpu_clock.hpp).
constexpr double kCpuTargetSeconds = 2e-3, kGpuTargetSeconds = 10e-3;
// Loop iterations kept free under llvmpipe's limit for the shaders' own loops (the shared
// array's clearing and copying out: at most 32 each at 256 invocations).
constexpr uint64_t kLoopHeadroom = 128;
constexpr VkDescriptorType kStorage = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;

struct ThroughputPush {
  uint32_t contention, ways, iterations;
};
struct PingPongPush {
  uint32_t rounds, spin_limit, budget;
};

class VulkanAtomics final : public AtomicsKernels {
 public:
  VulkanAtomics(Context& ctx, const DeviceInfo& info) : ctx_(ctx), info_(info) {
    const auto& limits = ctx.facts().props.limits;
    cpu_ = ctx.facts().props.deviceType == VK_PHYSICAL_DEVICE_TYPE_CPU;
    shared_bytes_ = limits.maxComputeSharedMemorySize;
    wg_ok_ =
        limits.maxComputeWorkGroupSize[0] >= kWg && limits.maxComputeWorkGroupInvocations >= kWg;
    timing_ = ctx.facts().timing();
  }

  // No cycles of a hand-over or an atomic (a clock read after the launches gives none).
  bool has_clock() const override { return false; }

  Support supports(PingPong kind) const override {
    if (!timing_.ok) return timing_;
    // llvmpipe ends a shader's loops after 65535 iterations in all, silently: a spin wait can
    // run into it. Seen on lavapipe: with 2 worker threads the two players never both made
    // progress (both spins ran out), with LP_NUM_THREADS=4 a game of 4 round trips ended at
    // flag 3 of 8 with no timeout counted (the loop was cut, not the wait).
    if (ctx_.facts().loop_iteration_limit)
      return Support::no(
          "llvmpipe ends a shader's loops after 65535 iterations in all, which cuts a spin wait "
          "short silently (a game of 4 round trips ended at flag 3 of 8 on lavapipe)");
    switch (kind) {
      case PingPong::global_cas:
        return Support::yes();
      case PingPong::shared_cas:
        // lavapipe runs a workgroup's subgroups one after the other between barriers: one
        // spinning on another of its own workgroup would never see it move.
        if (cpu_)
          return Support::no(
              "a CPU Vulkan driver (lavapipe) runs a workgroup's subgroups one after the other, "
              "so two of its invocations cannot wait on each other");
        return Support::yes();
      default:
        return Support::no("the Vulkan backend measures the CAS ping-pong only");
    }
  }

  PingPongTiming ping_pong(const PingPongRequest& r) override {
    if (!supports(r.kind).ok) throw BackendError("ping_pong: unsupported kind");
    if (r.round_trips == 0 || r.repeats < 1) throw BackendError("ping_pong: empty request");
    ensure_small_buffers();
    prepare_clock();
    PingPongTiming t = time_pingpong_on_host(
        r, [&](uint32_t rounds, PingPongOutcome* out) { return play(r.kind, rounds, out); });
    t.clock_mhz = ctx_.clock().read_mhz();
    t.clock_peak_mhz = ctx_.clock().peak_mhz();
    return t;
  }

  Support supports(const ThroughputRequest& r) const override {
    if (!timing_.ok) return timing_;
    if (!wg_ok_) return Support::no("workgroups of 256 are not allowed");
    if (r.op != AtomicOp::add && r.op != AtomicOp::cas)
      return Support::no("the Vulkan backend measures atomicAdd and atomicCompSwap only");
    if (r.type != AtomicType::i32)
      return Support::no("the Vulkan backend measures 32-bit integer atomics only");
    if (!r.use_return)
      return Support::no(
          "GLSL has no result-less atomic (red): an atomicAdd whose result is unused is the "
          "same SPIR-V op");
    if (r.scope != AtomicScope::gpu)
      return Support::no("GLSL atomics on buffers are device-scope; no other scope is measured");
    if (r.space == AtomicSpace::global && r.contention == Contention::bank_conflict)
      return Support::no("bank conflicts are a workgroup-memory pattern");
    if (r.space == AtomicSpace::shared) {
      if (r.contention == Contention::same_gpu)
        return Support::no("workgroup memory is per workgroup");
      if (r.contention == Contention::bank_conflict &&
          (r.ways < 2 || r.ways > 32 || (32 % r.ways) != 0))
        return Support::no("conflict ways must divide 32");
      if (shared_words_per_block(layout(r, 1)) * 4 > shared_bytes_)
        return Support::no("not enough workgroup memory for the pattern");
    }
    return Support::yes();
  }

  ThroughputTiming throughput(const ThroughputRequest& r) override {
    const Support s = supports(r);
    if (!s.ok) throw BackendError("throughput: " + s.reason);
    if (r.repeats < 1) throw BackendError("throughput: bad repeat count");
    prepare_clock();
    const double target_seconds = cpu_ ? kCpuTargetSeconds : kGpuTargetSeconds;
    ThroughputTiming t;
    uint64_t cap = std::min<uint64_t>(max_exact_iterations(r, layout(r, 1)),
                                      std::numeric_limits<uint32_t>::max());
    // llvmpipe ends a shader's loops after 65535 iterations in all: fewer per invocation.
    if (const auto limit = ctx_.facts().loop_iteration_limit)
      cap = std::min<uint64_t>(cap, *limit - kLoopHeadroom);
    uint64_t it = r.iterations;
    if (it == 0) {
      // Calibrate: a short launch, then as many iterations as fill the target time.
      const uint64_t probe_it = std::min<uint64_t>(16, cap);
      launch_throughput(r, layout(r, probe_it));  // untimed: the pipeline's first dispatch
      const double s0 = launch_throughput(r, layout(r, probe_it));
      it = s0 > 0 ? uint64_t(double(probe_it) * target_seconds / s0) : probe_it;
      it = std::clamp<uint64_t>(it, 16, 1u << 20);
    }
    t.layout = layout(r, std::min(it, cap));
    for (int rep = 0; rep < r.repeats; ++rep) t.seconds.push_back(launch_throughput(r, t.layout));
    // One reading after the launches stands for all of them (nothing without a shader clock).
    if (const auto mhz = ctx_.clock().read_mhz()) {
      t.clock_mhz.push_back(*mhz);
      t.clock_peak_mhz = ctx_.clock().peak_mhz();
    }
    t.sms = 0;  // Vulkan reports no SMs; the probe uses the device's count
    // The last launch's memory, word by word.
    const uint64_t words = target_words(t.layout), threads = t.layout.blocks * t.layout.threads;
    std::vector<uint32_t> raw(words), aux(threads);
    ctx_.download(target_, raw.data(), words * 4);
    std::vector<uint64_t> finals(raw.begin(), raw.end());
    std::vector<uint32_t> successes;
    if (r.op == AtomicOp::cas) {
      ctx_.download(aux_, aux.data(), threads * 4);
      successes = aux;
    }
    t.check_error = throughput_check(r, t.layout, finals, successes);
    return t;
  }

  std::optional<std::string> instruction(const std::string& what) override {
    // SPIR-V, not the machine's ISA.
    if (what.rfind("pingpong.", 0) == 0)
      return std::string("SPIR-V OpAtomicCompareExchange (") +
             (what.find("shared") != std::string::npos ? "Workgroup" : "StorageBuffer") + ")";
    const bool shared = what.rfind("shared.", 0) == 0;
    const bool cas = what.find("cas") != std::string::npos;
    return std::string("SPIR-V ") + (cas ? "OpAtomicCompareExchange" : "OpAtomicIAdd") + " (" +
           (shared ? "Workgroup" : "StorageBuffer") + ")";
  }

 private:
  ThroughputLayout layout(const ThroughputRequest& r, uint64_t iterations) const {
    ThroughputLayout l;
    l.space = r.space;
    l.contention = r.contention;
    l.ways = r.contention == Contention::bank_conflict ? r.ways : 1;
    // Vulkan has no count of compute units: four groups per SM where VK_NV_shader_sm_builtins
    // gives it, four per host core on a CPU driver, 256 groups elsewhere.
    uint64_t units = info_.compute_units > 0 ? uint64_t(info_.compute_units) : 64;
    if (info_.compute_units <= 0 && cpu_) units = std::max(2u, std::thread::hardware_concurrency());
    l.blocks = units * kGroupsPerCu;
    l.threads = kWg;
    l.iterations = iterations;
    return l;
  }

  Pipeline& pipeline(const std::string& name, uint32_t local, uint32_t shared_words,
                     uint32_t push_bytes) {
    const std::string key = name + "|" + std::to_string(local) + "|" + std::to_string(shared_words);
    auto& p = pipelines_[key];
    if (!p) {
      std::vector<uint32_t> spec = {local};
      if (shared_words) spec.push_back(shared_words);
      p = ctx_.pipeline(name, {kStorage, kStorage}, push_bytes, spec);
    }
    return *p;
  }

  void grow(Buffer& b, uint64_t bytes) {
    if (b && b.size() >= bytes) return;
    b.reset();
    b = ctx_.buffer(bytes, VK_BUFFER_USAGE_STORAGE_BUFFER_BIT, Context::Memory::device);
  }

  // One launch from a freshly cleared target; returns the dispatch's time.
  double launch_throughput(const ThroughputRequest& r, const ThroughputLayout& l) {
    const uint64_t words = target_words(l), threads = l.blocks * l.threads;
    grow(target_, words * 4);
    grow(aux_, threads * 4);
    const std::vector<uint32_t> zeros(words, 0);
    ctx_.upload(target_, zeros.data(), words * 4);
    const bool shared = r.space == AtomicSpace::shared;
    const std::string name = std::string("atomics_") + (shared ? "shared_" : "global_") +
                             (r.op == AtomicOp::cas ? "cas" : "add");
    const uint32_t wpb = shared ? uint32_t(shared_words_per_block(l)) : 0;
    Pipeline& p = pipeline(name, kWg, wpb, sizeof(ThroughputPush));
    const ThroughputPush push{uint32_t(r.contention), uint32_t(l.ways), uint32_t(l.iterations)};
    return 1e-9 * ctx_.dispatch(p, {{&target_, words * 4}, {&aux_, threads * 4}}, &push,
                                sizeof push, uint32_t(l.blocks));
  }

  // The clock up at the probe's first launch and after an idle spell; nothing on a CPU.
  void prepare_clock() {
    ctx_.clock().prepare(!prepared_);
    prepared_ = true;
  }

  void ensure_small_buffers() {
    if (!flag_)
      flag_ = ctx_.buffer(64 * 4, VK_BUFFER_USAGE_STORAGE_BUFFER_BIT, Context::Memory::device);
    if (!res_)
      res_ = ctx_.buffer(8 * 4, VK_BUFFER_USAGE_STORAGE_BUFFER_BIT, Context::Memory::device);
  }

  // One ping-pong launch of `rounds` round trips from a reset flag; fills `outcome` (when
  // given) from what the players left, and returns the dispatch's time.
  double play(PingPong kind, uint32_t rounds, PingPongOutcome* outcome) {
    const uint32_t zeros[64] = {};
    ctx_.upload(flag_, zeros, sizeof zeros);
    ctx_.upload(res_, zeros, 8 * 4);
    const bool global = kind == PingPong::global_cas;
    // Global: two workgroups of one invocation; shared: one of 128 (players 0 and 64).
    Pipeline& p = pipeline(global ? "atomics_pingpong_global" : "atomics_pingpong_shared",
                           global ? 1 : 128, 0, sizeof(PingPongPush));
    uint32_t budget = std::numeric_limits<uint32_t>::max();
    if (const auto limit = ctx_.facts().loop_iteration_limit)
      budget = uint32_t(*limit - kLoopHeadroom);
    const PingPongPush push{rounds, kSpinLimit, budget};
    const double s =
        1e-9 * ctx_.dispatch(p, {{&flag_, 0}, {&res_, 0}}, &push, sizeof push, global ? 2 : 1);
    uint32_t res[8] = {}, flag = 0;
    ctx_.download(res_, res, sizeof res);
    if (global)
      ctx_.download(flag_, &flag, 4);
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

  Context& ctx_;
  DeviceInfo info_;
  bool cpu_ = false, wg_ok_ = false;
  bool prepared_ = false;  // the GPU's clock brought up for this probe
  uint64_t shared_bytes_ = 0;
  Support timing_;
  std::map<std::string, std::unique_ptr<Pipeline>> pipelines_;
  Buffer target_, aux_, flag_, res_;
};

}  // namespace

std::unique_ptr<AtomicsKernels> make_atomics_kernels(Context& ctx, const DeviceInfo& info) {
  return std::make_unique<VulkanAtomics>(ctx, info);
}

}  // namespace gd::vulkan
