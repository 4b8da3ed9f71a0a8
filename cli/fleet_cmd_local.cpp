// gpudissect fleet: one rank's measurement, and the ranks of this node as local processes
// (see fleet_cmd_impl.hpp for the design).
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <sstream>
#include <thread>

#include "backends.hpp"
#include "fleet_cmd_impl.hpp"
#include "gpudissect/fleet_collect.hpp"
#include "gpudissect/json_read.hpp"
#include "output.hpp"

namespace gd::cli::fleet {

FleetCmd::RunOutcome FleetCmd::run_in_child(const std::vector<std::string>& probes,
                                            const std::string& device_id,
                                            const std::vector<std::string>& options,
                                            const fs::path& dir, bool hang, bool soak) const {
  fs::create_directories(dir);
  const fs::path json = dir / "result.json";
  fs::remove(json);
  std::vector<std::string> argv = {exe_, "run"};
  argv.insert(argv.end(), probes.begin(), probes.end());
  if (!device_id.empty()) argv.insert(argv.end(), {"-d", device_id});
  argv.insert(argv.end(), {"--out-dir", dir.string(), "-o", json.string(), "--no-html", "-q"});
  for (const auto& o : options) argv.insert(argv.end(), {"--option", o});
  if (a_.require_idle) argv.push_back("--require-idle");
  if (soak && a_.duration_s)
    argv.insert(argv.end(), {"--duration", a_.duration, "--tolerance", a_.tolerance});
  RunOutcome out;
  out.child = run_child(argv, dir / "run.log", rank_timeout(), hang);
  if (fs::exists(json)) out.result = read_json_file(json);
  return out;
}

NodeLinks FleetCmd::measure_links(const fs::path& dir, const std::string& device_id) const {
  NodeLinks n;
  n.device_id = device_id;
  const auto t0 = Clock::now();
  try {
    std::vector<std::string> opts;
    if (a_.profile == "quick") opts.push_back("links.quick=1");
    for (const auto& o : a_.options)
      if (o.rfind("links.", 0) == 0) opts.push_back(o);
    const RunOutcome out = run_in_child({"links"}, device_id, opts, dir, false);
    n.wall_seconds = seconds_since(t0);
    const nlohmann::json& r = out.result;
    if (!r.is_null()) {
      const auto& probes = r.value("probes", nlohmann::json::object());
      if (probes.contains("links")) {
        // A word no status names (a damaged file) counts as an error, never a crash.
        const auto code = gd::status_code_from(probes.at("links").value("status", "error"));
        n.status.code = code.value_or(gd::StatusCode::error);
        n.status.reason = probes.at("links").value("reason", "");
      }
      if (r.contains("figures"))
        for (const Figure& fig : r.at("figures").get<std::vector<Figure>>())
          if (fig.id.rfind("links.", 0) == 0) n.figures.push_back(fig);
    }
    if (out.child.timed_out)
      n.status = {StatusCode::timeout, "killed after the per-rank timeout of " +
                                           std::to_string(static_cast<int>(rank_timeout())) + " s"};
    else if (r.is_null())
      n.status = {StatusCode::error, "gpudissect run links exited with status " +
                                         std::to_string(out.child.rc) + ": " +
                                         last_error_line(dir / "run.log")};
  } catch (const std::exception& e) {
    n.status = {StatusCode::error, e.what()};
    n.wall_seconds = seconds_since(t0);
  }
  return n;
}

const FleetInjection* FleetCmd::injection(const char* kind, int rank) const {
  for (const auto& i : injections_)
    if (i.kind == kind && i.rank == rank) return &i;
  return nullptr;
}

std::string FleetCmd::pick_device(int local_rank) const {
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

std::vector<std::string> FleetCmd::rank_probes() const {
  if (!a_.probes.empty()) return a_.probes;
  return a_.profile == "quick" ? kQuickProbes : full_probes();
}

std::vector<std::string> FleetCmd::rank_options(const std::vector<std::string>& probes) const {
  std::vector<std::string> profile_opts, opts;
  if (a_.profile == "quick") profile_opts = kQuickOptions;
  profile_opts.insert(profile_opts.end(), a_.options.begin(), a_.options.end());
  for (const auto& o : profile_opts) {
    // A profile setting for a probe this run leaves out is dropped (run would only note it).
    const std::string probe = o.substr(0, o.find('.'));
    if (probes.empty() || std::find(probes.begin(), probes.end(), probe) != probes.end())
      opts.push_back(o);
  }
  return opts;
}

void FleetCmd::rank_status(FleetRank& r, const ChildOutcome& out, const fs::path& dir) const {
  if (out.timed_out) {
    r.status = {StatusCode::timeout, "killed after the per-rank timeout of " +
                                         std::to_string(static_cast<int>(rank_timeout())) + " s"};
  } else if (g_fleet_stop || out.rc == 128 + SIGTERM || out.rc == 128 + SIGINT) {
    // Stopped (a preempted job): what was measured is kept, and the GPU is not blamed.
    r.status = {StatusCode::interrupted,
                (g_fleet_stop ? stop_reason() : "the measurement was stopped by a signal") + "; " +
                    std::to_string(r.figures.size()) + " figure(s) measured before are kept"};
  } else if (out.rc == 0 && !r.result.is_null()) {
    r.status = {};
  } else if (out.rc == 1 && !r.result.is_null()) {
    r.status = {};
    r.note = "a probe failed: " + last_error_line(dir / "run.log");
  } else if (out.rc == 3 && !r.result.is_null() && r.result.contains("soak")) {
    r.status = {};  // run --duration: a figure drifted; the soak verdict says which
  } else if (out.rc == 5 && a_.require_idle) {  // run --require-idle: shared, not measured
    r.status = {StatusCode::busy,
                "not measured (--require-idle): " + last_error_line(dir / "run.log")};
  } else {
    r.status = {StatusCode::error, "gpudissect run exited with status " + std::to_string(out.rc) +
                                       ": " + last_error_line(dir / "run.log")};
  }
}

FleetRank FleetCmd::measure(int rank, int local_rank, const fs::path& dir) const {
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
    const std::vector<std::string> probes = rank_probes();
    const RunOutcome run =
        run_in_child(probes, r.device_id, rank_options(probes), dir, hang, /*soak=*/true);
    r.wall_seconds = seconds_since(t0);
    if (!run.result.is_null()) fleet_fill_from_result(r, run.result);
    rank_status(r, run.child, dir);
    if (const FleetInjection* s = injection("slow", rank); s && r.status.ok()) {
      std::ostringstream os;
      os << "slow: " << s->figure << " x " << s->factor;
      r.injected = os.str();
      if (!apply_slow_injection(r, s->figure, s->factor))
        r.injected += " (this rank has no such figure)";
    }
  } catch (const std::exception& e) {
    r.status = {StatusCode::error, e.what()};
    r.wall_seconds = seconds_since(t0);
  }
  return r;
}

fs::path FleetCmd::work_dir() const {
  if (!a_.work_dir.empty()) return a_.work_dir;
  std::string tmpl = (fs::temp_directory_path() / "gpudissect-fleet-XXXXXX").string();
  if (!mkdtemp(tmpl.data())) throw std::runtime_error("cannot create a folder in /tmp");
  return tmpl;
}

int FleetCmd::worker(int rank) {
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

int FleetCmd::local_count() const {
  if (a_.ranks > 0) return a_.ranks;
  if (a_.devices.size() > 1) return static_cast<int>(a_.devices.size());
  int cuda = 0;
  for (const auto& d : list_devices().devices) cuda += d.id.rfind("cuda:", 0) == 0;
  return std::max(1, cuda);
}

int FleetCmd::run_local() {
  const int n = local_count();
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
      setpgid(0, 0);              // the launcher ends a worker and its measurement together
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
    const double t = seconds_since(t0);
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
  std::vector<FleetRank> ranks = read_local_reports(dir, status);
  // Every rank of this node is done: the node's links, once, on the first rank's GPU.
  if (!a_.no_links && !ranks.empty() && !g_fleet_stop) {
    if (!a_.quiet) std::cerr << "fleet: links of this node\n";
    ranks[0].node_links = measure_links(dir / "links", pick_device(0));
  }
  const int rc = conclude(std::move(ranks), "local");
  return g_fleet_stop ? stopped_status() : rc;
}

std::vector<FleetRank> FleetCmd::read_local_reports(const fs::path& dir,
                                                    const std::vector<int>& status) const {
  std::vector<FleetRank> ranks;
  for (int k = 0; k < static_cast<int>(status.size()); ++k) {
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
        r.status = {StatusCode::interrupted, stop_reason() + " (the worker wrote no report)"};
      else
        r.status = {StatusCode::missing,
                    "the worker wrote no report (exit status " + std::to_string(status[k]) + ")"};
    }
    ranks.push_back(std::move(r));
  }
  return ranks;
}

}  // namespace gd::cli::fleet
