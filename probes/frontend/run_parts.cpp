// The front-end probe's launch, dispatch and occupancy parts.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <stdexcept>

#if defined(__linux__)
#include <pthread.h>
#include <sched.h>
#endif

#include "frontend/run.hpp"
#include "frontend/run_internal.hpp"
#include "gpudissect/head_start.hpp"
#include "gpudissect/options.hpp"
#include "gpudissect/stats.hpp"
#include "gpudissect/stopwatch.hpp"
#include "gpudissect/units.hpp"

namespace gd::frontend_run {

namespace {

// The parts of one batch's samples, in microseconds.
struct LaunchParts {
  std::vector<double> api, start, round_trip, kernel, completion;
};

// Keeps the calling thread on the CPU it runs on while alive, then gives back its former set.
// A launch round trip is a few microseconds of host work plus a spin on a completion word; a
// thread that the scheduler moves between CPUs in the middle pays cold caches in the timing.
class PinToCurrentCpu {
 public:
  explicit PinToCurrentCpu(bool on) {
#if defined(__linux__)
    if (!on) return;
    const int cpu = sched_getcpu();
    if (cpu < 0 || pthread_getaffinity_np(pthread_self(), sizeof before_, &before_) != 0) return;
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(cpu, &one);
    pinned_ = pthread_setaffinity_np(pthread_self(), sizeof one, &one) == 0;
#endif
  }
  ~PinToCurrentCpu() {
#if defined(__linux__)
    if (pinned_) pthread_setaffinity_np(pthread_self(), sizeof before_, &before_);
#endif
  }
  PinToCurrentCpu(const PinToCurrentCpu&) = delete;
  PinToCurrentCpu& operator=(const PinToCurrentCpu&) = delete;

