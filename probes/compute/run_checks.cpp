// What a timed loop's SASS says about its figure (run.hpp): the checks every backend that
// reads its machine code gets, and the figures no machine code can vouch for.
#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "compute/compute.hpp"
#include "compute/run.hpp"
#include "gpudissect/units.hpp"

namespace gd {

// The intended instructions the loop of `l` holds, and how many its counted ops should be.
std::pair<int, int> intended_sass(const LoopSass& s, const ComputeOp& a, const ComputeLaunch& l) {
  const int expected = s.ops_per_iteration > 0 ? s.ops_per_iteration
                       : l.mix.empty()         ? static_cast<int>(ops_per_thread(a, l.ilp, 1))
                                               : static_cast<int>(ops_per_thread(a, l.ilp, 1, &a));
  return {count_opcodes(s, a.sass_expect), expected};
}

// What the loop's SASS says about a figure: compiled away by construction, missing or
// partly folded (flagged), or as intended.
void judge_loop_sass(ComputeFigure& f, const ComputeOp& a, const LoopSass& s, int n, int expected) {
  // Warp and tensor ops are one SASS instruction per counted op: fewer in the loop means
  // ptxas folded or emulated some (a fixed-lane shuffle kept 8 of 512; FP8 mma.sync on
  // sm_90 has no QMMA), and the figure would not be that instruction's rate.
  const bool exact = a.klass == "warp" || a.klass == "tensor";
  if (n == 0 && !a.elided_to.empty() && count_opcodes(s, {a.elided_to}) >= expected) {
    // Compiled away by construction: the finding is that it costs nothing.
    f.compiled_away = true;
    f.note = a.elided_why;
  } else if (n == 0) {
    f.missing_instruction = true;
    f.status = {StatusCode::error,
                !a.missing_why.empty()
                    ? a.missing_why
                    : "the timed loop holds no " + a.sass_expect.front() +
                          (a.klass == "tensor" ? " (not native here: emulated or folded)" : "") +
                          "; the figure is not that instruction's"};
  } else if (expected > 0 && n * 4 < expected) {
    // A quarter or less of the counted instructions: the compiler rewrote the chain (NVIDIA's
    // Vulkan compiler turned a f32->f16->f32 trip into LOP3 and PRMT with 4 F2FP for 256).
    f.missing_instruction = true;
    f.status = {StatusCode::error,
                !a.missing_why.empty()
                    ? a.missing_why
                    : "the timed loop holds " + std::to_string(n) + " " + a.sass_expect.front() +
                          " for " + std::to_string(expected) +
                          " counted: the compiler folded most of them; the figure is not that "
                          "instruction's"};
  } else if (exact && n < expected) {
    f.missing_instruction = true;
    f.status = {StatusCode::error, "the timed loop holds " + std::to_string(n) + " " +
                                       a.sass_expect.front() + " for " + std::to_string(expected) +
                                       " counted; ptxas folded the rest"};
  }
}

std::string mixed_chain_note(const LoopSass& s, const ComputeOp& a, int steps) {
  // A step of several instructions (f32->i32->f32: F2I then I2FP) holds each by design.
  if (a.insts_per_step != 1 || steps <= 0) return {};
  // Forms of the intended instruction in the chain, each at least a quarter of the steps.
  std::vector<std::pair<std::string, int>> forms;
  int total = 0;
  for (const auto& [op, n] : s.opcodes)
    for (const std::string& e : a.sass_expect)
      if (op.rfind(e, 0) == 0) {
        forms.emplace_back(op, n);
        total += n;
        break;
      }
  // Alternatives take one instruction a step between them; parts of one step (a 64-bit
  // multiply's IMAD and IMAD.WIDE, a rotate idiom's two shifts) take more.
  if (4 * total > 5 * steps) return {};
  std::string list;
  int kept = 0;
  for (const auto& [op, n] : forms)
    if (4 * n >= total) {
      list += (list.empty() ? "" : " and ") + op;
      ++kept;
    }
  if (kept < 2) return {};
  return "the dependent chain alternates " + list + ": its latency is their mean, not either's";
}

// Intended SASS instructions per counted op in the loop of `l`, where the backend reads it.
std::optional<double> latency_sass_per_op(ComputeKernels& k, const ComputeLaunch& l) {
  LoopSass s;
  try {
    s = k.sass(l);
  } catch (const std::exception&) {
    return std::nullopt;  // the throughput loop's reading already said why
  }
  if (!s.read) return std::nullopt;
  const auto [n, expected] = intended_sass(s, *find_compute_op(l.op), l);
  if (expected <= 0) return std::nullopt;
  return static_cast<double>(n) / expected;
}

// A rate above the architectural peak, or a dependent chain faster than half a cycle, is
// impossible. Where the loop's machine code was read (CUDA) the instructions are known to
// be there, so it is the documented peak that does not apply to this mix: the fraction is
// dropped. Where it could not be read (OpenCL), the compiler most likely folded the chain:
// the figure is withheld with the reason, never reported as a rate.
void withhold_impossible(ComputeFigure& f) {
  // An INT32 add may issue on two pipes (IADD3 on the integer pipe, IMAD.IADD on the FMA
  // pipe): CUDA's SASS on Hopper holds both and reaches 126.4/clk/SM against the integer
  // pipe's 64, and Vulkan, whose machine code is not read, reaches 122.1. Up to twice the
  // one-pipe peak is then the split, not a folded chain, machine code read or not.
  const bool two_pipes = f.op == "int32.add" && f.fraction_of_peak && *f.fraction_of_peak <= 2.05;
  if (two_pipes) {
    f.note += std::string(f.note.empty() ? "" : "; ") +
              "above the integer pipe's peak: the compiler splits adds between IADD3 and "
              "IMAD.IADD (two pipes), as CUDA's SASS shows";
    f.fraction_of_peak.reset();
    return;
  }
  const bool too_fast = f.fraction_of_peak && *f.fraction_of_peak > 1.05;
  // Without a clock (latency in ns only): a dependent step takes at least a cycle, and
  // under 0.1 ns is a 10 GHz chain (a folded shuffle pair measured 0.06 ns on lavapipe).
  const bool no_latency = (f.latency_cycles && f.latency_cycles->median < 0.5) ||
                          (f.latency_ns && f.latency_ns->median < 0.1);
  if (!too_fast && !no_latency) return;
  if (!f.opcodes.empty() && !no_latency) {
    f.fraction_of_peak.reset();
    f.peak_per_clk_sm.reset();
    return;
  }
  const std::string why =
      too_fast ? format_fixed(100 * *f.fraction_of_peak, 0) + "% of the architectural peak"
      : f.latency_cycles
          ? "a dependent chain of " + format_fixed(f.latency_cycles->median, 3) + " cycles per op"
          : "a dependent chain of " + format_fixed(f.latency_ns->median, 4) + " ns per op";
  f.status = {StatusCode::error,
              "measured " + why +
                  " with no machine code to check: the compiler most likely folded the "
                  "chain, so the figure is withheld"};
  f.fraction_of_peak.reset();
  f.ops_per_s.reset();
}

}  // namespace gd
