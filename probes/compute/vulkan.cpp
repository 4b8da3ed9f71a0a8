// Vulkan kernels of the compute probe: compute.comp compiled at build time once per
// (op, ILP) (cmake/vulkan.cmake), timed with timestamp queries. The op set is every op of
// the table that GLSL can state (vulkan_ops.cpp; the others say which limit stops them);
// each op a device lacks (shaderFloat64, shaderFloat16, shaderInt64, a subgroup operation in
// compute) is refused with the reason. Vulkan reports no clock rate; on a GPU with
// VK_KHR_shader_clock the clock is read just after each launch (GpuClock), so per-clock figures
// come from the span at that clock. Without one (lavapipe) the probe gets no clock: figures are
// ops/s and ns, and per-clock figures are unknown (not 0). On a GPU the clock is brought up before
// the probe's first launch and launches last at least 10 ms (gpu_clock.hpp says why).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "compute/compute.hpp"
#include "gpu_clock.hpp"
#include "gpudissect/build_once.hpp"
#include "gpudissect/parallel.hpp"
#include "vulkan_coopmat.hpp"
#include "vulkan_listing.hpp"
#include "vulkan_ops.hpp"
#include "vulkan_probes.hpp"

namespace gd::vulkan {

namespace {

// Loop iterations an invocation may spend under llvmpipe's limit, with room to spare.
constexpr uint64_t kLoopHeadroom = 64;
constexpr uint32_t kSentinel = 0xA5A5A5A5u;

std::string module_name(const std::string& op, int ilp) {
  std::string m = "compute_" + op + "_ilp" + std::to_string(ilp);
  std::replace(m.begin(), m.end(), '.', '_');
  return m;
}

// The push constants of compute.comp.
struct Push {
  uint32_t iters;
  float fs, fb, fc;
  uint32_t ub, uc;
};

class VulkanCompute final : public ComputeKernels {
 public:
  VulkanCompute(Context& ctx, const DeviceInfo& info)
      : ctx_(ctx), info_(info), coop_(ctx, info), extra_(coop_.register_listed()) {
    const Facts& f = ctx.facts();
    cpu_ = f.props.deviceType == VK_PHYSICAL_DEVICE_TYPE_CPU;
    max_wg_ = f.props.limits.maxComputeWorkGroupSize[0];
  }

  std::string language() const override { return "glsl"; }

  // A GPU's driver compiles pipelines on the host's cores, and creating objects on one device
  // needs no external synchronisation in Vulkan: the table's pipelines start with the run,
  // beside the probes before this one (HeadStart, Probe::ahead), where one after the other
  // they took most of the probe (about 14 of an H200's 16 s). Not on a CPU driver, whose
  // compiles would share the cores being measured.
  bool compiles_beside_measurements() const override { return !cpu_; }

  // Every table launch's pipeline (ILP 8, the table's workgroup) and its latency chain's
  // (ILP 1, one subgroup), created in parallel.
  void prepare(const std::vector<ComputeLaunch>& ls, const std::atomic<bool>* cancel) override {
    if (cpu_) return;
    std::vector<std::tuple<std::string, int, uint32_t>> keys;
    auto add = [&](const std::string& op, int ilp, uint32_t local) {
      const auto k = std::make_tuple(op, ilp, local);
      if (std::find(keys.begin(), keys.end(), k) == keys.end()) keys.push_back(k);
    };
    const uint32_t chain = std::max<uint32_t>(1, ctx_.facts().subgroup_size);
    std::vector<std::pair<ComputeLaunch, uint32_t>> matrix;  // the mma rows' launches
    for (const ComputeLaunch& l : ls)
      if (const ComputeOp* op = find_compute_op(l.op);
          op && l.mix.empty() && CoopMatRunner::handles(*op) && coop_.supports(*op).ok) {
        ComputeLaunch lat = l;
        lat.latency = true;
        matrix.emplace_back(l, table_local());
        matrix.emplace_back(lat, chain);
      }
    parallel_for(matrix.size(), cancel,
                 [&](std::size_t i) { coop_.prepare(matrix[i].first, matrix[i].second); });
    for (const ComputeLaunch& l : ls)
      if (const ComputeOp* op = find_compute_op(l.op);
          op && l.mix.empty() && !CoopMatRunner::handles(*op) && supports(*op).ok &&
          (l.ilp == 1 || l.ilp == 2 || l.ilp == 4 || l.ilp == 8)) {
        add(l.op, l.ilp, table_local());
        add(l.op, 1, chain);
      }
    // With the machine code where the context keeps it: nvdisasm takes ~0.1 s a pipeline,
    // which between timed launches would let the GPU's clock fall.
    parallel_for(keys.size(), cancel, [&](std::size_t i) {
      machine_loop(std::get<0>(keys[i]), std::get<1>(keys[i]), std::get<2>(keys[i]));
    });
  }

