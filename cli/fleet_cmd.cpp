// gpudissect fleet: one rank per GPU measures it, rank 0 judges the fleet.
//
// Design (nothing here can wait forever):
//  * Every rank measures in a child process (`gpudissect run` on its device, JSON into a
//    private folder) that it kills after --rank-timeout seconds (SIGTERM, which writes what
//    was measured, then SIGKILL 10 s later): a GPU hung in its driver ends that child, never
//    the rank. The rank then has a report in every case: measured, failed or timed out.
//  * With MPI, each rank sends its report (JSON text) to rank 0 with one non-blocking send;
//    rank 0 polls (MPI_Iprobe) until every rank reported or a deadline passed (the per-rank
//    timeout plus margins). A rank that never reports is listed as missing; rank 0 writes
//    the outputs, then ends the job with MPI_Abort(3) rather than wait in MPI_Finalize for
//    a rank that may never arrive. A sender whose send does not complete by a later deadline
//    aborts too.
//  * Without MPI (or with --local), the launcher runs the ranks of this node as local
//    processes: it starts itself once per rank with GD_FLEET_WORKER=<rank> (and
//    GD_FLEET_DIR), each worker measures as above and writes its report into the shared
//    folder, and the launcher waits for them with the same deadline, killing stragglers.
#include "fleet_cmd.hpp"

#include <fcntl.h>
#include <signal.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif
#include <sys/wait.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>
#include <thread>

#include "backends.hpp"
#include "fleet_report.hpp"
#include "gpudissect/compare.hpp"
#include "gpudissect/fleet.hpp"
#include "gpudissect/json_read.hpp"
#include "gpudissect/result.hpp"
#include "output.hpp"
#include "registry.hpp"
#include "report.hpp"

#ifdef GD_HAVE_MPI
#define OMPI_SKIP_MPICXX 1  // the C API only
#define MPICH_SKIP_MPICXX 1
#include <mpi.h>
#endif

namespace fs = std::filesystem;

