#include "gpu_clock.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <string>

#include "gpudissect/stopwatch.hpp"

namespace gd::vulkan {

namespace {

using Clock = std::chrono::steady_clock;

constexpr uint64_t kMaxHops = 1ull << 20;  // per dispatch (chase_common.glsl)

}  // namespace

GpuClock::GpuClock(Context& ctx) : ctx_(ctx) {
  const Facts& f = ctx.facts();
  active_ = f.props.deviceType != VK_PHYSICAL_DEVICE_TYPE_CPU && f.timing().ok;
  shader_clock_ = f.shader_clock;
}

void GpuClock::prepare(bool probe_start) {
  if (!active_) return;
  const double idle = std::chrono::duration<double>(Clock::now() - ctx_.last_done()).count();
  if (probe_start || idle > kIdleSeconds) bring_up();
}

GpuClock::Ramp GpuClock::bring_up() {
  Ramp r;
  const auto t0 = Clock::now();
  bool clock = active_ && shader_clock_;
  for (;;) {
    if (clock) {
      if (const auto mhz = read_mhz(kRampWindowMs))
        r.mhz.push_back(*mhz);
      else
        clock = false;  // a clock that does not read: the fixed busy period from here
    } else {
      walk(hops_for(kRampWindowMs));
    }
    r.seconds = seconds_since(t0);
    ClockRampRule rule;
    rule.target_mhz = peak_;
    r.state = clock_ramp_state(r.mhz, r.seconds, clock, rule);
    if (r.state != RampState::go_on) break;
  }
  last_ = r;
  return r;
}

std::optional<double> GpuClock::read_mhz(double window_ms) {
  if (!active_ || !shader_clock_) return std::nullopt;
  const uint64_t n = std::min(hops_for(window_ms), kMaxHops / 2);
  const Walk one = walk(n), two = walk(2 * n);
  if (two.ticks == 0 || !(two.ns > 0)) return std::nullopt;
  // The 2N walk alone, its launch included: a little under the clock, never above it.
  const double whole = double(two.ticks) / two.ns * 1e3;
  double mhz = whole;
  // The difference of the walks has no launch in it; where it strays from the whole walk's
  // figure by more than 5 %, the clock moved between the two (a ramp): the whole walk then.
  if (two.ticks > one.ticks && two.ns > one.ns) {
    const double diff = double(two.ticks - one.ticks) / (two.ns - one.ns) * 1e3;
    if (std::abs(diff - whole) <= 0.05 * whole) mhz = diff;
  }
  if (!std::isfinite(mhz) || !(mhz > 0)) return std::nullopt;
  peak_ = std::max(peak_, mhz);
  return mhz;
}

void GpuClock::observe(double mhz) {
  if (std::isfinite(mhz) && mhz > 0) peak_ = std::max(peak_, mhz);
}

std::optional<double> GpuClock::peak_mhz() const {
  if (!(peak_ > 0)) return std::nullopt;
  return peak_;
}

GpuClock::Walk GpuClock::walk(uint64_t hops) {
  if (!pipeline_) {
    pipeline_ =
        ctx_.pipeline(shader_clock_ ? "chase_global_clock" : "chase_global",
                      {VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, VK_DESCRIPTOR_TYPE_STORAGE_BUFFER},
                      2 * sizeof(uint32_t));
    // One 64-byte line whose first word, the next element, is 0: the walk stays on it.
    chain_ = ctx_.buffer(64, VK_BUFFER_USAGE_STORAGE_BUFFER_BIT, Context::Memory::device);
    ctx_.fill(chain_, 64, 0);
    result_ =
        ctx_.buffer(sizeof(ChaseResult), VK_BUFFER_USAGE_STORAGE_BUFFER_BIT, Context::Memory::host);
  }
  hops = std::clamp<uint64_t>(hops, 1, kMaxHops);
  auto* out = static_cast<ChaseResult*>(result_.mapped());
  *out = ChaseResult{0xFFFFFFFFu, 0, {0, 0}, {0, 0}};
  const uint32_t push[2] = {0, static_cast<uint32_t>(hops)};
  Walk w;
  w.ns = ctx_.dispatch(*pipeline_, {{&chain_, 0}, {&result_, 0}}, push, sizeof push, 1);
  const ChaseResult got = *out;
  if (got.end != 0)
    throw BackendError("the clock's one-line chase ended at element " + std::to_string(got.end) +
                       ", not 0");
  w.ticks = shader_clock_ ? clock_ticks(got) : 0;
  if (w.ns > 0) ns_per_hop_ = w.ns / double(hops);
  return w;
}

uint64_t GpuClock::hops_for(double ms) const {
  if (!(ns_per_hop_ > 0)) return 1u << 14;
  return std::clamp<uint64_t>(static_cast<uint64_t>(ms * 1e6 / ns_per_hop_), 1u << 10, kMaxHops);
}

}  // namespace gd::vulkan
