// Vulkan kernels of the atomics probe: atomicAdd and atomicCompSwap throughput on a storage
// buffer and on workgroup memory, atomicMin / atomicMax, 64-bit integer add
// (VK_KHR_shader_atomic_int64), float and double add (VK_EXT_shader_atomic_float) and the add
// at workgroup scope, each where the device offers it; and the CAS and exchange ping-pongs
// through a storage buffer (two workgroups) and through workgroup memory (two invocations of
// one workgroup), and the release/acquire one through a storage buffer. A hand-over's
// latency is the difference of a launch of N and one of 2N round trips (the dispatch overhead
// cancels), in ns from the timestamps and, with VK_KHR_shader_clock, in cycles from player A's
// clock around its game. Every kernel's memory is checked exactly on the host
// (gd::throughput_check, gd::pingpong_check). On a GPU the clock is brought up before the probe's
// first launch, a throughput launch lasts ~10 ms, and with VK_KHR_shader_clock the clock is read
// after each figure's launches (gpu_clock.hpp says why). Global figures are measured as CUDA's:
// the target at the placements the request asks for and the flag at its locations
// (gd::placement_stride, gd::kLocationStride), in launches of CUDA's shape (8 workgroups of
// 256 per SM, 8 atomics per loop trip).
#include <algorithm>
#include <cstring>
#include <future>
#include <limits>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "atomics/atomics.hpp"
#include "gpu_clock.hpp"
#include "vulkan_probes.hpp"

namespace gd::vulkan {

namespace {

constexpr uint32_t kWg = 256;
// A spin gives up after this many attempts (seconds on any device, not forever).
constexpr uint32_t kSpinLimit = 1u << 22;
// A throughput launch, after calibration: 2 ms on a CPU driver (CI time); 10 ms on a GPU,
// whose clock stayed near idle through 2 ms launches with host work between them (an H200:
// 118.7 GOP/s of global atomicAdd against CUDA's 438; gpu_clock.hpp).
constexpr double kCpuTargetSeconds = 2e-3, kGpuTargetSeconds = 10e-3;
// With placements a figure is placements x repeats launches (gd::kPlacedRepeats at most),
// back to back (no host check between them): 1 ms each on every device, so that 16 placements
// cost about what 5 launches of 10 ms did (2 ms put the whole H200 run at 62.6 s, past its
// 60 s; the clock is still read after them, and a figure far below the peak clock says so).
constexpr double kPlacedTargetSeconds = 1e-3;
// Workgroup memory per SM where the device does not say (Vulkan has no query for it): what
// CUDA assumes, and what AMD, Intel and NVIDIA GPUs have at least.
constexpr uint64_t kSharedPerCu = 64 * 1024;
// Loop iterations kept free under llvmpipe's limit for the shaders' own loops (the shared
// array's clearing and copying out: at most 32 each at 256 invocations).
constexpr uint64_t kLoopHeadroom = 128;
constexpr VkDescriptorType kStorage = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;

struct ThroughputPush {
  uint32_t contention, ways, iterations;
  uint32_t base, place;  // the placement's first word and index (atomics.comp)
  uint32_t zero = 0;     // the operand's opaque zero (atomics.comp)
};
struct PingPongPush {
  uint32_t rounds, spin_limit, budget, solo;
  uint32_t base;  // the flag location's first word
};
// The flag buffer: flag, abort word and payload, each on its own 128-byte line.
constexpr uint32_t kFlagWords = 96;

class VulkanAtomics final : public AtomicsKernels {
 public:
  VulkanAtomics(Context& ctx, const DeviceInfo& info) : ctx_(ctx), info_(info) {
    const auto& limits = ctx.facts().props.limits;
    cpu_ = ctx.facts().props.deviceType == VK_PHYSICAL_DEVICE_TYPE_CPU;
    shared_bytes_ = limits.maxComputeSharedMemorySize;
    wg_ok_ =
        limits.maxComputeWorkGroupSize[0] >= kWg && limits.maxComputeWorkGroupInvocations >= kWg;
    timing_ = ctx.facts().timing();
    clock_ = ctx.facts().shader_clock;
    query_atomic_features();
  }

