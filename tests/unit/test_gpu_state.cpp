// Busy and throttled GPUs (issue 25, item 7), GPU-free: the verdict over fabricated NVML
// samples, its JSON and the figures it marks, the fleet's "busy (another process)", and the
// latency map's refusal of a hierarchy its own curve contradicts.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>

#include "committed_results.hpp"
#include "gpudissect/fleet.hpp"
#include "gpudissect/gpu_state.hpp"
#include "gpudissect/level_check.hpp"
#include "gpudissect/result.hpp"
#include "latency/run.hpp"
#include "registry.hpp"

using namespace gd;
using nlohmann::json;

namespace {

GpuStateSample sample(const std::string& probe, const std::string& when) {
  GpuStateSample s;
  s.probe = probe;
  s.when = when;
  s.known = true;
  s.processes_known = true;
  s.utilization_percent = 0;
  return s;
}

GpuProcess other(uint32_t pid, const std::string& name) {
  GpuProcess p;
  p.pid = pid;
  p.name = name;
  p.kind = "compute";
  return p;
}

// start/after of latency, before/after of bandwidth, as `run latency bandwidth` samples.
std::vector<GpuStateSample> quiet_run() {
  return {sample("latency", "start"), sample("latency", "after"), sample("bandwidth", "before"),
          sample("bandwidth", "after")};
}

}  // namespace

TEST(GpuState, QuietSamplesAreIdle) {
  const GpuState st = judge_gpu_state(quiet_run());
  EXPECT_EQ(st.verdict, "idle");
  EXPECT_FALSE(st.flagged());
  EXPECT_TRUE(st.suspect_probes.empty());
  EXPECT_EQ(gpu_state_headline(st), "");
}

TEST(GpuState, NoNvmlIsUnknownNeverIdle) {
  std::vector<GpuStateSample> s = {GpuStateSample{}, GpuStateSample{}};
  s[0].probe = s[1].probe = "latency";
  s[0].when = "start";
  s[1].when = "after";
  const GpuState st = judge_gpu_state(s);
  EXPECT_EQ(st.verdict, "unknown");
  EXPECT_FALSE(st.shared);
  EXPECT_FALSE(st.throttled);
  ASSERT_EQ(st.reasons.size(), 1u);
  EXPECT_NE(st.reasons[0].find("unknown"), std::string::npos);
  EXPECT_NE(gpu_state_headline(st).find("unknown"), std::string::npos);
  // No samples at all says the same.
  EXPECT_EQ(judge_gpu_state({}).verdict, "unknown");
}

TEST(GpuState, AnotherProcessMakesItSharedAndNamesIt) {
  auto s = quiet_run();
  s[2].processes = {other(4242, "python3")};  // before bandwidth
  s[3].processes = {other(4242, "python3"), other(77, "")};
  const GpuState st = judge_gpu_state(s);
  EXPECT_EQ(st.verdict, "shared");
  EXPECT_TRUE(st.shared);
  EXPECT_FALSE(st.throttled);
  ASSERT_EQ(st.processes.size(), 2u);  // once per pid
  EXPECT_EQ(st.processes[0].pid, 4242u);
  EXPECT_EQ(st.suspect_probes, std::vector<std::string>{"bandwidth"});
  const std::string h = gpu_state_headline(st);
  EXPECT_EQ(h.rfind("WARNING", 0), 0u) << h;
  EXPECT_NE(h.find("4242 (python3)"), std::string::npos) << h;
  EXPECT_NE(h.find("77 (name unknown)"), std::string::npos) << h;
  EXPECT_NE(h.find("(bandwidth)"), std::string::npos) << h;
  EXPECT_EQ(st.suspect_note("latency"), "");
  EXPECT_NE(st.suspect_note("bandwidth").find("shared"), std::string::npos);
}

TEST(GpuState, OnlyTheIdleUtilisationCounts) {
  // Our own kernels are in every reading after the first: 95 % there is ours.
  auto s = quiet_run();
  s[1].utilization_percent = 95;
  s[2].utilization_percent = 60;  // before the second probe: the first one's kernels
  s[3].utilization_percent = 99;
  EXPECT_EQ(judge_gpu_state(s).verdict, "idle");
  // Before our first kernel, 50 % is someone else's (a process NVML does not list to us).
  s[0].utilization_percent = 50;
  const GpuState st = judge_gpu_state(s);
  EXPECT_EQ(st.verdict, "shared");
  EXPECT_EQ(st.suspect_probes, std::vector<std::string>{"latency"});
  ASSERT_FALSE(st.reasons.empty());
  EXPECT_NE(st.reasons[0].find("50 %"), std::string::npos) << st.reasons[0];
  // At the threshold it is not.
  s[0].utilization_percent = kBusyUtilizationPercent;
  EXPECT_EQ(judge_gpu_state(s).verdict, "idle");
}

