// The steps of `gpudissect run` (run_steps.hpp).
#include "run_steps.hpp"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <ctime>
#include <iostream>
#include <tuple>

#include "backends.hpp"
#include "gpudissect/head_start.hpp"
#include "gpudissect/prometheus.hpp"
#include "gpudissect/units.hpp"
#include "output.hpp"
#include "registry.hpp"

namespace fs = std::filesystem;

namespace gd::cli {

// Ctrl-C (SIGINT) and SIGTERM (what kill, Slurm and container runtimes send) both stop the
// run after the point in flight: what was measured is written, exit 130 (143 for SIGTERM).
std::atomic<bool> g_stop{false};
namespace {
std::atomic<int> g_signal{0};
extern "C" void on_stop_signal(int sig) {
  g_stop = true;
  g_signal = sig;
  std::signal(sig, SIG_DFL);  // a second one ends the program at once
}
}  // namespace

void install_stop_signals() {
  std::signal(SIGINT, on_stop_signal);
  std::signal(SIGTERM, on_stop_signal);
}
int stop_signal() { return g_signal.load(); }

std::string join(const std::vector<std::string>& v, const char* sep) {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : sep) + x;
  return s;
}

namespace {

using OptionMap = std::map<std::string, std::map<std::string, std::string>>;

std::vector<std::string> probe_names() { return probe_registry().names(); }

uint64_t bytes_option(const std::string& name, const std::string& v) {
  auto b = parse_bytes(v);
  if (!b)
    throw UsageError("--" + name + ": '" + v +
                     "' is not a size up to 1 PiB (e.g. 4096, 64K, 256M, 8G)");
  return *b;
}

// `--option bandwidth.max_footprint=8G` -> {"bandwidth": {"max_footprint": "8G"}}
OptionMap probe_options(const std::vector<std::string>& raw) {
  OptionMap out;
  for (const auto& o : raw) {
    const auto dot = o.find('.');
    const auto eq = o.find('=');
    if (dot == std::string::npos || eq == std::string::npos || eq < dot)
      throw UsageError("--option '" + o + "': expected PROBE.KEY=VALUE, e.g. bandwidth.quick=1");
    const std::string probe = o.substr(0, dot);
    const std::vector<std::string> names = probe_names();  // one list: its begin and end
    if (std::find(names.begin(), names.end(), probe) == names.end())
      throw UsageError("--option '" + o + "': unknown probe '" + probe +
                       "'; valid probes: " + join(probe_names()));
    out[probe][o.substr(dot + 1, eq - dot - 1)] = o.substr(eq + 1);
  }
  return out;
}

// The latency probe's own flags are shorthands for --option latency.KEY=VALUE; they are
// checked here so that an error names the flag the user typed.
void latency_flags(const RunArgs& a, std::map<std::string, std::string>& lat) {
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
      throw UsageError("--points-per-doubling must be 1..32");
    lat["points_per_doubling"] = std::to_string(*a.points_per_doubling);
  }
  if (a.repeats) {
    if (*a.repeats < 1 || *a.repeats > 100) throw UsageError("--repeats must be 1..100");
    lat["repeats"] = std::to_string(*a.repeats);
  }
  if (a.hops) {
    if (*a.hops < 16 || *a.hops > (1u << 26)) throw UsageError("--hops must be 16..67108864");
    lat["hops"] = std::to_string(*a.hops);
  }
  if (a.tlb) lat["tlb"] = "1";
  if (a.no_tlb) lat["tlb"] = "0";
}

std::any parse_probe_options(const std::string& name, const OptionValues& values) {
  try {
    return probe_registry().find(name)->parse_options(values);
  } catch (const std::invalid_argument& e) {
    throw UsageError(e.what());
  }
}

}  // namespace

RunPlan plan_run(const RunArgs& a) {
  const ProbeRegistry& registry = probe_registry();
  for (const auto& p : a.probes)
    if (!registry.find(p))
      throw UsageError("unknown probe '" + p + "'; valid probes: " + join(probe_names()));
  RunPlan plan;
  plan.probes = a.probes.empty() ? probe_names() : a.probes;
  OptionMap kv = probe_options(a.options);
  latency_flags(a, kv["latency"]);
  // A soak repeats the quick profile: --duration implies --quick.
  if (a.quick || !a.duration.empty())  // each probe's `quick`, unless set explicitly
    for (const auto& name : plan.probes)
      for (const OptionSpec& o : registry.find(name)->options())
        if (o.key == "quick" && !kv[name].count("quick")) kv[name]["quick"] = "1";
  for (auto it = kv.begin(); it != kv.end();) it = it->second.empty() ? kv.erase(it) : ++it;
  for (const auto& name : plan.probes)
    plan.parsed[name] = parse_probe_options(name, kv.count(name) ? kv.at(name) : OptionValues{});
  for (const auto& [name, values] : kv) {  // settings for a probe this run leaves out
    if (plan.parsed.count(name)) continue;
    parse_probe_options(name, values);  // still checked: a typo is an error
    std::cerr << "note: --option " << name << ".* ignored: the " << name
              << " probe is not in this run\n";
  }
  return plan;
}