  // No SM-to-SM matrix here, which is all this answers for (hand-overs have their cycles).
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
      case PingPong::global_exch:
      case PingPong::global_release_acquire:
        return Support::yes();
      case PingPong::shared_cas:
      case PingPong::shared_exch:
        // lavapipe runs a workgroup's subgroups one after the other between barriers: one
        // spinning on another of its own workgroup would never see it move.
        if (cpu_)
          return Support::no(
              "a CPU Vulkan driver (lavapipe) runs a workgroup's subgroups one after the other, "
              "so two of its invocations cannot wait on each other");
        return Support::yes();
      case PingPong::host:
        break;
    }
    return Support::no(
        "Vulkan makes a dispatch's writes visible to the host only at a fence or barrier, not "
        "while it runs (it has no system scope), so a host thread cannot answer a GPU thread "
        "within one dispatch");
  }

  PingPongTiming ping_pong(const PingPongRequest& r) override {
    if (!supports(r.kind).ok) throw BackendError("ping_pong: unsupported kind");
    if (r.round_trips == 0 || r.repeats < 1) throw BackendError("ping_pong: empty request");
    const bool shared = r.kind == PingPong::shared_cas || r.kind == PingPong::shared_exch;
    PingPongRequest q = r;
    q.locations = shared ? 1 : r.locations;
    if (q.locations < 1 || q.locations > kMaxLocations)
      throw BackendError("ping_pong: bad location count");
    ensure_small_buffers(q.locations);
    prepare_clock(false);
    // Player A's ticks per launch, in launch order: the warm-up, then N and 2N per repeat and
    // location.
    std::vector<uint64_t> ticks;
    PingPongTiming t =
        time_pingpong_on_host(q, [&](int loc, uint32_t rounds, PingPongOutcome* out) {
          uint64_t tk = 0;
          const double s = play(r.kind, loc, rounds, out, false, &tk);
          ticks.push_back(tk);
          return s;
        });
    if (clock_) cycles_per_handoff(ticks, q, t);
    t.clock_mhz = ctx_.clock().read_mhz();
    t.clock_peak_mhz = ctx_.clock().peak_mhz();
    return t;
  }

  // One game of `rounds` round trips by one invocation taking both players' turns, at flag
  // location `location` (global kinds).
  PingPongOutcome play_solo(PingPong kind, uint32_t rounds, int location) {
    if (location < 0 || location >= kMaxLocations)
      throw BackendError("play_pingpong_solo: bad location");
    ensure_small_buffers(location + 1);
    PingPongOutcome o;
    play(kind, location, rounds, &o, true, nullptr);
    return o;
  }

  Support supports(const ThroughputRequest& r) const override {
    if (!timing_.ok) return timing_;
    if (!wg_ok_) return Support::no("workgroups of 256 are not allowed");
    if (!r.use_return)
      return Support::no(
          "GLSL has no result-less atomic (red): an atomicAdd whose result is unused is the "
          "same SPIR-V op");
    if (r.space == AtomicSpace::global && r.contention == Contention::bank_conflict)
      return Support::no("bank conflicts are a workgroup-memory pattern");
    const Support k = kernel_support(r);
    if (!k.ok) return k;
    if (r.space == AtomicSpace::shared) {
      if (r.contention == Contention::same_gpu)
        return Support::no("workgroup memory is per workgroup");
      if (r.contention == Contention::bank_conflict &&
          (r.ways < 2 || r.ways > 32 || (32 % r.ways) != 0))
        return Support::no("conflict ways must divide 32");
      if (shared_words_per_block(layout(r, 1)) * type_bytes(r.type) > shared_bytes_)
        return Support::no("not enough workgroup memory for the pattern");
    }
    return Support::yes();
  }

