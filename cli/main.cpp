// gpudissect: measure a GPU's memory hierarchy and write the report.
//   gpudissect list | run [probes] [options] | report FILE -o report.html
// Exit codes: 0 done, 1 a measurement failed (what was measured is still written),
// 2 bad input, 5 --require-idle and the GPU is shared (nothing measured), 130 interrupted
// (what was measured is still written).
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <atomic>
#include <chrono>
#include <csignal>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>
#include <tuple>

#include "backends.hpp"
#include "compare_cmd.hpp"  // compare, reference (issue 10)
#include "fleet_cmd.hpp"    // fleet (issue 12)
#include "gpudissect/gpu_state.hpp"
#include "gpudissect/head_start.hpp"
#include "gpudissect/json_read.hpp"
#include "gpudissect/prometheus.hpp"
#include "gpudissect/result.hpp"
#include "gpudissect/units.hpp"
#include "gpudissect/progress.hpp"
#include "output.hpp"
#include "registry.hpp"
#include "report.hpp"

namespace fs = std::filesystem;
using namespace gd;

namespace {

// Ctrl-C (SIGINT) and SIGTERM (what kill, Slurm and container runtimes send) both stop the
// run after the point in flight: what was measured is written, exit 130 (143 for SIGTERM).
std::atomic<bool> g_stop{false};
std::atomic<int> g_signal{0};
extern "C" void on_stop_signal(int sig) {
  g_stop = true;
  g_signal = sig;
  std::signal(sig, SIG_DFL);  // a second one ends the program at once
}

std::vector<std::string> probe_names() { return probe_registry().names(); }

std::string join(const std::vector<std::string>& v, const char* sep = ", ") {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : sep) + x;
  return s;
}

std::string now_iso8601() {
  std::time_t t = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
  return buf;
}

std::string command_line(int argc, char** argv) {
  std::string s;
  for (int i = 0; i < argc; ++i) s += (i ? " " : "") + std::string(argv[i]);
  return s;
}

uint64_t bytes_option(const std::string& name, const std::string& v) {
  auto b = parse_bytes(v);
  if (!b)
    throw cli::UsageError("--" + name + ": '" + v +
                          "' is not a size up to 1 PiB (e.g. 4096, 64K, 256M, 8G)");
  return *b;
}

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
  bool quick = false;  // every probe's `quick` option
  bool require_idle = false;  // refuse (exit 5) when another process uses the GPU
  std::string tlb_max;
  std::vector<std::string> options;  // PROBE.KEY=VALUE
};

// `--option bandwidth.max_footprint=8G` -> {"bandwidth": {"max_footprint": "8G"}}
std::map<std::string, std::map<std::string, std::string>> probe_options(
    const std::vector<std::string>& raw) {
  std::map<std::string, std::map<std::string, std::string>> out;
  for (const auto& o : raw) {
    const auto dot = o.find('.');
    const auto eq = o.find('=');
    if (dot == std::string::npos || eq == std::string::npos || eq < dot)
      throw cli::UsageError("--option '" + o +
                            "': expected PROBE.KEY=VALUE, e.g. bandwidth.quick=1");
    const std::string probe = o.substr(0, dot);
    const std::vector<std::string> names = probe_names();  // one list: its begin and end
    if (std::find(names.begin(), names.end(), probe) == names.end())
      throw cli::UsageError("--option '" + o + "': unknown probe '" + probe +
                            "'; valid probes: " + join(probe_names()));
    out[probe][o.substr(dot + 1, eq - dot - 1)] = o.substr(eq + 1);
  }
  return out;
}

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
       "measurement failed, 2 bad input, 5 --require-idle and another process uses the GPU "
       "(nothing measured), 130 Ctrl-C, 143 SIGTERM.\n"
       "\nBefore and after each probe the run reads, through NVML, the other processes on the "
       "GPU, its utilisation and its throttle reasons: a GPU that was shared or throttled is "
       "named on the summary's first line, in a banner of the report and in the JSON's "
       "\"gpu_state\" (figures measured then carry \"suspect\"). Without NVML the state is "
       "\"unknown\".\n";
  return s;
}

// Exit status of `run --require-idle` on a GPU that another process uses: nothing measured.
constexpr int kExitGpuBusy = 5;

