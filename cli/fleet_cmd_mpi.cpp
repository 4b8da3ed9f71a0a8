// gpudissect fleet under mpirun/srun: every rank measures its GPU, the node's first rank runs
// the node's links once the others finished, rank 0 gathers and judges (see
// fleet_cmd_impl.hpp for the design).
#ifdef GD_HAVE_MPI
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <iostream>
#include <thread>

#include "backends.hpp"
#include "fleet_cmd_impl.hpp"
#include "gpudissect/json_read.hpp"

#define OMPI_SKIP_MPICXX 1  // the C API only
#define MPICH_SKIP_MPICXX 1
#include <mpi.h>

namespace gd::cli::fleet {

namespace {

// Waits (at most `limit` seconds from t0) for every rank of the node to have measured:
// true when they all did. A rank that never finishes (dead) leaves the barrier open.
bool node_barrier(MPI_Comm node, Clock::time_point t0, double limit) {
  MPI_Request barrier;
  MPI_Ibarrier(node, &barrier);
  int done = 0;
  while (!done && seconds_since(t0) < limit) {
    // Stopped: the others were too and reach the barrier within the kill grace.
    if (g_fleet_stop) limit = std::min(limit, seconds_since(t0) + kKillGrace + 5);
    MPI_Test(&barrier, &done, MPI_STATUS_IGNORE);
    if (!done) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return done != 0;
}

// A rank other than 0: its report to rank 0, then the end of its part (0: rank 0's exit
// status is the fleet's).
int send_report(int rank, const FleetRank& mine, Clock::time_point t0, double gather_deadline) {
  const std::string payload = nlohmann::json(mine).dump();
  MPI_Request req;
  MPI_Isend(payload.data(), static_cast<int>(payload.size()), MPI_CHAR, 0, kTag, MPI_COMM_WORLD,
            &req);
  int done = 0;
  // Rank 0 stops listening at its deadline; past twice that it is gone.
  while (!done && seconds_since(t0) < 2 * gather_deadline) {
    MPI_Test(&req, &done, MPI_STATUS_IGNORE);
    if (!done) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  if (!done) {
    std::cerr << "fleet rank " << rank << ": rank 0 never took the report; aborting\n";
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  MPI_Finalize();
  return 0;
}

// Rank 0: every other rank's report until all came or the deadline passed; the silent ones
// listed as missing (interrupted when stopped). Returns how many never reported.
int gather_reports(std::vector<FleetRank>& ranks, Clock::time_point t0, double deadline) {
  const int size = static_cast<int>(ranks.size());
  std::vector<bool> got(size, false);
  got[0] = true;
  int left = size - 1;
  while (left > 0 && seconds_since(t0) < deadline) {
    // Stopped (Ctrl-C, Slurm's SIGTERM): the others were too, and send what they have soon.
    if (g_fleet_stop) deadline = std::min(deadline, seconds_since(t0) + kKillGrace + 5);
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
      ranks[src].status = {StatusCode::error, std::string("unreadable report: ") + e.what()};
    }
    ranks[src].rank = src;
    if (!got[src]) --left;
    got[src] = true;
  }
  for (int k = 1; k < size; ++k)
    if (!got[k] && g_fleet_stop) {
      ranks[k].rank = k;
      ranks[k].status = {StatusCode::interrupted, stop_reason() + " (no report came)"};
    } else if (!got[k]) {
      ranks[k].rank = k;
      ranks[k].status = {StatusCode::missing, "no report within " +
                                                  std::to_string(static_cast<int>(deadline)) +
                                                  " s (the rank hung or died)"};
    }
  return left;
}

}  // namespace

int FleetCmd::run_mpi() {
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
  fs::path dir = a_.work_dir.empty()
                     ? fs::temp_directory_path() / ("gpudissect-fleet-" + std::to_string(getpid()) +
                                                    "-rank-" + std::to_string(rank))
                     : fs::path(a_.work_dir) / ("rank-" + std::to_string(rank));
  if (rank == 0 && !a_.quiet)
    std::cerr << "fleet: " << size << " MPI rank(s); per-rank timeout "
              << static_cast<int>(rank_timeout()) << " s\n";
  FleetRank mine = measure(rank, local, dir);
  // The node's links, once, by its first rank, when every rank of the node has measured
  // (they would disturb each other's figures otherwise); skipped at the deadline, with the
  // reason, when a rank of the node never finished.
  bool node_done = true;
  if (!a_.no_links) {
    node_done = node_barrier(node, t0, node_deadline());
    if (local == 0 && node_done && !g_fleet_stop) {
      mine.node_links = measure_links(dir / "links", pick_device(0));
    } else if (local == 0) {
      NodeLinks n;
      n.status = {StatusCode::skipped, g_fleet_stop
                                           ? "stopped by the user"
                                           : "a rank of this node had not finished measuring "
                                             "by the deadline"};
      mine.node_links = n;
    }
  }
  if (node_done) MPI_Comm_free(&node);  // an open barrier keeps it (the job ends in Abort)
  if (rank != 0) return send_report(rank, mine, t0, gather_deadline());
  std::vector<FleetRank> ranks(size);
  ranks[0] = std::move(mine);
  const int left = gather_reports(ranks, t0, gather_deadline());
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

}  // namespace gd::cli::fleet

#endif  // GD_HAVE_MPI
