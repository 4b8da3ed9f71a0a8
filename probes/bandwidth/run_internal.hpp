// The bandwidth probe's measurement, shared by its files: the context the parts run in
// (run.cpp holds the options and the run; run_footprint.cpp the footprint sweeps;
// run_parts.cpp the scaling, shared, constant and host parts; run_figures.cpp the headline
// figures; run_levels.cpp the naming of a curve's plateaus).
#pragma once

#include <atomic>
#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "bandwidth/bandwidth.hpp"
#include "bandwidth/run.hpp"
#include "gpudissect/budget.hpp"
#include "gpudissect/probe.hpp"  // ProbeError
#include "gpudissect/stopwatch.hpp"
#include "gpudissect/sweep.hpp"
#include "gpudissect/units.hpp"

namespace gd::bandwidth_run {

using Clock = std::chrono::steady_clock;

// How the probe's time budget (bandwidth.budget) is split: footprint sweeps, shared-memory
// strides, host link. An H200 spends ~5, ~1 and ~2 s on them.
constexpr double kFootprintShare = 0.6, kSharedShare = 0.15, kHostShare = 0.25;
// Below this rate (bytes per second within a launch, the calibration's) a device is planned
// as slow (slow_device: one point per doubling unless points_per_doubling was set, and the
// rest); an H200 moves ~1000x more. A CPU device is slow whatever its rate.
constexpr double kSlowDeviceBytesPerSecond = 100e9;
// A curve's memory plateau (or the latency map's memory) is believed below the API's cache
// size only where it starts past this fraction of it (adopt_memory_plateau, last_cache).
constexpr double kApiCacheShare = 8;
// Bytes one timed launch moves. A launch has ~6 us of fixed cost on an H200 (the event, the
// grid's ramp-up and tail): at 32 TB/s from L1, 1 GiB per launch (40 us) read 16 % low in
// --quick runs, so points inside the caches move 8 GiB (~270 us) in every mode;
// they are cheap on a GPU, and the budget planner trims them on a slow device. Device-memory
// points: 4 GiB (~0.9 ms), --quick too; 1 GiB with --quick on a slow device.
constexpr uint64_t kInCacheTargetBytes = 8ull << 30;
constexpr uint64_t kMemoryTargetBytes = 4ull << 30;
constexpr uint64_t kQuickMemoryTargetBytes = 1ull << 30;

struct Ctx {
  Device& dev;
  BandwidthKernels& k;
  const BandwidthOptions& opt;
  Progress& progress;
  const std::atomic<bool>& stop;
  BandwidthProbeResult& out;
  // The device as the sweeps see it; its l2_bytes becomes the last cache a curve itself
  // showed (adopt_memory_plateau) when that contradicts the API.
  DeviceInfo& info;
  // Where device memory starts is known (from the latency map or a curve's own plateau), not
  // only the API's cache size: a slow device's sweeps then keep their largest point in budget.
  bool memory_known = false;
  std::string memory_curve;  // the curve that showed it, if one did
  // An OpenCL device of CPU type (PoCL): planned as a slow device whatever its speed.
  bool cpu_device = false;
  // Per read curve: blocks x chunk, the footprint from which every block reads its own data.
  std::map<std::string, double> own_bytes = {};
  // The footprint sweeps' time budget: seconds spent so far, curves still to run, and the
  // rate the last point moved data at (the next curve's first launches are planned from it).
  double footprint_spent = 0;
  int footprint_curves_left = 1;
  double other_spent = 0;  // shared and host parts
  std::optional<double> rate = {};
  std::optional<double> launch_rate = {};  // the calibration's, within its launch
  // The probe's time budget: the option's, doubled for --quick on a slow device (below).
  double budget_seconds = opt.budget_seconds;
  // Within a launch, at the last curve's largest footprint past 4x the last cache.
  std::optional<double> memory_rate = {};
};

// A variant of a stream kernel: non-persistent grid, vectors per thread, and where its
// sweep starts (flat grids only run where chunks far outnumber resident blocks).
struct Variant {
  bool flat = false;
  int unroll = 0;  // reads, persistent grid: 1 = one vector per chunk, chunks rotated
  bool prefetch_256 = false;
  int threads = 0;  // flat grids: threads per block (0: the backend's default)
};

// A point's figures from its launch times: GB/s of read + write, and bytes per cycle per
// SM at the clock the kernel itself saw.
void fill_figures(BandwidthPoint& p, const Traffic& t, const std::vector<double>& seconds,
                  const std::vector<double>& clock_mhz, int sms);
std::string fp_label(double bytes);
void insert_sorted(BandwidthCurve& c, BandwidthPoint p);
// A point left out (no memory for it, or over the sweep's time budget), with the reason.
void insert_skipped(BandwidthCurve& c, double x, std::string reason);

// Tells the sweep's planner how long a point took when it goes out of scope, also when the
// point failed, so the time left stays right.
struct PointTimer {
  SweepPlanner& plan;
  double work;
  int launches;
  Clock::time_point t0 = Clock::now();
  ~PointTimer() { plan.record(work, launches, seconds_since(t0)); }
};

// Wraps one measurement: allocation failures skip the point, other errors mark the curve
// and stop the probe with the point named.
template <class F>
void guarded_point(BandwidthCurve& curve, const std::string& part, double x, F&& body) {
  try {
    body();
  } catch (const AllocationFailed& e) {
    insert_skipped(curve, x, e.what());
  } catch (const std::exception& e) {
    curve.status = {StatusCode::error, e.what()};
    throw ProbeError("bandwidth probe, " + part + " at " + format_fixed(x, 0) + ": " + e.what());
  }
}

const BandwidthPoint* best_point(const BandwidthCurve& c, double lo, double hi);
void add_figure(BandwidthProbeResult& out, const std::string& name, const BandwidthCurve& c,
                const BandwidthPoint* p, const std::string& where);
// A CPU (by its type, or by a calibration rate below kSlowDeviceBytesPerSecond): one point
// per doubling, sweeps in order until a curve shows where memory starts, and the planning
// below that says "slow device". A 16-core VM's CPU through PoCL read 200 GB/s in cache and
// was planned like a GPU: 34 points a curve, and its read curve ended at 724 MiB, short of
// the 1.2 GiB its reported 300 MiB L3 asked for.
bool slow_device(const Ctx& c);
// The median SM clock the probe's kernels have measured so far.
std::optional<double> probe_clock(const BandwidthProbeResult& out);

// The parts (run_footprint.cpp, run_parts.cpp).
void footprint_curve(Ctx& c, BwOp op, BwLoad load, const std::string& name, bool streaming = false,
                     Variant v = {});
void scaling_curve(Ctx& c, const std::string& name, BwLoad load, bool dram);
void shared_curves(Ctx& c);
void constant_point(Ctx& c);
void host_curves(Ctx& c);

// Headline figures from the curves, in a fixed order.
// own_bytes: the smallest footprint at which every block of the persistent stream grid
// reads chunks of its own (blocks x chunk; 528 x 16 KiB on an H200).
void make_figures(BandwidthProbeResult& out, const DeviceInfo& info,
                  const std::map<std::string, double>& own_bytes);

}  // namespace gd::bandwidth_run
