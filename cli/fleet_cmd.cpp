// gpudissect fleet: options, checks, --collect, and rank 0's judging and writing (see
// fleet_cmd_impl.hpp for the design).
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>

#include "backends.hpp"
#include "fleet_cmd_impl.hpp"
#include "fleet_report.hpp"
#include "gpudissect/fleet_collect.hpp"
#include "gpudissect/json_read.hpp"
#include "gpudissect/prometheus.hpp"
#include "gpudissect/result.hpp"
#include "gpudissect/soak.hpp"
#include "output.hpp"
#include "registry.hpp"
#include "report.hpp"

namespace gd::cli {

namespace fleet {

namespace {

bool ends_with(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

// The files --collect names: each file as given, each folder's *.json and *.json.gz sorted.
std::vector<std::string> collect_files(const std::vector<std::string>& args) {
  std::vector<std::string> files;
  for (const std::string& a : args) {
    std::error_code ec;
    if (fs::is_directory(a, ec)) {
      std::vector<std::string> in;
      for (const auto& e : fs::directory_iterator(a, ec))
        if (e.is_regular_file(ec) &&
            (ends_with(e.path().string(), ".json") || ends_with(e.path().string(), ".json.gz")))
          in.push_back(e.path().string());
      if (ec)
        throw UsageError("--collect " + a + ": cannot list the folder (" + ec.message() + ")");
      if (in.empty()) throw UsageError("--collect " + a + ": no *.json or *.json.gz files in it");
      std::sort(in.begin(), in.end());
      files.insert(files.end(), in.begin(), in.end());
    } else if (fs::is_regular_file(a, ec)) {
      files.push_back(a);
    } else {
      throw UsageError("--collect " + a + ": no such file or folder");
    }
  }
  return files;
}

}  // namespace

FleetCmd::FleetCmd(CLI::App& app) {
  cmd_ = app.add_subcommand(
      "fleet",
      "Measure every GPU of a fleet (one rank per GPU: under mpirun/srun, or local "
      "processes) and judge each against the others: fleet JSON + HTML page; exit 3 when a "
      "GPU is an outlier, regressed or failed (drain it).");
  add_measure_options();
  add_output_options();
  cmd_->footer(
      "\nRun one rank per GPU: mpirun -n 8 gpudissect fleet -o fleet.html, or under Slurm "
      "srun --mpi=pmix -n 8 --gpus-per-task=1 gpudissect fleet. Without MPI: gpudissect fleet "
      "--ranks N runs N local processes. gpudissect fleet --collect DIR judges the run JSONs "
      "that separate `gpudissect run`s wrote instead of measuring (same verdicts, page, JSON "
      "and exit status; a file that is not a run JSON: exit 2). Exit status: 0 every GPU "
      "healthy, 3 at least one outlier, baseline regression or failed rank (drain it), 4 none "
      "of those but at least "
      "one GPU busy (another process used it while it was measured, or --require-idle "
      "refused it: its verdict is \"busy (another process)\", it is not judged; measure it "
      "again), 2 bad input (a mistyped --option included), 130 (SIGINT) or 143 (SIGTERM): "
      "the launcher was stopped (a preempted job): it stopped its ranks, kept what they "
      "measured and wrote the outputs, with the stopped ranks \"interrupted\", not failed; "
      "drain nothing on it. A rank never outlives its launcher (Linux: a SIGKILL of the "
      "launcher ends them too).");
}

void FleetCmd::add_measure_options() {
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
                   "Baseline tolerance, as in compare --baseline, and a soak's drift tolerance "
                   "(default 5%)");
  cmd_->add_option("--threshold", a_.threshold,
                   "Robust z (distance from the median of the other GPUs in scaled MADs) "
                   "beyond which a worse figure is an outlier (default 3.5)");
  cmd_->add_option("--min-deviation", a_.min_deviation,
                   "... and at least this far from that median (default 5%)");
  cmd_->add_option("--duration", a_.duration,
                   "Soak every GPU: each rank runs the profile again and again for this long "
                   "(gpudissect run --duration, e.g. 10m). A GPU whose own figures got worse "
                   "than in its first repetition by more than --tolerance is regressed; "
                   "alarming throttle events or new uncorrected ECC errors during its soak make "
                   "it an outlier. The default rank timeout grows by the duration");
  cmd_->add_option("--rank-timeout", a_.rank_timeout,
                   "Seconds one rank's measurement may take before it is killed and reported "
                   "as timed out (default 300 quick, 7200 full)");
  cmd_->add_option("--ranks", a_.ranks,
                   "Without MPI: local ranks to start (default: one per GPU of this node)");
  cmd_->add_flag("--local", a_.local, "Run the ranks as local processes even in a build with MPI");
  cmd_->add_option("--work-dir", a_.work_dir,
                   "Folder for the ranks' results (default: a new folder in /tmp)");
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
}

void FleetCmd::add_output_options() {
  cmd_->add_option("-o,--output", a_.html, "The HTML page (default fleet.html)");
  cmd_->add_option("--json", a_.json, "The fleet JSON (default: the page's name, .json)");
  cmd_->add_flag("-q,--quiet", a_.quiet, "No progress lines");
  cmd_->add_option("--prometheus", a_.prometheus,
                   "Also write the headline figures, each GPU's verdict and the runs' times in "
                   "Prometheus' text format (node-exporter's textfile collector)");
  cmd_->add_option("--collect", a_.collect,
                   "Measure nothing: judge the run JSONs (*.json, *.json.gz; a folder: every "
                   "one in it) that separate `gpudissect run` invocations wrote, as a live "
                   "fleet's ranks (host from the JSON's provenance.host, else the file's name)")
      ->expected(1, -1);
}

bool FleetCmd::chosen() const { return cmd_->parsed(); }

int FleetCmd::run(int argc, char** argv) {
  argc_ = argc;
  argv_ = argv;
  exe_ = self_exe(argv[0]);
  validate();
  if (!a_.collect.empty()) return collect();
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

void FleetCmd::validate() {
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
  if (!a_.duration.empty()) {
    if (!a_.collect.empty())
      throw UsageError("--duration measures; --collect judges what was measured: not both");
    a_.duration_s = parse_duration(a_.duration);
    if (!a_.duration_s)
      throw UsageError("--duration: '" + a_.duration +
                       "' is not a duration (a positive number with s, m or h, e.g. 20s, 10m)");
    if (!parse_tolerance(a_.tolerance))
      throw UsageError("--tolerance: '" + a_.tolerance + "' is not a percentage");
  }
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

void FleetCmd::check_probe_options() const {
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

void FleetCmd::check_outputs() const {
  try {
    report::ensure_writable(a_.json);
    report::ensure_writable(a_.html);
    if (!a_.prometheus.empty()) report::ensure_writable(a_.prometheus);
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

std::string FleetCmd::command_line() const {
  std::string s;
  for (int i = 0; i < argc_; ++i) s += (i ? " " : "") + std::string(argv_[i]);
  return s;
}

int FleetCmd::conclude(std::vector<FleetRank> ranks, const std::string& mode) const {
  FleetReport rep = analyse_fleet(std::move(ranks), fopt_, baseline_ ? &*baseline_ : nullptr);
  nlohmann::json info = {{"tool", "gpudissect"},
                         {"version", GD_VERSION},
                         {"command", command_line()},
                         {"started_at", now_iso8601()},
                         {"mode", mode}};
  if (mode == "collect") {
    info["collected"] = a_.collect;
  } else {
    info["profile"] = a_.profile;
    info["rank_timeout_s"] = rank_timeout();
    if (a_.duration_s) info["soak_duration_s"] = *a_.duration_s;
  }
  if (!a_.baseline.empty()) info["baseline"] = a_.baseline;
  const nlohmann::json j = fleet_to_json(rep, info);
  report::write_file(a_.json, j.dump(1) + "\n");
  report::write_fleet_html(
      a_.html, rep,
      "gpudissect fleet: " + std::to_string(rep.ranks.size()) + " GPU(s), " +
          (mode == "collect" ? "collected from run JSONs" : a_.profile + " profile"));
  if (!a_.prometheus.empty()) report::write_file(a_.prometheus, prometheus_fleet(rep));
  report::print_fleet(std::cout, rep);
  std::cerr << "wrote: " << a_.json << " " << a_.html
            << (a_.prometheus.empty() ? "" : " " + a_.prometheus) << "\n";
  return rep.exit_code();
}

int FleetCmd::collect() {
  for (const FleetInjection& i : injections_)
    if (i.kind != "slow")
      throw UsageError("--inject " + i.kind + ": --collect measures nothing (only slow applies)");
  const std::vector<std::string> files = collect_files(a_.collect);
  check_outputs();
  std::vector<FleetRank> ranks;
  for (size_t k = 0; k < files.size(); ++k) {
    const std::string& f = files[k];
    try {
      nlohmann::json j = read_json_file(f);
      const RunResult r = run_result_from_json(j, probe_registry());  // a run JSON at all?
      if (!j.contains("figures")) j["figures"] = r.figures;
      ranks.push_back(fleet_rank_from_run_json(j, f, static_cast<int>(k)));
    } catch (const std::exception& e) {
      throw UsageError(f + ": not a gpudissect run JSON: " + e.what());
    }
    if (const FleetInjection* s = injection("slow", static_cast<int>(k))) {
      std::ostringstream os;
      os << "slow: " << s->figure << " x " << s->factor;
      ranks.back().injected = os.str();
      if (!apply_slow_injection(ranks.back(), s->figure, s->factor))
        ranks.back().injected += " (this rank has no such figure)";
    }
  }
  assign_local_ranks(ranks);
  if (!a_.quiet) std::cerr << "fleet: " << ranks.size() << " run JSON(s) collected\n";
  return conclude(std::move(ranks), "collect");
}

}  // namespace fleet

std::unique_ptr<FleetCommand> add_fleet_command(CLI::App& app) {
  return std::make_unique<fleet::FleetCmd>(app);
}

}  // namespace gd::cli
