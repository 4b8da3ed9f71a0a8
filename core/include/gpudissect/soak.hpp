// Soak runs (`run --duration`): the quick profile repeated until the time is up, and each
// headline figure followed over the repetitions: its first, last and worst value, its drift
// and whether it got worse than the first repetition by more than the tolerance (a GPU that
// is only sick when hot). GPU-free: the command line feeds it one repetition at a time.
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "gpudissect/figure.hpp"
#include "gpudissect/gpu_state.hpp"

namespace gd {

// "20s", "10m", "1.5h", "90" (seconds) -> seconds; nullopt for anything else, for zero and
// for more than a week.
std::optional<double> parse_duration(const std::string& s);

// Memory error counts since the driver loaded (NVML's volatile counters).
struct EccCounts {
  uint64_t corrected = 0;
  uint64_t uncorrected = 0;
};

// One headline figure over the repetitions.
struct SoakSeries {
  std::string id, label, unit;
  bool higher_is_better = true;
  std::optional<double> resolution;           // from the first repetition's figure
  std::vector<std::optional<double>> values;  // per repetition: the median, absent if not ok
  std::vector<std::string> statuses;          // per repetition; "missing" where absent

  std::optional<double> first() const;             // the first repetition's value
  std::optional<double> last() const;              // the last repetition's value
  std::optional<std::size_t> worst_index() const;  // lowest (or highest, latencies) value
  std::optional<double> worst() const;
  // (last - first) / first and (worst - first) / first; nullopt without both or a zero first.
  std::optional<double> drift() const;
  std::optional<double> worst_change() const;
  // The median of the last third of the repetitions against that of the first third
  // (with fewer than three, the last against the first); `spread` gets the first third's
  // IQR over its median.
  std::optional<double> sustained_change(double* spread = nullptr) const;
  // Worse by more than the larger of `tolerance`, the figure's resolution and the first
  // third's spread, as sustained_change measures it; or failed (not missing) after being ok
  // in the first repetition. A single slow repetition is reported (worst), not judged.
  bool regressed(double tolerance) const;
};

struct SoakRepetition {
  double started_s = 0;  // since the soak began
  double wall_s = 0;
  int exit_status = 0;  // what a single run would have exited with
};

class Soak {
 public:
  Soak(double duration_s, double tolerance) : duration_s_(duration_s), tolerance_(tolerance) {}
  // One finished (or interrupted) repetition: its figures and its GPU state readings.
  void add(const SoakRepetition& rep, const std::vector<Figure>& figures,
           const std::optional<GpuState>& state);
  void set_ecc(std::optional<EccCounts> before, std::optional<EccCounts> after) {
    ecc_before_ = before;
    ecc_after_ = after;
  }
  void set_finished(bool complete, double elapsed_s) {
    complete_ = complete;
    elapsed_s_ = elapsed_s;
  }
  const std::vector<SoakSeries>& series() const { return series_; }
  std::size_t repetitions() const { return reps_.size(); }
  std::vector<std::string> regressions() const;  // ids, in first-seen order
  // Throttle reason -> readings that had it active; nullopt where no reading knew the state.
  std::optional<std::map<std::string, int>> throttle_events() const;
  nlohmann::json to_json() const;

 private:
  double duration_s_, tolerance_;
  double elapsed_s_ = 0;
  bool complete_ = false;
  std::vector<SoakRepetition> reps_;
  std::vector<SoakSeries> series_;
  std::map<std::string, int> throttle_;
  int state_samples_known_ = 0;
  std::optional<EccCounts> ecc_before_, ecc_after_;
};

}  // namespace gd
