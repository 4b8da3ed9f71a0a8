// The GPU's clock as the Vulkan kernel sets see it: brought up before timed work, read after.
//
// Why: NVIDIA's Vulkan driver leaves the GPU at (near) its idle clock (345 MHz on an H200)
// through dispatches of ~2 ms with host work (fills, read-backs, checks) between them, as
// the compute and atomics probes make. Every figure then comes out ~5.7x slow (FP32 fma 12.6
// TFLOP/s against CUDA's 66.3) with nothing saying so, while the latency probe's long chase
// dispatches on the same GPU see 1980 MHz (results/NOTES.md). CUDA contexts raise the clock
// by themselves; here the backend keeps the GPU busy first.
//
// The busy work and the readings are one invocation walking a one-line chain
// (chase_global[_clock]), as VulkanDevice::sample_clock does: long dependent walks are what
// brought the clock up in the latency probe.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "gpudissect/clock_ramp.hpp"
#include "vulkan_context.hpp"

namespace gd::vulkan {

class GpuClock {
 public:
  // The GPU was idle this long (no submission): its clock may have dropped, bring it up again.
  // 0.1 s: the compute probe's host checks (replays of up to 2^26 steps) left the H200 idle
  // for a few tenths of a second at a time, and its clock fell to 556-1006 MHz in them.
  static constexpr double kIdleSeconds = 0.1;
  // A ramp's readings walk about this long each (N hops, then 2N).
  static constexpr double kRampWindowMs = 10;

  explicit GpuClock(Context& ctx);
  GpuClock(const GpuClock&) = delete;
  GpuClock& operator=(const GpuClock&) = delete;

  // A GPU that can time. On a CPU driver (lavapipe) there is no clock to bring up and the busy
  // work would only cost time: prepare() and read_mhz() do nothing there.
  bool active() const { return active_; }

  // Before timed work: brings the clock up at the start of a probe (`probe_start`: the first
  // call of its kernels) and after the GPU sat idle for kIdleSeconds; nothing otherwise.
  void prepare(bool probe_start);

  struct Ramp {
    std::vector<double> mhz;             // the readings, in order (none without a clock)
    double seconds = 0;                  // busy work in all
    RampState state = RampState::go_on;  // why it stopped; go_on: it has not run
  };
  // Busy work until the clock is stable (gd::clock_ramp_state: two readings within 2.5 % after
  // 0.2 s, 1.2 s at most) or, without a shader clock, for a fixed 0.3 s.
  Ramp bring_up();
  const Ramp& last_ramp() const { return last_; }

  // The shader clock over walks of N and 2N hops (N taking about `window_ms`), from the
  // difference of the two (the dispatch's fixed cost cancels); nullopt without a shader clock
  // or on a CPU driver.
  std::optional<double> read_mhz(double window_ms = 1.0);
  // The highest reading so far; nullopt before the first.
  std::optional<double> peak_mhz() const;
  // A clock measured elsewhere on this device (the latency probe's chases): counts as a
  // reading for the peak, which bring_up aims at and low-clock notes compare with.
  void observe(double mhz);

  // One dispatch walking `hops` hops (at most 2^20: llvmpipe's loop limit, chase_common.glsl)
  // on the one-line chain: the timestamps' span and the shader clock's ticks (0 without one).
  struct Walk {
    double ns = 0;
    uint64_t ticks = 0;
  };
  Walk walk(uint64_t hops);

 private:
  uint64_t hops_for(double ms) const;  // from the last walk's time per hop

  Context& ctx_;
  bool active_ = false, shader_clock_ = false;
  std::unique_ptr<Pipeline> pipeline_;
  Buffer chain_, result_;
  double ns_per_hop_ = 0;
  double peak_ = 0;
  Ramp last_;
};

}  // namespace gd::vulkan