  // shape: calibration, the repeats over the placements, the clock, every placement's check
  ThroughputTiming throughput(const ThroughputRequest& r) override {
    const Support s = supports(r);
    if (!s.ok) throw BackendError("throughput: " + s.reason);
    if (r.repeats < 1) throw BackendError("throughput: bad repeat count");
    // Workgroup memory has no placement to vary: its arrays are the workgroup's own.
    int places = r.space == AtomicSpace::shared ? 1 : r.placements;
    if (places < 1 || places > kMaxPlacements)
      throw BackendError("throughput: bad placement count");
    // As many as one binding of the buffer reaches (maxStorageBufferRange, 2^27 at least).
    const uint64_t range = ctx_.facts().props.limits.maxStorageBufferRange;
    const uint64_t target_bytes = target_words(layout(r, 1)) * uint64_t(type_bytes(r.type));
    while (places > 1 && placements_bytes(target_bytes, places) > range) --places;
    const int repeats = places > 1 ? std::min(r.repeats, kPlacedRepeats) : r.repeats;
    prepare_clock(true);
    const double target_seconds = places > 1 ? kPlacedTargetSeconds
                                  : cpu_     ? kCpuTargetSeconds
                                             : kGpuTargetSeconds;
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
      // untimed: the pipeline's first dispatch
      launch_throughput(r, layout(r, probe_it), places, 0);
      const double s0 = launch_throughput(r, layout(r, probe_it), places, 0);
      it = s0 > 0 ? uint64_t(double(probe_it) * target_seconds / s0) : probe_it;
      it = std::clamp<uint64_t>(it, 16, 1u << 20);
    }
    t.layout = layout(r, std::min(it, cap));
    time_placements(t, repeats, places,
                    [&](int, int p) { return launch_throughput(r, t.layout, places, p); });
    // One reading after the launches stands for all of them (nothing without a shader clock).
    if (const auto mhz = ctx_.clock().read_mhz()) {
      t.clock_mhz.push_back(*mhz);
      t.clock_peak_mhz = ctx_.clock().peak_mhz();
    }
    t.sms = 0;  // Vulkan reports no SMs; the probe uses the device's count
    // Every placement's memory after its last launch, word by word, and (CAS) its successes.
    const uint64_t words = target_words(t.layout), threads = t.layout.blocks * t.layout.threads;
    const uint64_t bytes = uint64_t(type_bytes(r.type));
    for (int p = 0; p < places && t.check_error.empty(); ++p) {
      std::vector<unsigned char> raw(words * bytes);
      ctx_.download(target_, raw.data(), raw.size(), placement_stride(words * bytes) * uint64_t(p));
      std::vector<uint64_t> finals(words, 0);
      for (uint64_t w = 0; w < words; ++w) std::memcpy(&finals[w], &raw[w * bytes], bytes);
      std::vector<uint32_t> successes;
      if (r.op == AtomicOp::cas) {
        successes.resize(threads);
        ctx_.download(aux_, successes.data(), threads * 4, threads * 4 * uint64_t(p));
      }
      const std::string err = throughput_check(r, t.layout, finals, successes);
      if (!err.empty())
        t.check_error = places > 1 ? "placement " + std::to_string(p) + ": " + err : err;
    }
    return t;
  }

  // Where the context keeps NVIDIA's machine code, the SASS of the pipeline the figure was
  // timed with (as CUDA's: the first atomic of a CAS game, the polling load and the exchange,
  // the ordered load and store; every atomic of a throughput kernel), the SPIR-V beside it;
  // the SPIR-V alone before the figure ran or without machine code.
  std::optional<std::string> instruction(const std::string& what) override {
    const std::optional<std::string> spirv = spirv_instruction(what);
    const auto timed = timed_.find(what);
    if (!spirv || timed == timed_.end()) return spirv;
    const std::optional<KernelMemoryOps> ops = ctx_.nv_memory_ops(*timed->second);
    const std::string sass = ops ? atomic_listing(*ops, what) : std::string();
    if (sass.empty()) return spirv;
    return sass + " (" + *spirv + ")";
  }

 private:
  // The SPIR-V operation a figure's shader performs.
  static std::optional<std::string> spirv_instruction(const std::string& what) {
    if (what.rfind("pingpong.", 0) == 0) {
      const std::string where =
          what.find("shared") != std::string::npos ? "Workgroup" : "StorageBuffer";
      if (what.find("release_acquire") != std::string::npos)
        return "SPIR-V OpAtomicLoad Acquire + OpAtomicStore Release (" + where + ", Device scope)";
      if (what.find("exch") != std::string::npos)
        return "SPIR-V OpAtomicLoad + OpAtomicExchange (" + where + ")";
      return "SPIR-V OpAtomicCompareExchange (" + where + ")";
    }
    // A throughput key: "<space>.<op>_<type>.<contention>[.<scope>]".
    const std::size_t dot = what.find('.'), us = what.find('_', dot);
    if (dot == std::string::npos || us == std::string::npos) return std::nullopt;
    const std::string op = what.substr(dot + 1, us - dot - 1);
    const std::string type = what.substr(us + 1, what.find('.', us) - us - 1);
    const bool shared = what.rfind("shared.", 0) == 0;
    std::string spirv = op == "cas"      ? "OpAtomicCompareExchange"
                        : op == "min"    ? "OpAtomicSMin"
                        : op == "max"    ? "OpAtomicSMax"
                        : type[0] == 'f' ? "OpAtomicFAddEXT"
                                         : "OpAtomicIAdd";
    std::string where = shared ? "Workgroup" : "StorageBuffer";
    if (!shared && what.size() > 4 && what.compare(what.size() - 4, 4, ".cta") == 0)
      where += ", Workgroup scope";
    return "SPIR-V " + spirv + " (" + where + ")";
  }

  // What the device offers of the atomics the kernels use, as the context enabled it
  // (backends/vulkan/vulkan_context.cpp enables every feature of these structs offered).
  void query_atomic_features() {
    const VkPhysicalDevice pd = ctx_.physical_device();
    VkPhysicalDeviceShaderAtomicInt64Features i64{
        VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_ATOMIC_INT64_FEATURES};
    VkPhysicalDeviceShaderAtomicFloatFeaturesEXT fl{
        VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_ATOMIC_FLOAT_FEATURES_EXT};
    VkPhysicalDeviceFeatures2 f2{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2};
    if (has_extension(pd, VK_KHR_SHADER_ATOMIC_INT64_EXTENSION_NAME)) {
      i64.pNext = f2.pNext;
      f2.pNext = &i64;
    }
    if (has_extension(pd, VK_EXT_SHADER_ATOMIC_FLOAT_EXTENSION_NAME)) {
      fl.pNext = f2.pNext;
      f2.pNext = &fl;
    }
    vkGetPhysicalDeviceFeatures2(pd, &f2);
    int64_words_ = f2.features.shaderInt64 == VK_TRUE;
    buffer_int64_ = i64.shaderBufferInt64Atomics == VK_TRUE;
    buffer_f32_add_ = fl.shaderBufferFloat32AtomicAdd == VK_TRUE;
    shared_f32_add_ = fl.shaderSharedFloat32AtomicAdd == VK_TRUE;
    buffer_f64_add_ = fl.shaderBufferFloat64AtomicAdd == VK_TRUE && ctx_.facts().shader_float64;
  }

  // Whether a kernel of (space, op, type, scope) exists and the device has what it needs.
  // Scopes: a plain GLSL atomic on a buffer is Device scope, CUDA's gpu. Workgroup scope
  // (GL_KHR_memory_scope_semantics, valid without the Vulkan memory model) is CUDA's cta:
  // coherent within the workgroup only. Shared memory has one scope, as in the CUDA backend.
  Support kernel_support(const ThroughputRequest& r) const {
    const bool shared = r.space == AtomicSpace::shared;
    const Support none = Support::no("no Vulkan kernel for " + r.key() + " (not part of the plan)");
    if (!shared && r.scope == AtomicScope::sys)
      return Support::no(
          "Vulkan has no system scope: its widest, QueueFamily, covers one device's queues, not "
          "the host (SPIR-V's CrossDevice scope is not allowed in Vulkan)");
    if (!shared && r.scope == AtomicScope::cta &&
        (r.op != AtomicOp::add || r.type != AtomicType::i32))
      return none;
    switch (r.type) {
      case AtomicType::i32:
        if (shared && (r.op == AtomicOp::min || r.op == AtomicOp::max)) return none;
        return Support::yes();
      case AtomicType::u64:
        if (shared || r.op != AtomicOp::add) return none;
        if (!buffer_int64_)
          return Support::no(
              "the device lacks shaderBufferInt64Atomics (VK_KHR_shader_atomic_int64)");
        if (!int64_words_) return Support::no("the device lacks shaderInt64 (64-bit integers)");
        return Support::yes();
      case AtomicType::f32:
        if (r.op != AtomicOp::add) return none;
        if (!(shared ? shared_f32_add_ : buffer_f32_add_))
          return Support::no(
              std::string("the device lacks ") +
              (shared ? "shaderSharedFloat32AtomicAdd" : "shaderBufferFloat32AtomicAdd") +
              " (VK_EXT_shader_atomic_float)");
        return Support::yes();
      case AtomicType::f64:
        if (shared || r.op != AtomicOp::add) return none;
        if (!buffer_f64_add_)
          return Support::no(
              "the device lacks shaderBufferFloat64AtomicAdd (VK_EXT_shader_atomic_float) or "
              "shaderFloat64");
        return Support::yes();
      case AtomicType::f16x2:
      case AtomicType::bf16x2:
        return Support::no(
            "GLSL has no vendor-neutral packed 16-bit pair atomic add: VK_EXT_shader_atomic_float2 "
            "adds scalar float16 only, the packed form is NVIDIA's "
            "VK_NV_shader_atomic_float16_vector");
    }
    return none;
  }

  static std::string shader_name(const ThroughputRequest& r) {
    const bool shared = r.space == AtomicSpace::shared;
    std::string n = std::string("atomics_") + (shared ? "shared_" : "global_") + to_string(r.op);
    if (r.type != AtomicType::i32) n += "_" + to_string(r.type);
    if (!shared && r.scope == AtomicScope::cta) n += "_cta";
    return n;
  }

  ThroughputLayout layout(const ThroughputRequest& r, uint64_t iterations) const {
    ThroughputLayout l;
    l.space = r.space;
    l.contention = r.contention;
    l.ways = r.contention == Contention::bank_conflict ? r.ways : 1;
    l.threads = kWg;
    l.iterations = iterations;
    // Vulkan has no count of compute units: CUDA's groups per SM where VK_NV_shader_sm_builtins
    // gives it, per host core on a CPU driver, per 64 units elsewhere; a workgroup-memory
    // pattern at least the 4 groups per unit it had before.
    uint64_t units = info_.compute_units > 0 ? uint64_t(info_.compute_units) : 64;
    if (info_.compute_units <= 0 && cpu_) units = std::max(2u, std::thread::hardware_concurrency());
    l.blocks =
        units * throughput_groups_per_unit(l, info_.shared_per_sm_bytes.value_or(kSharedPerCu), 4);
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
      // Disassembled beside the timed launches, for instruction() after them.
      if (auto f = ctx_.nv_sass_ahead(*p); f.valid()) ahead_.push_back(std::move(f));
    }
    return *p;
  }

  void grow(Buffer& b, uint64_t bytes) {
    if (b && b.size() >= bytes) return;
    b.reset();
    b = ctx_.buffer(bytes, VK_BUFFER_USAGE_STORAGE_BUFFER_BIT, Context::Memory::device);
  }

  // One launch on placement `p` of `places` (storage buffer: one buffer holds them all, gd's
  // placement_stride apart; the per-invocation results one after the other) from a freshly
  // cleared target; returns the dispatch's time.
  double launch_throughput(const ThroughputRequest& r, const ThroughputLayout& l, int places,
                           int p) {
    const uint64_t words = target_words(l), threads = l.blocks * l.threads;
    const uint64_t wb = uint64_t(type_bytes(r.type)), bytes = words * wb;
    const uint64_t offset = placement_stride(bytes) * uint64_t(p);
    const uint64_t span = placements_bytes(bytes, places), aux_bytes = threads * 4 * places;
    grow(target_, span);
    grow(aux_, aux_bytes);
    // Every word at gd::initial_word (min / max: 32-bit; 0 for every other type).
    ctx_.fill(target_, bytes, uint32_t(initial_word(r)), offset);
    const bool shared = r.space == AtomicSpace::shared;
    const std::string name = shader_name(r);
    const uint32_t wpb = shared ? uint32_t(shared_words_per_block(l)) : 0;
    Pipeline& pl = pipeline(name, kWg, wpb, sizeof(ThroughputPush));
    timed_[r.key()] = &pl;
    const ThroughputPush push{uint32_t(r.contention), uint32_t(l.ways), uint32_t(l.iterations),
                              uint32_t(offset / wb), uint32_t(p)};
    return 1e-9 * ctx_.dispatch(pl, {{&target_, span}, {&aux_, aux_bytes}}, &push, sizeof push,
                                uint32_t(l.blocks));
  }

  // The clock up at the probe's first launch and after an idle spell; nothing on a CPU.
  // for_throughput after a ping-pong: two spinning workgroups are work, so the GPU is never
  // idle long enough for GpuClock::prepare to act, yet their light load let an H200's clock
  // fall to 1110-1155 MHz, and the shared throughput figures after 16 flag locations' games
  // were timed there (57 % of the clock). The first throughput figure after a game brings the
  // clock up again.
  void prepare_clock(bool for_throughput) {
    ctx_.clock().prepare(!prepared_ || (for_throughput && after_game_));
    prepared_ = true;
    after_game_ = !for_throughput;
  }

  // The flag buffer holds `locations` flag locations (gd::kLocationStride apart).
  void ensure_small_buffers(int locations) {
    grow(flag_, locations_bytes(locations));
    if (!res_)
      res_ = ctx_.buffer(8 * 4, VK_BUFFER_USAGE_STORAGE_BUFFER_BIT, Context::Memory::device);
  }

  // The module of a ping-pong kind (with the shader clock where the device has it).
  std::string pingpong_shader(PingPong kind) const {
    const bool shared = kind == PingPong::shared_cas || kind == PingPong::shared_exch;
    std::string n = shared ? "atomics_pingpong_shared" : "atomics_pingpong_global";
    if (kind == PingPong::shared_exch || kind == PingPong::global_exch) n += "_exch";
    if (kind == PingPong::global_release_acquire) n += "_ra";
    return clock_ ? n + "_clock" : n;
  }

  // Cycles per hand-over from player A's ticks (launch order: warm-up, then N and 2N per
  // repeat and location, locations inner, as gd::time_pingpong_on_host visits them): the
  // difference of a sample's two games is N round trips, 2N hand-overs. A difference that is
  // not positive means the clock did not count the game: no cycles at all then, never a guess.
  static void cycles_per_handoff(const std::vector<uint64_t>& ticks, const PingPongRequest& r,
                                 PingPongTiming& t) {
    const std::size_t samples = t.ns_per_handoff.size(), locations = std::size_t(r.locations);
    std::vector<double> all;
    std::vector<std::vector<double>> by(locations > 1 ? locations : 0);
    for (std::size_t i = 0; i < samples && 2 + 2 * i < ticks.size(); ++i) {
      const uint64_t one = ticks[1 + 2 * i], two = ticks[2 + 2 * i];
      if (two <= one) return;
      const double c = double(two - one) / (2.0 * r.round_trips);
      all.push_back(c);
      if (!by.empty()) by[i % locations].push_back(c);
    }
    t.cycles_per_handoff = std::move(all);
    t.cycles_by_location = std::move(by);
  }

  // One ping-pong launch of `rounds` round trips from a reset flag; fills `outcome` (when
  // given) from what the players left and `ticks` (when given) with player A's clock ticks
  // over its game, and returns the dispatch's time. `solo`: one invocation plays both sides.
  double play(PingPong kind, int loc, uint32_t rounds, PingPongOutcome* outcome, bool solo,
              uint64_t* ticks) {
    const uint32_t zeros[kFlagWords] = {};
    const uint64_t at = kLocationStride * uint64_t(loc);
    ctx_.upload(flag_, zeros, sizeof zeros, at);
    ctx_.upload(res_, zeros, 8 * 4);
    const bool global = kind != PingPong::shared_cas && kind != PingPong::shared_exch;
    // Global: two workgroups of one invocation; shared: one of 128 (players 0 and 64).
    Pipeline& p = pipeline(pingpong_shader(kind), global ? 1 : 128, 0, sizeof(PingPongPush));
    timed_["pingpong." + to_string(kind)] = &p;
    uint32_t budget = std::numeric_limits<uint32_t>::max();
    if (const auto limit = ctx_.facts().loop_iteration_limit)
      budget = uint32_t(*limit - kLoopHeadroom);
    const PingPongPush push{rounds, kSpinLimit, budget, solo ? 1u : 0u, uint32_t(at / 4)};
    const double s =
        1e-9 * ctx_.dispatch(p, {{&flag_, 0}, {&res_, 0}}, &push, sizeof push, global ? 2 : 1);
    uint32_t res[8] = {}, flag = 0;
    ctx_.download(res_, res, sizeof res);
    if (global)
      ctx_.download(flag_, &flag, 4, at);
    else
      flag = res[4];
    if (outcome) {
      outcome->final_value = flag;
      outcome->handoffs_a = res[0];
      outcome->handoffs_b = res[1];
      outcome->timeouts = uint64_t(res[2]) + res[3];
      outcome->payload_errors = res[5];
    }
    if (ticks) *ticks = uint64_t(res[6]) | (uint64_t(res[7]) << 32);
    return s;
  }

  Context& ctx_;
  DeviceInfo info_;
  bool cpu_ = false, wg_ok_ = false;
  bool prepared_ = false;    // the GPU's clock brought up for this probe
  bool after_game_ = false;  // the last timed work was a ping-pong
  bool clock_ = false;       // VK_KHR_shader_clock: the ping-pongs count player A's ticks
  uint64_t shared_bytes_ = 0;
  Support timing_;
  // The atomics the device offers beyond 32-bit integers (query_atomic_features).
  bool int64_words_ = false, buffer_int64_ = false, buffer_f32_add_ = false;
  bool shared_f32_add_ = false, buffer_f64_add_ = false;
  std::map<std::string, std::unique_ptr<Pipeline>> pipelines_;
  std::map<std::string, const Pipeline*> timed_;  // by figure key: the pipeline it ran
  // nv_sass_ahead's; destroyed (each waits for its thread) before the pipelines.
  std::vector<std::future<void>> ahead_;
  Buffer target_, aux_, flag_, res_;
};

}  // namespace

std::unique_ptr<AtomicsKernels> make_atomics_kernels(Context& ctx, const DeviceInfo& info) {
  return std::make_unique<VulkanAtomics>(ctx, info);
}

PingPongOutcome play_pingpong_solo(Context& ctx, PingPong kind, uint32_t rounds, int location) {
  if (kind == PingPong::host) throw BackendError("play_pingpong_solo: no host game on Vulkan");
  return VulkanAtomics(ctx, DeviceInfo{}).play_solo(kind, rounds, location);
}

}  // namespace gd::vulkan
