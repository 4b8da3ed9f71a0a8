// The contract every probe fulfils. A probe is one unit: its name, its options (defaults,
// validation, help), how it runs against a Device, its result's JSON both ways, its
// headline figures and the ids they may carry. Its report pieces (terminal summary, CSV
// files, HTML section) are the report side's (report/probe_report.hpp), so no probe
// depends on a report header. A ProbeRegistry lists the probes; the command line, the JSON
// reader and the report writers iterate it, so adding a probe is its own files plus one
// registry line (probes/registry.cpp).
#pragma once

#include <any>
#include <atomic>
#include <filesystem>
#include <functional>
#include <iosfwd>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <vector>

#include "gpudissect/device.hpp"
#include "gpudissect/figure.hpp"
#include "gpudissect/status.hpp"

namespace gd {

class Progress;  // gpudissect/progress.hpp
struct RunResult;

// A backend failure, with probe, path and point named in what().
struct ProbeError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Work a probe can do before its turn, beside the probes that measure first: compiling its
// generated kernels, which NVRTC does on the host's cores in seconds (5 s of a fresh H200
// machine's 17.5 s quick run, 35 s of its full run). It stops early once `cancel` is set.
using AheadWork = std::function<void(const std::atomic<bool>& cancel)>;

// One `--option PROBE.KEY=VALUE` setting: what `--help` and docs/probes/ show.
struct OptionSpec {
  std::string key;            // "max_footprint"
  std::string default_value;  // as text, "" where the default depends on the device
  std::string help;
};
using OptionValues = std::map<std::string, std::string>;  // KEY -> VALUE, prefix stripped

class Probe {
 public:
  virtual ~Probe() = default;
  virtual std::string name() const = 0;         // "atomics": the CLI's and the JSON's key
  virtual std::string description() const = 0;  // one line for `--help` and `list`
  virtual std::vector<OptionSpec> options() const = 0;
  // Validated options of this probe's own type. Throws std::invalid_argument naming the key
  // on an unknown key or a bad value.
  virtual std::any parse_options(const OptionValues& kv) const = 0;
  // An empty result of this probe's own type.
  virtual std::any new_result() const = 0;
  // Fills `result` as it goes, so whatever was measured survives an exception or `stop`
  // (set by Ctrl-C or SIGTERM). Throws on a backend failure after recording it in `result`.
  // `earlier` holds the probes that already ran on this device in this run (the bandwidth
  // probe names its plateaus after the latency probe's levels, for example).
  virtual void run(Device& dev, const std::any& options, const RunResult& earlier,
                   Progress& progress, const std::atomic<bool>& stop, std::any& result) const = 0;
  // Called on the run's thread for every probe of the run before the first one measures;
  // returns the work the probe can do ahead (or nothing), which the run starts on one
  // background thread at low priority. It must be safe beside any probe's measurement
  // (KernelSet::compiles_beside_measurements says which backends' compiles are), and run()
  // must give the same result whether that work finished, was cancelled or never ran: it is
  // a head start, not a step of the probe.
  virtual AheadWork ahead(Device& /*dev*/, const std::any& /*options*/) const { return {}; }
  // The result's status (ok, error, interrupted ...), which the CLI sets on failure.
  virtual Status& status(std::any& result) const = 0;
  virtual double wall_seconds(const std::any& result) const = 0;

  virtual nlohmann::json to_json(const std::any& result) const = 0;
  // Throws nlohmann::json::exception on a malformed document.
  virtual std::any from_json(const nlohmann::json& j) const = 0;

  // Headline figures with stable ids ("latency.global.L1"), from the run (a probe may read
  // other probes' results, e.g. to name levels).
  virtual std::vector<Figure> figures(const RunResult& r) const = 0;
  // Every id figures() may return: exact ids and patterns for the families
  // ("latency.{path}.{level}"; syntax and matcher: gpudissect/figure_ids.hpp). An id is
  // never built from a display name, so a name nobody declared yields no figure.
  virtual std::vector<std::string> figure_ids() const = 0;
};

// Implements the type-erased plumbing of Probe for a probe whose options and result are
// plain types; a concrete probe writes only the typed functions.
template <class Options, class Result>
class TypedProbe : public Probe {
 public:
  std::any parse_options(const OptionValues& kv) const final { return parse(kv); }
  std::any new_result() const final { return Result{}; }
  void run(Device& dev, const std::any& options, const RunResult& earlier, Progress& progress,
           const std::atomic<bool>& stop, std::any& result) const final {
    run_typed(dev, std::any_cast<const Options&>(options), earlier, progress, stop,
              std::any_cast<Result&>(result));
  }
  AheadWork ahead(Device& dev, const std::any& options) const final {
    return ahead_typed(dev, std::any_cast<const Options&>(options));
  }
  Status& status(std::any& result) const final { return std::any_cast<Result&>(result).status; }
  double wall_seconds(const std::any& result) const final {
    return std::any_cast<const Result&>(result).wall_seconds;
  }
  nlohmann::json to_json(const std::any& result) const final {
    return nlohmann::json(std::any_cast<const Result&>(result));
  }
  std::any from_json(const nlohmann::json& j) const final { return j.get<Result>(); }

 protected:
  virtual Options parse(const OptionValues& kv) const = 0;
  virtual void run_typed(Device& dev, const Options& opt, const RunResult& earlier,
                         Progress& progress, const std::atomic<bool>& stop, Result& out) const = 0;
  virtual AheadWork ahead_typed(Device& /*dev*/, const Options& /*opt*/) const { return {}; }
};

// The probes in the order they run and appear in reports.
class ProbeRegistry {
 public:
  void add(std::unique_ptr<Probe> p);
  const Probe* find(const std::string& name) const;  // nullptr if unknown
  std::vector<std::string> names() const;
  std::vector<const Probe*> all() const;

 private:
  std::vector<std::unique_ptr<Probe>> probes_;
};

}  // namespace gd