TEST(GpuState, ThrottleReasonsThatLowerTheClock) {
  EXPECT_TRUE(is_throttling_reason("sw_power_cap"));
  EXPECT_TRUE(is_throttling_reason("hw_slowdown"));
  EXPECT_TRUE(is_throttling_reason("hw_thermal_slowdown"));
  EXPECT_TRUE(is_throttling_reason("sw_thermal_slowdown"));
  EXPECT_TRUE(is_throttling_reason("hw_power_brake_slowdown"));
  EXPECT_FALSE(is_throttling_reason("gpu_idle"));
  EXPECT_FALSE(is_throttling_reason("applications_clocks_setting"));
  EXPECT_FALSE(is_throttling_reason("sync_boost"));

  auto s = quiet_run();
  s[0].throttle_reasons = {"gpu_idle"};
  EXPECT_EQ(judge_gpu_state(s).verdict, "idle");
  s[1].throttle_reasons = {"sw_power_cap"};
  GpuState st = judge_gpu_state(s);
  EXPECT_EQ(st.verdict, "throttled");
  EXPECT_EQ(st.suspect_probes, std::vector<std::string>{"latency"});
  EXPECT_NE(gpu_state_headline(st).find("THROTTLED"), std::string::npos);
  s[3].processes = {other(9, "matmul")};
  st = judge_gpu_state(s);
  EXPECT_EQ(st.verdict, "shared+throttled");
  EXPECT_EQ(st.suspect_probes, (std::vector<std::string>{"latency", "bandwidth"}));
}

TEST(GpuState, JsonRoundTripDerivesTheVerdictFromTheSamples) {
  auto s = quiet_run();
  s[0].processes = {other(4242, "python3")};
  s[0].processes[0].used_memory_bytes = 1ull << 30;
  const GpuState st = judge_gpu_state(s);
  json j = st;
  EXPECT_EQ(j["verdict"], "shared");
  EXPECT_EQ(j["processes"][0]["pid"], 4242);
  EXPECT_EQ(j["processes"][0]["name"], "python3");
  EXPECT_EQ(j["samples"].size(), 4u);
  const GpuState back = j.get<GpuState>();
  EXPECT_EQ(back.verdict, "shared");
  EXPECT_EQ(back.suspect_probes, st.suspect_probes);
  EXPECT_EQ(*back.processes[0].used_memory_bytes, 1ull << 30);
  // A verdict that contradicts its samples is not believed.
  j["verdict"] = "idle";
  j["shared"] = false;
  EXPECT_EQ(j.get<GpuState>().verdict, "shared");
  // An unknown sample round-trips as unknown.
  const json u = judge_gpu_state({GpuStateSample{}});
  EXPECT_EQ(u.get<GpuState>().verdict, "unknown");
}

namespace {

RunResult latency_result() {
  RunResult r;
  r.tool.version = "test";
  r.device.backend = "cuda";
  r.device.name = "Test GPU";
  LatencyProbeResult& p = r.put<LatencyProbeResult>();
  CurveResult& c = p.paths["global"];
  Level l1;
  l1.name = "L1";
  l1.latency_cycles = 33;
  l1.latency_ns = 17;
  l1.capacity_bytes = 200 << 10;
  Level mem;
  mem.name = "device memory";
  mem.latency_cycles = 800;
  mem.latency_ns = 420;
  c.levels = {l1, mem};
  return r;
}

}  // namespace