 private:
#if defined(__linux__)
  cpu_set_t before_{};
#endif
  bool pinned_ = false;
};

LaunchParts launch_parts(const LaunchTiming& t) {
  LaunchParts p;
  for (const auto& s : t.samples) {
    p.api.push_back(s.api_ns / 1000);
    if (s.start_ns > 0) {
      p.start.push_back(s.start_ns / 1000);
      p.completion.push_back((s.round_trip_ns - s.start_ns - s.kernel_ns) / 1000);
    }
    p.kernel.push_back(s.kernel_ns / 1000);
    if (t.empty_round_trip_ns.empty()) p.round_trip.push_back(s.round_trip_ns / 1000);
  }
  for (double ns : t.empty_round_trip_ns) p.round_trip.push_back(ns / 1000);
  return p;
}

// Launch latency in batches. One launch's time varies by several microseconds with what the
// host does (interrupts, other threads), so the spread of single samples says little about
// how well the figure repeats: each figure is the median of the batches' medians, its spread
// theirs; every sample's distribution is kept beside it.
void launch_latency_batches(FrontendKernels& k, const FrontendOptions& opt,
                            const std::atomic<bool>& stop, FrontendProbeResult& out) {
  std::map<std::string, std::vector<double>> medians, all;
  bool empty_kernel = false;
  const PinToCurrentCpu pin(opt.launch_pin);
  for (int b = 0; b < opt.launch_batches && !(b > 0 && stop); ++b) {
    const LaunchTiming t = k.launch_latency(opt.launches);
    if (b == 0) {
      out.launch_start_source = t.start_source;
      out.timer_resolution_ns = t.timer_resolution_ns;
      out.launch_round_trip_api = t.empty_round_trip_api;
      out.launch_wait = t.wait;
    }
    if (t.sync &&
        (!out.sync_uncertainty_us || t.sync->uncertainty_ns / 1000 > *out.sync_uncertainty_us))
      out.sync_uncertainty_us = t.sync->uncertainty_ns / 1000;
    empty_kernel = !t.empty_round_trip_ns.empty();
    const LaunchParts p = launch_parts(t);
    for (const auto& [name, v] : {std::pair<const char*, const std::vector<double>*>{"api", &p.api},
                                  {"start", &p.start},
                                  {"round_trip", &p.round_trip},
                                  {"kernel", &p.kernel},
                                  {"completion", &p.completion}}) {
      if (v->empty()) continue;
      medians[name].push_back(median(*v));
      all[name].insert(all[name].end(), v->begin(), v->end());
    }
  }
  if (medians["round_trip"].empty()) throw BackendError("no launch samples");
  out.launch_batches = static_cast<int>(medians["round_trip"].size());
  out.launch_round_trip_empty_kernel = empty_kernel;
  auto put = [&](const char* name, std::optional<Summary>& to) {
    if (medians[name].empty()) return;
    to = summarize(medians[name]);
    if (std::string(name) != "kernel")
      out.launch_distribution_us[name] = launch_distribution(all[name]);
  };
  put("api", out.launch_api_us);
  put("start", out.launch_start_us);
  put("round_trip", out.launch_round_trip_us);
  put("kernel", out.launch_kernel_us);
  put("completion", out.launch_completion_us);
  out.launch_round_trip_samples_us = all["round_trip"];
  out.launch_start_samples_us = all["start"];
}

}  // namespace

void launch_part(FrontendKernels& k, const FrontendOptions& opt, Progress& progress,
                 const std::atomic<bool>& stop, FrontendProbeResult& out) {
  out.launch_api = out.language == "cuda"     ? "cudaLaunchKernel"
                   : out.language == "vulkan" ? "vkQueueSubmit (one vkCmdDispatch)"
                                              : "clEnqueueNDRangeKernel";
  // Timed by the host's clock: the run's background compiles must not share the CPU with it
  // (a `run frontend` starts with this part, while they still run).
  HeadStart::wait_for_current();
  if (!k.supports("launch").ok) {
    out.launch_status = {StatusCode::unsupported, k.supports("launch").reason};
  } else {
    progress.step(
        "frontend", "launch latency", 1, 1,
        std::to_string(opt.launch_batches) + " x " + std::to_string(opt.launches) + " launches");
    guarded(out.launch_status, [&] { launch_latency_batches(k, opt, stop, out); });
  }
  for (const std::string mode : {"plain", "streams", "graph"}) {
    if (stop) return;
    const Support s = k.supports("rate." + mode);
    if (!s.ok) {
      out.rate_status[mode] = {StatusCode::unsupported, s.reason};
      continue;
    }
    progress.step("frontend", "launch rate", 1, 1, mode);
    Status st;
    std::vector<double> host, gpu;
    guarded(st, [&] {
      for (int r = 0; r < std::max(3, opt.repeats); ++r) {
        const RateTiming t = k.launch_rate(mode, opt.rate_kernels, 4);
        if (t.host_ns > 0) host.push_back(t.kernels / (t.host_ns * 1e-9));
        if (t.gpu_span_ns && *t.gpu_span_ns > 0)
          gpu.push_back((t.kernels - 1) / (*t.gpu_span_ns * 1e-9));
      }
    });
    out.rate_status[mode] = st;
    if (!host.empty()) out.rate_kernels_per_s[mode] = summarize(host);
    if (!gpu.empty()) out.rate_gpu_kernels_per_s[mode] = median(gpu);
  }
}

void dispatch_part(FrontendKernels& k, const FrontendOptions& opt, Progress& progress,
                   FrontendProbeResult& out) {
  const Support s = k.supports("dispatch");
  if (!s.ok) {
    out.dispatch_status = {StatusCode::unsupported, s.reason};
    return;
  }
  // One full wave of small blocks: 32 blocks of 64 threads per SM fit at once on sm_90, so
  // the time to start them all is the front end's, not the SMs'.
  out.dispatch_block_threads = 64;
  out.dispatch_blocks = std::max(1, out.sms) * 32;
  std::vector<double> rate, wave, skew_med, skew_max;
  guarded(out.dispatch_status, [&] {
    for (int r = 0; r < std::max(3, opt.repeats); ++r) {
      progress.step("frontend", "dispatch", r + 1, std::max(3, opt.repeats),
                    std::to_string(out.dispatch_blocks) + " blocks");
      auto trace = k.dispatch(out.dispatch_blocks, out.dispatch_block_threads);
      if (static_cast<int>(trace.size()) != out.dispatch_blocks)
        throw BackendError("dispatch: " + std::to_string(trace.size()) + " of " +
                           std::to_string(out.dispatch_blocks) + " blocks recorded");
      const auto d = dispatch_stats(trace);
      if (!d) throw BackendError("dispatch: every block started at the same timer tick");
      rate.push_back(d->blocks_per_us);
      wave.push_back(d->first_wave_us);
      skew_med.push_back(d->sm_skew_median_us);
      skew_max.push_back(d->sm_skew_max_us);
      out.dispatch_trace = std::move(trace);
    }
  });
  if (!rate.empty()) {
    out.dispatch_blocks_per_us = summarize(rate);
    out.dispatch_first_wave_us = median(wave);
    out.dispatch_sm_skew_median_us = median(skew_med);
    out.dispatch_sm_skew_max_us = median(skew_max);
  }
}

// Refill after the first wave: `refill_waves` waves of 64-thread blocks (the resident limit
// per SM, from the occupancy API, times the waves), each spinning `refill_spin_us` from its own
// start, so that every SM's slots are full before the first block ends and every later start
// is a freed slot refilled.
void refill_part(FrontendKernels& k, const FrontendOptions& opt, Progress& progress,
                 FrontendProbeResult& out) {
  const Support s = k.supports("occupancy");
  if (!s.ok) {
    out.refill_status = {StatusCode::unsupported, s.reason};
    return;
  }
  out.refill_block_threads = 64;
  out.refill_waves = opt.refill_waves;
  out.refill_spin_us = opt.refill_spin_us;
  std::vector<double> latency, sm_rate, gpu_rate, p10, p90, block_us;
  guarded(out.refill_status, [&] {
    const int repeats = std::max(3, opt.repeats);
    for (int r = 0; r < repeats; ++r) {
      progress.step("frontend", "refill", r + 1, repeats,
                    std::to_string(opt.refill_waves) + " waves");
      OccupancyRequest req;
      req.block_threads = out.refill_block_threads;
      req.waves = opt.refill_waves;
      req.spin_us = opt.refill_spin_us;
      const OccupancyTrace t = k.occupancy(req);
      if (!t.check_ok) throw BackendError("refill: host check failed: " + t.check);
      out.refill_blocks = static_cast<int>(t.blocks.size());
      const auto st = refill_stats(t.blocks);
      if (!st)
        throw BackendError("refill: no SM started a block after its first wave (" +
                           std::to_string(t.blocks.size()) + " blocks)");
      latency.push_back(st->latency_mean_us);
      p10.push_back(st->latency_p10_us);
      p90.push_back(st->latency_p90_us);
      sm_rate.push_back(st->sm_rate_median);
      gpu_rate.push_back(st->blocks_per_us);
      block_us.push_back(st->block_us_median);
      out.refill_resident_per_sm = st->resident_median;
      out.refill_per_sm = st->per_sm;
    }
  });
  if (latency.empty()) return;
  out.refill_latency_us = summarize(latency);
  out.refill_latency_p10_us = median(p10);
  out.refill_latency_p90_us = median(p90);
  out.refill_sm_rate = summarize(sm_rate);
  out.refill_blocks_per_us = median(gpu_rate);
  out.refill_block_us = median(block_us);
}

// The occupancy points: the plan, then one loop that fills each point's fields in order.
// shape: a split would only pass the point and the trace between two halves.
void occupancy_part(FrontendKernels& k, const DeviceInfo& info, const FrontendOptions& opt,
                    Progress& progress, const std::atomic<bool>& stop, FrontendProbeResult& out) {
  const Support s = k.supports("occupancy");
  if (!s.ok) {
    out.occupancy_status = {StatusCode::unsupported, s.reason};
    return;
  }
  std::vector<OccupancyRequest> plan;
  std::vector<std::string> kinds;
  for (int b : {32, 64, 128, 256, 512, 1024}) {
    plan.push_back({b, 0, 0, 0, 30});
    kinds.push_back("block");
  }
  const std::vector<int> regs = occupancy_register_caps(opt);
  Status compiled;
  guarded(compiled, [&] { k.prepare_occupancy(regs); });
  for (int r : regs) {
    plan.push_back({128, r, 0, 0, 30});
    kinds.push_back("regs");
  }
  const uint64_t optin =
      info.shared_per_block_optin_bytes.value_or(info.shared_per_block_bytes.value_or(48 * 1024));
  for (uint64_t kb : {0, 8, 16, 24, 32, 48, 64, 100, 116, 160, 227}) {
    if (kb * 1024 > optin) continue;
    plan.push_back({128, 0, kb * 1024, 0, 30});
    kinds.push_back("shared");
  }
  for (std::size_t i = 0; i < plan.size(); ++i) {
    if (stop) return;
    const auto& req = plan[i];
    progress.step("frontend", "occupancy", static_cast<int>(i + 1), static_cast<int>(plan.size()),
                  kinds[i]);
    FrontendOccupancyPoint p;
    p.kind = kinds[i];
    p.block_threads = req.block_threads;
    p.regs_requested = req.regs;
    p.shared_bytes = req.shared_bytes;
    const Support ks = k.supports("occupancy." + p.kind);  // no register cap outside CUDA
    Status st = ks.ok ? Status{} : Status{StatusCode::unsupported, ks.reason};
    guarded(st, [&] {
      if (!ks.ok) return;
      const OccupancyTrace t = k.occupancy(req);
      if (!t.check_ok) throw BackendError("host check failed: " + t.check);
      p.regs_per_thread = t.regs_per_thread;
      p.api_blocks_per_sm = t.api_blocks_per_sm;
      const int wpb = (req.block_threads + 31) / 32;
      const int blocks = resident_blocks(t.blocks);
      if (blocks <= 0) throw BackendError("no block records");
      p.blocks_per_sm = blocks;
      p.warps_per_sm = blocks * wpb;
      int slot = -1;
      for (const auto& b : t.blocks) slot = std::max(slot, static_cast<int>(b.warp_slot));
      p.max_warp_slot = slot < 0 ? -1 : slot + wpb - 1;
      p.shared_bytes = t.dynamic_shared_bytes;
      // Predicted from the documented limits: registers, then shared memory (the kernel's own
      // __shared__ bytes count too), whichever allows fewer warps.
      std::optional<int> predicted;
      if (t.regs_per_thread > 0)
        predicted = predicted_warps_by_registers(t.regs_per_thread, req.block_threads);
      if (info.shared_per_sm_bytes) {
        const int by_shared =
            predicted_warps_by_shared(t.dynamic_shared_bytes + t.static_shared_bytes,
                                      req.block_threads, *info.shared_per_sm_bytes);
        predicted = std::min(predicted.value_or(by_shared), by_shared);
      }
      p.predicted_warps_per_sm = predicted;
    });
    p.status = st;
    if (p.warps_per_sm)
      out.max_warps_per_sm = std::max(out.max_warps_per_sm.value_or(0), *p.warps_per_sm);
    if (p.blocks_per_sm)
      out.max_blocks_per_sm = std::max(out.max_blocks_per_sm.value_or(0), *p.blocks_per_sm);
    out.occupancy.push_back(p);
  }
  bool any = false;
  for (const auto& p : out.occupancy) any = any || p.status.ok();
  if (!any && !out.occupancy.empty()) out.occupancy_status = out.occupancy.front().status;
}

}  // namespace gd::frontend_run