  Support supports(const ComputeOp& op) override {
    if (CoopMatRunner::handles(op)) return coop_.supports(op);
    const VkOp* v = find_vk_op(op.name);
    if (!v) return Support::no(no_module_reason(op));
    const Facts& f = ctx_.facts();
    if (const Support t = f.timing(); !t.ok) return t;
    if (v->need == VkOp::Need::float64 && !f.shader_float64)
      return Support::no("the device lacks shaderFloat64");
    if (v->need == VkOp::Need::float16 && !f.shader_float16)
      return Support::no("the device lacks shaderFloat16 (VK_KHR_shader_float16_int8)");
    if (v->need == VkOp::Need::int64 && !f.shader_int64)
      return Support::no("the device lacks shaderInt64");
    if (v->need == VkOp::Need::int_dot && !f.shader_integer_dot_product)
      return Support::no(
          "the device lacks shaderIntegerDotProduct (VK_KHR_shader_integer_dot_product)");
    if (v->subgroup) {
      if (!f.subgroup_in_compute)
        return Support::no("subgroup operations are not supported in compute shaders here");
      if (!(f.subgroup_operations & v->subgroup))
        return Support::no(std::string("the device lacks ") + subgroup_feature_name(v->subgroup) +
                           " in compute");
    }
    return Support::yes();
  }

  // The SPIR-V op, and where the device offers VK_KHR_pipeline_executable_properties, what
  // the driver compiled the table's launch (ILP 8) to: its most frequent opcodes and its
  // statistics (vulkan_listing.hpp).
  std::string instruction(const ComputeOp& op) override {
    if (CoopMatRunner::handles(op)) {
      ComputeLaunch table;
      table.op = op.name;
      table.ilp = 8;
      return coop_.instruction(op, table, table_local());
    }
    const VkOp* v = find_vk_op(op.name);
    if (!v) return {};
    std::string s = std::string("SPIR-V ") + v->spirv;
    if (!ctx_.facts().pipeline_executable_info || !supports(op).ok) return s;
    try {
      bool fresh = false;
      const Pipeline& p = pipeline(op.name, 8, table_local(), &fresh);
      const std::string listing =
          summarize_executables(read_executables(ctx_.device(), p.pipeline));
      if (!listing.empty()) s += "; " + ctx_.facts().driver_name + ": " + listing;
    } catch (const std::exception& e) {
      // Beside the figure, never in its way: the run then says what failed.
      s += std::string("; no executable listing: ") + e.what();
    }
    return s;
  }

  // The timed loop's SASS where the context keeps NVIDIA's machine code (the pipeline
  // cache's, disassembled by nvdisasm), so that the loop gets CUDA's checks: the intended
  // instruction there, and as many as the op counts.
  LoopSass sass(const ComputeLaunch& l) override {
    const ComputeOp* op = find_compute_op(l.op);
    if (op && CoopMatRunner::handles(*op)) return coop_.sass(l, launch_local(l));
    const VkOp* v = op ? find_vk_op(op->name) : nullptr;
    if (!v || !supports(*op).ok) return {};
    LoopSass s = machine_loop(l.op, l.ilp, launch_local(l));
    if (!s.read) return {};
    s.ops_per_iteration =
        v->steps_per_iteration / l.ilp * (l.latency ? 1 : l.ilp) * op->insts_per_step;
    return s;
  }