TEST(GpuState, RunResultJsonMarksSuspectFiguresAndOldFilesStillRead) {
  RunResult r = latency_result();
  r.figures = collect_figures(r, probe_registry());
  ASSERT_FALSE(r.figures.empty());
  for (const Figure& f : r.figures) EXPECT_EQ(f.suspect, "");
  // A file without gpu_state (every file written before it) reads as it did: no state.
  json old = to_json(r, probe_registry());
  EXPECT_FALSE(old.contains("gpu_state"));
  EXPECT_EQ(old["schema_version"], kSchemaVersion);
  EXPECT_FALSE(run_result_from_json(old, probe_registry()).gpu_state.has_value());

  auto s = quiet_run();
  s[0].processes = {other(4242, "python3")};
  r.gpu_state = judge_gpu_state(s);
  const std::vector<Figure> before_ids = r.figures;
  r.figures = collect_figures(r, probe_registry());
  ASSERT_EQ(r.figures.size(), before_ids.size());
  for (std::size_t i = 0; i < r.figures.size(); ++i) {
    EXPECT_EQ(r.figures[i].id, before_ids[i].id);  // ids and statuses as they were
    EXPECT_EQ(r.figures[i].status.name(), before_ids[i].status.name());
    EXPECT_NE(r.figures[i].suspect.find("shared"), std::string::npos);
  }
  const json j = to_json(r, probe_registry());
  EXPECT_EQ(j["gpu_state"]["verdict"], "shared");
  EXPECT_EQ(j["figures"][0]["status"], "ok");
  EXPECT_TRUE(j["figures"][0].contains("suspect"));
  const RunResult back = run_result_from_json(j, probe_registry());
  ASSERT_TRUE(back.gpu_state.has_value());
  EXPECT_EQ(back.gpu_state->verdict, "shared");
  EXPECT_EQ(back.figures[0].suspect, r.figures[0].suspect);
  // Figures derived on loading (a file without them) are marked too.
  json nofig = j;
  nofig.erase("figures");
  const RunResult derived = run_result_from_json(nofig, probe_registry());
  ASSERT_FALSE(derived.figures.empty());
  EXPECT_FALSE(derived.figures[0].suspect.empty());
  // A figure's JSON without "suspect" reads as not suspect.
  json f0 = j["figures"][0];
  f0.erase("suspect");
  EXPECT_EQ(f0.get<Figure>().suspect, "");
}

// ---- fleet ----

namespace {

FleetRank fleet_gpu(int rank, double dram) {
  FleetRank r;
  r.rank = rank;
  r.host = "node0";
  r.device_id = "cuda:" + std::to_string(rank);
  r.device.name = "Test GPU";
  r.device.extra["pci_bus_id"] = "0000:0" + std::to_string(rank) + ":00.0";
  Figure f;
  f.id = f.label = "bandwidth.dram.read";
  f.unit = "GB/s";
  f.value = single_value(dram);
  r.figures = {f};
  r.result = json::object();
  return r;
}

json shared_state() {
  GpuStateSample s = sample("bandwidth", "start");
  s.processes = {other(4242, "python3")};
  return judge_gpu_state({s});
}

}  // namespace

TEST(GpuStateFleet, BusyGpuIsNotJudgedAndExitsFour) {
  std::vector<FleetRank> ranks;
  for (int k = 0; k < 4; ++k) ranks.push_back(fleet_gpu(k, 3000 + k));
  ranks[2].figures[0].value = single_value(1500);  // halved by the other process
  ranks[2].result["gpu_state"] = shared_state();
  const FleetReport rep = analyse_fleet(ranks, {});
  const FleetGpu* busy = nullptr;
  for (const FleetGpu& g : rep.gpus)
    if (rep.ranks[g.index].rank == 2) busy = &g;
  ASSERT_NE(busy, nullptr);
  EXPECT_EQ(busy->verdict, GpuVerdict::busy);
  EXPECT_EQ(to_string(busy->verdict), "busy (another process)");
  ASSERT_FALSE(busy->reasons.empty());
  EXPECT_NE(busy->reasons[0].find("4242 (python3)"), std::string::npos);
  EXPECT_EQ(rep.unhealthy(), 0);
  EXPECT_EQ(rep.busy(), 1);
  EXPECT_EQ(rep.exit_code(), 4);
  // The busy GPU's 1500 is nobody's yardstick: the others' medians are of the others.
  for (const FleetGpu& g : rep.gpus) {
    if (&g != busy) EXPECT_EQ(g.verdict, GpuVerdict::healthy);
  }
  EXPECT_EQ(fleet_to_json(rep, json::object())["exit_status"], 4);
}

