#include "atomics/run.hpp"

#include <algorithm>
#include <chrono>
#include <stdexcept>

#include "gpudissect/clock_ramp.hpp"
#include "gpudissect/options.hpp"
#include "gpudissect/probe.hpp"  // ProbeError
#include "gpudissect/stats.hpp"
#include "gpudissect/stopwatch.hpp"
#include "gpudissect/units.hpp"

namespace gd {

namespace {

using Clock = std::chrono::steady_clock;

ThroughputRequest req(AtomicSpace s, AtomicOp o, AtomicType t, Contention c, bool ret = true,
                      int ways = 1, AtomicScope scope = AtomicScope::gpu) {
  ThroughputRequest r;
  r.space = s;
  r.op = o;
  r.type = t;
  r.contention = c;
  r.use_return = ret;
  r.ways = ways;
  r.scope = scope;
  return r;
}

// Records a backend failure in `status` and stops the probe with the figure named.
[[noreturn]] void fail(Status& status, const std::string& what, const std::exception& e) {
  status = {StatusCode::error, e.what()};
  throw ProbeError("atomics probe, " + what + ": " + e.what());
}

// A note when the SASS shows the compiler did something other than one atomic per thread.
std::string sass_note(const std::optional<std::string>& instr) {
  if (!instr) return {};
  if (instr->find("CAST.SPIN") != std::string::npos)
    return "no native instruction: the SASS is a compare-and-swap loop (" + *instr +
           "); each thread-level operation is counted once";
  if (instr->find("REDUX") != std::string::npos || instr->find("POPC") != std::string::npos)
    return "the SASS folds a warp's atomics into one (" + *instr +
           "); the figure counts the thread-level atomics the program asked for";
  return {};
}

struct Ctx {
  Device& dev;
  AtomicsKernels& k;
  const AtomicsOptions& opt;
  Progress& progress;
  const std::atomic<bool>& stop;
  AtomicsProbeResult& out;
  std::vector<double> clocks = {};
};

// A figure measured far below the highest clock the backend saw (Vulkan) says so in its note,
// and the run's progress says it at once (the terminal shows no hand-over latency's note).
void add_low_clock_note(Ctx& c, const std::string& name, std::string& note, double mhz,
                        double peak_mhz) {
  const std::string n = low_clock_note(mhz, peak_mhz);
  if (n.empty()) return;
  note += (note.empty() ? "" : "; ") + n;
  c.progress.note("atomics " + name + ": " + n);
}

// shape: the ping-pong kinds in order, each planned, timed and checked the same way
void latency_part(Ctx& c) {
  const auto& kinds = all_ping_pongs();
  int n = 0;
  for (PingPong kind : kinds) {
    if (c.stop) return;
    const std::string name = to_string(kind);
    c.progress.step("atomics", "latency", ++n, int(kinds.size()), name);
    AtomicLatency& l = c.out.latency[name];
    const Support s = c.k.supports(kind);
    if (!s.ok) {
      l.status = {StatusCode::unsupported, s.reason};
      c.progress.note("atomics " + name + ": unsupported (" + s.reason + ")");
      continue;
    }
    const bool global = kind == PingPong::global_cas || kind == PingPong::global_exch ||
                        kind == PingPong::global_release_acquire;
    PingPongRequest r;
    r.kind = kind;
    r.round_trips = c.opt.round_trips;
    r.repeats = c.opt.repeats;
    if (global && c.opt.locations > 1) {
      // Every repeat visits every flag location: fewer round trips each (1/8 of the option).
      r.locations = c.opt.locations;
      r.round_trips = std::max<uint32_t>(c.opt.round_trips / 8, 32);
    }
    // The host round trip crosses the bus twice: far fewer fit in the same time. It is bound
    // by the host (wake-up, scheduling, the bus), so it takes more repeats for its median.
    if (kind == PingPong::host) {
      r.round_trips = std::max<uint32_t>(c.opt.round_trips / 8, 16);
      r.repeats = std::min(std::max(c.opt.repeats * 3, 15), 64);
    }
    l.round_trips = r.round_trips;
    l.instruction = c.k.instruction("pingpong." + name);
    PingPongTiming t;
    try {
      t = c.k.ping_pong(r);
    } catch (const AllocationFailed& e) {
      l.status = {StatusCode::skipped, e.what()};
      continue;
    } catch (const std::exception& e) {
      fail(l.status, name, e);
    }
    if (t.sm_a >= 0) l.sm_a = t.sm_a;
    if (t.sm_b >= 0) l.sm_b = t.sm_b;
    const std::string err = pingpong_check(t.outcome, t.total_round_trips);
    if (!err.empty()) {
      l.status = {StatusCode::error, err};
      c.progress.note("atomics " + name + ": " + err);
      continue;
    }
    const auto ns = summarize_placed(t.ns_by_location.empty()
                                         ? std::vector<std::vector<double>>{t.ns_per_handoff}
                                         : t.ns_by_location);
    if (!ns) {
      l.status = {StatusCode::error, "no timings"};
      continue;
    }
    l.ns = ns->summary;
    l.placement_ns = ns->spread;
    const auto cycles = summarize_placed(
        t.cycles_by_location.empty() ? std::vector<std::vector<double>>{t.cycles_per_handoff}
                                     : t.cycles_by_location);
    if (cycles) {
      l.cycles = cycles->summary;
      l.placement_cycles = cycles->spread;
    }
    l.locations = ns->spread ? int(ns->spread->values.size()) : 1;
    l.clock_mhz = t.clock_mhz;
    if (t.clock_mhz) c.clocks.push_back(*t.clock_mhz);
    if (global)
      l.note = l.locations > 1
                   ? "players on two SMs; mean over " + std::to_string(l.locations) +
                         " flag locations (the flag's L2 slice, set by the address hash, sets "
                         "the distance)"
                   : "players on two SMs; the flag's L2 slice (set by the address hash) sets "
                     "the distance";
    if (kind == PingPong::host)
      l.note =
          "host-bound: the bus round trip plus the host thread's wake-up and scheduling; "
          "expect ~10 % between runs, as launch latencies";
    if (t.clock_mhz && t.clock_peak_mhz)
      add_low_clock_note(c, name, l.note, *t.clock_mhz, *t.clock_peak_mhz);
  }
}

void matrix_part(Ctx& c) {
  if (c.stop) return;
  SmMatrix& m = c.out.matrix.emplace();
  const Support s = c.k.supports_matrix();
  if (!s.ok) {
    m.status = {StatusCode::unsupported, s.reason};
    c.progress.note("atomics matrix: unsupported (" + s.reason + ")");
    return;
  }
  MatrixRequest r;
  const int all = c.dev.info().compute_units;
  int sms = c.opt.matrix_max_sms > 0 ? std::min(c.opt.matrix_max_sms, all) : all;
  // Not fewer SMs with quick: the matrix of every SM takes tens of milliseconds, and the minimum
  // over a subset of the SMs is another figure (higher), which a gate against a full run flags.
  r.sms = sms;
  r.round_trips = c.opt.matrix_round_trips;
  c.progress.step("atomics", "matrix", 1, 1,
                  std::to_string(sms) + " SMs, " + std::to_string(sms * (sms - 1) / 2) + " pairs");
  // Each pair hands over through one flag line, whose L2 slice (an address hash) sets most of
  // its latency: with one flag placement the matrix shows the tournament's rounds
  // (anti-diagonals) rather than the SMs. So the whole matrix is measured with the flags in
  // several places and each pair's cells averaged: what remains depends on the two SMs.
  const std::optional<std::string> instr = c.k.instruction("matrix");
  std::vector<SmMatrix> placed;
  const int placements = std::max(1, c.opt.placements);
  for (int k = 0; k < placements && !c.stop; ++k) {
    r.placement = k;
    MatrixTiming t;
    try {
      t = c.k.sm_matrix(r);
    } catch (const AllocationFailed& e) {
      m.status = {StatusCode::skipped, e.what()};
      return;
    } catch (const std::exception& e) {
      fail(m.status, "SM-to-SM matrix", e);
    }
    placed.push_back(assemble_matrix(t, c.k.has_clock()));
    if (t.clock_mhz) c.clocks.push_back(*t.clock_mhz);
    if (!placed.back().status.ok()) break;
  }
  if (placed.empty()) {
    m.status = {StatusCode::interrupted, "stopped before the matrix"};
    return;
  }
  m = average_placements(placed);
  m.instruction = instr;
  if (!m.status.ok()) c.progress.note("atomics matrix: " + m.status.reason);
}

// A backend that reads its code once built (Vulkan's pipeline cache, disassembled beside
// the timed launches) answers after the measurements: asked between them, it would wait
// for its disassembler with the GPU idle. A changed listing brings its own SASS note.
void listings_after(Ctx& c) {
  for (auto& [name, l] : c.out.latency)
    if (auto i = c.k.instruction("pingpong." + name)) l.instruction = i;
  for (auto& [key, f] : c.out.throughput) {
    const auto i = c.k.instruction(key);
    if (!i || i == f.instruction) continue;
    const std::string before = sass_note(f.instruction), now = sass_note(i);
    std::string rest = f.note;
    if (!before.empty() && rest.rfind(before, 0) == 0)
      rest = rest.substr(std::min(rest.size(), before.size() + 2));  // "<before>; ..."
    f.instruction = i;
    f.note = now.empty() ? rest : rest.empty() ? now : now + "; " + rest;
  }
}

// shape: the throughput plan in order: warm-up, then each request timed and checked
void throughput_part(Ctx& c) {
  const std::vector<ThroughputRequest> plan = atomics_throughput_plan(c.opt);
  const int sm_count = c.dev.info().compute_units;
  int n = 0;
  bool warmed = false;
  for (ThroughputRequest r : plan) {
    if (c.stop) return;
    const std::string key = r.key();
    c.progress.step("atomics", "throughput", ++n, int(plan.size()), key);
    AtomicThroughput& f = c.out.throughput[key];
    f.space = to_string(r.space);
    f.op = to_string(r.op);
    f.type = to_string(r.type);
    f.contention = to_string(r.contention);
    f.scope = to_string(r.scope);
    f.ways = r.ways;
    f.use_return = r.use_return;
    const Support s = c.k.supports(r);
    if (!s.ok) {
      f.status = {StatusCode::unsupported, s.reason};
      continue;
    }
    r.repeats = c.opt.repeats;
    if (r.space == AtomicSpace::global) r.placements = std::max(c.opt.placements, 1);
    if (r.space == AtomicSpace::global && !warmed) {
      // Without a warm-up the global figures move together by ~3.5 % with what ran before
      // (a full run, where atomics follow the compute probe's load, against a standalone
      // `run atomics`), while repeats inside one process agree within 0.5 %: a memory-side
      // clock or power state that a short pattern (a few ms) does not ramp
      // (results/NOTES-atomics.md). Keep the L2 busy for ~0.3 s (at least one launch set)
      // before the first timed global pattern; results unused.
      warmed = true;
      const auto w0 = std::chrono::steady_clock::now();
      try {
        do c.k.throughput(r);
        while (std::chrono::duration<double>(std::chrono::steady_clock::now() - w0).count() < 0.3 &&
               !c.stop);
      } catch (const std::exception&) {
        // the timed call below reports what is wrong
      }
    }
    f.instruction = c.k.instruction(key);
    f.note = sass_note(f.instruction);
    ThroughputTiming t;
    try {
      t = c.k.throughput(r);
    } catch (const AllocationFailed& e) {
      f.status = {StatusCode::skipped, e.what()};
      continue;
    } catch (const std::exception& e) {
      fail(f.status, key, e);
    }
    f.ops_per_launch = t.layout.ops();
    f.sms = t.sms > 0 ? t.sms : sm_count;
    if (!t.check_error.empty()) {
      f.status = {StatusCode::error, t.check_error};
      c.progress.note("atomics " + key + ": " + t.check_error);
      continue;
    }
    const std::vector<std::vector<double>> by = t.seconds_by_placement.empty()
                                                    ? std::vector<std::vector<double>>{t.seconds}
                                                    : t.seconds_by_placement;
    std::vector<std::vector<double>> gops(by.size());
    for (std::size_t p = 0; p < by.size(); ++p)
      for (double sec : by[p])
        if (sec > 0) gops[p].push_back(double(f.ops_per_launch) / sec / 1e9);
    const auto placed = summarize_placed(gops);
    if (!placed || f.ops_per_launch == 0) {
      f.status = {StatusCode::error, "no timings"};
      continue;
    }
    f.gops = placed->summary;
    f.placement_gops = placed->spread;
    f.placements = placed->spread ? int(placed->spread->values.size()) : 1;
    if (!t.clock_mhz.empty() && t.clock_peak_mhz)
      add_low_clock_note(c, key, f.note, median(t.clock_mhz), *t.clock_peak_mhz);
    if (!t.clock_mhz.empty() && f.sms > 0) {
      f.clock_mhz = median(t.clock_mhz);
      c.clocks.push_back(*f.clock_mhz);
      // The same figure in operations per clock per SM.
      const double scale = 1e9 / (*f.clock_mhz * 1e6) / f.sms;
      Summary per = *f.gops;
      for (double* v : {&per.median, &per.q1, &per.q3, &per.min, &per.max}) *v *= scale;
      f.ops_per_clk_sm = per;
    }
  }
}

}  // namespace

AtomicsOptions parse_atomics_options(const std::map<std::string, std::string>& kv) {
  const char* kName = "atomics";
  AtomicsOptions o;
  for (const auto& [k, v] : kv) {
    if (k == "quick")
      o.quick = options::flag(kName, k, v);
    else if (k == "repeats")
      o.repeats = options::integer(kName, k, v, 1, 50);
    else if (k == "round_trips")
      o.round_trips = uint32_t(options::integer(kName, k, v, 16, 1000000));
    else if (k == "matrix")
      o.matrix = options::flag(kName, k, v);
    else if (k == "matrix_max_sms")
      o.matrix_max_sms = options::integer(kName, k, v, 0, 100000);
    else if (k == "matrix_round_trips")
      o.matrix_round_trips = uint32_t(options::integer(kName, k, v, 4, 100000));
    else if (k == "locations")
      o.locations = options::integer(kName, k, v, 1, 64);
    else if (k == "placements")
      o.placements = options::integer(kName, k, v, 1, 16);
    else if (k == "parts") {
      o.parts.clear();
      for (const std::string& part : options::list(v)) {
        if (part != "latency" && part != "throughput" && part != "matrix")
          throw std::invalid_argument("atomics option 'parts': unknown part '" + part +
                                      "' (latency, throughput, matrix)");
        o.parts.insert(part);
      }
      // Naming the matrix among the parts asks for it; leaving it out leaves it out.
      o.matrix = o.parts.erase("matrix") > 0;
    } else {
      options::unknown_key(kName, k, atomics_option_specs());
    }
  }
  if (o.quick && !kv.count("repeats")) o.repeats = 3;
  // Not fewer round trips, flag locations or target placements with quick: each figure is a
  // mean over the locations or placements, where the flag or target lands moves it by 5-15 %,
  // so a quick mean over half as many was another figure, and a quick run gated against a
  // full one fired on it (ping-pong +6-14 %, CAS -7.5 % on an H200). All of them together
  // cost tens of milliseconds.
  return o;
}

std::vector<OptionSpec> atomics_option_specs() {
  return {
      {"quick", "0", "fewer throughput figures, 3 repeats"},
      {"repeats", "5", "timed repeats (launches) per figure"},
      {"round_trips", "2000", "ping-pong round trips per timed repeat (host: 1/8 of it)"},
      {"matrix", "1", "measure the SM-to-SM latency matrix (every pair of SMs)"},
      {"matrix_max_sms", "", "SMs 0..N-1 in the matrix (default: every SM)"},
      {"matrix_round_trips", "64", "round trips per timed segment of a matrix pair (4 segments)"},
      {"locations", "16",
       "global ping-pongs: flag locations, 1/8 of round_trips each; the figure is their mean"},
      {"placements", "16",
       "global throughput: placements of the target; the figure is the mean over them"},
      {"parts", "latency,throughput,matrix", "parts to run, comma separated"},
  };
}

std::vector<ThroughputRequest> atomics_throughput_plan(const AtomicsOptions& opt) {
  using S = AtomicSpace;
  using O = AtomicOp;
  using T = AtomicType;
  using C = Contention;
  std::vector<ThroughputRequest> p;
  // Shared memory: the SM's own atomic units, by bank pattern and address sharing.
  p.push_back(req(S::shared, O::add, T::i32, C::distinct));
  if (!opt.quick)
    for (int ways : {2, 4, 8, 16})
      p.push_back(req(S::shared, O::add, T::i32, C::bank_conflict, true, ways));
  p.push_back(req(S::shared, O::add, T::i32, C::bank_conflict, true, 32));
  p.push_back(req(S::shared, O::add, T::i32, C::same_per_warp));
  if (!opt.quick) {
    p.push_back(req(S::shared, O::add, T::i32, C::same_per_block));
    p.push_back(req(S::shared, O::add, T::i32, C::distinct, false));
    p.push_back(req(S::shared, O::add, T::f32, C::distinct));
  }
  p.push_back(req(S::shared, O::cas, T::i32, C::distinct));
  // Global memory: the L2's atomic units, by type, sharing, result use and scope.
  for (C c : {C::distinct, C::same_per_warp, C::same_per_block, C::same_gpu}) {
    if (opt.quick && c == C::same_per_block) continue;
    p.push_back(req(S::global, O::add, T::i32, c, true));
    p.push_back(req(S::global, O::add, T::i32, c, false));
  }
  if (!opt.quick) {
    p.push_back(req(S::global, O::add, T::i32, C::distinct, true, 1, AtomicScope::cta));
    p.push_back(req(S::global, O::add, T::i32, C::distinct, true, 1, AtomicScope::sys));
    p.push_back(req(S::global, O::add, T::u64, C::distinct, true));
    p.push_back(req(S::global, O::add, T::u64, C::distinct, false));
    p.push_back(req(S::global, O::add, T::f32, C::distinct, true));
    p.push_back(req(S::global, O::add, T::f32, C::distinct, false));
    p.push_back(req(S::global, O::add, T::f64, C::distinct, true));
    p.push_back(req(S::global, O::add, T::f16x2, C::distinct, true));
    p.push_back(req(S::global, O::add, T::bf16x2, C::distinct, true));
    p.push_back(req(S::global, O::min, T::i32, C::distinct, true));
    p.push_back(req(S::global, O::max, T::i32, C::distinct, true));
    p.push_back(req(S::global, O::max, T::i32, C::same_per_warp, true));
    p.push_back(req(S::global, O::cas, T::i32, C::same_per_warp, true));
  }
  p.push_back(req(S::global, O::add, T::f32, C::same_per_warp, true));
  p.push_back(req(S::global, O::cas, T::i32, C::distinct, true));
  return p;
}

void run_atomics(Device& dev, const AtomicsOptions& opt, Progress& progress,
                 const std::atomic<bool>& stop, AtomicsProbeResult& out) {
  const auto t0 = Clock::now();
  const DeviceInfo& info = dev.info();
  out.status = {};
  AtomicsKernels* k = dev.kernels<AtomicsKernels>();
  if (!k) {
    out.status = {StatusCode::unsupported,
                  "the " + info.backend + " backend has no atomics kernels"};
    progress.note("atomics: " + out.status.reason);
    return;
  }
  Ctx c{dev, *k, opt, progress, stop, out};
  auto finish = [&] {
    if (!c.clocks.empty()) out.clock_mhz_measured = median(c.clocks);
    out.wall_seconds = seconds_since(t0);
    dev.release_memory();
  };
  try {
    if (opt.parts.count("latency")) latency_part(c);
    if (opt.matrix) matrix_part(c);
    if (opt.parts.count("throughput")) throughput_part(c);
    listings_after(c);
  } catch (const ProbeError& e) {
    out.status = {StatusCode::error, e.what()};
    finish();
    throw;
  }
  if (stop) {
    out.status = {StatusCode::interrupted, "stopped by the user; what was measured is kept"};
  } else {
    // A failed exact check is a measurement failure: the probe says so (the other figures
    // stand).
    int failed = 0;
    std::string first;
    auto look = [&](const std::string& name, const Status& s) {
      if (s.code == StatusCode::error && failed++ == 0) first = name + ": " + s.reason;
    };
    for (const auto& [n, l] : out.latency) look(n, l.status);
    for (const auto& [n, t] : out.throughput) look(n, t.status);
    if (out.matrix) look("matrix", out.matrix->status);
    if (failed)
      out.status = {StatusCode::error, first + (failed > 1 ? " (and " + std::to_string(failed - 1) +
                                                                 " more figures failed)"
                                                           : "")};
  }
  finish();
}

}  // namespace gd