namespace gd::cli {

namespace {

constexpr double kKillGrace = 10;  // seconds between SIGTERM and SIGKILL of a measurement
constexpr int kTag = 1207;         // the MPI tag of a rank's report

std::atomic<bool> g_fleet_stop{false};
std::atomic<int> g_fleet_signal{0};
extern "C" void on_fleet_signal(int sig) {
  g_fleet_stop = true;
  g_fleet_signal = sig;
}

// The exit status of a launcher stopped by a signal: 128 + the signal (130 Ctrl-C, 143
// SIGTERM), never 3: a preempted job says nothing about its GPUs.
int stopped_status() { return 128 + (g_fleet_signal ? g_fleet_signal.load() : SIGTERM); }
std::string stop_reason() {
  return std::string("stopped by ") + (g_fleet_signal == SIGINT ? "SIGINT" : "SIGTERM") +
         " before it finished";
}

// In a child just forked: end with SIGTERM when the parent dies (SIGKILL of the launcher
// included), so that no rank or measurement outlives it. `parent` is the parent's pid before
// the fork: when it has already gone, the child leaves at once.
void die_with_parent(pid_t parent) {
#ifdef __linux__
  prctl(PR_SET_PDEATHSIG, SIGTERM);
#endif
  if (getppid() != parent) _exit(128 + SIGTERM);
}

using Clock = std::chrono::steady_clock;
double since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

std::string now_iso8601() {
  std::time_t t = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
  return buf;
}

std::string host_name() {
  char buf[256] = {};
  if (gethostname(buf, sizeof buf - 1) != 0) return "?";
  return buf;
}

std::string self_exe(const char* argv0) {
  std::error_code ec;
  const fs::path p = fs::read_symlink("/proc/self/exe", ec);
  return ec ? std::string(argv0) : p.string();
}

const char* env(const char* name) {
  const char* v = std::getenv(name);
  return v && *v ? v : nullptr;
}

std::string last_error_line(const fs::path& log) {
  std::ifstream f(log);
  std::string line, last, last_error;
  while (std::getline(f, line)) {
    if (line.empty()) continue;
    last = line;
    if (line.rfind("error", 0) == 0) last_error = line;
  }
  return last_error.empty() ? last : last_error;
}

struct ChildOutcome {
  int rc = -1;  // exit status; 128 + signal when killed by one
  bool timed_out = false;
};

// Runs argv (argv[0] the program) with stdout and stderr into `log`, killing it after
// `timeout` seconds. hang: the child never execs and waits forever (fault injection).
ChildOutcome run_child(const std::vector<std::string>& argv, const fs::path& log, double timeout,
                       bool hang) {
  std::vector<char*> cargv;
  for (const auto& a : argv) cargv.push_back(const_cast<char*>(a.c_str()));
  cargv.push_back(nullptr);
  const pid_t self = getpid();
  const pid_t pid = fork();
  if (pid < 0) throw std::runtime_error("fork failed");
  if (pid == 0) {
    die_with_parent(self);
    const int fd = open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd >= 0) {
      dup2(fd, 1);
      dup2(fd, 2);
      close(fd);
    }
    std::signal(SIGTERM, SIG_DFL);  // (exec resets them too; a hang must die of SIGTERM)
    std::signal(SIGINT, SIG_DFL);
    if (hang)
      for (;;) pause();
    execv(cargv[0], cargv.data());
    _exit(127);
  }
  ChildOutcome out;
  const auto t0 = Clock::now();
  bool termed = false;
  double term_at = 0;
  for (;;) {
    int st = 0;
    const pid_t w = waitpid(pid, &st, WNOHANG);
    if (w == pid) {
      out.rc = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + (WIFSIGNALED(st) ? WTERMSIG(st) : 0);
      return out;
    }
    const double t = since(t0);
    if (!termed && (t > timeout || g_fleet_stop)) {
      out.timed_out = !g_fleet_stop;
      kill(pid, SIGTERM);
      termed = true;
      term_at = t;
    } else if (termed && t > term_at + kKillGrace) {
      kill(pid, SIGKILL);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

struct FleetArgs {
  std::string profile = "quick";
  std::vector<std::string> probes;
  std::vector<std::string> devices;
  std::vector<std::string> options;
  std::string baseline, tolerance = "5%";
  double threshold = 3.5;
  std::string min_deviation = "5%";
  std::string html = "fleet.html", json;
  std::optional<double> rank_timeout;
  int ranks = 0;
  bool local = false, quiet = false;
  bool no_links = false;
  bool require_idle = false;  // passed to each rank's run: a shared GPU is refused, not measured
  std::vector<std::string> inject;
  std::string work_dir;
};

// The quick profile: what exposes a sick GPU in well under a minute per GPU: device-memory
// and L2 bandwidth (with the telemetry the bandwidth probe records: clocks, throttle
// reasons), FP32 and tensor-core rates. Options a user adds with --option come after these
// and override them.
const std::vector<std::string> kQuickProbes = {"bandwidth", "compute"};
const std::vector<std::string> kQuickOptions = {"bandwidth.quick=1", "bandwidth.parts=footprint",
                                                "compute.quick=1", "compute.mixed=0",
                                                "compute.ops=fp32.fma,tensor"};

// The full profile: every probe but `links`, which measures every GPU of the node from one
// process; the ranks of a node, one per GPU, running it at once would measure each other.
std::vector<std::string> full_probes() {
  std::vector<std::string> v;
  for (const std::string& n : probe_registry().names())
    if (n != "links") v.push_back(n);
  return v;
}

class FleetCmd : public FleetCommand {
 public:
  explicit FleetCmd(CLI::App& app) {
    cmd_ = app.add_subcommand(
        "fleet",
        "Measure every GPU of a fleet (one rank per GPU: under mpirun/srun, or local "
        "processes) and judge each against the others: fleet JSON + HTML page; exit 3 when a "
        "GPU is an outlier, regressed or failed (drain it).");
    cmd_->add_option("--profile", a_.profile,
                     "quick: memory and L2 bandwidth, FP32 and tensor rates, clocks and throttle "
                     "reasons (about 30 s per GPU); full: every probe")
        ->check(CLI::IsMember({"quick", "full"}));
    cmd_->add_option("--probes", a_.probes, "Run these probes instead of the profile's")
        ->delimiter(',');
    cmd_->add_option("-d,--device", a_.devices,
                     "Device for every rank, or a comma-separated list indexed by the rank's "
                     "index on its node (default: the node-local rank picks the GPU)")
        ->delimiter(',');
    cmd_->add_option("--option", a_.options,
                     "A probe setting PROBE.KEY=VALUE, after the profile's (repeatable)");
    cmd_->add_option("--baseline", a_.baseline,
                     "Also judge each GPU against this result (gpudissect run JSON)");
    cmd_->add_option("--tolerance", a_.tolerance,
                     "Baseline tolerance, as in compare --baseline (default 5%)");
    cmd_->add_option("--threshold", a_.threshold,
                     "Robust z (distance from the median of the other GPUs in scaled MADs) "
                     "beyond which a worse figure is an outlier (default 3.5)");
    cmd_->add_option("--min-deviation", a_.min_deviation,
                     "... and at least this far from that median (default 5%)");
    cmd_->add_option("-o,--output", a_.html, "The HTML page (default fleet.html)");
    cmd_->add_option("--json", a_.json, "The fleet JSON (default: the page's name, .json)");
    cmd_->add_option("--rank-timeout", a_.rank_timeout,
                     "Seconds one rank's measurement may take before it is killed and reported "
                     "as timed out (default 300 quick, 7200 full)");
    cmd_->add_option("--ranks", a_.ranks,
                     "Without MPI: local ranks to start (default: one per GPU of this node)");
    cmd_->add_flag("--local", a_.local,
                   "Run the ranks as local processes even in a build with MPI");
    cmd_->add_option("--work-dir", a_.work_dir,
                     "Folder for the ranks' results (default: a new folder in /tmp)");
    cmd_->add_flag("-q,--quiet", a_.quiet, "No progress lines");
    cmd_->add_flag("--no-links", a_.no_links,
                   "Do not run the links probe once per node (by the node's first rank, after "
                   "every rank of the node has finished; links.quick=1 with the quick profile)");
    cmd_->add_flag("--require-idle", a_.require_idle,
                   "Passed to each rank's run: a GPU that another process uses is not measured "
                   "(its verdict: busy (another process))");
    cmd_->add_option("--inject", a_.inject,
                     "TESTING ONLY: slow:RANK:FIGURE:FACTOR scales one figure of one rank, "
                     "fail:RANK gives that rank a device that does not exist, hang:RANK makes "
                     "its measurement hang until the timeout (repeatable; shown in every output)");
    cmd_->footer(
        "\nRun one rank per GPU: mpirun -n 8 gpudissect fleet -o fleet.html, or under Slurm "
        "srun --mpi=pmix -n 8 --gpus-per-task=1 gpudissect fleet. Without MPI: gpudissect fleet "
        "--ranks N runs N local processes. Exit status: 0 every GPU healthy, 3 at least one "
        "outlier, baseline regression or failed rank (drain it), 4 none of those but at least "
        "one GPU busy (another process used it while it was measured, or --require-idle "
        "refused it: its verdict is \"busy (another process)\", it is not judged; measure it "
        "again), 2 bad input (a mistyped --option included), 130 (SIGINT) or 143 (SIGTERM): "
        "the launcher was stopped (a preempted job): it stopped its ranks, kept what they "
        "measured and wrote the outputs, with the stopped ranks \"interrupted\", not failed; "
        "drain nothing on it. A rank never outlives its launcher (Linux: a SIGKILL of the "
        "launcher ends them too).");
  }

  bool chosen() const override { return cmd_->parsed(); }

  int run(int argc, char** argv) override {
    argc_ = argc;
    argv_ = argv;
    exe_ = self_exe(argv[0]);
    validate();
    if (const char* w = env("GD_FLEET_WORKER")) return worker(std::atoi(w));
    const bool under_mpi = env("OMPI_COMM_WORLD_SIZE") || env("PMIX_RANK") || env("PMI_RANK");
#ifdef GD_HAVE_MPI
    if (under_mpi && !a_.local) return run_mpi();
#else
    if (under_mpi && !a_.local) {
      const char* size = env("OMPI_COMM_WORLD_SIZE");
      if (!size) size = env("PMI_SIZE");
      if (size && std::atoi(size) > 1)
        throw UsageError(
            "this gpudissect was built without MPI, so the ranks of mpirun/srun cannot gather; "
            "rebuild with Open MPI (libopenmpi-dev) or run `gpudissect fleet --local` once per "
            "node");
    }
#endif
    return run_local();
  }

 private:
  CLI::App* cmd_ = nullptr;
  FleetArgs a_;
  int argc_ = 0;
  char** argv_ = nullptr;
  std::string exe_;
  std::vector<FleetInjection> injections_;
  FleetOptions fopt_;
  std::optional<CompareInput> baseline_;

  double rank_timeout() const {
    return a_.rank_timeout ? *a_.rank_timeout : (a_.profile == "full" ? 7200 : 300);
  }
  // How long the ranks of a node wait for each other before the node's links run.
  double node_deadline() const { return rank_timeout() + kKillGrace + 30; }
  // How long rank 0 waits for the reports, from its start: the measurement, then the node's
  // links run (at most another rank timeout).
  double gather_deadline() const {
    return rank_timeout() + kKillGrace + 60 + (a_.no_links ? 0 : rank_timeout() + kKillGrace);
  }

  // `gpudissect run PROBES -d DEVICE --option ...` into `dir` (result.json, run.log) in a
  // child killed after the rank timeout; the result JSON, null where none was written.
  struct RunOutcome {
    ChildOutcome child;
    nlohmann::json result;
  };
  RunOutcome run_in_child(const std::vector<std::string>& probes, const std::string& device_id,
                          const std::vector<std::string>& options, const fs::path& dir,
                          bool hang) const {
    fs::create_directories(dir);
    const fs::path json = dir / "result.json";
    fs::remove(json);
    std::vector<std::string> argv = {exe_, "run"};
    argv.insert(argv.end(), probes.begin(), probes.end());
    if (!device_id.empty()) argv.insert(argv.end(), {"-d", device_id});
    argv.insert(argv.end(), {"--out-dir", dir.string(), "-o", json.string(), "--no-html", "-q"});
    for (const auto& o : options) argv.insert(argv.end(), {"--option", o});
    if (a_.require_idle) argv.push_back("--require-idle");
    RunOutcome out;
    out.child = run_child(argv, dir / "run.log", rank_timeout(), hang);
    if (fs::exists(json)) out.result = read_json_file(json);
    return out;
  }

  // The links probe once for this node, in a child with the rank timeout; never throws. Its
  // figures are the links.* of the run; its status the probe's own (unsupported on a backend
  // without links kernels, with the reason).
  NodeLinks measure_links(const fs::path& dir, const std::string& device_id) const {
    NodeLinks n;
    n.device_id = device_id;
    const auto t0 = Clock::now();
    try {
      std::vector<std::string> opts;
      if (a_.profile == "quick") opts.push_back("links.quick=1");
      for (const auto& o : a_.options)
        if (o.rfind("links.", 0) == 0) opts.push_back(o);
      const RunOutcome out = run_in_child({"links"}, device_id, opts, dir, false);
      n.wall_seconds = since(t0);
      const nlohmann::json& r = out.result;
      if (!r.is_null()) {
        const auto& probes = r.value("probes", nlohmann::json::object());
        if (probes.contains("links")) {
          n.status.status = probes.at("links").value("status", "error");
          n.status.reason = probes.at("links").value("reason", "");
        }
        if (r.contains("figures"))
          for (const Figure& fig : r.at("figures").get<std::vector<Figure>>())
            if (fig.id.rfind("links.", 0) == 0) n.figures.push_back(fig);
      }
      if (out.child.timed_out)
        n.status = {"timeout", "killed after the per-rank timeout of " +
                                   std::to_string(static_cast<int>(rank_timeout())) + " s"};
      else if (r.is_null())
        n.status = {"error", "gpudissect run links exited with status " +
                                 std::to_string(out.child.rc) + ": " +
                                 last_error_line(dir / "run.log")};
    } catch (const std::exception& e) {
      n.status = {"error", e.what()};
      n.wall_seconds = since(t0);
    }
    return n;
  }

  void validate() {
    for (const auto& s : a_.inject) {
      try {
        injections_.push_back(parse_fleet_injection(s));
      } catch (const std::invalid_argument& e) {
        throw UsageError(e.what());
      }
    }
    for (const auto& p : a_.probes)
      if (!probe_registry().find(p)) throw UsageError("--probes: unknown probe '" + p + "'");
    check_probe_options();
    if (a_.rank_timeout && !(*a_.rank_timeout > 0))
      throw UsageError("--rank-timeout must be positive");
    if (!(a_.threshold > 0) || !std::isfinite(a_.threshold))
      throw UsageError("--threshold must be a positive finite number");
    if (a_.ranks < 0) throw UsageError("--ranks must be positive");
    auto md = parse_tolerance(a_.min_deviation);
    if (!md) throw UsageError("--min-deviation: '" + a_.min_deviation + "' is not a percentage");
    fopt_.threshold = a_.threshold;
    fopt_.min_deviation = *md;
    if (!a_.baseline.empty()) {
      auto t = parse_tolerance(a_.tolerance);
      if (!t) throw UsageError("--tolerance: '" + a_.tolerance + "' is not a percentage");
      fopt_.baseline_tolerance = *t;
      if (!std::ifstream(a_.baseline)) throw UsageError("cannot read " + a_.baseline);
      try {
        baseline_ = input_from_result(
            run_result_from_json(read_json_file(a_.baseline), probe_registry()), a_.baseline);
      } catch (const std::exception& e) {
        throw UsageError(a_.baseline + ": " + e.what());
      }
    }
    if (a_.json.empty()) a_.json = fs::path(a_.html).replace_extension(".json").string();
  }

  // Every --option as `run` would take it (the profile's first, then the user's), checked
  // here: a typo is bad input (exit 2) before any rank starts, not a failed rank on every GPU.
  void check_probe_options() const {
    std::map<std::string, OptionValues> kv;
    for (const std::string& o : a_.options) {
      const auto dot = o.find('.'), eq = o.find('=');
      if (dot == std::string::npos || eq == std::string::npos || eq < dot)
        throw UsageError("--option '" + o + "': expected PROBE.KEY=VALUE, e.g. compute.quick=1");
      const std::string probe = o.substr(0, dot);
      if (!probe_registry().find(probe)) {
        std::string valid;
        for (const std::string& n : probe_registry().names())
          valid += (valid.empty() ? "" : ", ") + n;
        throw UsageError("--option '" + o + "': unknown probe '" + probe +
                         "'; valid probes: " + valid);
      }
      kv[probe][o.substr(dot + 1, eq - dot - 1)] = o.substr(eq + 1);
    }
    if (a_.profile == "quick")
      for (const std::string& o : kQuickOptions) {
        const auto dot = o.find('.'), eq = o.find('=');
        kv[o.substr(0, dot)].emplace(o.substr(dot + 1, eq - dot - 1), o.substr(eq + 1));
      }
    for (const auto& [probe, values] : kv) {
      try {
        probe_registry().find(probe)->parse_options(values);
      } catch (const std::invalid_argument& e) {
        throw UsageError("--option: " + std::string(e.what()));
      }
    }
  }

  // The outputs can be written: checked before measuring, not after. So is the work folder
  // the ranks write into.
  void check_outputs() const {
    try {
      report::ensure_writable(a_.json);
      report::ensure_writable(a_.html);
    } catch (const std::runtime_error& e) {
      throw UsageError(e.what());
    }
    if (a_.work_dir.empty()) return;
    std::error_code ec;
    fs::create_directories(a_.work_dir, ec);
    if (ec || !fs::is_directory(a_.work_dir, ec))
      throw UsageError("--work-dir " + a_.work_dir + ": cannot create the folder" +
                       (ec ? " (" + ec.message() + ")" : ""));
    std::string probe = (fs::path(a_.work_dir) / ".gpudissect-write-test-XXXXXX").string();
    const int fd = mkstemp(probe.data());
    if (fd < 0)
      throw UsageError("--work-dir " + a_.work_dir + ": cannot write into the folder (" +
                       std::strerror(errno) + ")");
    close(fd);
    fs::remove(probe, ec);
  }

  const FleetInjection* injection(const char* kind, int rank) const {
    for (const auto& i : injections_)
      if (i.kind == kind && i.rank == rank) return &i;
    return nullptr;
  }

  std::string pick_device(int local_rank) const {
    if (!a_.devices.empty()) return a_.devices[local_rank % a_.devices.size()];
    const Listing l = list_devices();
    std::vector<std::string> cuda, all;
    for (const auto& d : l.devices) {
      all.push_back(d.id);
      if (d.id.rfind("cuda:", 0) == 0) cuda.push_back(d.id);
    }
    const auto& from = cuda.empty() ? all : cuda;
    if (from.empty()) return "";
    return from[local_rank % from.size()];
  }

  // One rank's measurement, in a child process with a timeout; never throws.
  FleetRank measure(int rank, int local_rank, const fs::path& dir) const {
    FleetRank r;
    r.rank = rank;
    r.local_rank = local_rank;
    r.host = host_name();
    const auto t0 = Clock::now();
    try {
      r.device_id = pick_device(local_rank);
      if (injection("fail", rank)) {
        r.device_id = "injected-failure:0";
        r.injected = "fail: device " + r.device_id;
      }
      const bool hang = injection("hang", rank) != nullptr;
      if (hang) r.injected = "hang: the measurement never ends";
      const auto& probes = !a_.probes.empty()      ? a_.probes
                           : a_.profile == "quick" ? kQuickProbes
                                                   : full_probes();
      std::vector<std::string> profile_opts, opts;
      if (a_.profile == "quick") profile_opts = kQuickOptions;
      profile_opts.insert(profile_opts.end(), a_.options.begin(), a_.options.end());
      for (const auto& o : profile_opts) {
        // A profile setting for a probe this run leaves out is dropped (run would only note it).
        const std::string probe = o.substr(0, o.find('.'));
        if (probes.empty() || std::find(probes.begin(), probes.end(), probe) != probes.end())
          opts.push_back(o);
      }
      const RunOutcome run = run_in_child(probes, r.device_id, opts, dir, hang);
      const ChildOutcome& out = run.child;
      r.wall_seconds = since(t0);
      if (!run.result.is_null()) {
        r.result = run.result;
        r.device = r.result.at("device").get<DeviceInfo>();
        if (r.result.contains("figures"))
          r.figures = r.result.at("figures").get<std::vector<Figure>>();
        for (const char* p : {"bandwidth", "latency"}) {
          const auto& probes_j = r.result.value("probes", nlohmann::json::object());
          if (r.telemetry || !probes_j.contains(p)) continue;
          for (const char* k : {"telemetry_after", "telemetry_before"})
            if (!r.telemetry && probes_j.at(p).contains(k))
              r.telemetry = probes_j.at(p).at(k).get<Telemetry>();
        }
      }
      if (out.timed_out) {
        r.status = {"timeout", "killed after the per-rank timeout of " +
                                   std::to_string(static_cast<int>(rank_timeout())) + " s"};
      } else if (g_fleet_stop || out.rc == 128 + SIGTERM || out.rc == 128 + SIGINT) {
        // Stopped (a preempted job): what was measured is kept, and the GPU is not blamed.
        r.status = {"interrupted",
                    (g_fleet_stop ? stop_reason() : "the measurement was stopped by a signal") +
                        "; " + std::to_string(r.figures.size()) +
                        " figure(s) measured before are kept"};
      } else if (out.rc == 0 && !r.result.is_null()) {
        r.status = {};
      } else if (out.rc == 1 && !r.result.is_null()) {
        r.status = {};
        r.note = "a probe failed: " + last_error_line(dir / "run.log");
      } else if (out.rc == 5 && a_.require_idle) {  // run --require-idle: shared, not measured
        r.status = {"busy", "not measured (--require-idle): " + last_error_line(dir / "run.log")};
      } else {
        r.status = {"error", "gpudissect run exited with status " + std::to_string(out.rc) + ": " +
                                 last_error_line(dir / "run.log")};
      }
      if (const FleetInjection* s = injection("slow", rank); s && r.status.ok()) {
        std::ostringstream os;
        os << "slow: " << s->figure << " x " << s->factor;
        r.injected = os.str();
        if (!apply_slow_injection(r, s->figure, s->factor))
          r.injected += " (this rank has no such figure)";
      }
    } catch (const std::exception& e) {
      r.status = {"error", e.what()};
      r.wall_seconds = since(t0);
    }
    return r;
  }

  std::string command_line() const {
    std::string s;
    for (int i = 0; i < argc_; ++i) s += (i ? " " : "") + std::string(argv_[i]);
    return s;
  }

  fs::path work_dir() const {
    if (!a_.work_dir.empty()) return a_.work_dir;
    std::string tmpl = (fs::temp_directory_path() / "gpudissect-fleet-XXXXXX").string();
    if (!mkdtemp(tmpl.data())) throw std::runtime_error("cannot create a folder in /tmp");
    return tmpl;
  }

  // Rank 0's part: judge, write, print. Returns the exit status.
  int conclude(std::vector<FleetRank> ranks, const std::string& mode) const {
    FleetReport rep = analyse_fleet(std::move(ranks), fopt_, baseline_ ? &*baseline_ : nullptr);
    nlohmann::json info = {{"tool", "gpudissect"},
                           {"version", GD_VERSION},
                           {"command", command_line()},
                           {"started_at", now_iso8601()},
                           {"mode", mode},
                           {"profile", a_.profile},
                           {"rank_timeout_s", rank_timeout()}};
    if (!a_.baseline.empty()) info["baseline"] = a_.baseline;
    const nlohmann::json j = fleet_to_json(rep, info);
    report::write_file(a_.json, j.dump(1) + "\n");
    report::write_fleet_html(a_.html, rep,
                             "gpudissect fleet: " + std::to_string(rep.ranks.size()) + " GPU(s), " +
                                 a_.profile + " profile");
    report::print_fleet(std::cout, rep);
    std::cerr << "wrote: " << a_.json << " " << a_.html << "\n";
    return rep.exit_code();
  }

  // ---- local processes ----

  int worker(int rank) {
    const char* dir = env("GD_FLEET_DIR");
    if (!dir) throw UsageError("GD_FLEET_WORKER is set without GD_FLEET_DIR");
    std::signal(SIGTERM, on_fleet_signal);
    std::signal(SIGINT, on_fleet_signal);
    const fs::path d = fs::path(dir) / ("rank-" + std::to_string(rank));
    const FleetRank r = measure(rank, rank, d);
    const fs::path out = d / "fleet-rank.json";
    report::write_file(out, nlohmann::json(r).dump() + "\n");
    return 0;
  }

  int run_local() {
    int n = a_.ranks;
    if (n == 0) {
      if (a_.devices.size() > 1) {
        n = static_cast<int>(a_.devices.size());
      } else {
        int cuda = 0;
        for (const auto& d : list_devices().devices) cuda += d.id.rfind("cuda:", 0) == 0;
        n = std::max(1, cuda);
      }
    }
    check_outputs();
    const fs::path dir = work_dir();
    if (!a_.quiet)
      std::cerr << "fleet: " << n << " local rank(s) as processes of this node ("
#ifdef GD_HAVE_MPI
                << "--local"
#else
                << "this build has no MPI"
#endif
                << "); results in " << dir.string() << "\n";
    std::signal(SIGTERM, on_fleet_signal);
    std::signal(SIGINT, on_fleet_signal);
    std::vector<pid_t> pids(n, -1);
    std::vector<int> status(n, -1);
    const pid_t launcher = getpid();
    for (int k = 0; k < n; ++k) {
      const pid_t pid = fork();
      if (pid < 0) throw std::runtime_error("fork failed");
      if (pid == 0) {
        die_with_parent(launcher);  // a launcher killed (even by SIGKILL) takes its ranks along
        setpgid(0, 0);  // the launcher ends a worker and its measurement together
        setenv("GD_FLEET_WORKER", std::to_string(k).c_str(), 1);
        setenv("GD_FLEET_DIR", dir.c_str(), 1);
        execv(exe_.c_str(), argv_);
        _exit(127);
      }
      pids[k] = pid;
    }
    const auto t0 = Clock::now();
    bool termed = false;
    double term_at = 0;
    for (int left = n; left > 0;) {
      for (int k = 0; k < n; ++k) {
        if (status[k] >= 0) continue;
        int st = 0;
        if (waitpid(pids[k], &st, WNOHANG) == pids[k]) {
          status[k] = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
          --left;
        }
      }
      if (left == 0) break;
      const double t = since(t0);
      if (!termed && (t > gather_deadline() || g_fleet_stop)) {
        for (int k = 0; k < n; ++k)
          if (status[k] < 0) kill(-pids[k], SIGTERM);
        termed = true;
        term_at = t;
      } else if (termed && t > term_at + kKillGrace) {
        for (int k = 0; k < n; ++k)
          if (status[k] < 0) kill(-pids[k], SIGKILL);
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    std::vector<FleetRank> ranks;
    for (int k = 0; k < n; ++k) {
      const fs::path f = dir / ("rank-" + std::to_string(k)) / "fleet-rank.json";
      FleetRank r;
      try {
        if (!std::ifstream(f)) throw std::runtime_error("no report");
        r = read_json_file(f).get<FleetRank>();
      } catch (const std::exception&) {
        r = FleetRank{};
        r.rank = r.local_rank = k;
        r.host = host_name();
        if (g_fleet_stop)
          r.status = {"interrupted", stop_reason() + " (the worker wrote no report)"};
        else
          r.status = {"missing",
                      "the worker wrote no report (exit status " + std::to_string(status[k]) + ")"};
      }
      ranks.push_back(std::move(r));
    }
    // Every rank of this node is done: the node's links, once, on the first rank's GPU.
    if (!a_.no_links && !ranks.empty() && !g_fleet_stop) {
      if (!a_.quiet) std::cerr << "fleet: links of this node\n";
      ranks[0].node_links = measure_links(dir / "links", pick_device(0));
    }
    const int rc = conclude(std::move(ranks), "local");
    return g_fleet_stop ? stopped_status() : rc;
  }

  // ---- MPI ----

#ifdef GD_HAVE_MPI
  int run_mpi() {
    MPI_Init(&argc_, &argv_);
    int rank = 0, size = 1, local = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm node;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node);
    MPI_Comm_rank(node, &local);
    if (rank == 0) {
      try {
        check_outputs();
      } catch (const UsageError& e) {
        std::cerr << "error: " << e.what() << "\n";
        MPI_Abort(MPI_COMM_WORLD, 2);  // the others would wait for a rank 0 that is gone
      }
    }
    const auto t0 = Clock::now();
    std::signal(SIGTERM, on_fleet_signal);
    std::signal(SIGINT, on_fleet_signal);
    // Every rank measures into its own folder (the work folder need not be shared).
    fs::path dir =
        a_.work_dir.empty()
            ? fs::temp_directory_path() /
                  ("gpudissect-fleet-" + std::to_string(getpid()) + "-rank-" + std::to_string(rank))
            : fs::path(a_.work_dir) / ("rank-" + std::to_string(rank));
    if (rank == 0 && !a_.quiet)
      std::cerr << "fleet: " << size << " MPI rank(s); per-rank timeout "
                << static_cast<int>(rank_timeout()) << " s\n";
    FleetRank mine = measure(rank, local, dir);
    // The node's links, once, by its first rank, when every rank of the node has measured
    // (they would disturb each other's figures otherwise). A rank that never finishes (dead)
    // leaves the barrier open: the node's links are skipped at the deadline, with the reason.
    bool node_done = true;
    if (!a_.no_links) {
      MPI_Request barrier;
      MPI_Ibarrier(node, &barrier);
      int done = 0;
      double limit = node_deadline();
      while (!done && since(t0) < limit) {
        // Stopped: the others were too and reach the barrier within the kill grace.
        if (g_fleet_stop) limit = std::min(limit, since(t0) + kKillGrace + 5);
        MPI_Test(&barrier, &done, MPI_STATUS_IGNORE);
        if (!done) std::this_thread::sleep_for(std::chrono::milliseconds(20));
      }
      node_done = done != 0;
      if (local == 0) {
        if (node_done && !g_fleet_stop) {
          mine.node_links = measure_links(dir / "links", pick_device(0));
        } else {
          NodeLinks n;
          n.status = {"skipped", g_fleet_stop ? "stopped by the user"
                                              : "a rank of this node had not finished measuring "
                                                "by the deadline"};
          mine.node_links = n;
        }
      }
    }
    if (node_done) MPI_Comm_free(&node);  // an open barrier keeps it (the job ends in Abort)
    if (rank != 0) {
      const std::string payload = nlohmann::json(mine).dump();
      MPI_Request req;
      MPI_Isend(payload.data(), static_cast<int>(payload.size()), MPI_CHAR, 0, kTag, MPI_COMM_WORLD,
                &req);
      int done = 0;
      // Rank 0 stops listening at its deadline; past twice that it is gone.
      while (!done && since(t0) < 2 * gather_deadline()) {
        MPI_Test(&req, &done, MPI_STATUS_IGNORE);
        if (!done) std::this_thread::sleep_for(std::chrono::milliseconds(20));
      }
      if (!done) {
        std::cerr << "fleet rank " << rank << ": rank 0 never took the report; aborting\n";
        MPI_Abort(MPI_COMM_WORLD, 1);
      }
      MPI_Finalize();
      return 0;  // rank 0's exit status is the fleet's
    }
    std::vector<FleetRank> ranks(size);
    std::vector<bool> got(size, false);
    ranks[0] = std::move(mine);
    got[0] = true;
    int left = size - 1;
    double deadline = gather_deadline();
    while (left > 0 && since(t0) < deadline) {
      // Stopped (Ctrl-C, Slurm's SIGTERM): the others were too, and send what they have soon.
      if (g_fleet_stop) deadline = std::min(deadline, since(t0) + kKillGrace + 5);
      int flag = 0;
      MPI_Status st;
      MPI_Iprobe(MPI_ANY_SOURCE, kTag, MPI_COMM_WORLD, &flag, &st);
      if (!flag) {
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
        continue;
      }
      int count = 0;
      MPI_Get_count(&st, MPI_CHAR, &count);
      std::string buf(static_cast<size_t>(count), '\0');
      MPI_Recv(buf.data(), count, MPI_CHAR, st.MPI_SOURCE, kTag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      const int src = st.MPI_SOURCE;
      try {
        ranks[src] = parse_json_text(buf).get<FleetRank>();
      } catch (const std::exception& e) {
        ranks[src] = FleetRank{};
        ranks[src].status = {"error", std::string("unreadable report: ") + e.what()};
      }
      ranks[src].rank = src;
      if (!got[src]) --left;
      got[src] = true;
    }
    for (int k = 1; k < size; ++k)
      if (!got[k] && g_fleet_stop) {
        ranks[k].rank = k;
        ranks[k].status = {"interrupted", stop_reason() + " (no report came)"};
      } else if (!got[k]) {
        ranks[k].rank = k;
        ranks[k].status = {"missing", "no report within " +
                                          std::to_string(static_cast<int>(deadline)) +
                                          " s (the rank hung or died)"};
      }
    int rc = 3;
    try {
      rc = conclude(std::move(ranks), "mpi");
      if (g_fleet_stop) rc = stopped_status();
    } catch (const std::exception& e) {
      std::cerr << "error: " << e.what() << "\n";
      rc = 1;
    }
    std::cout.flush();
    std::cerr.flush();
    if (left > 0) {
      std::cerr << "fleet: " << left << " rank(s) never reported; ending the job (MPI_Abort " << rc
                << ")\n";
      MPI_Abort(MPI_COMM_WORLD, rc);
    }
    MPI_Finalize();
    return rc;
  }
#endif
};

}  // namespace

std::unique_ptr<FleetCommand> add_fleet_command(CLI::App& app) {
  return std::make_unique<FleetCmd>(app);
}

}  // namespace gd::cli
