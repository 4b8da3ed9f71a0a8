// The compute probe as a registry entry: its options, its headline figures and their ids (its
// report pieces are report.cpp's). The measurement itself is probes/compute/run.cpp.
#include <ostream>

#include "compute/run.hpp"
#include "gpudissect/result.hpp"
#include "registry.hpp"

namespace gd {

namespace {

// A latency figure's instruction: the first opcode of its own loop (one chain) where read,
// else the table's.
std::string latency_instruction(const ComputeFigure& c, const std::string& table) {
  if (c.latency_opcodes.empty()) return table;
  return c.latency_opcodes.front().substr(0, c.latency_opcodes.front().find(" x"));
}

class ComputeProbe final : public TypedProbe<ComputeOptions, ComputeProbeResult> {
 public:
  std::string name() const override { return "compute"; }
  std::string description() const override {
    return "throughput and latency of each instruction per SM per clock, ILP x occupancy, "
           "mixed issue, barriers, tensor cores (mma.sync, wgmma)";
  }
  std::vector<OptionSpec> options() const override {
    return {
        {"quick", "0", "a few ops per class, shorter timings"},
        {"sweep", "0", "ILP x occupancy sweep for FFMA, HFMA2, IMAD, MUFU.EX2"},
        {"mixed", "1", "mixed-issue pairs"},
        {"tensor", "1", "tensor-core ops (mma.sync, wgmma)"},
        {"ops", "", "only these ops or classes, comma separated (e.g. fp32.fma,fp64)"},
        {"ms", "2", "length of one timed launch, ms"},
        {"repeats", "3", "timed launches per figure (at least)"},
    };
  }

 protected:
  ComputeOptions parse(const OptionValues& kv) const override { return parse_compute_options(kv); }
  void run_typed(Device& dev, const ComputeOptions& opt, const RunResult&, Progress& progress,
                 const std::atomic<bool>& stop, ComputeProbeResult& out) const override {
    run_compute(dev, opt, progress, stop, out);
  }
  AheadWork ahead_typed(Device& dev, const ComputeOptions& opt) const override {
    return compute_ahead(dev, opt);
  }

 public:
  // compute.<op> (the GPU-wide rate in TFLOP/s or TOP/s, per SM per clock in
  // thread-instructions) and compute.<op>.latency (cycles of one dependent step).
  std::vector<Figure> figures(const RunResult& r) const override {
    std::vector<Figure> out;
    const ComputeProbeResult* p = r.get<ComputeProbeResult>();
    if (!p) return out;
    for (const ComputeFigure& c : p->table) {
      Figure f;
      f.id = "compute." + c.op;
      f.label = c.label;
      f.status = c.status;
      if (c.missing_instruction && f.status.ok())
        f.status = {StatusCode::error, "the timed loop lacks the intended instruction"};
      // "FFMA x512" (the loop's count) -> "FFMA"
      f.instruction = c.opcodes.empty() ? c.instruction
                                        : c.opcodes.front().substr(0, c.opcodes.front().find(" x"));
      f.clock_mhz = c.clock_mhz;
      f.where =
          "ILP " + std::to_string(c.ilp) + ", " + std::to_string(c.warps_per_sm) + " warps/SM";
      // A low GPU clock (Vulkan) goes with the figure (a compiled-away op's note is its status).
      const std::string note = c.compiled_away || c.note.empty() ? "" : "; " + c.note;
      f.where += note;
      // The table's own rate (rate_tera): FLOP for floating point, OP for integer work (dp4a
      // counts its 8), instructions for the rest; so the figure and the table always agree.
      f.unit = rate_unit(c);
      const double scale = c.ops_per_s && c.ops_per_s->median > 0
                               ? rate_tera(c).value_or(0) / c.ops_per_s->median
                               : 0;
      if (c.compiled_away && f.status.ok()) {
        f.status = {StatusCode::unsupported,
                    c.note.empty() ? "compiled to no instruction" : c.note};
      } else if (c.ops_per_s && f.status.ok()) {
        Summary s = *c.ops_per_s;
        for (double* v : {&s.median, &s.q1, &s.q3, &s.min, &s.max}) *v *= scale;
        f.value = s;
      }
      if (c.ops_per_clk_sm && f.status.ok()) {
        f.per_sm_per_clk = c.ops_per_clk_sm->median;
        f.per_sm_per_clk_unit = "ops/clk/SM";
      }
      out.push_back(f);
      if (c.latency_cycles && f.status.ok()) {
        Figure l;
        l.id = "compute." + c.op + ".latency";
        l.label = c.label + " dependent latency";
        l.unit = "cycles";
        l.value = *c.latency_cycles;
        l.instruction = latency_instruction(c, f.instruction);
        l.clock_mhz = c.clock_mhz;
        l.where = "one warp, one dependent chain" + note;
        l.higher_is_better = false;
        out.push_back(l);
      } else if (c.latency_ns && f.status.ok()) {
        // No clock known (Vulkan without a shader clock): the same chain in nanoseconds.
        Figure l;
        l.id = "compute." + c.op + ".latency";
        l.label = c.label + " dependent latency";
        l.unit = "ns";
        l.value = *c.latency_ns;
        l.instruction = latency_instruction(c, f.instruction);
        l.where = "one subgroup, one dependent chain (no clock: ns)" + note;
        l.higher_is_better = false;
        out.push_back(l);
      }
    }
    return out;
  }
  // <op> is "<class>.<name>" ("fp32.fma", "mma.bf16"; ComputeFigure::op).
  std::vector<std::string> figure_ids() const override {
    return {"compute.{class}.{op}", "compute.{class}.{op}.latency"};
  }
};

}  // namespace

std::unique_ptr<Probe> make_compute_probe() { return std::make_unique<ComputeProbe>(); }

}  // namespace gd
