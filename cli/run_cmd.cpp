// `gpudissect run`: its options, and a single run or a soak (--duration) over the steps of
// run_steps.hpp.
#include "run_cmd.hpp"

#include <iostream>

#include "backends.hpp"
#include "gpudissect/compare.hpp"
#include "gpudissect/provenance.hpp"
#include "gpudissect/soak.hpp"
#include "output.hpp"
#include "registry.hpp"
#include "run_steps.hpp"
#include "soak_cmd.hpp"

namespace gd::cli {

namespace {

// Every probe's options, for `run --help`.
std::string probe_option_help() {
  std::string s = "\nProbes and their --option PROBE.KEY=VALUE settings (default in brackets):\n";
  for (const Probe* p : probe_registry().all()) {
    s += "\n  " + p->name() + ": " + p->description() + "\n";
    for (const OptionSpec& o : p->options())
      s += "    " + p->name() + "." + o.key +
           (o.default_value.empty() ? "" : " [" + o.default_value + "]") + "  " + o.help + "\n";
  }
  s += "\nSIGINT (Ctrl-C) and SIGTERM stop the run after the point in flight; the JSON of every "
       "probe that finished (and of the one stopped) is written. Exit codes: 0 done, 1 a "
       "measurement failed, 2 bad input, 3 --duration: a figure got worse than in the first "
       "repetition by more than --tolerance, 5 --require-idle and another process uses the "
       "GPU (nothing measured), 6 --deadline passed before every probe finished, 130 Ctrl-C, "
       "143 SIGTERM.\n"
       "\nBefore and after each probe the run reads, through NVML, the other processes on the "
       "GPU, its utilisation and its throttle reasons: a GPU that was shared or throttled is "
       "named on the summary's first line, in a banner of the report and in the JSON's "
       "\"gpu_state\" (figures measured then carry \"suspect\"). Without NVML the state is "
       "\"unknown\".\n"
       "\nThe JSON's \"provenance\" says where the run ran: host, OS, kernel, CPU, driver and "
       "runtime versions, this tool's version, git revision and build type, and the command "
       "line.\n";
  return s;
}

// The latency probe's flags (shorthands for --option latency.KEY=VALUE).
void add_latency_options(CLI::App* run, RunArgs& ra) {
  run->add_option("-p,--path", ra.paths,
                  "Memory paths, comma separated (CUDA: global,l2,readonly,texture,constant,"
                  "shared; OpenCL: global,l2,constant,shared,local,image). Default: all of "
                  "the device's")
      ->delimiter(',');
  run->add_option("--min-footprint", ra.min_fp, "Smallest footprint (default 1K)");
  run->add_option("--max-footprint", ra.max_fp,
                  "Largest footprint (default: 4x the largest reported cache, at least 256M)");
  run->add_option("--stride", ra.stride,
                  "Bytes between chased lines (default: 128 on CUDA, 64 for constant, the reported "
                  "cache line on OpenCL)");
  run->add_option("--points-per-doubling", ra.points_per_doubling,
                  "Footprints per factor of two before refinement (default 4)");
  run->add_option("--repeats", ra.repeats, "Timed repeats per point (default 5)");
  run->add_option("--hops", ra.hops, "Dependent loads per timed repeat (default 8192)");
  run->add_flag("--tlb", ra.tlb, "Run the TLB sweep (default on CUDA and CPU devices)");
  run->add_flag("--no-tlb", ra.no_tlb, "Skip the TLB sweep");
  run->add_option("--tlb-max-footprint", ra.tlb_max,
                  "Largest TLB-sweep footprint (default 160G, at most the free memory less 8G)");
}

// Soak and deadline: how long the run goes on, and when it must stop.
void add_time_options(CLI::App* run, RunArgs& ra) {
  run->add_option("--duration", ra.duration,
                  "Soak: repeat the quick profile (implies --quick) until this much time has "
                  "passed (e.g. 20s, 10m, 2h); reports each headline figure's first, last and "
                  "worst value and drift, throttle events and ECC counts. Exit 3 when a figure "
                  "got worse than in the first repetition by more than --tolerance");
  run->add_option("--tolerance", ra.tolerance,
                  "Soak: how much worse than the first repetition a figure may get (default 5%)");
  run->add_option("--deadline", ra.deadline,
                  "Stop by this time from the start (e.g. 50s): the probe in flight stops after "
                  "its point, the rest are 'skipped' (reason 'deadline'), the JSON is written, "
                  "exit 6. A point still running 5 s later is abandoned: the JSON is written and "
                  "the process exits at once");
  run->add_option("--inject", ra.inject,
                  "TESTING ONLY: slow:REPETITION:FIGURE:FACTOR scales one figure of a soak from "
                  "that repetition (1 the first) on, to test the regression exit")
      ->group("");  // not for operators: kept out of --help
}

}  // namespace

CLI::App* add_run_command(CLI::App& app, RunArgs& ra) {
  auto* run = app.add_subcommand(
      "run",
      "Measure. Without a probe name runs every probe. Writes <out-dir>/<name>.json, one CSV per "
      "curve, and an HTML report; prints a summary table.");
  run->add_option("probes", ra.probes,
                  "Probes to run, by space or comma (default: all). Valid: " +
                      join(probe_registry().names()))
      ->delimiter(',');
  run->add_option("-d,--device", ra.device,
                  "cuda:N, opencl:P.D or vulkan:N (default: first CUDA GPU, else first OpenCL "
                  "device, else first Vulkan device)");
  run->add_option("--out-dir", ra.out_dir, "Folder for the outputs (default: results/<device>)");
  run->add_option("-o,--output", ra.json_file, "JSON file (default: <out-dir>/<name>.json)");
  run->add_option("--prometheus", ra.prometheus,
                  "Also write the headline figures in Prometheus' text format (node-exporter's "
                  "textfile collector; docs/fleets.md)");
  run->add_flag("--no-html", ra.no_html, "Do not write the HTML report");
  run->add_flag("--png", ra.png, "Also write the charts as PNG files (needs gnuplot)");
  add_latency_options(run, ra);
  run->add_flag("-q,--quiet", ra.quiet, "No progress lines");
  run->add_flag("--quick", ra.quick,
                "The headline figures of every probe in about a minute (sets each probe's "
                "quick option: fewer points and repeats, no secondary sweeps)");
  run->add_flag("--require-idle", ra.require_idle,
                "Refuse to measure (exit 5, nothing written) when another process uses the GPU "
                "(NVML lists one, or the GPU is over 10 % busy before the first probe). Where "
                "NVML is absent the state is unknown and the run goes on");
  add_time_options(run, ra);
  run->add_option("--option", ra.options,
                  "A probe setting, PROBE.KEY=VALUE (repeatable), e.g. bandwidth.quick=1; "
                  "every probe's keys are listed below");
  run->footer(probe_option_help());
  return run;
}

namespace {

std::optional<double> duration_option(const char* flag, const std::string& v) {
  if (v.empty()) return std::nullopt;
  const auto s = parse_duration(v);
  if (!s)
    throw UsageError(std::string(flag) + ": '" + v +
                     "' is not a duration (a positive number with s, m or h, e.g. 20s, 10m, 1h; "
                     "at most a week)");
  return s;
}

// The run model before the first probe: the tool, the device and where it runs.
RunResult new_result(const DeviceInfo& device, const std::vector<std::string>& argv) {
  RunResult r;
  r.tool.version = GD_VERSION;
  r.tool.command = join(argv, " ");
  r.tool.started_at = now_iso8601();
  r.device = device;
  r.provenance = collect_provenance(device, argv);
  return r;
}

// A single run: every probe once, the JSON after each, then the reports and the summary.
int run_once(const RunArgs& a, const RunPlan& plan, RunSession& s) {
  const ProbeRegistry& registry = probe_registry();
  const int measured =
      measure_probes(s.dev, plan, s.result, s.progress, s.samples, s.deadline,
                     [&](const RunResult& r) { report::write_json(s.out.json, r, registry); });
  s.deadline.disarm();
  std::vector<std::filesystem::path> written = {s.out.json};
  for (const auto& f : write_reports(a, s.out, s.result)) written.push_back(f);
  report::print_summary(std::cout, s.result, registry);
  say_written(written);
  if (s.deadline.hit())
    std::cerr << "deadline (" << a.deadline << ") reached: the probes not finished are "
              << "marked skipped (reason: deadline)\n";
  return run_exit_status(measured, s.deadline);
}

}  // namespace

int cmd_run(const RunArgs& a, const std::vector<std::string>& argv) {
  // Validate everything before touching a device.
  const RunPlan plan = plan_run(a);
  const std::optional<double> duration = duration_option("--duration", a.duration);
  const std::optional<double> deadline = duration_option("--deadline", a.deadline);
  const std::optional<double> tolerance = parse_tolerance(a.tolerance);
  if (!tolerance)
    throw UsageError("--tolerance: '" + a.tolerance + "' is not a percentage (e.g. 5%, 0.5)");
  if (!a.inject.empty() && !duration) throw UsageError("--inject needs --duration");
  parse_injections(a.inject);  // checked before the device is opened

  Deadline stop_by(deadline);  // counts from here, before the device is opened
  std::unique_ptr<Device> dev = open_device(a.device);
  RunResult r = new_result(dev->info(), argv);
  const RunOutputs out = plan_outputs(a, r.device);
  stop_by.set_file(out.json);
  install_stop_signals();
  std::unique_ptr<Progress> progress = make_progress(a.quiet);
  progress->note("device " + r.device.id + ": " + r.device.name);
  std::vector<GpuStateSample> samples;
  if (const int busy = check_gpu_first(*dev, a, plan.probes.front(), *progress, samples))
    return busy;
  RunSession session{*dev, out, *progress, samples, stop_by, std::move(r)};
  if (duration) return run_soak(a, plan, session, *duration, *tolerance);
  return run_once(a, plan, session);
}

}  // namespace gd::cli
