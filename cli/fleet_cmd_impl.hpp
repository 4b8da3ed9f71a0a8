// The inside of `gpudissect fleet` (cli/fleet_cmd.hpp), shared by its parts:
//   fleet_cmd.cpp        options, checks, --collect, judging and writing the outputs
//   fleet_cmd_proc.cpp   child processes with a timeout, signals, the profiles
//   fleet_cmd_local.cpp  one rank's measurement, local ranks as processes
//   fleet_cmd_mpi.cpp    ranks under mpirun/srun
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
//  * With --collect nothing is measured: the ranks are run JSONs that separate `gpudissect
//    run` invocations wrote, judged as a live fleet's.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "fleet_cmd.hpp"
#include "gpudissect/compare.hpp"
#include "gpudissect/fleet.hpp"
#include "gpudissect/stopwatch.hpp"

namespace gd::cli::fleet {

namespace fs = std::filesystem;

constexpr double kKillGrace = 10;  // seconds between SIGTERM and SIGKILL of a measurement
constexpr int kTag = 1207;         // the MPI tag of a rank's report

extern std::atomic<bool> g_fleet_stop;
extern std::atomic<int> g_fleet_signal;
extern "C" void on_fleet_signal(int sig);
// The exit status of a launcher stopped by a signal: 128 + the signal (130 Ctrl-C, 143
// SIGTERM), never 3: a preempted job says nothing about its GPUs.
int stopped_status();
std::string stop_reason();
// In a child just forked: end with SIGTERM when the parent dies (SIGKILL of the launcher
// included), so that no rank or measurement outlives it. `parent` is the parent's pid before
// the fork: when it has already gone, the child leaves at once.
void die_with_parent(pid_t parent);

using Clock = std::chrono::steady_clock;
std::string host_name();
std::string self_exe(const char* argv0);
const char* env(const char* name);
std::string last_error_line(const fs::path& log);

struct ChildOutcome {
  int rc = -1;  // exit status; 128 + signal when killed by one
  bool timed_out = false;
};
// Runs argv (argv[0] the program) with stdout and stderr into `log`, killing it after
// `timeout` seconds. hang: the child never execs and waits forever (fault injection).
ChildOutcome run_child(const std::vector<std::string>& argv, const fs::path& log, double timeout,
                       bool hang);

struct FleetArgs {
  std::string profile = "quick";
  std::vector<std::string> probes;
  std::vector<std::string> devices;
  std::vector<std::string> options;
  std::string baseline, tolerance = "5%";
  double threshold = 3.5;
  std::string min_deviation = "5%";
  std::string html = "fleet.html", json;
  std::string prometheus;            // "": none
  std::vector<std::string> collect;  // run JSONs or folders of them: judge, do not measure
  std::optional<double> rank_timeout;
  int ranks = 0;
  bool local = false, quiet = false;
  bool no_links = false;
  bool require_idle = false;  // passed to each rank's run: a shared GPU is refused, not measured
  std::string duration;       // soak: passed to each rank's run with --tolerance ("": none)
  std::optional<double> duration_s;
  std::vector<std::string> inject;
  std::string work_dir;
};

// The quick profile: what exposes a sick GPU in well under a minute per GPU: device-memory
// and L2 bandwidth (with the telemetry the bandwidth probe records: clocks, throttle
// reasons), FP32 and tensor-core rates. Options a user adds with --option come after these
// and override them.
extern const std::vector<std::string> kQuickProbes;
extern const std::vector<std::string> kQuickOptions;
// The full profile: every probe but `links`, which measures every GPU of the node from one
// process; the ranks of a node, one per GPU, running it at once would measure each other.
std::vector<std::string> full_probes();

class FleetCmd : public FleetCommand {
 public:
  explicit FleetCmd(CLI::App& app);
  bool chosen() const override;
  int run(int argc, char** argv) override;

 private:
  CLI::App* cmd_ = nullptr;
  FleetArgs a_;
  int argc_ = 0;
  char** argv_ = nullptr;
  std::string exe_;
  std::vector<FleetInjection> injections_;
  FleetOptions fopt_;
  std::optional<CompareInput> baseline_;

  void add_measure_options();
  void add_output_options();

  // A soak's rank runs for the duration, then finishes its repetition: the default timeout
  // covers both.
  double rank_timeout() const {
    if (a_.rank_timeout) return *a_.rank_timeout;
    return (a_.profile == "full" ? 7200 : 300) + a_.duration_s.value_or(0);
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
                          const std::vector<std::string>& options, const fs::path& dir, bool hang,
                          bool soak = false) const;
  // The links probe once for this node, in a child with the rank timeout; never throws. Its
  // figures are the links.* of the run; its status the probe's own (unsupported on a backend
  // without links kernels, with the reason).
  NodeLinks measure_links(const fs::path& dir, const std::string& device_id) const;

  void validate();
  void check_probe_options() const;
  void check_outputs() const;
  const FleetInjection* injection(const char* kind, int rank) const;
  std::string pick_device(int local_rank) const;
  // One rank's measurement, in a child process with a timeout; never throws.
  FleetRank measure(int rank, int local_rank, const fs::path& dir) const;
  // The probes and options of this rank's run: the profile's, then the user's.
  std::vector<std::string> rank_probes() const;
  std::vector<std::string> rank_options(const std::vector<std::string>& probes) const;
  // The rank's status from its child's outcome (its figures are read already).
  void rank_status(FleetRank& r, const ChildOutcome& out, const fs::path& dir) const;
  std::string command_line() const;
  fs::path work_dir() const;
  // Rank 0's part: judge, write, print. Returns the exit status.
  int conclude(std::vector<FleetRank> ranks, const std::string& mode) const;

  // ---- --collect ----
  int collect();

  // ---- local processes ----
  int worker(int rank);
  int run_local();
  int local_count() const;
  std::vector<FleetRank> read_local_reports(const fs::path& dir,
                                            const std::vector<int>& status) const;

  // ---- MPI ----
#ifdef GD_HAVE_MPI
  int run_mpi();
#endif
};

}  // namespace gd::cli::fleet
