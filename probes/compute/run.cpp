#include "compute/run.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <sstream>
#include <stdexcept>
#include <utility>

#include "compute/compute.hpp"
#include "gpudissect/clock_ramp.hpp"
#include "gpudissect/sass.hpp"
#include "gpudissect/stats.hpp"
#include "gpudissect/units.hpp"

namespace gd {

namespace {

using Clock = std::chrono::steady_clock;

bool truthy(const std::string& k, const std::string& v) {
  if (v == "1" || v == "true" || v == "yes" || v == "on") return true;
  if (v == "0" || v == "false" || v == "no" || v == "off") return false;
  throw std::invalid_argument("compute." + k + ": expected 0 or 1, got '" + v + "'");
}

double number(const std::string& k, const std::string& v, double lo, double hi) {
  std::size_t pos = 0;
  double d = 0;
  try {
    d = std::stod(v, &pos);
  } catch (const std::exception&) {
    pos = 0;
  }
  if (pos != v.size() || v.empty() || !(d >= lo && d <= hi))
    throw std::invalid_argument("compute." + k + ": expected a number in [" + std::to_string(lo) +
                                ", " + std::to_string(hi) + "], got '" + v + "'");
  return d;
}

bool selected(const ComputeOptions& o, const ComputeOp& op) {
  if (o.ops.empty()) return true;
  for (const auto& s : o.ops)
    if (op.name == s || op.klass == s || op.name.rfind(s + ".", 0) == 0) return true;
  return false;
}

class Runner {
 public:
  Runner(Device& dev, ComputeKernels& k, const ComputeOptions& opt)
      : dev_(dev), k_(k), opt_(opt), info_(dev.info()) {}