// One reading of who else uses the GPU and whether its clock is throttled (gpu_state.hpp).
GpuStateSample sample_gpu(Device& dev, const std::string& probe, const char* when) {
  GpuStateSample s;
  s.probe = probe;
  s.when = when;
  const std::optional<GpuActivity> act = dev.activity();
  const std::optional<Telemetry> tel = dev.telemetry();
  s.known = act.has_value() || tel.has_value();
  if (act) {
    s.utilization_percent = act->utilization_percent;
    s.processes_known = act->processes_known;
    s.processes = act->processes;
  }
  if (tel) s.throttle_reasons = tel->throttle_reasons;
  return s;
}

int cmd_list() {
  std::cout << "Probes:";
  for (const Probe* p : probe_registry().all()) std::cout << " " << p->name();
  std::cout << "  (gpudissect run --help describes each)\n\n";
  const cli::Listing l = cli::list_devices();
  if (l.devices.empty()) std::cout << "No devices.\n";
  for (const auto& d : l.devices) {
    std::cout << d.id << "  " << d.name << "\n    " << d.summary << "\n    paths:";
    std::vector<std::string> yes, no;
    for (const auto& [p, s] : d.paths) (s.ok ? yes : no).push_back(to_string(p));
    std::cout << " " << join(yes) << "\n";
    if (!no.empty()) std::cout << "    not available: " << join(no) << "\n";
  }
  for (const auto& n : l.notes) std::cout << "(" << n << ")\n";
  return 0;
}

// The reference GPUs for the report's summary (what sets this GPU apart): the database
// `compare --reference` reads. Without one the page says so; the report is still written.
void attach_references(report::HtmlOptions& ho, ReferenceDb& db) {
#ifdef GD_SOURCE_REFERENCE_DIR
  const fs::path fallback = GD_SOURCE_REFERENCE_DIR;
#else
  const fs::path fallback;
#endif
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  const auto dir = find_reference_dir(ec ? fs::path() : exe, fallback);
  if (!dir || !fs::is_directory(*dir, ec)) {
    ho.references_note = "no reference database found (data/reference; GD_REFERENCE_DIR)";
    return;
  }
  db = load_reference_dir(*dir);
  for (const auto& e : db.errors) std::cerr << "warning: reference database: " << e << "\n";
  if (db.gpus.empty()) {
    ho.references_note = "the reference database " + dir->string() + " holds no GPU";
    return;
  }
  ho.references = &db.gpus;
}