TEST(GpuStateFleet, SickWinsOverBusy) {
  std::vector<FleetRank> ranks;
  for (int k = 0; k < 5; ++k) ranks.push_back(fleet_gpu(k, 3000 + k));
  ranks[1].result["gpu_state"] = shared_state();
  ranks[3].figures[0].value = single_value(1000);  // sick, alone on its GPU
  FleetReport rep = analyse_fleet(ranks, {});
  EXPECT_EQ(rep.busy(), 1);
  EXPECT_EQ(rep.unhealthy(), 1);
  EXPECT_EQ(rep.exit_code(), 3);
  // A rank refused by run --require-idle (status "busy") is busy, not failed.
  ranks = {fleet_gpu(0, 3000), fleet_gpu(1, 3001), fleet_gpu(2, 3002)};
  ranks[1].status = {StatusCode::busy, "not measured (--require-idle): other processes on the GPU"};
  ranks[1].figures.clear();
  rep = analyse_fleet(ranks, {});
  EXPECT_EQ(rep.busy(), 1);
  EXPECT_EQ(rep.unhealthy(), 0);
  EXPECT_EQ(rep.exit_code(), 4);
  // A busy GPU with uncorrected ECC errors is sick all the same.
  ranks[1].device.extra["ecc_uncorrected_volatile"] = "3";
  rep = analyse_fleet(ranks, {});
  EXPECT_EQ(rep.exit_code(), 3);
}

// ---- the latency map's hierarchy check ----

namespace {

// A clean H100-like global curve: L1 to 256 KiB at 33, L2 near to 30 MiB at 260, far L2
// to 50 MiB at 480, device memory at 620; 4 points per doubling from 1 KiB, 0.2 % spread.
std::vector<CurvePoint> clean_curve() {
  std::vector<CurvePoint> c;
  for (double fp = 1024; fp <= 512.0 * 1024 * 1024; fp *= std::pow(2.0, 0.25)) {
    const double lat = fp <= 256 * 1024 ? 33 : fp <= 30e6 ? 260 : fp <= 50e6 ? 480 : 620;
    c.push_back({fp, lat, 0.002});
  }
  return c;
}

// What a time-sliced chase gives: L1 points intact, every point past it inflated to about
// 1178 cycles with repeats that disagree (another process holds the SMs most of the time).
std::vector<CurvePoint> time_sliced_curve() {
  std::vector<CurvePoint> c = clean_curve();
  unsigned x = 12345;
  for (CurvePoint& p : c) {
    if (p.footprint_bytes <= 256 * 1024) {
      p.spread = 0.01;
      continue;
    }
    x = x * 1103515245u + 12345u;
    const double r = double((x >> 8) % 1000) / 1000.0;  // 0..1
    p.latency = 1178 * (0.97 + 0.06 * r);
    p.spread = 0.15 + 0.5 * r;
  }
  return c;
}

CurveResult as_curve(const std::vector<CurvePoint>& pts) {
  CurveResult c;
  c.stride_bytes = 128;
  for (const CurvePoint& p : pts) {
    LatencyPoint lp;
    lp.footprint_bytes = uint64_t(p.footprint_bytes);
    lp.stride_bytes = 128;
    Summary s;
    s.median = p.latency;
    s.q1 = p.latency * (1 - p.spread / 2);
    s.q3 = p.latency * (1 + p.spread / 2);
    s.min = s.q1;
    s.max = s.q3;
    s.n = 5;
    lp.cycles = s;
    Summary ns = s;
    ns.median /= 1.98;
    ns.q1 /= 1.98;
    ns.q3 /= 1.98;
    ns.min /= 1.98;
    ns.max /= 1.98;
    lp.ns = ns;
    c.points.push_back(lp);
  }
  return c;
}

}  // namespace

TEST(HierarchyCheck, CleanStaircasePasses) {
  const auto c = clean_curve();
  const auto levels = detect_levels(c);
  ASSERT_GE(levels.size(), 3u);
  const HierarchyCheck hc = check_hierarchy(c, levels);
  EXPECT_TRUE(hc.ok) << hc.reason;
}

TEST(HierarchyCheck, TimeSlicedCurveIsNotAResult) {
  const auto c = time_sliced_curve();
  const HierarchyCheck hc = check_hierarchy(c, detect_levels(c));
  EXPECT_FALSE(hc.ok);
  EXPECT_NE(hc.reason.find("repeats disagree"), std::string::npos) << hc.reason;

  // Through the probe: the curve's status says why, and no level figure is published.
  RunResult r;
  r.device.backend = "cuda";
  LatencyProbeResult& p = r.put<LatencyProbeResult>();
  CurveResult& curve = p.paths["global"] = as_curve(c);
  assign_levels(curve, "cache", 1, 50ull << 20);
  EXPECT_EQ(curve.status.code, kInconsistentStatus);
  EXPECT_NE(curve.status.reason.find("not a consistent hierarchy"), std::string::npos);
  EXPECT_TRUE(curve.levels.empty());
  EXPECT_NE(curve.note.find("not published"), std::string::npos) << curve.note;
  EXPECT_FALSE(curve.dram_minus_last_cache_cycles.has_value());
  for (const Figure& f : collect_figures(r, probe_registry()))
    EXPECT_NE(f.id.rfind("latency.global.", 0), 0u) << f.id;

  // The same curve measured cleanly: ok again, levels and figures back.
  curve = as_curve(clean_curve());
  curve.status = {kInconsistentStatus, "from an earlier, noisier pass"};
  assign_levels(curve, "cache", 1, 50ull << 20);
  EXPECT_TRUE(curve.status.ok()) << curve.status.reason;
  EXPECT_GE(curve.levels.size(), 3u);
  bool any = false;
  for (const Figure& f : collect_figures(r, probe_registry()))
    any = any || f.id.rfind("latency.global.", 0) == 0;
  EXPECT_TRUE(any);
}

