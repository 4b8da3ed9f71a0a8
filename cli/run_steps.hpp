// The steps of `gpudissect run`, shared by a single run and a soak: validate the options,
// place the outputs, check the GPU is ours, measure the probes once, write the reports.
#pragma once

#include <any>
#include <atomic>
#include <condition_variable>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "gpudissect/device.hpp"
#include "gpudissect/gpu_state.hpp"
#include "gpudissect/progress.hpp"
#include "gpudissect/result.hpp"
#include "gpudissect/stopwatch.hpp"
#include "report.hpp"
#include "run_cmd.hpp"

namespace gd::cli {

// Exit statuses of `run` beyond 0, 1 and 2 (docs/running.md lists them all).
constexpr int kExitSoakRegressed = 3;  // a soak figure got worse than its first repetition
constexpr int kExitGpuBusy = 5;        // --require-idle and another process uses the GPU
constexpr int kExitDeadline = 6;       // --deadline passed before every probe finished

// Set by SIGINT/SIGTERM or by the deadline: the probes stop after the point in flight.
extern std::atomic<bool> g_stop;
void install_stop_signals();
int stop_signal();  // the signal that stopped the run, 0 for none

// The probes to run and each one's parsed options; throws UsageError naming what is wrong.
struct RunPlan {
  std::vector<std::string> probes;
  std::map<std::string, std::any> parsed;
};
RunPlan plan_run(const RunArgs& a);

struct RunOutputs {
  std::filesystem::path out_dir, json, html;
};
// Where the files go; throws UsageError for an output that cannot be written.
RunOutputs plan_outputs(const RunArgs& a, const DeviceInfo& device);

std::unique_ptr<Progress> make_progress(bool quiet);

// One reading of the GPU's state (NVML), `when` "start", "before" or "after" `probe`.
GpuStateSample sample_gpu(Device& dev, const std::string& probe, const char* when);

// The GPU's state before the first kernel. Returns kExitGpuBusy where --require-idle refuses
// a shared GPU (said on stderr), else 0; `samples` gets the reading.
int check_gpu_first(Device& dev, const RunArgs& a, const std::string& first_probe,
                    Progress& progress, std::vector<GpuStateSample>& samples);

// A hard deadline (--deadline): at `seconds` it sets g_stop; the probe in flight stops after
// its point and the rest are skipped. Where the run has not disarmed it kGrace later (a point
// that does not end), it writes the last fallback JSON it was given and exits at once.
class Deadline {
 public:
  static constexpr double kGraceSeconds = 5;
  explicit Deadline(std::optional<double> seconds);
  ~Deadline();
  bool armed() const { return armed_; }
  bool hit() const { return hit_; }
  // What to write should the run not stop in time, and where: the JSON as it would be with
  // every probe not yet finished skipped.
  void set_file(const std::filesystem::path& file);
  void set_fallback(std::string text);
  void disarm();

 private:
  bool armed_ = false;
  std::atomic<bool> hit_{false};
  std::mutex m_;
  std::condition_variable cv_;
  bool done_ = false;
  std::filesystem::path file_;
  std::string text_;
  std::thread thread_;
};

// What a run holds from the device's opening to its last file.
struct RunSession {
  Device& dev;
  const RunOutputs& out;
  Progress& progress;
  std::vector<GpuStateSample>& samples;  // the GPU's state readings so far
  Deadline& deadline;
  RunResult result;  // tool, device and provenance filled; the probes to come
};

// Measures every probe of the plan once into `r` (its gpu_state, probes and figures),
// calling `save` after each probe. Returns 1 where a measurement failed, else 0.
int measure_probes(Device& dev, const RunPlan& plan, RunResult& r, Progress& progress,
                   std::vector<GpuStateSample>& samples, Deadline& deadline,
                   const std::function<void(const RunResult&)>& save);

// The CSVs and (unless --no-html) the HTML report of `r`; returns the files written.
std::vector<std::filesystem::path> write_reports(const RunArgs& a, const RunOutputs& out,
                                                 const RunResult& r);

// A run's exit status from its measurements' (0 or 1), a signal and the deadline.
int run_exit_status(int measured, const Deadline& deadline);

// Where the files went, on stderr, and what stopped the run, if anything.
void say_written(const std::vector<std::filesystem::path>& files);

// The reference GPUs for the report's summary (`run` and `report` pages).
void attach_references(report::HtmlOptions& ho, ReferenceDb& db);

std::string join(const std::vector<std::string>& v, const char* sep = ", ");

}  // namespace gd::cli