int cmd_run(const RunArgs& a, const std::string& command) {
  const ProbeRegistry& registry = probe_registry();
  // Validate everything before touching a device.
  for (const auto& p : a.probes)
    if (!registry.find(p))
      throw cli::UsageError("unknown probe '" + p + "'; valid probes: " + join(probe_names()));
  const std::vector<std::string> probes = a.probes.empty() ? probe_names() : a.probes;
  auto kv = probe_options(a.options);
  // The latency probe's own flags are shorthands for --option latency.KEY=VALUE; they are
  // checked here so that an error names the flag the user typed.
  auto& lat = kv["latency"];
  if (!a.paths.empty()) lat["paths"] = join(a.paths, ",");
  for (const auto& [flag, value, key] :
       {std::tuple{"min-footprint", a.min_fp, "min_footprint"},
        std::tuple{"max-footprint", a.max_fp, "max_footprint"},
        std::tuple{"stride", a.stride, "stride"},
        std::tuple{"tlb-max-footprint", a.tlb_max, "tlb_max_footprint"}}) {
    if (value.empty()) continue;
    bytes_option(flag, value);
    lat[key] = value;
  }
  if (a.points_per_doubling) {
    if (*a.points_per_doubling < 1 || *a.points_per_doubling > 32)
      throw cli::UsageError("--points-per-doubling must be 1..32");
    lat["points_per_doubling"] = std::to_string(*a.points_per_doubling);
  }
  if (a.repeats) {
    if (*a.repeats < 1 || *a.repeats > 100) throw cli::UsageError("--repeats must be 1..100");
    lat["repeats"] = std::to_string(*a.repeats);
  }
  if (a.hops) {
    if (*a.hops < 16 || *a.hops > (1u << 26)) throw cli::UsageError("--hops must be 16..67108864");
    lat["hops"] = std::to_string(*a.hops);
  }
  if (a.tlb) lat["tlb"] = "1";
  if (a.no_tlb) lat["tlb"] = "0";
  if (lat.empty()) kv.erase("latency");
  if (a.quick)  // each probe that has a `quick` option gets it, unless set explicitly
    for (const auto& name : probes)
      for (const OptionSpec& o : registry.find(name)->options())
        if (o.key == "quick" && !kv[name].count("quick")) kv[name]["quick"] = "1";
  for (auto it = kv.begin(); it != kv.end();) it = it->second.empty() ? kv.erase(it) : ++it;
  std::map<std::string, std::any> parsed;
  for (const auto& name : probes) {
    try {
      parsed[name] =
          registry.find(name)->parse_options(kv.count(name) ? kv.at(name) : OptionValues{});
    } catch (const std::invalid_argument& e) {
      throw cli::UsageError(e.what());
    }
  }
  for (const auto& [name, values] : kv) {  // settings for a probe this run leaves out
    if (parsed.count(name)) continue;
    try {
      registry.find(name)->parse_options(values);  // still checked: a typo is an error
    } catch (const std::invalid_argument& e) {
      throw cli::UsageError(e.what());
    }
    std::cerr << "note: --option " << name << ".* ignored: the " << name
              << " probe is not in this run\n";
  }

  std::unique_ptr<Device> dev = cli::open_device(a.device);
  RunResult r;
  r.tool.version = GD_VERSION;
  r.tool.command = command;
  r.tool.started_at = now_iso8601();
  r.device = dev->info();

  const std::string slug = slugify(r.device.name);
  const fs::path out_dir = a.out_dir.empty() ? fs::path("results") / slug : fs::path(a.out_dir);
  const std::string stem = a.probes.empty() ? slug : join(a.probes, "+");
  const fs::path json = a.json_file.empty() ? out_dir / (stem + ".json") : fs::path(a.json_file);
  const fs::path html = out_dir / (stem + ".html");
  try {  // an output that cannot be written is bad input: fail before measuring, not after
    report::ensure_writable(json);
    if (!a.no_html) report::ensure_writable(html);
    if (!a.prometheus.empty()) report::ensure_writable(a.prometheus);
  } catch (const std::runtime_error& e) {
    throw cli::UsageError(e.what());
  }

  std::signal(SIGINT, on_stop_signal);
  std::signal(SIGTERM, on_stop_signal);
  std::unique_ptr<Progress> progress;
  if (a.quiet)
    progress = std::make_unique<NullProgress>();
  else
    progress = std::make_unique<ConsoleProgress>(std::cerr, isatty(STDERR_FILENO));
  progress->note("device " + r.device.id + ": " + r.device.name);

  // Who else uses the GPU, before our first kernel: the one utilisation reading that is not
  // ours. --require-idle refuses a shared GPU here, before anything is measured or written.
  // An unknown state (no NVML) is not "shared": it is said, and the run goes on.
  std::vector<GpuStateSample> gpu_samples = {sample_gpu(*dev, probes.front(), "start")};
  {
    const GpuState st = judge_gpu_state(gpu_samples);
    if (a.require_idle && st.shared) {
      progress->finish();
      std::cerr << "error: --require-idle: the GPU " << r.device.id << " is in use";
      for (const std::string& why : st.reasons) std::cerr << "; " << why;
      std::cerr << "\nnothing was measured (exit " << kExitGpuBusy << ")\n";
      return kExitGpuBusy;
    }
    if (st.verdict == "unknown" && a.require_idle)  // asked for: said even with -q
      std::cerr << "warning: --require-idle: GPU state unknown (no NVML): other processes "
                   "cannot be seen, so nothing is refused; measuring\n";
    else if (st.verdict == "unknown")
      progress->note("GPU state unknown (no NVML): other processes and throttling are not checked");
    else if (st.flagged())
      progress->note(gpu_state_headline(st));
  }

  // Head starts: what the probes can do before their turn (the CUDA backend's NVRTC
  // compiles of the compute and frontend kernels) runs in the background, at low priority,
  // from now on, while the first probes measure (Probe::ahead).
  std::vector<HeadStart::Work> ahead;
  for (const std::string& name : probes) {
    try {
      ahead.push_back(registry.find(name)->ahead(*dev, parsed.at(name)));
    } catch (const std::exception&) {
      // no head start: the probe compiles in its turn and reports a failure there
    }
  }
  HeadStart head_start(std::move(ahead));
  if (head_start.size() > 0)
    progress->note("compiling the kernels of " + std::to_string(head_start.size()) +
                   " later probes in the background");

  int rc = 0;
  // Each probe fills its part of the result as it goes; a failure is recorded in that part
  // and the later probes still run, unless the user stopped the run. The JSON is written
  // (atomically) after every probe, so a run killed later keeps every probe that finished.
  for (const std::string& name : probes) {
    const Probe& probe = *registry.find(name);
    std::any result = probe.new_result();
    if (g_stop) {
      probe.status(result) = {"skipped", "interrupted before this probe"};
    } else {
      if (&name != &probes.front()) gpu_samples.push_back(sample_gpu(*dev, name, "before"));
      try {
        probe.run(*dev, parsed.at(name), r, *progress, g_stop, result);
      } catch (const std::exception& e) {
        progress->finish();
        std::cerr << "error: " << name << " probe: " << e.what() << "\n";
        if (probe.status(result).ok()) probe.status(result) = {"error", e.what()};
        rc = 1;
      }
      dev->release_memory();  // the next probe starts with the device's memory free
      gpu_samples.push_back(sample_gpu(*dev, name, "after"));
    }
    r.gpu_state = judge_gpu_state(gpu_samples);
    r.probes[name] = std::move(result);
    r.figures = collect_figures(r, registry);
    report::write_json(json, r, registry);
  }
  progress->finish();
  head_start.cancel();  // after an interruption: nothing more is needed
  if (g_stop && rc == 0) rc = 128 + (g_signal ? g_signal.load() : SIGINT);

  std::vector<fs::path> written = {json};
  if (!a.prometheus.empty()) {  // gpudissect/prometheus.hpp: node-exporter's textfile format
    report::write_file(a.prometheus, prometheus_run(r, prometheus_host_name()));
    written.push_back(a.prometheus);
  }
  for (const auto& f : report::write_csv(out_dir, r, registry)) written.push_back(f);
  if (!a.no_html) {
    report::HtmlOptions ho;
    ho.png = a.png;
    ho.png_dir = out_dir;
    ReferenceDb refs;
    attach_references(ho, refs);
    for (const auto& f : report::write_html(html, r, registry, ho)) written.push_back(f);
    written.push_back(html);
  }
  report::print_summary(std::cout, r, registry);
  std::cerr << "wrote:";
  for (const auto& f : written) std::cerr << " " << f.string();
  std::cerr << "\n";
  if (g_stop)
    std::cerr << "interrupted (" << (g_signal == SIGTERM ? "SIGTERM" : "Ctrl-C")
              << "): results so far were written\n";
  return rc;
}

