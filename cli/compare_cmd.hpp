// The `compare` and `reference` subcommands: comparisons of saved results with each other
// and with the reference database, and the baseline gate (exit status 3 on a regression).
#pragma once

#include <memory>
#include <string>

namespace CLI {
class App;
}

namespace gd::cli {

class CompareCommands {
 public:
  virtual ~CompareCommands() = default;
  // Whether the command line chose one of these subcommands (after parsing).
  virtual bool chosen() const = 0;
  // Runs the chosen one: 0 done, 3 a regression against the baseline; throws UsageError
  // (exit 2) on bad input. argv0 locates the reference database next to the executable.
  virtual int run(const std::string& argv0) = 0;
};

// Registers `compare` and `reference` (list, show) on the app.
std::unique_ptr<CompareCommands> add_compare_commands(CLI::App& app);

}  // namespace gd::cli
