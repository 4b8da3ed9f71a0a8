// Vulkan kernels of the frontend probe, the subset the OpenCL backend has that maps onto
// Vulkan: launch latency (one empty dispatch, recorded ahead, per vkQueueSubmit: the host
// clock around the submit and until the fence signalled, the GPU span from timestamps) and
// the back-to-back rate (many empty dispatches in one command buffer, in order, timed on the
// host clock and by timestamps). Every dispatch counts itself, and a count short of what was
// sent is an error. Block dispatch and occupancy where the device tells a shader its SM and
// a device-wide clock (VK_NV_shader_sm_builtins, VK_KHR_shader_clock's shaderDeviceClock):
// frontend_blocks.comp writes CUDA's block records, in ticks of that clock, converted to ns
// by a calibration against the timestamps. The instruction-cache loops, several queues,
// graphs and the register staircase are unsupported here, each with its reason.
#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "frontend/blocks.hpp"
#include "frontend/frontend.hpp"
#include "gpu_clock.hpp"
#include "gpudissect/stats.hpp"
#include "vulkan_probes.hpp"

namespace gd::vulkan {

namespace {

constexpr int kWarmup = 5;  // untimed submissions before the latency samples

class VulkanFrontend final : public FrontendKernels {
 public:
  VulkanFrontend(Context& ctx, const DeviceInfo&) : ctx_(ctx), timing_(ctx.facts().timing()) {}

  std::string language() const override { return "vulkan"; }

  Support supports(const std::string& part) override {
    if (part == "launch" || part == "rate.plain") return timing_;
    if (part == "icache" || part == "partitions")
      return Support::no(
          "the Vulkan backend has no instruction-cache shaders: its SPIR-V is built ahead, "
          "one module per loop size would be needed, and the size of the driver's machine "
          "code is not read (VK_KHR_pipeline_executable_properties is not used)");
    if (part == "rate.streams")
      return Support::no(
          "dispatches on several queues are not measured on Vulkan (the backend "
          "opens one compute queue)");
    if (part == "rate.graph")
      return Support::no(
          "Vulkan has no graph launch; its nearest thing, one command buffer of many "
          "dispatches, is what the plain rate measures here");
    if (part == "dispatch" || part == "occupancy" || part == "occupancy.block" ||
        part == "occupancy.shared")
      return blocks_support();
    if (part == "occupancy.regs")
      return Support::no(
          "Vulkan has no per-pipeline register cap (CUDA's --maxrregcount): the register "
          "staircase is CUDA's");
    return Support::no("unknown part " + part);
  }

  IcacheTiming icache(const IcacheRun&) override { throw BackendError(supports("icache").reason); }

  // Per sample: api_ns the vkQueueSubmit call, round_trip_ns vkQueueSubmit until the polled
  // fence was signalled (vkWaitForFences' own time is measured after and named in `wait`),
  // kernel_ns the dispatch between its timestamps; start_ns, where the device calibrates its
  // timestamps against the host clock (VK_EXT_calibrated_timestamps), from before vkQueueSubmit to
  // the dispatch's first timestamp on the host's clock (the rest of the round trip, less the
  // dispatch, is the completion). The calibration is read before and after the samples; the offset
  // used is their mean and the uncertainty half their distance plus the driver's deviation bound.
  LaunchTiming launch_latency(int launches) override {
    if (!timing_.ok) throw BackendError(timing_.reason);
    if (launches < 1) throw BackendError("launch latency: no launches asked for");
    LaunchTiming out;
    const std::optional<Context::Calibration> before = ctx_.calibrate();
    reset_count();
    std::vector<Context::BatchTiming> batches;
    std::vector<double> blocking_ns;
    for (int i = 0; i < launches + kWarmup + kBlockingWaitSamples; ++i) {
      const bool blocking = i >= launches + kWarmup;
      const Context::BatchTiming t =
          ctx_.dispatch_batch(pipeline(), {{&count_, 0}}, 1, 1, blocking);
      if (blocking)
        blocking_ns.push_back(t.round_trip_ns);
      else if (i >= kWarmup)
        batches.push_back(t);
    }
    expect_count(uint32_t(launches + kWarmup + kBlockingWaitSamples), "launch latency");
    out.wait =
        blocking_wait_note("polling the fence (vkGetFenceStatus)", "vkWaitForFences", blocking_ns);
    const std::optional<Context::Calibration> after = ctx_.calibrate();
    std::optional<double> offset;
    if (before && after) {
      offset = (before->offset_ns + after->offset_ns) / 2;
      ClockSync sync;
      sync.offset_ns = *offset;
      sync.uncertainty_ns = std::abs(after->offset_ns - before->offset_ns) / 2 +
                            std::max(before->deviation_ns, after->deviation_ns);
      sync.samples = 2;
      out.sync = sync;
      out.start_source = "timestamps calibrated to the host clock (VK_EXT_calibrated_timestamps)";
    } else {
      out.start_source =
          "not measured: the device does not calibrate its timestamps against the host clock "
          "(VK_EXT_calibrated_timestamps with the device and CLOCK_MONOTONIC time domains)";
    }
    for (const Context::BatchTiming& t : batches) {
      LaunchSample s;
      s.api_ns = t.submit_ns;
      s.round_trip_ns = t.round_trip_ns;
      s.kernel_ns = t.gpu_ns;
      // Kept only where the dispatch starts inside the round trip (a start outside it is a
      // calibration that does not hold, and no measurement).
      if (offset) {
        const double start = t.start_device_ns - *offset - t.submit_at_ns;
        if (start > 0 && start + t.gpu_ns <= t.round_trip_ns) s.start_ns = start;
      }
      out.samples.push_back(s);
    }
    return out;
  }

