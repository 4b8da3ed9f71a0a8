// Headline figures in Prometheus' text exposition format, for node-exporter's textfile
// collector (`run --prometheus FILE`, `fleet --prometheus FILE`). GPU-free: the writers only
// format; the command line writes the text with report::write_file (temporary file and
// rename, so the collector never reads half a file).
//
// Every headline figure with a value is a gauge of its own, named after its id
// (gpudissect_bandwidth_dram_read), labelled with the figure id, its unit and the GPU's
// identity (uuid, pci_bus_id, host, backend; fleets add the rank), as dcgm-exporter names a
// field per metric. gpudissect_run_timestamp_seconds says when each GPU's run started; a
// fleet adds gpudissect_fleet_gpu_verdict (one series per verdict, 1 for the GPU's own),
// gpudissect_fleet_gpu_healthy and gpudissect_fleet_exit_status.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "gpudissect/figure.hpp"

namespace gd {

struct RunResult;
struct FleetReport;

// A metric name: [a-zA-Z_:][a-zA-Z0-9_:]*; every other character becomes '_', and a name
// that would start with a digit gets a leading '_'.
std::string prometheus_metric_name(const std::string& s);
// A label value between double quotes: backslash, double quote and line feed escaped.
std::string prometheus_label_value(const std::string& s);
// A sample value: shortest round-tripping form, NaN, +Inf or -Inf.
std::string prometheus_number(double v);
// "2026-11-25T10:00:00Z" -> seconds since 1970; nullopt when not that form.
std::optional<double> iso8601_to_unix(const std::string& s);

// One GPU's series.
struct PrometheusGpu {
  std::string uuid, pci_bus_id, host, backend;
  std::optional<int> rank;             // fleets only
  std::vector<Figure> figures;         // only ok figures with a finite value are written
  std::optional<double> started_unix;  // the run's start
  std::optional<std::string> verdict;  // fleets only: to_string(GpuVerdict)
};

// The exposition text: HELP and TYPE once per metric, then its samples, one family after
// the other. `fleet_exit`: fleets only.
std::string prometheus_text(const std::vector<PrometheusGpu>& gpus,
                            std::optional<int> fleet_exit = std::nullopt);

// This machine's host name ("?" when it has none): the host of a run's series.
std::string prometheus_host_name();
// A run's figures; `host` is the machine it ran on.
std::string prometheus_run(const RunResult& r, const std::string& host);
// A fleet: every rank's figures and verdict, and the fleet's exit status.
std::string prometheus_fleet(const FleetReport& rep);

}  // namespace gd
