// Vulkan kernels of the frontend probe, the subset the OpenCL backend has that maps onto
// Vulkan: launch latency (one empty dispatch, recorded ahead, per vkQueueSubmit: the host
// clock around the submit and until the fence signalled, the GPU span from timestamps) and
// the back-to-back rate (many empty dispatches in one command buffer, in order, timed on the
// host clock and by timestamps). Every dispatch counts itself, and a count short of what was
// sent is an error. The instruction-cache loops, several queues, graphs, block dispatch and
// occupancy are unsupported here, each with its reason.
#include <string>
#include <vector>

#include "frontend/frontend.hpp"
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
    if (part == "dispatch" || part == "occupancy")
      return Support::no(
          "the Vulkan backend's shaders read no SM id and no GPU-wide timer "
          "(VK_NV_shader_sm_builtins and VK_KHR_shader_clock's device clock are not used), so "
          "workgroup starts cannot be placed on SMs or in time");
    return Support::no("unknown part " + part);
  }

  IcacheTiming icache(const IcacheRun&) override { throw BackendError(supports("icache").reason); }

  // Per sample: api_ns the vkQueueSubmit call, round_trip_ns vkQueueSubmit until the fence
  // wait returned, kernel_ns the dispatch between its timestamps. No start time: the GPU's
  // timestamps are not synced to the host clock here.
  LaunchTiming launch_latency(int launches) override {
    if (!timing_.ok) throw BackendError(timing_.reason);
    if (launches < 1) throw BackendError("launch latency: no launches asked for");
    LaunchTiming out;
    out.start_source =
        "not measured: the GPU's timestamps are not synced to the host clock "
        "(VK_EXT_calibrated_timestamps is not used)";
    reset_count();
    for (int i = 0; i < launches + kWarmup; ++i) {
      const Context::BatchTiming t = ctx_.dispatch_batch(pipeline(), {{&count_, 0}}, 1, 1);
      if (i < kWarmup) continue;
      LaunchSample s;
      s.api_ns = t.submit_ns;
      s.round_trip_ns = t.round_trip_ns;
      s.kernel_ns = t.gpu_ns;
      out.samples.push_back(s);
    }
    expect_count(uint32_t(launches + kWarmup), "launch latency");
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

 private:
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
};

}  // namespace

std::unique_ptr<FrontendKernels> make_frontend_kernels(Context& ctx, const DeviceInfo& info) {
  return std::make_unique<VulkanFrontend>(ctx, info);
}

}  // namespace gd::vulkan
