// The frontend probe as a registry entry: its options, its headline figures and their ids (its
// report pieces are report.cpp's). The measurement itself is probes/frontend/run.cpp.
#include <ostream>
#include <sstream>

#include "frontend/run.hpp"
#include "gpudissect/result.hpp"
#include "registry.hpp"

namespace gd {

namespace {

std::string id_part(std::string s) {
  for (auto& c : s)
    if (c == ' ' || c == '(' || c == ')') c = '_';
  return s;
}

// Each instruction-cache level's capacity and IPC, and the partition test's ratio.
void icache_figures(const FrontendProbeResult& p, std::vector<Figure>& out) {
  const std::string inst = p.timed_instruction.empty() ? "FFMA" : p.timed_instruction;
  for (const auto& l : p.icache_levels) {
    const std::string base = "frontend.icache." + id_part(l.name);
    if (l.capacity_bytes) {
      Figure f;
      f.id = base + ".capacity";
      f.label = l.name + " instruction cache capacity";
      f.unit = "bytes";
      f.value = single_value(static_cast<double>(*l.capacity_bytes));
      if (l.capacity_lo_bytes && l.capacity_hi_bytes && *l.capacity_lo_bytes > 0)
        f.resolution = double(*l.capacity_hi_bytes) / double(*l.capacity_lo_bytes) - 1;
      f.instruction = inst;
      f.where = "loop code bytes (" +
                (p.code_bytes_source.empty() ? std::string("estimated") : p.code_bytes_source) +
                ") where one warp's IPC leaves the plateau";
      f.status = p.icache_status;
      out.push_back(f);
    }
    Figure f;
    f.id = base + ".ipc";
    f.label = "one warp's instructions per clock from " + l.name;
    f.unit = "inst/clk/warp";
    f.value = single_value(l.ipc);
    f.instruction = inst;
    f.clock_mhz = p.clock_mhz;
    f.where = "plateau of the instruction-cache sweep, one warp";
    f.status = p.icache_status;
    out.push_back(f);
  }
  if (p.partition_halving) {
    Figure f;
    f.id = "frontend.icache.partition_ratio";
    f.label = "per-warp IPC, 2 partitions on different code past the L1i, over 1 warp";
    f.unit = "ratio";
    f.value = single_value(*p.partition_halving);
    f.instruction = inst;
    f.where = std::to_string(p.partition_region_instructions) + " instructions per region";
    out.push_back(f);
  }
}

// Launch latency, its parts, and the launch rate of each mode.
void launch_figures(const FrontendProbeResult& p, std::vector<Figure>& out) {
  auto us = [&](const std::string& id, const std::string& label, const std::optional<Summary>& v,
                const std::string& where) {
    if (!v) return;
    Figure f;
    f.id = id;
    f.label = label;
    f.unit = "us";
    f.value = *v;
    f.instruction = p.launch_api;
    f.where = where;
    f.higher_is_better = false;
    f.status = p.launch_status;
    out.push_back(f);
  };
  // Each figure: the median of the batches' medians (older files: of single samples).
  const std::string batches =
      p.launch_batches ? "; median of " + std::to_string(p.launch_batches) + " batches' medians"
                       : "";
  std::string sync;
  if (p.sync_uncertainty_us) {
    std::ostringstream os;
    os.precision(2);
    os << std::fixed << "; clock sync within +-" << *p.sync_uncertainty_us << " us";
    sync = os.str();
  }
  us("frontend.launch.latency", "launch latency: host call to kernel start", p.launch_start_us,
     "empty kernel, " +
         (p.launch_start_source.empty() ? std::string("host call to kernel start")
                                        : p.launch_start_source) +
         sync + batches);
  us("frontend.launch.round_trip", "launch + synchronize round trip", p.launch_round_trip_us,
     (p.launch_round_trip_empty_kernel
          ? "empty kernel (no arguments" +
                (p.launch_round_trip_api.empty() ? std::string() : ", " + p.launch_round_trip_api) +
                "), host clock"
          : std::string("empty kernel, host clock")) +
         (p.launch_wait.empty() ? std::string() : "; " + p.launch_wait) + batches);
  us("frontend.launch.api", "host time in the launch call", p.launch_api_us,
     "empty kernel, host clock" + batches);
  us("frontend.launch.completion", "kernel end to synchronize returning on the host",
     p.launch_completion_us, "round trip - start latency - kernel, per launch" + sync + batches);
  for (const auto& [mode, s] : p.rate_kernels_per_s) {
    Figure f;
    f.id = "frontend.launch.rate." + mode;
    f.label = "back-to-back launches (" + mode + ")";
    f.unit = "kernels/s";
    f.value = s;
    f.instruction = mode == "graph" ? "cudaGraphLaunch" : p.launch_api;
    f.where = "empty kernels, host clock";
    out.push_back(f);
  }
}

// The block dispatch rate and the first wave's start.
// The GPU timer's step the front-end spans are read in: the launch part's, else the smallest
// step between the dispatch records' starts.
std::optional<double> gpu_timer_step_ns(const FrontendProbeResult& p) {
  return p.timer_resolution_ns ? p.timer_resolution_ns : timer_step_ns(p.dispatch_trace);
}

void dispatch_figures(const FrontendProbeResult& p, std::vector<Figure>& out) {
  if (p.dispatch_blocks_per_us) {
    Figure f;
    f.id = "frontend.dispatch.blocks_per_us";
    f.label = "block dispatch rate";
    f.unit = "blocks/us";
    f.value = *p.dispatch_blocks_per_us;
    f.instruction = "%globaltimer at block start";
    f.where = std::to_string(p.dispatch_blocks) + " blocks of " +
              std::to_string(p.dispatch_block_threads) + " threads";
    if (p.sms > 0) {
      f.per_sm_per_clk =
          p.clock_mhz ? std::optional<double>(p.dispatch_blocks_per_us->median / *p.clock_mhz)
                      : std::nullopt;
      f.per_sm_per_clk_unit = "blocks/clk (GPU-wide)";
    }
    f.clock_mhz = p.clock_mhz;
    // Both figures are spans of GPU timer stamps, each end known to one timer step: two runs
    // of the same front end can differ by two steps (on an H200, 32 ns steps: the first wave
    // reads 32 or 64 ns, a 1.4 us span of 4224 starts 44 or 46 steps). That is the
    // measurement's resolution, which a regression gate must not read as a change.
    const std::optional<double> step_ns = gpu_timer_step_ns(p);
    const double span_us = p.dispatch_blocks > 1 && p.dispatch_blocks_per_us->median > 0
                               ? (p.dispatch_blocks - 1) / p.dispatch_blocks_per_us->median
                               : 0;
    if (step_ns && span_us > 0) f.resolution = 2 * *step_ns / 1000 / span_us;
    out.push_back(f);
    if (p.dispatch_first_wave_us) {
      Figure w;
      w.id = "frontend.dispatch.first_wave";
      w.label = "time until every SM has started a block";
      w.unit = "us";
      w.value = single_value(*p.dispatch_first_wave_us);
      w.instruction = f.instruction;
      w.where = f.where;
      w.higher_is_better = false;
      if (step_ns && *p.dispatch_first_wave_us > 0)
        w.resolution = 2 * *step_ns / 1000 / *p.dispatch_first_wave_us;
      out.push_back(w);
    }
  }
}

// Refill after the first wave: how soon a freed block slot takes the next block, and the
// rate each SM starts blocks at once its first wave is resident.
void refill_figures(const FrontendProbeResult& p, std::vector<Figure>& out) {
  const std::string where = std::to_string(p.refill_blocks) + " blocks of " +
                            std::to_string(p.refill_block_threads) + " threads (" +
                            std::to_string(p.refill_waves) + " waves), each on its SM " +
                            std::to_string(static_cast<int>(p.refill_spin_us)) + " us";
  auto add = [&](const std::string& id, const std::string& label, const std::string& unit,
                 const Summary& v, bool higher) {
    Figure f;
    f.id = id;
    f.label = label;
    f.unit = unit;
    f.value = v;
    f.instruction = "%smid + %globaltimer at block start and end";
    f.where = where;
    f.higher_is_better = higher;
    f.status = p.refill_status;
    out.push_back(f);
  };
  if (p.refill_latency_us) {
    add("frontend.refill.latency", "block end to the next block's start on the freed slot", "us",
        *p.refill_latency_us, false);
    // A gap between two GPU timer stamps, each end known to one timer step (as the dispatch
    // spans): two runs differ by up to two steps (an H200: 1.089 against 1.125 us, 36 ns,
    // with 32 ns steps), which a regression gate must not read as a change.
    const std::optional<double> step_ns = gpu_timer_step_ns(p);
    if (step_ns && p.refill_latency_us->median > 0)
      out.back().resolution = 2 * *step_ns / 1000 / p.refill_latency_us->median;
  }
  if (p.refill_sm_rate)
    add("frontend.refill.sm_blocks_per_us", "blocks started per SM after the first wave",
        "blocks/us", *p.refill_sm_rate, true);
  if (p.refill_blocks_per_us)
    add("frontend.refill.blocks_per_us", "blocks started after the first wave, GPU-wide",
        "blocks/us", single_value(*p.refill_blocks_per_us), true);
}

// Resident warps and blocks per SM, measured, and the register staircase.
void occupancy_figures(const FrontendProbeResult& p, std::vector<Figure>& out) {
  auto count = [&](const std::string& id, const std::string& label, std::optional<int> v,
                   const std::string& unit, const std::string& where) {
    if (!v) return;
    Figure f;
    f.id = id;
    f.label = label;
    f.unit = unit;
    f.value = single_value(*v);
    f.instruction = "%smid + %globaltimer per block";
    f.where = where;
    f.status = p.occupancy_status;
    out.push_back(f);
  };
  count("frontend.occupancy.warps_per_sm", "resident warps per SM, measured", p.max_warps_per_sm,
        "warps", "most blocks overlapping in time on one SM, any block size");
  count("frontend.occupancy.blocks_per_sm", "resident blocks per SM, measured", p.max_blocks_per_sm,
        "blocks", "most blocks overlapping in time on one SM");
  if (p.max_warps_per_sm && p.language == "cuda")
    count("frontend.occupancy.warps_per_partition", "resident warps per scheduler partition",
          *p.max_warps_per_sm / 4, "warps", "warps per SM / 4 partitions (sm_70 and later)");
  // The register staircase: the most registers per thread that keep the SM full.
  std::optional<int> full_regs;
  if (p.max_warps_per_sm)
    for (const auto& o : p.occupancy)
      if (o.kind == "regs" && o.warps_per_sm && *o.warps_per_sm >= *p.max_warps_per_sm)
        full_regs = std::max(full_regs.value_or(0), o.regs_per_thread);
  count("frontend.occupancy.max_regs_full", "most registers per thread at full occupancy",
        full_regs, "registers", "blocks of 128 threads, kernels built with --maxrregcount");
}

class FrontendProbe final : public TypedProbe<FrontendOptions, FrontendProbeResult> {
 public:
  std::string name() const override { return "frontend"; }
  std::string description() const override {
    return "instruction caches (IPC against code bytes), launch latency and rate, block "
           "dispatch, occupancy measured by running";
  }
  std::vector<OptionSpec> options() const override {
    return {
        {"quick", "0", "fewer sizes, repeats and launches"},
        {"icache", "1", "instruction-cache sweep"},
        {"partitions", "1", "one warp on 1-4 partitions, same or different code past the L1i"},
        {"launch", "1", "launch latency and launch rate (plain, streams, graph)"},
        {"dispatch", "1", "block dispatch rate and per-SM start skew"},
        {"occupancy", "1", "resident blocks and warps by block size, registers, shared memory"},
        {"refill", "1", "refill of freed block slots after the first wave"},
        {"refill_waves", "8", "refill grid: this many times the resident blocks of every SM"},
        {"refill_spin_us", "5", "refill: each block's time on its SM, us"},
        {"min_instructions", "1024", "smallest loop body of the sweep, instructions"},
        {"max_instructions", "", "largest loop body (CUDA 131072 = 2 MiB; OpenCL 4096)"},
        {"points_per_doubling", "2", "sizes per doubling of the sweep"},
        {"refine", "1",
         "extra sizes at each instruction-cache edge (1/8 doubling, edges <= 512 KiB)"},
        {"region_instructions", "16384", "code of each region in the partition test"},
        {"repeats", "5", "timed repeats per point (at least)"},
        {"launches", "200", "launch-latency samples per batch"},
        {"launch_batches", "10",
         "launch-latency batches (a figure: the median of the batches' medians)"},
        {"rate_kernels", "2000", "kernels per launch-rate measurement"},
        {"launch_pin", "1",
         "keep the launch-timing thread on one CPU while it times (0: the scheduler's choice)"},
    };
  }