TEST(HierarchyCheck, ImplausibleJumpInANoisyCurve) {
  // Two plateaus only, 33 then 1178, right next to each other; the upper one's repeats
  // disagree by 12-20 %: the time-sliced shape of the busy H100, with too few noisy
  // points for the first rule.
  std::vector<CurvePoint> c;
  for (double fp = 1024; fp <= 64.0 * 1024 * 1024; fp *= std::pow(2.0, 0.25)) {
    const bool l1 = fp <= 256 * 1024;
    c.push_back({fp, l1 ? 33.0 : 1178.0, l1 ? 0.002 : 0.12});
  }
  const auto levels = detect_levels(c);
  ASSERT_EQ(levels.size(), 2u);
  HierarchyCheckOptions lax;
  lax.max_noisy_fraction = 0.9;  // isolate the jump rule
  const HierarchyCheck hc = check_hierarchy(c, levels, lax);
  EXPECT_FALSE(hc.ok);
  EXPECT_NE(hc.reason.find("with no point between"), std::string::npos) << hc.reason;
  // The same jump measured cleanly is a fact (global L1 to L2 on Hopper is 8x).
  for (CurvePoint& p : c) p.spread = 0.002;
  EXPECT_TRUE(check_hierarchy(c, detect_levels(c), lax).ok);
}

TEST(HierarchyCheck, CurveThatFallsBackIsInconsistent) {
  auto c = clean_curve();
  // Past the L2, three points drop back below the L1-to-L2 step (the other process paused).
  int dropped = 0;
  for (CurvePoint& p : c)
    if (p.footprint_bytes > 64e6 && dropped < 3) {
      p.latency = 100;
      ++dropped;
    }
  std::vector<DetectedLevel> levels = detect_levels(clean_curve());
  const HierarchyCheck hc = check_hierarchy(c, levels);
  EXPECT_FALSE(hc.ok);
  EXPECT_NE(hc.reason.find("falls back"), std::string::npos) << hc.reason;
  // Levels out of order are a contradiction too.
  std::swap(levels[0].latency, levels[1].latency);
  EXPECT_FALSE(check_hierarchy(clean_curve(), levels).ok);
}

// The committed GPU results' curves, re-derived, pass the check: the check does not take away
// a figure from a clean measurement. (The CPU VM runs are noisy by nature; they are left out.)
TEST(HierarchyCheck, CommittedGpuCurvesStillPass) {
  namespace fs = std::filesystem;
  const fs::path results = fs::path(GD_FIXTURES) / ".." / ".." / "results";
  if (!fs::is_directory(results)) GTEST_SKIP() << "no results folder";
  int curves = 0;
  for (const fs::path& file : gd::testing::committed_json_files(results)) {
    if (file.string().find("nvidia-") == std::string::npos) continue;
    const std::optional<json> doc = gd::testing::read_committed_json(file);
    if (!doc) continue;
    const json& j = *doc;
    if (!j.is_object() || !j.contains("probes") || !j["probes"].contains("latency")) continue;
    const LatencyProbeResult p = j["probes"]["latency"].get<LatencyProbeResult>();
    for (const auto& [name, stored] : p.paths) {
      if (!stored.status.ok() || stored.points.empty()) continue;
      CurveResult c = stored;
      const std::string kind = name == "constant"                      ? "constant"
                               : (name == "shared" || name == "local") ? "scratch"
                                                                       : "cache";
      assign_levels(c, kind, 1, j["device"].value("l2_bytes", uint64_t(50) << 20), name);
      EXPECT_TRUE(c.status.ok()) << file << " " << name << ": " << c.status.reason;
      ++curves;
      EXPECT_EQ(c.levels.size(), stored.levels.size()) << file << " " << name;
    }
  }
  EXPECT_GT(curves, 10);
}