  // Calibrates the iteration count to `target_ms`, then times `repeats` launches.
  // Fills the throughput (or latency) figures of f.
  // shape: calibration, timed repeats and the figure's fields for one op, in the order they run
  void measure(ComputeFigure& f, ComputeLaunch l, double target_ms, bool latency_figure) {
    const ComputeOp& a = *find_compute_op(l.op);
    const ComputeOp* b = l.mix.empty() ? nullptr : find_compute_op(l.mix);
    // The backend's floor (Vulkan on a GPU: launches of 2 ms with host work between them left
    // an H200 at its idle clock); 0 elsewhere.
    target_ms = std::max(target_ms, k_.min_launch_ms());
    l.iters = 4;
    ComputeTiming t = k_.run(l);
    for (int guard = 0; guard < 4 && t.span_ns < target_ms * 1e6 / 20; ++guard) {
      l.iters *= t.span_ns > 0 ? std::clamp<uint64_t>(
                                     static_cast<uint64_t>(target_ms * 1e6 / 4 / t.span_ns), 2, 64)
                               : 16;
      t = k_.run(l);
    }
    if (t.span_ns > 0)
      l.iters = std::max<uint64_t>(
          1, static_cast<uint64_t>(static_cast<double>(l.iters) * target_ms * 1e6 / t.span_ns));
    // A launch's fixed cost makes the span less than proportional to the iterations (40 us a
    // dispatch on lavapipe: 4 and 39 iterations of a chain took the same time), so the
    // estimate above can fall short: rescale from the estimate's own span until it is at
    // least half the target. Where the span is proportional (CUDA, a few us per launch
    // against ms) the first check passes and nothing more runs.
    // The launch that passes that check ran at the final count: it is the first repeat (on
    // Vulkan, where a launch takes at least 10 ms, it was one of four full-length launches).
    bool first_timed = false;
    for (int guard = 0; guard < 3; ++guard) {
      t = k_.run(l);
      first_timed = t.span_ns > 0 && t.span_ns >= target_ms * 1e6 / 2;
      if (!(t.span_ns > 0) || first_timed) break;
      l.iters = std::max<uint64_t>(
          l.iters + 1, static_cast<uint64_t>(static_cast<double>(l.iters) *
                                             std::min(64.0, target_ms * 1e6 / t.span_ns)));
    }
    std::vector<double> per_clk, mix_per_clk, per_s, lat, lat_ns, mhz;
    // What the stopping rule watches: the per-clock figure, or where no clock is known at
    // all (Vulkan on lavapipe) the rate per second or the latency in ns.
    std::vector<double> watched;
    StoppingRule rule{static_cast<std::size_t>(opt_.repeats),
                      static_cast<std::size_t>(opt_.repeats) + 4, 0.01};
    std::string bad;
    bool clockless = false;
    double peak = 0;  // the highest clock the backend saw, where it says (Vulkan)
    while (!rule.done(watched)) {
      if (!std::exchange(first_timed, false)) t = k_.run(l);
      if (!t.check_ok) bad = t.check;
      const double clk = t.clock_mhz ? *t.clock_mhz : info_.clock_mhz_reported.value_or(0);
      if (t.clock_mhz) mhz.push_back(*t.clock_mhz);
      if (t.clock_peak_mhz) peak = std::max(peak, *t.clock_peak_mhz);
      // No clock: per-clock figures are unknown, not 0; ops/s and ns stand alone.
      clockless = !(clk > 0);
      const double cycles = t.span_ns * clk / 1000.0;
      const uint64_t per_thread =
          t.ops_per_thread ? t.ops_per_thread : ops_per_thread(a, l.ilp, l.iters, b ? &a : nullptr);
      const double ops_a = static_cast<double>(per_thread) * static_cast<double>(t.threads);
      if (latency_figure) {
        // One block: the loop's own cycles over the dependent steps of one chain.
        const double steps = static_cast<double>(t.ops_per_thread ? t.ops_per_thread
                                                                  : ops_per_thread(a, 1, l.iters));
        if (clockless) {
          lat_ns.push_back(t.span_ns / steps);
          watched.push_back(t.span_ns / steps);
          continue;
        }
        // The kernel's own cycles where it counted them (CUDA), else the span at the clock
        // seen (Vulkan: a clock read after the launch, one workgroup).
        const double c = t.clock_mhz && t.cycles_per_block > 0 ? t.cycles_per_block : cycles;
        lat.push_back(c / steps);
        per_clk.push_back(c / steps);
        watched.push_back(c / steps);
        continue;
      }
      // Per clock per SM: over the SMs' own cycles where the kernel recorded its per-SM
      // windows (CUDA), else over the span at the clock seen. The span x median clock form
      // put FP32 max (FMNMX) at 64.3/clk/SM = 100.4% of 64 on the H200: that launch's clock
      // reading (1965 MHz, every other kernel 1976-1980) was below what its wall-clock rate
      // needs (1974 MHz at 64/clk/SM); a standalone FMNMX loop saw 1980 MHz and 63.8/clk/SM.
      const double sm_cycles = t.sm_cycles > 0 ? t.sm_cycles : t.sms * cycles;
      if (!clockless) per_clk.push_back(sm_cycles > 0 ? ops_a / sm_cycles : 0);
      per_s.push_back(t.span_ns > 0 ? ops_a / (t.span_ns * 1e-9) : 0);
      watched.push_back(clockless ? per_s.back() : per_clk.back());
      if (b && !clockless) {
        const double ops_b = static_cast<double>(ops_per_thread(*b, l.ilp, l.iters, &a)) *
                             static_cast<double>(t.threads);
        mix_per_clk.push_back(sm_cycles > 0 ? ops_b / sm_cycles : 0);
      }
      f.warps_per_sm = t.warps_per_sm;
    }
    if (!t.note.empty() && f.note.find(t.note) == std::string::npos)
      f.note += (f.note.empty() ? "" : "; ") + t.note;
    if (!mhz.empty()) {
      f.clock_mhz = median(mhz);
      f.clock_source = "measured";
      // Far below the highest clock seen: say so, never a silently slow figure.
      if (const std::string n = low_clock_note(*f.clock_mhz, peak); !n.empty())
        f.note += (f.note.empty() ? "" : "; ") + n;
      if (!t.clock_note.empty()) f.note += (f.note.empty() ? "" : "; ") + t.clock_note;
    } else if (info_.clock_mhz_reported) {
      // No clock in the kernel (OpenCL): per-clock figures rest on the driver's figure.
      f.clock_mhz = *info_.clock_mhz_reported;
      f.clock_source = "reported";
    } else if (clockless) {
      f.clock_source = "none";
    }
    if (latency_figure) {
      if (!lat.empty()) f.latency_cycles = summarize(lat);
      if (!lat_ns.empty()) f.latency_ns = summarize(lat_ns);
    } else {
      if (!per_clk.empty()) f.ops_per_clk_sm = summarize(per_clk);
      f.ops_per_s = summarize(per_s);
      if (b && !mix_per_clk.empty()) f.mix_ops_per_clk_sm = summarize(mix_per_clk);
    }
    if (!bad.empty()) {
      f.status = {StatusCode::error, "host check failed: " + bad};
    }
  }

