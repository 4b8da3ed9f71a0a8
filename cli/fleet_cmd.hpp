// The `fleet` subcommand: every rank (one per GPU; MPI ranks, or local processes without
// MPI) measures its GPU, rank 0 gathers the results, judges every GPU against the others
// (and a baseline), writes the fleet JSON and HTML page, and exits 3 when a GPU should be
// drained.
#pragma once

#include <memory>

namespace CLI {
class App;
}

namespace gd::cli {

class FleetCommand {
 public:
  virtual ~FleetCommand() = default;
  virtual bool chosen() const = 0;
  // 0 every GPU healthy; 3 an outlier, regression or failed rank; throws UsageError (2).
  virtual int run(int argc, char** argv) = 0;
};

std::unique_ptr<FleetCommand> add_fleet_command(CLI::App& app);

}  // namespace gd::cli
