// `gpudissect run`: its options and the command (cli/run_cmd.cpp); its steps are in
// cli/run_steps.hpp, the soak loop (`--duration`) in cli/soak_cmd.cpp.
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace gd::cli {

struct RunArgs {
  std::vector<std::string> probes;
  std::string device;
  std::vector<std::string> paths;
  std::string out_dir;
  std::string json_file;
  std::string prometheus;  // --prometheus FILE: "" none
  bool no_html = false, png = false, quiet = false;
  std::string min_fp, max_fp, stride;
  std::optional<int> points_per_doubling;  // unset: the probe's default
  std::optional<int> repeats;
  std::optional<uint64_t> hops;
  bool tlb = false, no_tlb = false;
  bool quick = false;         // every probe's `quick` option
  bool require_idle = false;  // refuse (exit 5) when another process uses the GPU
  std::string tlb_max;
  std::vector<std::string> options;  // PROBE.KEY=VALUE
  std::string duration;              // soak: repeat the quick profile this long ("10m")
  std::string tolerance = "5%";      // soak: how much worse than the first repetition
  std::string deadline;              // stop the probes at this time ("50s")
  std::vector<std::string> inject;   // testing: slow:REPETITION:FIGURE:FACTOR (soak)
};

// Adds `run` and its options to `app`; the options land in `args`.
CLI::App* add_run_command(CLI::App& app, RunArgs& args);

// Runs it; `argv` is the whole command line (for the JSON's provenance). Returns the exit
// status; throws UsageError for bad input.
int cmd_run(const RunArgs& args, const std::vector<std::string>& argv);

}  // namespace gd::cli