  // host_ns: recording the command buffer of `kernels` dispatches, its vkQueueSubmit and the
  // fence wait; gpu_span_ns: first dispatch's start to the last one's (timestamps).
  RateTiming launch_rate(const std::string& mode, int kernels, int) override {
    const Support s = supports("rate." + mode);
    if (!s.ok) throw BackendError("launch rate " + mode + ": " + s.reason);
    if (kernels < 2) throw BackendError("launch rate: fewer than two dispatches");
    reset_count();
    const Context::BatchTiming t = ctx_.dispatch_batch(pipeline(), {{&count_, 0}}, 1, kernels);
    expect_count(uint32_t(kernels), "launch rate");
    RateTiming r;
    r.kernels = kernels;
    r.host_ns = t.record_ns + t.round_trip_ns;
    r.gpu_span_ns = t.gpu_ns;
    return r;
  }

  // Workgroups of `block_threads` started back to back (no spin), one record each.
  std::vector<BlockRecord> dispatch(int blocks, int block_threads) override {
    const Support s = blocks_support();
    if (!s.ok) throw BackendError(s.reason);
    const Launch l = run_blocks(blocks, block_threads, 0, 1);
    return parse_block_records(l.words, l.blocks, ns_per_tick(), "dispatch");
  }

  // Workgroups spinning req.spin_us with req.shared_bytes of workgroup memory (at least one
  // word; trimmed, as CUDA's request is, when the shader's own 8 bytes would pass the limit).
  OccupancyTrace occupancy(const OccupancyRequest& req) override {
    const Support s = supports(req.regs > 0 ? "occupancy.regs" : "occupancy");
    if (!s.ok) throw BackendError(s.reason);
    const VkPhysicalDeviceLimits& lim = ctx_.facts().props.limits;
    if (static_cast<uint32_t>(req.block_threads) > lim.maxComputeWorkGroupInvocations ||
        static_cast<uint32_t>(req.block_threads) > lim.maxComputeWorkGroupSize[0])
      throw BackendError("workgroups of " + std::to_string(req.block_threads) +
                         " invocations exceed the device's limit");
    OccupancyTrace t;
    t.static_shared_bytes = kStaticShared;
    uint64_t bytes = std::max<uint64_t>(req.shared_bytes, 4);
    const uint64_t limit = lim.maxComputeSharedMemorySize;
    if (bytes + kStaticShared > limit && bytes <= limit) bytes = limit - kStaticShared;
    const uint32_t words = static_cast<uint32_t>(std::max<uint64_t>(1, bytes / 4));
    t.dynamic_shared_bytes = uint64_t(words) * 4;
    const double k = ns_per_tick();
    const double ticks = std::min(req.spin_us * 1000 / k, 4.0e9);
    const int per_sm = occupancy_grid_per_sm(req.blocks_per_sm, req.waves, req.block_threads);
    const Launch l =
        run_blocks(std::max(1, static_cast<int>(ctx_.facts().sm_count.value_or(1))) * per_sm,
                   req.block_threads, static_cast<uint32_t>(ticks), words);
    t.blocks = parse_block_records(l.words, l.blocks, k, "occupancy");
    return t;
  }

 private:
  static constexpr uint64_t kStaticShared = 8;  // frontend_blocks.comp's start_at

  Support blocks_support() const {
    if (!timing_.ok) return timing_;
    if (!ctx_.facts().sm_builtins)
      return Support::no(
          "the device lacks VK_NV_shader_sm_builtins (gl_SMIDNV): a shader cannot tell which SM "
          "runs its workgroup, so workgroup starts cannot be placed on SMs");
    if (!ctx_.facts().shader_device_clock)
      return Support::no(
          "the device lacks VK_KHR_shader_clock's shaderDeviceClock (clockRealtimeEXT): no "
          "GPU-wide clock in shaders to place workgroup starts in time");
    return Support::yes();
  }