 protected:
  FrontendOptions parse(const OptionValues& kv) const override {
    return parse_frontend_options(kv, options());
  }
  void run_typed(Device& dev, const FrontendOptions& opt, const RunResult&, Progress& progress,
                 const std::atomic<bool>& stop, FrontendProbeResult& out) const override {
    run_frontend(dev, opt, progress, stop, out);
  }
  AheadWork ahead_typed(Device& dev, const FrontendOptions& opt) const override {
    return frontend_ahead(dev, opt);
  }

 public:
  std::vector<Figure> figures(const RunResult& r) const override {
    std::vector<Figure> out;
    const FrontendProbeResult* p = r.get<FrontendProbeResult>();
    if (!p) return out;
    icache_figures(*p, out);
    launch_figures(*p, out);
    dispatch_figures(*p, out);
    refill_figures(*p, out);
    occupancy_figures(*p, out);
    return out;
  }
  std::vector<std::string> figure_ids() const override {
    return {"frontend.icache.{level}.capacity",
            "frontend.icache.{level}.ipc",
            "frontend.icache.partition_ratio",
            "frontend.launch.latency",
            "frontend.launch.round_trip",
            "frontend.launch.api",
            "frontend.launch.completion",
            "frontend.launch.rate.{mode}",
            "frontend.dispatch.blocks_per_us",
            "frontend.dispatch.first_wave",
            "frontend.occupancy.warps_per_sm",
            "frontend.occupancy.blocks_per_sm",
            "frontend.occupancy.warps_per_partition",
            "frontend.occupancy.max_regs_full",
            "frontend.refill.latency",
            "frontend.refill.sm_blocks_per_us",
            "frontend.refill.blocks_per_us"};
  }
};

}  // namespace

std::unique_ptr<Probe> make_frontend_probe() { return std::make_unique<FrontendProbe>(); }

}  // namespace gd