RunOutputs plan_outputs(const RunArgs& a, const DeviceInfo& device) {
  RunOutputs o;
  const std::string slug = slugify(device.name);
  o.out_dir = a.out_dir.empty() ? fs::path("results") / slug : fs::path(a.out_dir);
  const std::string stem = a.probes.empty() ? slug : join(a.probes, "+");
  o.json = a.json_file.empty() ? o.out_dir / (stem + ".json") : fs::path(a.json_file);
  o.html = o.out_dir / (stem + ".html");
  try {  // an output that cannot be written is bad input: fail before measuring, not after
    report::ensure_writable(o.json);
    if (!a.no_html) report::ensure_writable(o.html);
    if (!a.prometheus.empty()) report::ensure_writable(a.prometheus);
  } catch (const std::runtime_error& e) {
    throw UsageError(e.what());
  }
  return o;
}

std::unique_ptr<Progress> make_progress(bool quiet) {
  if (quiet) return std::make_unique<NullProgress>();
  return std::make_unique<ConsoleProgress>(std::cerr, isatty(STDERR_FILENO));
}

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

// Who else uses the GPU, before our first kernel: the one utilisation reading that is not
// ours. --require-idle refuses a shared GPU here, before anything is measured or written.
// An unknown state (no NVML) is not "shared": it is said, and the run goes on.
int check_gpu_first(Device& dev, const RunArgs& a, const std::string& first_probe,
                    Progress& progress, std::vector<GpuStateSample>& samples) {
  samples = {sample_gpu(dev, first_probe, "start")};
  const GpuState st = judge_gpu_state(samples);
  if (a.require_idle && st.shared) {
    progress.finish();
    std::cerr << "error: --require-idle: the GPU " << dev.info().id << " is in use";
    for (const std::string& why : st.reasons) std::cerr << "; " << why;
    std::cerr << "\nnothing was measured (exit " << kExitGpuBusy << ")\n";
    return kExitGpuBusy;
  }
  if (st.verdict == "unknown" && a.require_idle)  // asked for: said even with -q
    std::cerr << "warning: --require-idle: GPU state unknown (no NVML): other processes "
                 "cannot be seen, so nothing is refused; measuring\n";
  else if (st.verdict == "unknown")
    progress.note("GPU state unknown (no NVML): other processes and throttling are not checked");
  else if (st.flagged())
    progress.note(gpu_state_headline(st));
  return 0;
}

Deadline::Deadline(std::optional<double> seconds) {
  if (!seconds) return;
  armed_ = true;
  const auto start = std::chrono::steady_clock::now();
  const auto at = start + std::chrono::duration<double>(*seconds);
  const auto hard = at + std::chrono::duration<double>(kGraceSeconds);
  thread_ = std::thread([this, at, hard] {
    std::unique_lock<std::mutex> lock(m_);
    if (cv_.wait_until(lock, at, [&] { return done_; })) return;
    hit_ = true;
    g_stop = true;  // the probe in flight stops after its point; the rest are skipped
    if (cv_.wait_until(lock, hard, [&] { return done_; })) return;
    // The point in flight did not end: write what the run had and leave at once.
    if (!file_.empty()) {
      try {
        report::write_file(file_, text_);
      } catch (const std::exception& e) {
        std::cerr << "error: --deadline: " << e.what() << "\n";
      }
    }
    std::cerr << "\nerror: --deadline: the probe in flight did not stop within " << kGraceSeconds
              << " s of the deadline; wrote " << file_.string() << " and exiting (" << kExitDeadline
              << ")\n";
    std::_Exit(kExitDeadline);
  });
}

Deadline::~Deadline() {
  disarm();
  if (thread_.joinable()) thread_.join();
}

void Deadline::set_file(const fs::path& file) {
  std::lock_guard<std::mutex> lock(m_);
  file_ = file;
}

void Deadline::set_fallback(std::string text) {
  std::lock_guard<std::mutex> lock(m_);
  text_ = std::move(text);
}

void Deadline::disarm() {
  {
    std::lock_guard<std::mutex> lock(m_);
    done_ = true;
  }
  cv_.notify_all();
}