  // On a GPU: the H200 stayed near its idle clock through 2 ms launches with host work
  // between them (gpu_clock.hpp); 10 ms keeps it busy most of the time. A CPU driver keeps
  // the probe's target (CI time).
  double min_launch_ms() const override { return cpu_ ? 0 : 10; }

  std::vector<std::string> extra_ops() const override { return extra_; }

  // shape: one timed dispatch: pipeline, buffers, warm-up, timestamps, checksum, in order
  ComputeTiming run(const ComputeLaunch& l) override {
    const ComputeOp* op = find_compute_op(l.op);
    if (!op) throw BackendError("unknown compute op " + l.op);
    if (!l.mix.empty()) throw BackendError("mixed pairs are CUDA only");
    if (l.ilp != 1 && l.ilp != 2 && l.ilp != 4 && l.ilp != 8)
      throw BackendError("the Vulkan compute modules are built for ILP 1, 2, 4 and 8");
    const Support s = supports(*op);
    if (!s.ok) throw BackendError(s.reason);

    // Work sizes as on OpenCL: a GPU gets 2048 invocations per compute unit (1024 workgroups
    // where Vulkan does not say how many units there are) in groups of 256; a CPU driver
    // (lavapipe: a workgroup runs on one thread, a subgroup in SIMD lanes) two groups of 64
    // per host core.
    const uint32_t local = launch_local(l);
    uint32_t groups = 0;
    if (l.latency) {
      groups = 1;
    } else if (l.warps_per_sm > 0) {
      const uint32_t per_cu = static_cast<uint32_t>(l.warps_per_sm) * 32;
      groups = std::max<uint32_t>(1, units() * per_cu / local);
    } else if (info_.compute_units > 0) {
      groups = units() * 2048 / local;
    } else {
      groups = cpu_ ? 2 * std::max(2u, std::thread::hardware_concurrency()) : 1024;
    }
    if (CoopMatRunner::handles(*op))
      return coop_.run(l, local, groups, static_cast<int>(units()), [&] {
        ctx_.clock().prepare(!prepared_);
        prepared_ = true;
      });
    const uint64_t threads = uint64_t(groups) * local;
    bool fresh = false;
    Pipeline& p = pipeline(l.op, l.ilp, local, &fresh);

    uint64_t iters = std::max<uint64_t>(1, l.iters);
    // llvmpipe ends loops after 65535 iterations in all: the launch runs fewer iterations
    // and says how many ops it made (ops_per_thread), so the rate stays right.
    if (const auto limit = ctx_.facts().loop_iteration_limit)
      iters = std::min<uint64_t>(iters, *limit - kLoopHeadroom);
    iters = std::min<uint64_t>(iters, uint64_t(1) << 30);

    const uint64_t bytes = threads * 4;
    if (!out_ || out_.size() < bytes)
      out_ = ctx_.buffer(bytes, VK_BUFFER_USAGE_STORAGE_BUFFER_BIT, Context::Memory::device);

    const ComputeSeeds z;
    // A pipeline's first dispatch is slow on lavapipe (1.4 ms at 4 iterations, 0.04 ms
    // after): untimed, so that the probe's calibration sees the loop, not the start-up.
    if (fresh) {
      warmed_.insert(&p);
      const Push once{1, z.fs, z.fb, z.fc, z.ub, z.uc};
      ctx_.dispatch(p, {{&out_, bytes}}, &once, sizeof once, groups);
    }
    // The clock up at the probe's first launch and after an idle spell; nothing on a CPU.
    ctx_.clock().prepare(!prepared_);
    prepared_ = true;
    const std::vector<uint32_t> fill(threads, kSentinel);
    ctx_.upload(out_, fill.data(), bytes);
    const Push push{static_cast<uint32_t>(iters), z.fs, z.fb, z.fc, z.ub, z.uc};
    ComputeTiming t;
    t.span_ns = ctx_.dispatch(p, {{&out_, bytes}}, &push, sizeof push, groups);
    // The clock right after it (a few ms of walking; nullopt without a shader clock).
    const std::optional<double> mhz = ctx_.clock().read_mhz();

    std::vector<uint32_t> out(threads);
    ctx_.download(out_, out.data(), bytes);
    t.threads = threads;
    t.sms = l.latency ? 1 : static_cast<int>(units());
    t.warps_per_sm =
        static_cast<int>(l.latency ? (threads + 31) / 32 : threads / uint64_t(t.sms) / 32);
    // The probe takes cycles as the span at this clock (x the SMs for throughput), so only
    // where the SMs are known (VK_NV_shader_sm_builtins) or one workgroup ran.
    if (mhz && (l.latency || info_.compute_units > 0)) {
      t.clock_mhz = mhz;
      t.clock_peak_mhz = ctx_.clock().peak_mhz();
    }
    const int per_iteration = find_vk_op(op->name)->steps_per_iteration;
    const uint64_t steps = iters * static_cast<uint64_t>(per_iteration / l.ilp);
    t.ops_per_thread = steps * static_cast<uint64_t>(l.latency ? 1 : l.ilp) *
                       static_cast<uint64_t>(op->insts_per_step);

    // Seeds depend at most on the subgroup lane: every workgroup folds the same words.
    uint64_t differ = 0, unwritten = 0;
    for (uint64_t i = 0; i < threads; ++i) {
      differ += out[i] != out[i % local];
      unwritten += out[i] == kSentinel;
    }
    t.check_ok = differ == 0 && unwritten == 0;
    std::ostringstream m;
    m << "value 0x" << std::hex << out[0] << std::dec << ", " << differ << " of " << threads
      << " invocations differ, " << unwritten << " unwritten";
    // The host replay costs steps x ILP operations per run: capped as on OpenCL.
    if (steps * static_cast<uint64_t>(l.ilp) <= (uint64_t{1} << 26)) {
      if (auto fused = replay(l.op, l.ilp, steps, z, true)) {
        m << ", host reference 0x" << std::hex << *fused << std::dec;
        std::optional<uint32_t> split;
        if (out[0] == *fused) {
          m << " (matches)";
        } else if ((split = replay(l.op, l.ilp, steps, z, false)) && out[0] == *split) {
          m << "; matches the unfused replay 0x" << std::hex << *split << std::dec
            << " (fma() with two roundings, which Vulkan allows)";
        } else if (const auto flushed = l.op.rfind("fp32.", 0) == 0
                                            ? replay(l.op, l.ilp, steps, z, true, true)
                                            : std::nullopt;
                   flushed && out[0] == *flushed) {
          m << "; matches the replay with denormals flushed to zero 0x" << std::hex << *flushed
            << std::dec << " (the driver's default float controls allow it)";
        } else {
          t.check_ok = false;
          m << " MISMATCH";
        }
      }
    }
    check_shuffles(l, steps, z, local, out, t.check_ok, m);
    t.check = m.str();
    return t;
  }