  // Opcodes of the timed loop and how many intended instructions each counted op is.
  void read_sass(ComputeFigure& f, const ComputeLaunch& l) {
    const LoopSass s = k_.sass(l);
    if (!s.read) return;
    const ComputeOp& a = *find_compute_op(l.op);
    f.opcodes = top_opcodes(s.opcodes, 6);
    const auto [n, expected] = intended_sass(s, a, l);
    judge_loop_sass(f, a, s, n, expected);
    if (expected > 0) f.sass_per_op = static_cast<double>(n) / expected;
  }

 private:
  Device& dev_;
  ComputeKernels& k_;
  const ComputeOptions& opt_;
  DeviceInfo info_;
};

ComputeFigure blank(const ComputeOp& op) {
  ComputeFigure f;
  f.op = op.name;
  f.label = op.label;
  f.klass = op.klass;
  f.flops_per_op = op.flops_per_op;
  f.peak_per_clk_sm = op.peak_per_clk_sm;
  return f;
}

const std::vector<std::string> kQuick = {"fp32.fma",  "fp64.fma",      "fp16x2.fma", "int32.mad",
                                         "sfu.rsqrt", "warp.shfl_idx", "mma.bf16",   "wgmma.bf16"};
const std::vector<std::pair<std::string, std::string>> kPairs = {{"fp32.fma", "int32.mad"},
                                                                 {"fp32.fma", "sfu.ex2"},
                                                                 {"fp32.fma", "fp16x2.fma"},
                                                                 {"fp32.fma", "lds.chase"},
                                                                 {"fp32.fma", "fp64.fma"}};
// FP64 fma in both forms: whether the register-only form's 92% depends on occupancy or ILP
// (a bank conflict does not; latency hiding would).
const std::vector<std::string> kSweepOps = {"fp32.fma", "fp16x2.fma", "int32.mad",
                                            "sfu.ex2",  "fp64.fma",   "fp64.fma_rrr"};
const std::vector<int> kSweepIlp = {1, 2, 4, 8};
const std::vector<int> kSweepWarps = {1, 2, 4, 8, 16, 32, 48, 64};

}  // namespace

ComputeOptions parse_compute_options(const std::map<std::string, std::string>& kv) {
  ComputeOptions o;
  for (const auto& [k, v] : kv) {
    if (k == "quick")
      o.quick = truthy(k, v);
    else if (k == "sweep")
      o.sweep = truthy(k, v);
    else if (k == "mixed")
      o.mixed = truthy(k, v);
    else if (k == "tensor")
      o.tensor = truthy(k, v);
    else if (k == "ms")
      o.target_ms = number(k, v, 0.05, 1000);
    else if (k == "repeats")
      o.repeats = static_cast<int>(number(k, v, 1, 50));
    else if (k == "ops") {
      std::stringstream s(v);
      std::string item;
      while (std::getline(s, item, ','))
        if (!item.empty()) o.ops.push_back(item);
      if (o.ops.empty()) throw std::invalid_argument("compute.ops: empty list");
      for (const auto& n : o.ops) {
        // coopmat: the cooperative-matrix shapes a Vulkan device lists (known at run time).
        bool known = n == "coopmat" || n.rfind("coopmat.", 0) == 0;
        for (const auto& op : compute_ops())
          known = known || op.name == n || op.klass == n || op.name.rfind(n + ".", 0) == 0;
        if (!known) throw std::invalid_argument("compute.ops: unknown op or class '" + n + "'");
      }
    } else
      throw std::invalid_argument("unknown compute option '" + k + "'");
  }
  if (o.quick) {
    o.target_ms = std::min(o.target_ms, 1.0);
    o.repeats = std::min(o.repeats, 2);
  }
  return o;
}

namespace {

bool mixed_pairs_run(const ComputeOptions& opt, const std::string& language) {
  return opt.mixed && !opt.quick && opt.ops.empty() && language == "cuda";
}
bool barriers_run(const ComputeOptions& opt, const std::string& language) {
  return opt.ops.empty() && !opt.quick && language == "cuda";
}

}  // namespace

std::vector<const ComputeOp*> compute_table(const ComputeOptions& opt, const ComputeKernels* k) {
  std::vector<const ComputeOp*> table;
  auto consider = [&](const ComputeOp& op) {
    if (op.klass == "memory" || op.klass == "sync") return;
    if (op.klass == "tensor" && !opt.tensor) return;
    if (opt.quick && std::find(kQuick.begin(), kQuick.end(), op.name) == kQuick.end()) return;
    if (selected(opt, op)) table.push_back(&op);
  };
  for (const auto& op : compute_ops()) consider(op);
  if (k)
    for (const std::string& name : k->extra_ops())
      if (const ComputeOp* op = find_compute_op(name)) consider(*op);
  return table;
}

std::vector<ComputeLaunch> compute_compile_plan(const ComputeOptions& opt, ComputeKernels& k) {
  std::vector<ComputeLaunch> plan;
  for (const auto* op : compute_table(opt, &k))
    if (k.supports(*op).ok) plan.push_back({op->name, "", 8});
  if (mixed_pairs_run(opt, k.language()))
    for (const auto& [a, b] : kPairs) plan.push_back({a, b, 8});
  if (barriers_run(opt, k.language())) plan.push_back({"sync.bar", "", 1});
  if (opt.sweep)
    for (const auto& name : kSweepOps)
      if (const ComputeOp* op = find_compute_op(name); op && k.supports(*op).ok)
        for (int ilp : kSweepIlp) plan.push_back({name, "", ilp});
  return plan;
}

AheadWork compute_ahead(Device& dev, const ComputeOptions& opt) {
  ComputeKernels* k = dev.kernels<ComputeKernels>();
  if (!k || !k->compiles_beside_measurements()) return {};
  return [k, plan = compute_compile_plan(opt, *k)](const std::atomic<bool>& cancel) {
    k->prepare(plan, &cancel);
  };
}

// shape: the probe's numbered steps in order (table, ILP, occupancy, SASS), each short
void run_compute(Device& dev, const ComputeOptions& opt, Progress& progress,
                 const std::atomic<bool>& stop, ComputeProbeResult& out) {
  const auto t0 = Clock::now();
  auto wall = [&] { out.wall_seconds = std::chrono::duration<double>(Clock::now() - t0).count(); };
  ComputeKernels* k = dev.kernels<ComputeKernels>();
  if (!k) {
    out.status = {StatusCode::unsupported,
                  "the " + dev.info().backend + " backend has no compute kernels"};
    return;
  }
  out.language = k->language();
  out.sms = dev.info().compute_units;
  out.peak_source =
      "CUDA C++ Programming Guide arithmetic-instruction throughput (cc 9.0); tensor: H100 "
      "whitepaper dense peaks (2:4 sparse: twice them, dense-equivalent FLOPs; FP64 tensor: 256 "
      "flop/clk/SM)";
  Runner run(dev, *k, opt);

  // What will run, compiled ahead in parallel (or already, since the run began: the
  // probe's AheadWork).
  const std::vector<const ComputeOp*> table = compute_table(opt, k);
  if (table.empty() && !opt.ops.empty() && !opt.sweep) {
    // Only run-time rows asked for (coopmat), and the device offers none.
    out.status = {StatusCode::unsupported,
                  "no row of the table matches compute.ops on this device (coopmat: the "
                  "cooperative-matrix shapes a Vulkan device lists beyond the mma rows'; " +
                      std::string(k->extra_ops().empty() ? "it lists none)" : "none selected)")};
    wall();
    return;
  }
  const std::vector<ComputeLaunch> plan = compute_compile_plan(opt, *k);
  const bool mixed = mixed_pairs_run(opt, out.language);
  const bool sync = barriers_run(opt, out.language);
  progress.note("compute: compiling " + std::to_string(plan.size()) + " kernel sources");
  k->prepare(plan);
  wall();

  auto guarded = [&](ComputeFigure& f, auto&& fn) {
    try {
      fn();
    } catch (const AllocationFailed& e) {
      f.status = {StatusCode::skipped, e.what()};
    } catch (const std::exception& e) {
      f.status = {StatusCode::error, e.what()};
    }
  };

  // 1. The table: throughput at ILP 8 with the SM full, latency of one dependent chain.
  int n = 0;
  std::vector<double> clocks;
  for (const auto* op : table) {
    if (stop) {
      out.status = {StatusCode::interrupted, "stopped by the user"};
      wall();
      return;
    }
    progress.step("compute", op->label, ++n, static_cast<int>(table.size()), op->name);
    ComputeFigure f = blank(*op);
    const Support s = k->supports(*op);
    if (!s.ok) {
      f.status = {StatusCode::unsupported, s.reason};
      out.table.push_back(std::move(f));
      continue;
    }
    f.ilp = op->warpgroup ? 1 : 8;
    f.instruction = k->instruction(*op);
    guarded(f, [&] {
      ComputeLaunch tl{op->name, "", f.ilp};
      run.read_sass(f, tl);
      run.measure(f, tl, opt.target_ms, false);
      ComputeFigure lat = f;
      ComputeLaunch ll{op->name, "", 1};
      ll.latency = true;
      run.measure(lat, ll, opt.target_ms / 4, true);
      f.latency_cycles = lat.latency_cycles;
      f.latency_ns = lat.latency_ns;
      f.note = lat.note;  // f's own, and a low clock during the latency launches
      // Per SASS instruction where ptxas fused the counted op, judged on the latency's own
      // loop (ILP 1): at ILP 8 ptxas packs two chains' scalar FP16 fma into one HFMA2, which
      // one chain cannot, and scaling by that doubled FP16 fma's latency.
      // The latency loop is another kernel (one chain): its own SASS goes with its figure
      // (ptxas may put a chain on another pipe than the table's loop: HFMA2.MMA).
      try {
        if (const LoopSass ls = k->sass(ll); ls.read) {
          f.latency_opcodes = top_opcodes(ls.opcodes, 6);
          const std::string mixed = mixed_chain_note(ls, *op, intended_sass(ls, *op, ll).second);
          if (!mixed.empty()) f.note += (f.note.empty() ? "" : "; ") + mixed;
        }
      } catch (const std::exception&) {
        // the throughput loop's reading already said why
      }
      const std::optional<double> per = latency_sass_per_op(*k, ll);
      if (f.latency_cycles && per && *per > 0 && *per < 1) {
        const double k = 1.0 / *per;
        for (double* v : {&f.latency_cycles->median, &f.latency_cycles->q1, &f.latency_cycles->q3,
                          &f.latency_cycles->min, &f.latency_cycles->max})
          *v *= k;
      }
      if (f.status.ok() && !lat.status.ok()) f.status = lat.status;
    });
    if (f.ops_per_clk_sm && f.peak_per_clk_sm && *f.peak_per_clk_sm > 0 && !f.missing_instruction) {
      // Against the documented rate of the SASS instruction: a counted op that compiled to
      // two instructions (or half of one) is scaled by what the loop holds.
      const double per_op = f.sass_per_op && *f.sass_per_op > 0 ? *f.sass_per_op : 1.0;
      f.fraction_of_peak = f.ops_per_clk_sm->median * per_op / *f.peak_per_clk_sm;
    }
    if (f.compiled_away) {
      f.fraction_of_peak.reset();
      f.ops_per_s.reset();
    }
    withhold_impossible(f);
    if (f.clock_mhz) clocks.push_back(*f.clock_mhz);
    if (!f.clock_source.empty()) out.clock_source = f.clock_source;
    out.table.push_back(std::move(f));
    wall();
  }
  if (!clocks.empty()) out.clock_mhz = median(clocks);

  // 2. Mixed issue: ILP 8 chains of each op of a pair, interleaved.
  if (mixed)
    for (const auto& [a, b] : kPairs) {
      if (stop) break;
      const ComputeOp* oa = find_compute_op(a);
      const ComputeOp* ob = find_compute_op(b);
      ComputeFigure f = blank(*oa);
      f.mix = b;
      f.label = oa->label + " + " + ob->label;
      f.klass = "mixed";
      f.ilp = 8;
      progress.step("compute", "mixed " + f.label, 1, 1, "");
      // Copied: clang 15 lets no lambda capture a structured binding.
      guarded(f, [&, a = a, b = b] {
        ComputeLaunch l{a, b, 8};
        run.read_sass(f, l);
        run.measure(f, l, opt.target_ms, false);
      });
      out.mixed.push_back(std::move(f));
      wall();
    }

  // 3. __syncthreads against block size: one block, cycles per barrier.
  if (sync)
    for (int threads : {32, 64, 128, 256, 512, 1024}) {
      if (stop) break;
      const ComputeOp* op = find_compute_op("sync.bar");
      ComputeFigure f = blank(*op);
      f.warps_per_sm = threads / 32;
      guarded(f, [&] {
        ComputeLaunch l{op->name, "", 1};
        l.latency = true;
        l.block_threads = threads;
        if (threads == 32) run.read_sass(f, l);
        run.measure(f, l, 0.3, true);
      });
      out.sync.push_back(std::move(f));
    }
  wall();

  // 4. ILP x occupancy.
  if (opt.sweep) {
    const int total = static_cast<int>(kSweepOps.size() * kSweepIlp.size() * kSweepWarps.size());
    int i = 0;
    for (const auto& name : kSweepOps) {
      const ComputeOp* op = find_compute_op(name);
      if (!op || !k->supports(*op).ok) continue;
      for (int ilp : kSweepIlp)
        for (int w : kSweepWarps) {
          if (stop) {
            out.status = {StatusCode::interrupted, "stopped by the user"};
            wall();
            return;
          }
          progress.step("compute", "sweep " + op->label, ++i, total,
                        "ILP " + std::to_string(ilp) + ", " + std::to_string(w) + " warps/SM");
          ComputeFigure f = blank(*op);
          f.ilp = ilp;
          guarded(f, [&] {
            ComputeLaunch l{name, "", ilp};
            l.warps_per_sm = w;
            run.measure(f, l, std::min(opt.target_ms, 1.0), false);
          });
          if (f.warps_per_sm == 0) f.warps_per_sm = w;
          if (f.ops_per_clk_sm && f.ops_per_clk_sm->median > 0)
            f.implied_latency = littles_law_latency(static_cast<double>(f.warps_per_sm) * ilp,
                                                    f.ops_per_clk_sm->median / 32.0);
          out.sweep.push_back(std::move(f));
        }
      wall();
    }
  }
  wall();
  progress.finish();
}

}  // namespace gd
