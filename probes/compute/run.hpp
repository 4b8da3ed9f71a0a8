// The compute probe: throughput and latency of each instruction, ILP x occupancy, mixed
// issue, tensor cores; every figure beside the opcodes its loop actually executed.
#pragma once

#include <atomic>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "compute/compute.hpp"
#include "gpudissect/device.hpp"
#include "gpudissect/probe.hpp"
#include "gpudissect/progress.hpp"
#include "gpudissect/result.hpp"

namespace gd {

struct ComputeOptions {
  bool quick = false;            // a few ops per class, shorter timings
  bool sweep = false;            // ILP x occupancy for FFMA, HFMA2, IMAD, MUFU.EX2
  bool mixed = true;             // mixed-issue pairs
  bool tensor = true;            // mma.sync / wgmma
  std::vector<std::string> ops;  // only these (names or class prefixes); empty: all
  double target_ms = 2.0;        // length of one timed launch
  int repeats = 3;               // timed launches per figure (at least)
};

// Options from the command line's `--option compute.KEY=VALUE` pairs (KEY without the
// prefix): quick, sweep, mixed, tensor (0/1), ops (comma list), ms, repeats. Throws
// std::invalid_argument naming the key on a bad key or value.
ComputeOptions parse_compute_options(const std::map<std::string, std::string>& kv);

// The ops of the instruction table these options run, in order: the catalogue's, then the
// extra ops `k` offers (ComputeKernels::extra_ops), where given.
std::vector<const ComputeOp*> compute_table(const ComputeOptions& opt,
                                            const ComputeKernels* k = nullptr);
// Every kernel source the probe runs with these options on `k`: one launch per (op, mix)
// at ILP 8 for the table (1 for barriers), and per sweep ILP for the ILP sweep's ops.
std::vector<ComputeLaunch> compute_compile_plan(const ComputeOptions& opt, ComputeKernels& k);
// Those sources compiled ahead, beside the probes before this one, where the backend can
// (KernelSet::compiles_beside_measurements); empty otherwise.
AheadWork compute_ahead(Device& dev, const ComputeOptions& opt);

// Fills `out` as it goes, so whatever was measured survives an exception or `stop`.
void run_compute(Device& dev, const ComputeOptions& opt, Progress& progress,
                 const std::atomic<bool>& stop, ComputeProbeResult& out);

// Withholds a figure that is physically impossible (above the architectural peak, or a
// dependent chain under half a cycle); see compute.cpp. Exposed for tests.
void withhold_impossible(ComputeFigure& f);
// The intended instructions the loop of `l` holds, and how many its counted ops should be.
std::pair<int, int> intended_sass(const LoopSass& s, const ComputeOp& a, const ComputeLaunch& l);
// Judges a figure by its timed loop: `n` intended instructions found (count_opcodes) for
// `expected` counted ops. Exposed for tests.
void judge_loop_sass(ComputeFigure& f, const ComputeOp& a, const LoopSass& s, int n, int expected);
// Intended SASS instructions per counted op in the loop `l` times (the latency's own loop,
// ILP 1), where the backend reads machine code; nullopt elsewhere. Exposed for tests.
std::optional<double> latency_sass_per_op(ComputeKernels& k, const ComputeLaunch& l);
// Where a latency loop of `steps` counted steps holds two forms of the intended instruction
// as alternatives (one a step, each at least a quarter of them: ptxas alternates HFMA2 and
// HFMA2.MMA in an FP16x2 chain, 4 and about 12 cycles, 8.03 measured), a note saying the
// latency is their mean; empty otherwise, and where each step needs both (parts of one op).
std::string mixed_chain_note(const LoopSass& s, const ComputeOp& a, int steps);

}  // namespace gd
