#include "frontend/run.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <stdexcept>

#include "frontend/run_internal.hpp"
#include "gpudissect/options.hpp"
#include "gpudissect/stats.hpp"
#include "gpudissect/stopwatch.hpp"
#include "gpudissect/units.hpp"

namespace gd {

using frontend_run::dispatch_part;
using frontend_run::guarded;
using frontend_run::launch_part;
using frontend_run::occupancy_part;
using frontend_run::refill_part;

namespace {

using Clock = std::chrono::steady_clock;

Summary scaled(Summary s, double k) {
  for (double* v : {&s.median, &s.q1, &s.q3, &s.min, &s.max}) *v *= k;
  return s;
}

class IcacheRunner {
 public:
  IcacheRunner(FrontendKernels& k, const DeviceInfo& info, int repeats)
      : k_(k), info_(info), repeats_(repeats) {}

  // Passes per launch: about 4e5 instructions at the least, so a launch is far longer than
  // its start-up; the timed figure is a launch of 2P passes minus one of P.
  static uint64_t passes_for(int n) {
    return std::clamp<uint64_t>(static_cast<uint64_t>(400000 / std::max(1, n)), 4, 4096);
  }

  // Cycles of one warp for `passes` passes (or, without a clock, ns x the reported clock).
  std::vector<double> warp_cycles(const IcacheTiming& t) {
    if (!t.cycles_per_warp.empty()) {
      if (t.clock_mhz) clocks_.push_back(*t.clock_mhz);
      return t.cycles_per_warp;
    }
    reported_ = true;
    const double mhz = info_.clock_mhz_reported.value_or(1000.0);
    return {t.ns * mhz / 1000.0};
  }

  // IPC per warp (median over warps) of each repeat, by difference of two launches.
  std::vector<double> measure(IcacheRun run, int instructions, IcacheTiming* last,
                              std::string* bad) {
    const uint64_t p = passes_for(instructions);
    StoppingRule rule{static_cast<std::size_t>(repeats_), static_cast<std::size_t>(repeats_) + 6,
                      0.01};
    std::vector<double> ipc;
    for (int guard = 0; !rule.done(ipc) && guard < 3 * repeats_ + 12; ++guard) {
      run.iters = p;
      const IcacheTiming a = k_.icache(run);
      run.iters = 2 * p;
      const IcacheTiming b = k_.icache(run);
      if (!a.check_ok && bad) *bad = a.check;
      if (!b.check_ok && bad) *bad = b.check;
      const auto ca = warp_cycles(a), cb = warp_cycles(b);
      const int loop = b.loop_instructions > 0 ? b.loop_instructions : instructions;
      std::vector<double> per_warp;
      for (std::size_t w = 0; w < ca.size() && w < cb.size(); ++w) {
        const double d = (cb[w] - ca[w]) / static_cast<double>(p);
        if (d > 0) per_warp.push_back(loop / d);
      }
      if (!per_warp.empty()) ipc.push_back(median(per_warp));
      if (last) *last = b;
    }
    return ipc;
  }

  std::optional<double> clock() const {
    if (clocks_.empty()) return std::nullopt;
    return median(clocks_);
  }
  bool reported() const { return reported_; }