 private:
  uint32_t units() const { return static_cast<uint32_t>(std::max(1, info_.compute_units)); }

  // host_checksum, once per op, ILP, step count and variant: a figure's repeats run the same
  // count, and a GPU launch of 10 ms is millions of steps to replay (the replays were most of
  // the probe's 12.6 s on an H200).
  std::optional<uint32_t> replay(const std::string& op, int ilp, uint64_t steps,
                                 const ComputeSeeds& z, bool fused, bool flushed = false) {
    const std::string key = op + "|" + std::to_string(ilp) + "|" + std::to_string(steps) + "|" +
                            (fused ? "f" : "s") + (flushed ? "z" : "");
    if (const auto it = replays_.find(key); it != replays_.end()) return it->second;
    return replays_[key] = host_checksum(op, ilp, steps, z, fused, flushed);
  }

  // warp.shfl_up/down: each invocation of the first subgroup against the host's replay of the
  // subgroup, where workgroups are whole subgroups.
  void check_shuffles(const ComputeLaunch& l, uint64_t steps, const ComputeSeeds& z, uint32_t local,
                      const std::vector<uint32_t>& out, bool& ok, std::ostringstream& m) {
    const uint32_t sg = ctx_.facts().subgroup_size;
    if (sg == 0 || local % sg != 0 || steps * uint64_t(l.ilp) * sg > (uint64_t{1} << 26)) return;
    const std::string key = l.op + "|" + std::to_string(l.ilp) + "|" + std::to_string(steps);
    auto it = shuffle_replays_.find(key);
    if (it == shuffle_replays_.end())
      it = shuffle_replays_.emplace(key, shuffle_checksums(l.op, l.ilp, steps, z, sg)).first;
    const std::vector<uint32_t>& want = it->second;
    if (want.empty()) return;
    uint32_t differ = 0;
    for (uint32_t s = 0; s < sg; ++s) differ += out[s] != want[s];
    m << ", host replay of a subgroup of " << sg << ": "
      << (differ ? std::to_string(differ) + " invocations differ MISMATCH" : "matches");
    if (differ) ok = false;
  }

