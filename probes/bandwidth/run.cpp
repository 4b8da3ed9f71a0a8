#include "bandwidth/run.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <functional>
#include <sstream>
#include <stdexcept>

#include "bandwidth/bandwidth.hpp"
#include "bandwidth/run_internal.hpp"
#include "gpudissect/budget.hpp"
#include "gpudissect/head_start.hpp"
#include "gpudissect/levels.hpp"
#include "gpudissect/probe.hpp"  // ProbeError
#include "gpudissect/stats.hpp"
#include "gpudissect/stopwatch.hpp"
#include "gpudissect/sweep.hpp"
#include "gpudissect/units.hpp"

namespace gd {

namespace {

bool truthy(const std::string& v) { return v == "1" || v == "true" || v == "yes" || v == "on"; }

uint64_t bytes_option(const std::string& k, const std::string& v) {
  if (auto b = parse_bytes(v)) return *b;
  throw std::invalid_argument("bandwidth option '" + k + "': '" + v + "' is not a size (e.g. 4G)");
}

int int_option(const std::string& k, const std::string& v, int lo, int hi) {
  try {
    std::size_t used = 0;
    const int n = std::stoi(v, &used);
    if (used == v.size() && n >= lo && n <= hi) return n;
  } catch (const std::exception&) {
  }
  throw std::invalid_argument("bandwidth option '" + k + "': '" + v +
                              "' is not a whole number in " + std::to_string(lo) + ".." +
                              std::to_string(hi));
}

}  // namespace

namespace bandwidth_run {

// A point's figures from its launch times: GB/s of read + write, and bytes per cycle per
// SM at the clock the kernel itself saw.
void fill_figures(BandwidthPoint& p, const Traffic& t, const std::vector<double>& seconds,
                  const std::vector<double>& clock_mhz, int sms) {
  p.read_bytes = t.read_bytes;
  p.write_bytes = t.write_bytes;
  p.sms = sms;
  std::vector<double> gbps, bpc;
  for (double s : seconds)
    if (s > 0) gbps.push_back(double(t.total()) / s / 1e9);
  if (gbps.empty()) {
    p.status = {StatusCode::error, "no timings"};
    return;
  }
  p.seconds = summarize(seconds);
  p.gbps = summarize(gbps);
  if (!clock_mhz.empty()) {
    p.clock_mhz = median(clock_mhz);
    if (sms > 0)
      for (double g : gbps) bpc.push_back(g * 1e9 / (*p.clock_mhz * 1e6) / sms);
    if (!bpc.empty()) p.bytes_per_clk_sm = summarize(bpc);
  }
}

std::string fp_label(double bytes) { return format_bytes(bytes); }

void insert_sorted(BandwidthCurve& c, BandwidthPoint p) {
  auto it = std::lower_bound(c.points.begin(), c.points.end(), p.x,
                             [](const BandwidthPoint& a, double x) { return a.x < x; });
  if (it != c.points.end() && it->x == p.x)
    *it = std::move(p);
  else
    c.points.insert(it, std::move(p));
}

// A point left out (no memory for it, or over the sweep's time budget), with the reason.
void insert_skipped(BandwidthCurve& c, double x, std::string reason) {
  BandwidthPoint p;
  p.x = x;
  p.status = {StatusCode::skipped, std::move(reason)};
  insert_sorted(c, std::move(p));
}

const BandwidthPoint* best_point(const BandwidthCurve& c, double lo, double hi) {
  const BandwidthPoint* best = nullptr;
  for (const BandwidthPoint& p : c.points)
    if (p.status.ok() && p.gbps && p.x >= lo && p.x <= hi &&
        (!best || p.gbps->median > best->gbps->median))
      best = &p;
  return best;
}

void add_figure(BandwidthProbeResult& out, const std::string& name, const BandwidthCurve& c,
                const BandwidthPoint* p, const std::string& where) {
  if (!p || !p->gbps) return;
  BandwidthFigure f;
  f.name = name;
  f.gbps = *p->gbps;
  f.bytes_per_clk_sm = p->bytes_per_clk_sm;
  f.clock_mhz = p->clock_mhz;
  f.timed_instruction = c.timed_instruction;
  f.where = where;
  out.figures.push_back(std::move(f));
}

bool slow_device(const Ctx& c) {
  return c.cpu_device || (c.launch_rate && *c.launch_rate < kSlowDeviceBytesPerSecond);
}

std::optional<double> probe_clock(const BandwidthProbeResult& out) {
  std::vector<double> clocks;
  for (const auto* m : {&out.footprint, &out.scaling, &out.shared, &out.other})
    for (const auto& [name, c] : *m)
      for (const BandwidthPoint& p : c.points)
        if (p.clock_mhz && c.note.find("probe's median SM clock") == std::string::npos)
          clocks.push_back(*p.clock_mhz);
  if (clocks.empty()) return std::nullopt;
  return median(clocks);
}

}  // namespace bandwidth_run

using namespace bandwidth_run;

namespace {

// Device-memory writes and copies on non-persistent grids (what gpu-stream and
// BabelStream run): plain or evict-first stores, copies also through the read-only path.
// The summary keeps the best variant. CUDA only.
void add_flat_curves(Ctx& c, std::vector<std::function<void()>>& curves) {
  // One vector per thread measured best on the H200 (4 per thread: -0.5% writes, -4%
  // copies), so only that is kept.
  const Variant flat{true, 1};
  curves.push_back(
      [=, &c] { footprint_curve(c, BwOp::write, BwLoad::cached, "write_flat", false, flat); });
  curves.push_back([=, &c] {
    footprint_curve(c, BwOp::write, BwLoad::cached, "write_flat_streaming", true, flat);
  });
  curves.push_back(
      [=, &c] { footprint_curve(c, BwOp::copy, BwLoad::cached, "copy_flat", false, flat); });
  curves.push_back([=, &c] {
    footprint_curve(c, BwOp::copy, BwLoad::cached, "copy_flat_streaming", true, flat);
  });
  if (c.k.supports(BwOp::copy, BwLoad::readonly).ok)
    curves.push_back([=, &c] {
      footprint_curve(c, BwOp::copy, BwLoad::readonly, "copy_flat_nc_streaming", true, flat);
    });
  // Loads with the L2 prefetch-size hint (.L2::256B).
  const Variant flat256{true, 1, true};
  curves.push_back(
      [=, &c] { footprint_curve(c, BwOp::copy, BwLoad::cached, "copy_flat_256", false, flat256); });
  curves.push_back([=, &c] {
    footprint_curve(c, BwOp::copy, BwLoad::cached, "copy_flat_256_streaming", true, flat256);
  });
  // 512-thread blocks, 2 vectors per thread (16 KiB per block).
  const Variant flat512{true, 2, false, 512};
  curves.push_back([=, &c] {
    footprint_curve(c, BwOp::copy, BwLoad::cached, "copy_flat_t512x2", false, flat512);
  });
  // The copy engine both ways (global -> shared -> global), persistent grid: the
  // destination equals the source, checked word by word.
  if (c.k.supports(BwOp::copy, BwLoad::bulk).ok)
    curves.push_back([=, &c] { footprint_curve(c, BwOp::copy, BwLoad::bulk, "copy_bulk"); });
}

// Device-memory writes and copies on flat grids where a backend other than CUDA has them
// (OpenCL, Vulkan): CUDA's flat1 kernels (one 16-byte vector a thread, a 4 KiB chunk a
// block) with plain stores, so that the device-memory write and copy figures take the same
// best of the persistent and flat grids as CUDA's. Not on a CPU device: there a work-group
// runs its items one after another on one thread, so a flat grid streams as the persistent
// one does, and its sweep (past 2x a large L3) would only take the other curves' time.
void add_portable_flat_curves(Ctx& c, std::vector<std::function<void()>>& curves) {
  if (c.cpu_device || !c.k.supports_flat().ok) return;
  const Variant flat{true, 1};
  curves.push_back(
      [=, &c] { footprint_curve(c, BwOp::write, BwLoad::cached, "write_flat", false, flat); });
  curves.push_back(
      [=, &c] { footprint_curve(c, BwOp::copy, BwLoad::cached, "copy_flat", false, flat); });
}

// The footprint curves in order; counted first so each gets its share of the time budget.
void footprint_curves(Ctx& c) {
  std::vector<std::function<void()>> curves;
  curves.push_back([=, &c] { footprint_curve(c, BwOp::read, BwLoad::cached, "read"); });
  curves.push_back([=, &c] { footprint_curve(c, BwOp::write, BwLoad::cached, "write"); });
  curves.push_back(
      [=, &c] { footprint_curve(c, BwOp::write, BwLoad::cached, "write_streaming", true); });
  curves.push_back([=, &c] { footprint_curve(c, BwOp::copy, BwLoad::cached, "copy"); });
  if (c.k.supports(BwOp::copy, BwLoad::l2_only).ok)
    curves.push_back(
        [=, &c] { footprint_curve(c, BwOp::copy, BwLoad::l2_only, "copy_l2_streaming", true); });
  else if (c.k.supports_streaming_stores().ok)
    // Where streaming stores exist without cache operators (a CPU through PoCL:
    // non-temporal stores), a plain-load copy with them: it writes lines without reading
    // them first, as the host probe's memcpy does.
    curves.push_back(
        [=, &c] { footprint_curve(c, BwOp::copy, BwLoad::cached, "copy_streaming", true); });
  if (c.info.backend == "cuda")
    add_flat_curves(c, curves);
  else
    add_portable_flat_curves(c, curves);
  curves.push_back([=, &c] { footprint_curve(c, BwOp::read, BwLoad::l2_only, "read_l2"); });
  if (c.info.backend == "cuda") {
    // L2 reads where every block owns its data from blocks x 4 KiB on (one vector per
    // thread per chunk, 4 chunks in flight): strong .cg loads, weak loads that never
    // allocate in L1, the same with the L2 prefetch-size hint; and reads by the copy
    // engine (cp.async.bulk into shared memory).
    const Variant rot{false, 1}, rot256{false, 1, true};
    curves.push_back(
        [=, &c] { footprint_curve(c, BwOp::read, BwLoad::l2_only, "read_l2_own", false, rot); });
    curves.push_back(
        [=, &c] { footprint_curve(c, BwOp::read, BwLoad::no_allocate, "read_l2_na", false, rot); });
    curves.push_back([=, &c] {
      footprint_curve(c, BwOp::read, BwLoad::no_allocate, "read_l2_na_256", false, rot256);
    });
    curves.push_back([=, &c] { footprint_curve(c, BwOp::read, BwLoad::bulk, "read_bulk"); });
  }
  if (c.info.backend == "cuda")
    curves.push_back(
        [=, &c] { footprint_curve(c, BwOp::read, BwLoad::readonly, "read_readonly"); });
  if (c.k.supports(BwOp::read, BwLoad::texture).ok)
    curves.push_back([=, &c] { footprint_curve(c, BwOp::read, BwLoad::texture, "read_image"); });
  c.footprint_curves_left = int(curves.size());
  for (auto& run_curve : curves) run_curve();
}

}  // namespace

BandwidthOptions parse_bandwidth_options(const std::map<std::string, std::string>& kv) {
  BandwidthOptions o;
  for (const auto& [k, v] : kv) {
    if (k == "quick")
      o.quick = truthy(v);
    else if (k == "points_per_doubling") {
      o.points_per_doubling = int_option(k, v, 1, 16);
      o.points_per_doubling_set = true;
    } else if (k == "repeats")
      o.repeats = int_option(k, v, 1, 50);
    else if (k == "min_footprint")
      o.min_footprint = bytes_option(k, v);
    else if (k == "max_footprint")
      o.max_footprint = bytes_option(k, v);
    else if (k == "large")
      o.large_bytes = v == "0" ? 0 : bytes_option(k, v);  // 0: no large point
    else if (k == "host_max")
      o.host_max_bytes = bytes_option(k, v);
    else if (k == "budget") {
      o.budget_seconds = int_option(k, v, 1, 100000);
      o.budget_set = true;
    } else if (k == "parts") {
      o.parts.clear();
      std::stringstream ss(v);
      std::string part;
      while (std::getline(ss, part, ',')) {
        if (part != "footprint" && part != "scaling" && part != "shared" && part != "constant" &&
            part != "host")
          throw std::invalid_argument("bandwidth option 'parts': unknown part '" + part +
                                      "' (footprint, scaling, shared, constant, host)");
        o.parts.insert(part);
      }
    } else {
      throw std::invalid_argument("unknown bandwidth option '" + k +
                                  "' (quick, points_per_doubling, repeats, min_footprint, "
                                  "max_footprint, large, host_max, budget, parts)");
    }
  }
  if (o.quick && !kv.count("large")) o.large_bytes = 0;
  if (o.quick && !kv.count("repeats")) o.repeats = 3;
  if (o.quick && !kv.count("budget")) o.budget_seconds = 20;
  return o;
}

void run_bandwidth(Device& dev, const BandwidthOptions& opt, Progress& progress,
                   const std::atomic<bool>& stop, BandwidthProbeResult& out) {
  const auto t0 = Clock::now();
  // The device as the sweeps see it: its last cache the API's, or the latency map's where
  // that contradicts the API (last_cache).
  DeviceInfo info = dev.info();
  bool memory_known_from_map = false;
  const auto type = info.extra.find("device_type");
  const bool cpu = type != info.extra.end() && type->second.find("CPU") != std::string::npos;
  {
    // Not on a CPU: its chase through 4 KiB pages steps where the TLB's reach ends, and the
    // CPU VM's maps put "memory" past 4.2, 31-34 and 56-90 MiB in five runs
    // while its reads ran at cache speed to 64 MiB in all of them. There the read curve's
    // own plateau decides (adopt_memory_plateau).
    const std::vector<Level>* global = nullptr;
    if (opt.latency && !cpu)
      if (auto it = opt.latency->paths.find("global"); it != opt.latency->paths.end())
        global = &it->second.levels;
    const LastCache cache = last_cache(info.l2_bytes, global);
    if (cache.source != "API" && cache.bytes) {
      info.l2_bytes = cache.bytes;
      memory_known_from_map = true;
      out.last_cache_bytes = cache.bytes;
      out.last_cache_source = cache.source;
      progress.note("bandwidth: device memory past 4x " + format_bytes(double(*cache.bytes)) +
                    ", " + cache.source);
    }
  }
  out.status = {};
  out.peak_gbps_api = api_memory_peak_gbps(info);
  BandwidthKernels* k = dev.kernels<BandwidthKernels>();
  if (!k) {
    out.status = {StatusCode::unsupported,
                  "the " + info.backend + " backend has no bandwidth kernels"};
    return;
  }
  out.telemetry_before = dev.telemetry();
  Ctx c{dev, *k, opt, progress, stop, out, info};
  c.memory_known = memory_known_from_map;
  c.cpu_device = cpu;
  auto finish = [&] {
    out.clock_mhz_measured = probe_clock(out);
    if (opt.latency) name_levels_from_latency(out, *opt.latency, info.l2_bytes);
    device_memory_levels(out, info.l2_bytes);
    make_figures(out, info, c.own_bytes);
    out.telemetry_after = dev.telemetry();
    out.wall_seconds = seconds_since(t0);
  };
  try {
    if (opt.parts.count("footprint")) {
      footprint_curves(c);
    }
    if (opt.parts.count("scaling") && !stop && !k->supports_scaling().ok) {
      for (const char* n : {"l2", "dram"})
        out.scaling[n].status = {StatusCode::unsupported, k->supports_scaling().reason};
    } else if (opt.parts.count("scaling") && !stop) {
      if (k->supports(BwOp::read, BwLoad::l2_only).ok)
        scaling_curve(c, "l2", BwLoad::l2_only, false);
      scaling_curve(c, "dram", BwLoad::cached, true);
    }
    if (opt.parts.count("shared") && !stop) shared_curves(c);
    if (opt.parts.count("constant") && !stop) constant_point(c);
    if (opt.parts.count("host") && !stop) host_curves(c);
  } catch (const ProbeError& e) {
    out.status = {StatusCode::error, e.what()};
    finish();
    throw;
  }
  if (stop)
    out.status = {StatusCode::interrupted, "stopped by the user; what was measured is kept"};
  finish();
}

}  // namespace gd