 private:
  FrontendKernels& k_;
  DeviceInfo info_;
  int repeats_;
  std::vector<double> clocks_;
  bool reported_ = false;
};

// One point of the sweep: a cold first pass, then IPC by difference of launches.
IcacheCurvePoint icache_point(FrontendKernels& k, int n, IcacheRunner& runner,
                              FrontendProbeResult& out) {
  IcacheCurvePoint pt;
  pt.instructions = n;
  Status st;
  guarded(st, [&] {
    IcacheRun run;
    run.spec = {n, 1};
    // The first launch of a freshly loaded kernel: one pass with its code cold.
    run.iters = 1;
    const IcacheTiming cold = k.icache(run);
    IcacheTiming last;
    std::string bad;
    const auto ipc = runner.measure(run, n, &last, &bad);
    pt.loop_instructions = last.loop_instructions;
    pt.code_bytes = last.code_bytes ? last.code_bytes : static_cast<uint64_t>(n) * 16;
    if (!last.code_bytes_source.empty())
      out.code_bytes_source = last.code_bytes_source;
    else if (!last.code_bytes)
      out.code_bytes_source = "estimate: 16 bytes x generated instructions";
    if (out.timed_instruction.empty() && !last.opcodes.empty()) {
      out.timed_instruction = last.opcodes.front();
      out.timed_instruction = out.timed_instruction.substr(0, out.timed_instruction.find(' '));
    }
    if (ipc.empty()) throw BackendError("no positive timing at " + std::to_string(n));
    pt.ipc = summarize(ipc);
    const auto cc = runner.warp_cycles(cold);
    const int loop = last.loop_instructions > 0 ? last.loop_instructions : n;
    if (!cc.empty() && cc.front() > 0) pt.first_pass_ipc = loop / cc.front();
    pt.clock_mhz = last.clock_mhz;
    if (!bad.empty()) throw BackendError("host check failed: " + bad);
  });
  pt.status = st;
  return pt;
}

std::vector<DetectedLevel> icache_levels(const std::vector<IcacheCurvePoint>& points) {
  std::vector<IcachePoint> curve;
  for (const auto& p : points)
    if (p.ipc && p.status.ok())
      curve.push_back({static_cast<double>(p.code_bytes), p.ipc->median, p.ipc->relative_spread()});
  std::sort(curve.begin(), curve.end(),
            [](const IcachePoint& a, const IcachePoint& b) { return a.code_bytes < b.code_bytes; });
  // Sizes from the machine code can repeat (two requests compiled to one size): keep one.
  curve.erase(std::unique(curve.begin(), curve.end(),
                          [](const IcachePoint& a, const IcachePoint& b) {
                            return a.code_bytes == b.code_bytes;
                          }),
              curve.end());
  return detect_icache_levels(curve);
}

}  // namespace

std::vector<int> icache_refinement(const std::vector<int>& measured, double lo_bytes,
                                   double hi_bytes, int max_instructions, int steps) {
  // Instruction counts of the two points that bracket the edge: the code is ~16 bytes per
  // instruction, so the counts follow the bytes.
  const int lo = icache_body_instructions(static_cast<int>(lo_bytes / 16));
  const int hi = icache_body_instructions(static_cast<int>(hi_bytes / 16));
  std::vector<int> v;
  if (hi <= lo || hi > max_instructions) return v;
  for (int i = 1; i <= steps; ++i) {
    const double x =
        lo * std::pow(static_cast<double>(hi) / lo, static_cast<double>(i) / (steps + 1));
    const int n = icache_body_instructions(static_cast<int>(std::lround(x)));
    if (n <= lo || n >= hi) continue;
    if (std::find(measured.begin(), measured.end(), n) != measured.end()) continue;
    if (std::find(v.begin(), v.end(), n) != v.end()) continue;
    v.push_back(n);
  }
  return v;
}

namespace {

void icache_part(FrontendKernels& k, const FrontendOptions& opt, const std::vector<int>& sizes,
                 Progress& progress, const std::atomic<bool>& stop, IcacheRunner& runner,
                 FrontendProbeResult& out) {
  int i = 0;
  for (int n : sizes) {
    if (stop) return;
    progress.step("frontend", "instruction cache", ++i, static_cast<int>(sizes.size()),
                  std::to_string(n) + " instructions");
    out.icache.push_back(icache_point(k, n, runner, out));
  }
  auto levels = icache_levels(out.icache);
  // Each edge refined to 1/8 of a doubling (3 sizes inside a half-doubling bracket), where
  // its kernels are cheap to compile (edges up to 32K instructions = 512 KiB).
  if (opt.refine && opt.points_per_doubling <= 4) {
    std::vector<int> measured;
    for (const auto& p : out.icache) measured.push_back(p.instructions);
    std::vector<int> more;
    for (const auto& l : levels)
      if (l.capacity_lo && l.capacity_hi)
        for (int n : icache_refinement(measured, *l.capacity_lo, *l.capacity_hi, 32768,
                                       8 / std::max(1, opt.points_per_doubling) - 1))
          more.push_back(n);
    if (!more.empty()) {
      std::vector<IcacheKernelSpec> specs;
      for (int n : more) specs.push_back({n, 1});
      const auto c0 = std::chrono::steady_clock::now();
      k.prepare_icache(specs);
      out.compile_seconds += seconds_since(c0);
      int j = 0;
      for (int n : more) {
        if (stop) return;
        progress.step("frontend", "instruction cache edges", ++j, static_cast<int>(more.size()),
                      std::to_string(n) + " instructions");
        out.icache.push_back(icache_point(k, n, runner, out));
      }
      std::sort(out.icache.begin(), out.icache.end(),
                [](const IcacheCurvePoint& a, const IcacheCurvePoint& b) {
                  return a.instructions < b.instructions;
                });
      levels = icache_levels(out.icache);
    }
  }
  const auto names = icache_level_names(levels);
  for (std::size_t l = 0; l < levels.size(); ++l) {
    IcacheLevel lv;
    lv.name = names[l];
    lv.ipc = levels[l].latency;
    lv.confidence = levels[l].confidence;
    if (levels[l].capacity_lo) {
      lv.capacity_lo_bytes = static_cast<uint64_t>(*levels[l].capacity_lo);
      lv.capacity_bytes = lv.capacity_lo_bytes;
    }
    if (levels[l].capacity_hi) lv.capacity_hi_bytes = static_cast<uint64_t>(*levels[l].capacity_hi);
    out.icache_levels.push_back(lv);
  }
}

void partitions_part(FrontendKernels& k, const FrontendOptions& opt, Progress& progress,
                     const std::atomic<bool>& stop, IcacheRunner& runner,
                     FrontendProbeResult& out) {
  const IcacheKernelSpec spec{opt.region_instructions, 4};
  out.partition_region_instructions = icache_body_instructions(opt.region_instructions);
  std::vector<std::pair<int, bool>> plan = {{1, false}, {2, false}, {2, true}, {3, false},
                                            {3, true},  {4, false}, {4, true}};
  int i = 0;
  for (const auto& [w, diff] : plan) {
    if (stop) return;
    progress.step("frontend", "partitions", ++i, static_cast<int>(plan.size()),
                  std::to_string(w) + " warps, " + (diff ? "different code" : "same code"));
    PartitionPoint p;
    p.warps = w;
    p.different = diff;
    Status st;
    // Copied: clang 15 lets no lambda capture a structured binding.
    guarded(st, [&, w = w, diff = diff] {
      IcacheRun run;
      run.spec = spec;
      run.warps = w;
      run.different = diff;
      IcacheTiming last;
      std::string bad;
      const auto ipc = runner.measure(run, out.partition_region_instructions, &last, &bad);
      if (last.code_bytes) out.partition_region_bytes = last.code_bytes;
      if (ipc.empty()) throw BackendError("no positive timing");
      p.ipc_per_warp = summarize(ipc);
      if (!bad.empty()) throw BackendError("host check failed: " + bad);
    });
    p.status = st;
    out.partitions.push_back(p);
  }
  std::optional<double> one, two_diff;
  for (const auto& p : out.partitions) {
    if (!p.ipc_per_warp) continue;
    if (p.warps == 1) one = p.ipc_per_warp->median;
    if (p.warps == 2 && p.different) two_diff = p.ipc_per_warp->median;
  }
  if (one && two_diff && *one > 0) out.partition_halving = *two_diff / *one;
}

}  // namespace

int icache_max_instructions(const FrontendOptions& opt, const std::string& language) {
  if (opt.max_instructions) return opt.max_instructions;
  if (language != "cuda") return 4096;
  // --quick stops the CUDA sweep at 32K instructions (512 KiB, 4x Hopper's 128 KiB L1i, so
  // the level past it still shows): on a machine with no kernel cache the largest loops cost
  // most of the compile time (about 11 s for the 9 kernels up to 131072 instructions).
  return opt.quick ? 32768 : 131072;
}

std::vector<int> icache_sizes(int min_instructions, int max_instructions, int per_doubling) {
  std::vector<int> v;
  const int lo = icache_body_instructions(std::max(kIcacheChains, min_instructions));
  const int hi = icache_body_instructions(std::max(lo, max_instructions));
  per_doubling = std::max(1, per_doubling);
  for (int i = 0;; ++i) {
    const double x = lo * std::pow(2.0, static_cast<double>(i) / per_doubling);
    if (x > hi * 1.0001) break;
    const int n = icache_body_instructions(static_cast<int>(std::lround(x)));
    if (v.empty() || n > v.back()) v.push_back(n);
  }
  if (v.empty() || v.back() != hi) v.push_back(hi);
  return v;
}

FrontendOptions parse_frontend_options(const OptionValues& kv,
                                       const std::vector<OptionSpec>& specs) {
  FrontendOptions o;
  const std::string p = "frontend";
  for (const auto& [k, v] : kv) {
    if (k == "quick")
      o.quick = options::flag(p, k, v);
    else if (k == "icache")
      o.icache = options::flag(p, k, v);
    else if (k == "partitions")
      o.partitions = options::flag(p, k, v);
    else if (k == "launch")
      o.launch = options::flag(p, k, v);
    else if (k == "dispatch")
      o.dispatch = options::flag(p, k, v);
    else if (k == "occupancy")
      o.occupancy = options::flag(p, k, v);
    else if (k == "min_instructions")
      o.min_instructions = options::integer(p, k, v, kIcacheChains, 1 << 20);
    else if (k == "max_instructions")
      o.max_instructions = options::integer(p, k, v, kIcacheChains, 1 << 20);
    else if (k == "points_per_doubling")
      o.points_per_doubling = options::integer(p, k, v, 1, 8);
    else if (k == "region_instructions")
      o.region_instructions = options::integer(p, k, v, kIcacheChains, 1 << 18);
    else if (k == "refine")
      o.refine = options::flag(p, k, v);
    else if (k == "repeats")
      o.repeats = options::integer(p, k, v, 1, 50);
    else if (k == "launches")
      o.launches = options::integer(p, k, v, 10, 100000);
    else if (k == "launch_batches")
      o.launch_batches = options::integer(p, k, v, 1, 1000);
    else if (k == "launch_pin")
      o.launch_pin = options::flag(p, k, v);
    else if (k == "rate_kernels")
      o.rate_kernels = options::integer(p, k, v, 10, 1000000);
    else if (k == "refill")
      o.refill = options::flag(p, k, v);
    else if (k == "refill_waves")
      o.refill_waves = options::integer(p, k, v, 2, 64);
    else if (k == "refill_spin_us")
      o.refill_spin_us = options::integer(p, k, v, 1, 1000);
    else
      options::unknown_key(p, k, specs);
  }
  if (o.max_instructions && o.max_instructions < o.min_instructions)
    throw std::invalid_argument("frontend.max_instructions: " + std::to_string(o.max_instructions) +
                                " is below min_instructions " + std::to_string(o.min_instructions));
  if (o.quick) {
    o.repeats = std::min(o.repeats, 3);
    o.launches = std::min(o.launches, 100);
    o.launch_batches = std::min(o.launch_batches, 5);
    o.rate_kernels = std::min(o.rate_kernels, 500);
    o.points_per_doubling = 1;
    o.refine = false;
    // The partition test's kernel (4 regions of 16K instructions) is the largest to compile:
    // on a fresh H200 machine the quick run's front end spent 5.2 s compiling, most of it
    // that kernel, and the test is no headline figure. Asked for explicitly, it runs.
    if (!kv.count("partitions")) o.partitions = false;
  }
  return o;
}

std::vector<int> icache_sweep_sizes(const FrontendOptions& opt, const std::string& language) {
  const int max_n = icache_max_instructions(opt, language);
  return icache_sizes(std::min(opt.min_instructions, max_n), max_n, opt.points_per_doubling);
}

std::vector<IcacheKernelSpec> icache_compile_plan(const FrontendOptions& opt, FrontendKernels& k) {
  std::vector<IcacheKernelSpec> specs;
  if (opt.icache && k.supports("icache").ok)
    for (int n : icache_sweep_sizes(opt, k.language())) specs.push_back({n, 1});
  if (opt.partitions && k.supports("partitions").ok) specs.push_back({opt.region_instructions, 4});
  return specs;
}

std::vector<int> occupancy_register_caps(const FrontendOptions& opt) {
  // --quick keeps 40: ptxas gives a 32-register cap 24 registers and a 40-register cap 32, so
  // without it the threshold figure (max_regs_full) reads 24 instead of 32.
  if (opt.quick) return {32, 40, 64, 128, 255};
  return {32, 40, 48, 56, 64, 72, 80, 96, 128, 168, 255};
}

AheadWork frontend_ahead(Device& dev, const FrontendOptions& opt) {
  FrontendKernels* k = dev.kernels<FrontendKernels>();
  if (!k || !k->compiles_beside_measurements()) return {};
  std::vector<int> regs;
  if (opt.occupancy && k->supports("occupancy").ok) regs = occupancy_register_caps(opt);
  return [k, specs = icache_compile_plan(opt, *k), regs](const std::atomic<bool>& cancel) {
    k->prepare_icache(specs, &cancel);
    k->prepare_occupancy(regs, &cancel);
  };
}

// shape: the probe's parts in their order, each guarded with its own status
void run_frontend(Device& dev, const FrontendOptions& opt, Progress& progress,
                  const std::atomic<bool>& stop, FrontendProbeResult& out) {
  const auto t0 = Clock::now();
  auto wall = [&] { out.wall_seconds = seconds_since(t0); };
  FrontendKernels* k = dev.kernels<FrontendKernels>();
  if (!k) {
    out.status = {StatusCode::unsupported,
                  "the " + dev.info().backend + " backend has no frontend kernels"};
    return;
  }
  const DeviceInfo& info = dev.info();
  out.language = k->language();
  out.sms = info.compute_units;
  if (out.language == "opencl") {
    std::string lname = info.name + " " + info.vendor + " " + info.toolkit_version;
    std::transform(lname.begin(), lname.end(), lname.begin(), ::tolower);
    if (lname.find("pocl") != std::string::npos || lname.find("cpu") != std::string::npos)
      out.note =
          "OpenCL on a CPU (PoCL): these are the CPU's figures (its instruction caches "
          "and the runtime's enqueue cost), not a GPU's";
  }
  if (out.language == "vulkan") {
    // What a launch is on Vulkan, where there is no launch call.
    out.note =
        "Vulkan: a launch is one vkQueueSubmit of a command buffer recorded ahead with one "
        "empty vkCmdDispatch (host clock: the submit call, and the submit until the fence "
        "signalled; GPU: the dispatch between timestamps); the plain rate is many such "
        "dispatches in one command buffer, each after a barrier on the one before, recorded "
        "and submitted once (host clock from recording to the fence; GPU: first to last "
        "start by timestamps)";
    std::string lname = info.name;
    std::transform(lname.begin(), lname.end(), lname.begin(), ::tolower);
    if (lname.find("llvmpipe") != std::string::npos)
      out.note += ". lavapipe runs on the CPU: these are its figures, not a GPU's";
  }
  const std::vector<int> sizes = icache_sweep_sizes(opt, out.language);
  IcacheRunner runner(*k, info, opt.repeats);

  // Compile ahead, in parallel where the backend can (or already, since the run began: the
  // probe's AheadWork).
  const bool do_icache = opt.icache && k->supports("icache").ok;
  const bool do_parts = opt.partitions && k->supports("partitions").ok;
  {
    const std::vector<IcacheKernelSpec> specs = icache_compile_plan(opt, *k);
    if (!specs.empty()) {
      progress.note("frontend: compiling " + std::to_string(specs.size()) +
                    " instruction-cache kernels (" + std::to_string(sizes.front()) + ".." +
                    std::to_string(sizes.back()) + " instructions)");
      const auto c0 = Clock::now();
      guarded(out.icache_status, [&] { k->prepare_icache(specs); });
      out.compile_seconds = seconds_since(c0);
    }
  }
  auto interrupted = [&] {
    if (!stop) return false;
    out.status = {StatusCode::interrupted, "stopped by the user"};
    wall();
    return true;
  };

  if (!opt.icache)
    out.icache_status = {StatusCode::skipped, "frontend.icache=0"};
  else if (!do_icache)
    out.icache_status = {StatusCode::unsupported, k->supports("icache").reason};
  else if (out.icache_status.ok())
    icache_part(*k, opt, sizes, progress, stop, runner, out);
  wall();
  if (interrupted()) return;

  if (!opt.partitions)
    out.partitions_status = {
        StatusCode::skipped,
        opt.quick ? "off with quick (frontend.partitions=1 runs it)" : "frontend.partitions=0"};
  else if (!do_parts)
    out.partitions_status = {StatusCode::unsupported, k->supports("partitions").reason};
  else
    partitions_part(*k, opt, progress, stop, runner, out);
  // OpenCL on a device whose machine code is not read (no ptxas, not NVIDIA): the op as written.
  if (out.language == "opencl" && out.timed_instruction.empty() && (do_icache || do_parts))
    out.timed_instruction = "fma (OpenCL C; machine code not read)";
  if (runner.clock()) {
    out.clock_mhz = runner.clock();
    out.clock_source = "measured";
  } else if (runner.reported() && info.clock_mhz_reported) {
    out.clock_mhz = info.clock_mhz_reported;
    out.clock_source = "reported";
  }
  wall();
  if (interrupted()) return;

  if (opt.launch)
    launch_part(*k, opt, progress, stop, out);
  else
    out.launch_status = {StatusCode::skipped, "frontend.launch=0"};
  wall();
  if (interrupted()) return;

  if (opt.dispatch)
    dispatch_part(*k, opt, progress, out);
  else
    out.dispatch_status = {StatusCode::skipped, "frontend.dispatch=0"};
  wall();
  if (interrupted()) return;

  if (opt.refill)
    refill_part(*k, opt, progress, out);
  else
    out.refill_status = {StatusCode::skipped, "frontend.refill=0"};
  wall();
  if (interrupted()) return;

  if (opt.occupancy)
    occupancy_part(*k, info, opt, progress, stop, out);
  else
    out.occupancy_status = {StatusCode::skipped, "frontend.occupancy=0"};
  wall();
  if (interrupted()) return;

  // The probe fails loudly when a part that ran failed (the CLI exits 1 with the reason).
  for (const Status* s : {&out.icache_status, &out.partitions_status, &out.launch_status,
                          &out.dispatch_status, &out.refill_status, &out.occupancy_status})
    if (s->code == StatusCode::error) {
      out.status = {StatusCode::error, s->reason};
      break;
    }
  for (const auto& p : out.icache)
    if (out.status.ok() && p.status.code == StatusCode::error)
      out.status = {StatusCode::error, "instruction cache at " + std::to_string(p.instructions) +
                                           " instructions: " + p.status.reason};
  for (const auto& p : out.partitions)
    if (out.status.ok() && p.status.code == StatusCode::error)
      out.status = {StatusCode::error,
                    "partition test, " + std::to_string(p.warps) + " warps: " + p.status.reason};
  wall();
  progress.finish();
  if (out.status.code == StatusCode::error) throw BackendError("frontend: " + out.status.reason);
}

}  // namespace gd