namespace {
// The result as it would be if every probe from `next` on were skipped for the deadline.
std::string deadline_fallback(const RunPlan& plan, std::size_t next, RunResult r) {
  const ProbeRegistry& registry = probe_registry();
  for (std::size_t i = next; i < plan.probes.size(); ++i) {
    const Probe& probe = *registry.find(plan.probes[i]);
    std::any result = probe.new_result();
    probe.status(result) = {StatusCode::skipped, "deadline"};
    r.probes[plan.probes[i]] = std::move(result);
  }
  r.figures = collect_figures(r, registry);
  return to_json(r, registry).dump(2) + "\n";
}
}  // namespace

// Each probe fills its part of the result as it goes; a failure is recorded in that part
// and the later probes still run, unless the run was stopped (a signal or the deadline).
int measure_probes(Device& dev, const RunPlan& plan, RunResult& r, Progress& progress,
                   std::vector<GpuStateSample>& samples, Deadline& deadline,
                   const std::function<void(const RunResult&)>& save) {
  const ProbeRegistry& registry = probe_registry();
  // Head starts: what the probes can do before their turn (the CUDA backend's NVRTC
  // compiles of the compute and frontend kernels) runs in the background, at low priority,
  // from now on, while the first probes measure (Probe::ahead).
  std::vector<HeadStart::Work> ahead;
  for (const std::string& name : plan.probes) {
    try {
      ahead.push_back(registry.find(name)->ahead(dev, plan.parsed.at(name)));
    } catch (const std::exception&) {
      // no head start: the probe compiles in its turn and reports a failure there
    }
  }
  HeadStart head_start(std::move(ahead));
  if (head_start.size() > 0)
    progress.note("compiling the kernels of " + std::to_string(head_start.size()) +
                  " later probes in the background");
  int rc = 0;
  for (std::size_t i = 0; i < plan.probes.size(); ++i) {
    const std::string& name = plan.probes[i];
    const Probe& probe = *registry.find(name);
    std::any result = probe.new_result();
    if (deadline.hit()) {
      probe.status(result) = {StatusCode::skipped, "deadline"};
    } else if (g_stop) {
      probe.status(result) = {StatusCode::skipped, "interrupted before this probe"};
    } else {
      if (deadline.armed()) deadline.set_fallback(deadline_fallback(plan, i, r));
      if (i > 0) samples.push_back(sample_gpu(dev, name, "before"));
      try {
        probe.run(dev, plan.parsed.at(name), r, progress, g_stop, result);
      } catch (const std::exception& e) {
        progress.finish();
        std::cerr << "error: " << name << " probe: " << e.what() << "\n";
        if (probe.status(result).ok()) probe.status(result) = {StatusCode::error, e.what()};
        rc = 1;
      }
      dev.release_memory();  // the next probe starts with the device's memory free
      samples.push_back(sample_gpu(dev, name, "after"));
      if (deadline.hit() && probe.status(result).code == StatusCode::interrupted)
        probe.status(result).reason = "deadline: stopped after the point in flight";
    }
    r.gpu_state = judge_gpu_state(samples);
    r.probes[name] = std::move(result);
    r.figures = collect_figures(r, registry);
    save(r);
  }
  progress.finish();
  head_start.cancel();  // after an interruption: nothing more is needed
  return rc;
}

std::vector<fs::path> write_reports(const RunArgs& a, const RunOutputs& out, const RunResult& r) {
  const ProbeRegistry& registry = probe_registry();
  std::vector<fs::path> written;
  if (!a.prometheus.empty()) {  // gpudissect/prometheus.hpp: node-exporter's textfile format
    report::write_file(a.prometheus, prometheus_run(r, prometheus_host_name()));
    written.push_back(a.prometheus);
  }
  for (const auto& f : report::write_csv(out.out_dir, r, registry)) written.push_back(f);
  if (!a.no_html) {
    report::HtmlOptions ho;
    ho.png = a.png;
    ho.png_dir = out.out_dir;
    ReferenceDb refs;
    attach_references(ho, refs);
    for (const auto& f : report::write_html(out.html, r, registry, ho)) written.push_back(f);
    written.push_back(out.html);
  }
  return written;
}

int run_exit_status(int measured, const Deadline& deadline) {
  if (measured != 0) return measured;
  if (stop_signal() != 0) return 128 + stop_signal();
  if (deadline.hit()) return kExitDeadline;
  return 0;
}

void say_written(const std::vector<fs::path>& files) {
  std::cerr << "wrote:";
  for (const auto& f : files) std::cerr << " " << f.string();
  std::cerr << "\n";
  if (stop_signal() != 0)
    std::cerr << "interrupted (" << (stop_signal() == SIGTERM ? "SIGTERM" : "Ctrl-C")
              << "): results so far were written\n";
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

}  // namespace gd::cli