  struct Launch {
    std::vector<uint64_t> words;  // 4 per workgroup, as written
    std::size_t blocks = 0;
    double ns = 0;  // the dispatch between its timestamps
  };

  // One dispatch of frontend_blocks: `blocks` workgroups of `threads`, spinning spin_ticks,
  // with `words` words of workgroup memory. The GPU's clock is brought up first where it sat
  // idle (GpuClock), so that starts are timed at a busy GPU's clock.
  Launch run_blocks(int blocks, int threads, uint32_t spin_ticks, uint32_t words) {
    Launch l;
    l.blocks = static_cast<std::size_t>(std::max(1, blocks));
    const auto key = std::make_pair(uint32_t(std::max(1, threads)), words);
    auto& p = blocks_pipelines_[key];
    if (!p)
      p = ctx_.pipeline("frontend_blocks", {VK_DESCRIPTOR_TYPE_STORAGE_BUFFER}, sizeof spin_ticks,
                        {key.first, key.second});
    const uint64_t bytes = l.blocks * 4 * sizeof(uint64_t);
    if (rec_bytes_ < bytes) {
      rec_ = ctx_.buffer(bytes, VK_BUFFER_USAGE_STORAGE_BUFFER_BIT, Context::Memory::host_cached);
      rec_bytes_ = bytes;
    }
    std::fill_n(static_cast<uint64_t*>(rec_.mapped()), l.blocks * 4, uint64_t(0));
    ctx_.clock().prepare(!clock_up_);
    clock_up_ = true;
    l.ns = ctx_.dispatch(*p, {{&rec_, bytes}}, &spin_ticks, sizeof spin_ticks,
                         static_cast<uint32_t>(l.blocks));
    const auto* w = static_cast<const uint64_t*>(rec_.mapped());
    l.words.assign(w, w + l.blocks * 4);
    return l;
  }

  // The device clock's ns per tick, once: one workgroup spinning 2^17 and 2^20 ticks, timed
  // by the shader (ticks) and by the timestamps (ns), three times; the median of the ratios.
  double ns_per_tick() {
    if (ns_per_tick_ > 0) return ns_per_tick_;
    std::vector<double> ratios;
    for (int r = 0; r < 3; ++r) {
      const Launch a = run_blocks(1, 32, 1u << 17, 1), b = run_blocks(1, 32, 1u << 20, 1);
      for (const Launch* x : {&a, &b})
        if (x->words[3] != kOccupancyMagic)
          throw BackendError("clock calibration: the spinning workgroup left no record");
      if (const auto k = gd::ns_per_tick(double(a.words[2] - a.words[1]), a.ns,
                                         double(b.words[2] - b.words[1]), b.ns))
        ratios.push_back(*k);
    }
    if (ratios.empty())
      throw BackendError(
          "clock calibration: a longer spin on the device clock took no longer between "
          "timestamps");
    ns_per_tick_ = median(ratios);
    return ns_per_tick_;
  }

  const Pipeline& pipeline() {
    if (!empty_) {
      empty_ = ctx_.pipeline("frontend_empty", {VK_DESCRIPTOR_TYPE_STORAGE_BUFFER}, 0);
      count_ = ctx_.buffer(4, VK_BUFFER_USAGE_STORAGE_BUFFER_BIT, Context::Memory::host);
    }
    return *empty_;
  }

  uint32_t* word() { return static_cast<uint32_t*>(count_.mapped()); }

  void reset_count() {
    pipeline();
    *word() = 0;
  }

  // Every dispatch sent ran once: a short count is an error, not a figure.
  void expect_count(uint32_t want, const char* what) {
    const uint32_t got = *word();
    if (got != want)
      throw BackendError(std::string(what) + ": " + std::to_string(want) +
                         " dispatches submitted, " + std::to_string(got) + " counted");
  }

  Context& ctx_;
  Support timing_;
  std::unique_ptr<Pipeline> empty_;
  Buffer count_;
  std::map<std::pair<uint32_t, uint32_t>, std::unique_ptr<Pipeline>> blocks_pipelines_;
  Buffer rec_;
  uint64_t rec_bytes_ = 0;
  double ns_per_tick_ = 0;
  bool clock_up_ = false;
};

}  // namespace

std::unique_ptr<FrontendKernels> make_frontend_kernels(Context& ctx, const DeviceInfo& info) {
  return std::make_unique<VulkanFrontend>(ctx, info);
}

}  // namespace gd::vulkan