int cmd_report(const std::string& in, const std::string& out, bool png, const std::string& csv_dir,
               const std::string& json_out) {
  if (!std::ifstream(in)) throw cli::UsageError("cannot read " + in);
  nlohmann::json j;
  try {
    j = read_json_file(in);
  } catch (const std::exception& e) {
    throw cli::UsageError(in + ": " + e.what());
  }
  const ProbeRegistry& registry = probe_registry();
  RunResult r;
  try {
    r = run_result_from_json(j, registry);
  } catch (const std::exception& e) {
    throw cli::UsageError(in + ": " + e.what());
  }
  const fs::path html = out.empty() ? fs::path(in).replace_extension(".html") : fs::path(out);
  try {
    report::ensure_writable(html);
    if (!json_out.empty()) report::ensure_writable(json_out);
  } catch (const std::runtime_error& e) {
    throw cli::UsageError(e.what());
  }
  report::HtmlOptions ho;
  ho.png = png;
  ho.png_dir = html.has_parent_path() ? html.parent_path() : fs::path(".");
  ReferenceDb refs;
  attach_references(ho, refs);
  std::vector<fs::path> written = report::write_html(html, r, registry, ho);
  written.push_back(html);
  if (!csv_dir.empty())
    for (const auto& c : report::write_csv(csv_dir, r, registry)) written.push_back(c);
  if (!json_out.empty()) {
    report::write_json(json_out, r, registry);
    written.push_back(json_out);
  }
  report::print_summary(std::cout, r, registry);
  std::cerr << "wrote:";
  for (const auto& w : written) std::cerr << " " << w.string();
  std::cerr << "\n";
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "gpudissect: dissects a GPU's microarchitecture by microbenchmarks.\n"
      "Every cache level on each memory path (capacity, latency, confidence), bandwidth at\n"
      "every level, what one SM does per clock for each instruction, atomics; writes JSON\n"
      "(with a flat list of headline figures), CSV and an HTML report with charts."};
  app.require_subcommand(0, 1);
  bool version = false;
  app.add_flag("--version", version, "Print version, the backends built in, and NVML's presence");

  app.add_subcommand("list",
                     "List CUDA GPUs and OpenCL devices and the memory paths each supports");

  RunArgs ra;
  auto* run = app.add_subcommand(
      "run",
      "Measure. Without a probe name runs every probe. Writes <out-dir>/<name>.json, one CSV per "
      "curve, and an HTML report; prints a summary table.");
  run->add_option("probes", ra.probes,
                  "Probes to run (default: all). Valid: " + join(probe_names()));
  run->add_option("-d,--device", ra.device,
                  "cuda:N, opencl:P.D or vulkan:N (default: first CUDA GPU, else first OpenCL "
                  "device, else first Vulkan device)");
  run->add_option("-p,--path", ra.paths,
                  "Memory paths, comma separated (CUDA: global,l2,readonly,texture,constant,"
                  "shared; OpenCL: global,constant,local,image). Default: all of the device's")
      ->delimiter(',');
  run->add_option("--out-dir", ra.out_dir, "Folder for the outputs (default: results/<device>)");
  run->add_option("-o,--output", ra.json_file, "JSON file (default: <out-dir>/<name>.json)");
  run->add_option("--prometheus", ra.prometheus,
                  "Also write the headline figures in Prometheus' text format (node-exporter's "
                  "textfile collector; docs/fleets.md)");
  run->add_flag("--no-html", ra.no_html, "Do not write the HTML report");
  run->add_flag("--png", ra.png, "Also write the charts as PNG files (needs gnuplot)");
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
  run->add_flag("-q,--quiet", ra.quiet, "No progress lines");
  run->add_flag("--quick", ra.quick,
                "The headline figures of every probe in about a minute (sets each probe's "
                "quick option: fewer points and repeats, no secondary sweeps)");
  run->add_flag("--require-idle", ra.require_idle,
                "Refuse to measure (exit 5, nothing written) when another process uses the GPU "
                "(NVML lists one, or the GPU is over 10 % busy before the first probe). Where "
                "NVML is absent the state is unknown and the run goes on");
  run->add_option("--option", ra.options,
                  "A probe setting, PROBE.KEY=VALUE (repeatable), e.g. bandwidth.quick=1; "
                  "every probe's keys are listed below");
  run->footer(probe_option_help());

  std::string in, out, csv_dir;
  bool png = false;
  auto* rep = app.add_subcommand(
      "report", "Write the HTML report (and charts) from a saved JSON; no GPU needed");
  rep->add_option("file", in, "A JSON written by gpudissect run")->required();
  rep->add_option("-o,--output", out, "HTML file (default: next to the JSON)");
  rep->add_flag("--png", png, "Also write the charts as PNG files next to the HTML");
  rep->add_option("--csv-dir", csv_dir, "Also write the CSV files into this folder");
  std::string json_out;
  rep->add_option("--json", json_out,
                  "Also write the result back as JSON of the current schema version (a file "
                  "without a figures list gets the figures this version derives)");

  // ---- compare / reference subcommands (cli/compare_cmd.cpp) ----
  auto compare_cmds = cli::add_compare_commands(app);
  auto fleet_cmd = cli::add_fleet_command(app);

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    app.exit(e);
    std::cerr << "valid commands: list, run, report (gpudissect --help explains each)\n";
    return 2;
  }
  try {
    if (version) {
      std::cout << cli::version_text();
      return 0;
    }
    if (app.got_subcommand("list")) return cmd_list();
    if (app.got_subcommand("run")) return cmd_run(ra, command_line(argc, argv));
    if (app.got_subcommand("report")) return cmd_report(in, out, png, csv_dir, json_out);
    if (compare_cmds->chosen()) return compare_cmds->run(argv[0]);  // compare, reference
    if (fleet_cmd->chosen()) return fleet_cmd->run(argc, argv);
    std::cout << app.help();
    return 2;
  } catch (const cli::UsageError& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 2;
  } catch (const report::RefusedOutput& e) {  // an output path that is a device, a folder...
    std::cerr << "error: " << e.what() << "\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 1;
  }
}