  // The throughput launch's workgroup size (run()'s default).
  uint32_t table_local() const { return std::min<uint32_t>(cpu_ ? 64 : 256, max_wg_); }
  // The workgroup size of launch l: a latency chain's group (a subgroup unless asked), a
  // throughput launch's at most the warps per SM it asks for.
  uint32_t launch_local(const ComputeLaunch& l) const {
    if (l.latency)
      return l.block_threads > 0 ? static_cast<uint32_t>(l.block_threads)
                                 : std::max<uint32_t>(1, ctx_.facts().subgroup_size);
    if (l.warps_per_sm > 0)
      return std::min(table_local(), static_cast<uint32_t>(l.warps_per_sm) * 32);
    return table_local();
  }

  // The pipeline of (op, ILP, workgroup size), created on first use; *fresh: not yet
  // dispatched (its warm-up launch is owed).
  Pipeline& pipeline(const std::string& op, int ilp, uint32_t local, bool* fresh) {
    Pipeline& p = built(op, ilp, local);
    *fresh = !warmed_.count(&p);
    return p;
  }
  // Created once from any thread (prepare() may be creating it in the background).
  Pipeline& built(const std::string& op, int ilp, uint32_t local) {
    return *pipelines_.get(module_name(op, ilp) + "|" + std::to_string(local), [&] {
      return ctx_.pipeline(module_name(op, ilp), {VK_DESCRIPTOR_TYPE_STORAGE_BUFFER}, sizeof(Push),
                           {local});
    });
  }

  // The pipeline's timed loop in its SASS (NVIDIA, where the context keeps the machine
  // code); read = false otherwise. The disassembly is the pipeline's, made once from any
  // thread (Context::nv_sass); the parse of its listing is cheap.
  LoopSass machine_loop(const std::string& op, int ilp, uint32_t local) {
    const NvCacheSass& code = ctx_.nv_sass(built(op, ilp, local));
    if (code.sass.empty()) return {};
    const auto loops = parse_sass_loops(code.sass);
    const auto found = loops.find("main");
    return found == loops.end() || found->second.loop_instructions == 0 ? LoopSass{}
                                                                        : found->second;
  }

  Context& ctx_;
  DeviceInfo info_;
  bool cpu_ = false;
  bool prepared_ = false;  // the GPU's clock brought up for this probe
  uint32_t max_wg_ = 1;
  BuildOnce<std::unique_ptr<Pipeline>> pipelines_;                // by module and workgroup size
  std::set<const Pipeline*> warmed_;                              // dispatched once, untimed
  std::map<std::string, std::optional<uint32_t>> replays_;        // replay()'s
  std::map<std::string, std::vector<uint32_t>> shuffle_replays_;  // check_shuffles()'
  Buffer out_;
  CoopMatRunner coop_;              // the mma rows, and every listed cooperative matrix
  std::vector<std::string> extra_;  // the listed ones no mma row takes (coop_'s rows)
};

}  // namespace

std::unique_ptr<ComputeKernels> make_compute_kernels(Context& ctx, const DeviceInfo& info) {
  return std::make_unique<VulkanCompute>(ctx, info);
}

}  // namespace gd::vulkan
