// Fleet statistics and verdicts (core/src/fleet.cpp): GPU-free.
#include <gtest/gtest.h>

#include <sstream>

#include "fleet_report.hpp"
#include "gpudissect/fleet.hpp"

using namespace gd;

namespace {

Figure fig(const std::string& id, double v, bool higher_is_better = true,
           const std::string& unit = "GB/s") {
  Figure f;
  f.id = id;
  f.label = id;
  f.unit = unit;
  f.value = single_value(v);
  f.higher_is_better = higher_is_better;
  return f;
}

FleetRank gpu(int rank, double dram, double lat = 500) {
  FleetRank r;
  r.rank = rank;
  r.host = "node" + std::to_string(rank / 4);
  r.device_id = "cuda:" + std::to_string(rank % 4);
  r.device.id = r.device_id;
  r.device.name = "Test GPU";
  r.device.extra["pci_bus_id"] = "0000:0" + std::to_string(rank % 4) + ":00.0";
  r.figures = {fig("bandwidth.dram.read", dram), fig("latency.global.L2", lat, false, "ns")};
  return r;
}

const FleetGpu& verdict_of(const FleetReport& rep, int rank) {
  for (const auto& g : rep.gpus)
    if (rep.ranks[g.index].rank == rank) return g;
  throw std::runtime_error("no such rank");
}

}  // namespace

TEST(FleetStats, MedianAndMad) {
  EXPECT_FALSE(fleet_median({}).has_value());
  EXPECT_FALSE(fleet_mad({}).has_value());
  EXPECT_DOUBLE_EQ(*fleet_median({3, 1, 2}), 2);
  EXPECT_DOUBLE_EQ(*fleet_median({4, 1, 2, 3}), 2.5);
  // |x - 2| = 1, 1, 0, 2, 98 -> median 1; the 100 does not move it.
  EXPECT_DOUBLE_EQ(*fleet_mad({1, 3, 2, 4, 100}), 1);
  EXPECT_DOUBLE_EQ(*fleet_mad({5, 5, 5}), 0);
}

TEST(Fleet, HealthyFleetExitsZero) {
  std::vector<FleetRank> ranks;
  for (int k = 0; k < 8; ++k) ranks.push_back(gpu(k, 3000 + 10 * (k % 3), 500 + k % 2));
  const FleetReport rep = analyse_fleet(ranks, {});
  EXPECT_EQ(rep.unhealthy(), 0);
  EXPECT_EQ(rep.exit_code(), 0);
  ASSERT_EQ(rep.rows.size(), 2u);
  for (const auto& row : rep.rows)
    for (const auto& c : row.cells) EXPECT_EQ(c.mark, CellMark::near) << row.id;
}

TEST(Fleet, SlowGpuIsOutlierAndListedFirst) {
  std::vector<FleetRank> ranks;
  for (int k = 0; k < 8; ++k) ranks.push_back(gpu(k, 3000 + 10 * (k % 3)));
  ranks[5].figures[0].value = single_value(2000);  // one GPU's memory a third slower
  const FleetReport rep = analyse_fleet(ranks, {});
  EXPECT_EQ(rep.exit_code(), 3);
  EXPECT_EQ(rep.unhealthy(), 1);
  ASSERT_FALSE(rep.gpus.empty());
  EXPECT_EQ(rep.ranks[rep.gpus[0].index].rank, 5);  // outliers first
  EXPECT_EQ(rep.gpus[0].verdict, GpuVerdict::outlier);
  ASSERT_EQ(rep.gpus[0].reasons.size(), 1u);
  EXPECT_NE(rep.gpus[0].reasons[0].find("bandwidth.dram.read"), std::string::npos);
  const FleetCell& c = rep.rows[0].cells[5];
  EXPECT_EQ(c.mark, CellMark::outlier);
  EXPECT_LT(*c.z, -3.5);
  EXPECT_NEAR(*c.deviation, -1000.0 / 3010, 0.01);
  // The others are judged against a median that the slow one does not drag.
  for (int k = 0; k < 8; ++k)
    if (k != 5) EXPECT_EQ(rep.rows[0].cells[k].mark, CellMark::near);
}

TEST(Fleet, DirectionMatters) {
  std::vector<FleetRank> ranks;
  for (int k = 0; k < 6; ++k) ranks.push_back(gpu(k, 3000, 500));
  ranks[1].figures[0].value = single_value(4500);  // faster memory: better, never flagged
  ranks[2].figures[1].value = single_value(800);   // higher latency: worse
  ranks[3].figures[1].value = single_value(300);   // lower latency: better
  const FleetReport rep = analyse_fleet(ranks, {});
  EXPECT_EQ(rep.rows[0].cells[1].mark, CellMark::better);
  EXPECT_EQ(rep.rows[1].cells[2].mark, CellMark::outlier);
  EXPECT_EQ(rep.rows[1].cells[3].mark, CellMark::better);
  EXPECT_EQ(verdict_of(rep, 1).verdict, GpuVerdict::healthy);
  EXPECT_EQ(verdict_of(rep, 2).verdict, GpuVerdict::outlier);
  EXPECT_EQ(verdict_of(rep, 3).verdict, GpuVerdict::healthy);
  EXPECT_EQ(rep.unhealthy(), 1);
}

TEST(Fleet, MinimumDeviationAndNoiseFloor) {
  // Identical GPUs (MAD 0): a 2 % difference is within the noise floor and the minimum
  // deviation; a 20 % one is an outlier.
  std::vector<FleetRank> ranks;
  for (int k = 0; k < 5; ++k) ranks.push_back(gpu(k, 1000));
  ranks[0].figures[0].value = single_value(980);
  ranks[4].figures[0].value = single_value(800);
  FleetOptions o;
  const FleetReport rep = analyse_fleet(ranks, o);
  EXPECT_NE(rep.rows[0].cells[0].mark, CellMark::outlier);
  EXPECT_EQ(rep.rows[0].cells[4].mark, CellMark::outlier);
  // A looser minimum deviation lets the 20 % one pass.
  o.min_deviation = 0.25;
  EXPECT_EQ(analyse_fleet(ranks, o).exit_code(), 0);
}

TEST(Fleet, CapacityOneSweepStepOffIsNotAnOutlier) {
  // Identical GPUs find the far L2 edge at 58.7 MiB; one finds it a point lower on the
  // 2^(1/8) grid (-8.3 %, past the 5 % minimum deviation): the same cache, not a sick GPU.
  // Two points lower (-16 %) is.
  const double step = 0.0905077326652577, mib = 1048576;
  std::vector<FleetRank> ranks;
  for (int k = 0; k < 5; ++k) {
    ranks.push_back(gpu(k, 1000));
    ranks.back().figures.push_back(
        fig("latency.global.L2_far.capacity", 58.7 * mib, true, "bytes"));
    ranks.back().figures.back().resolution = step;
  }
  ranks[1].figures.back().value = single_value(58.7 * mib / (1 + step));
  ranks[3].figures.back().value = single_value(58.7 * mib / (1 + step) / (1 + step));
  const FleetReport rep = analyse_fleet(ranks, FleetOptions{});
  const FleetRow* row = nullptr;
  for (const auto& r : rep.rows)
    if (r.id == "latency.global.L2_far.capacity") row = &r;
  ASSERT_TRUE(row);
  EXPECT_NEAR(row->resolution, step, 1e-15);
  EXPECT_NE(row->cells[1].mark, CellMark::outlier);
  EXPECT_EQ(row->cells[3].mark, CellMark::outlier);
  EXPECT_EQ(verdict_of(rep, 1).verdict, GpuVerdict::healthy);
  EXPECT_EQ(verdict_of(rep, 3).verdict, GpuVerdict::outlier);
  // Without the step the one-point GPU would be flagged: the test depends on it.
  for (auto& r : ranks) r.figures.back().resolution.reset();
  const FleetReport without = analyse_fleet(ranks, FleetOptions{});
  EXPECT_EQ(verdict_of(without, 1).verdict, GpuVerdict::outlier);
}

TEST(Fleet, TwoGpusJudgeEachOther) {
  std::vector<FleetRank> ranks = {gpu(0, 1000), gpu(1, 1000)};
  EXPECT_EQ(analyse_fleet(ranks, {}).exit_code(), 0);
  FleetRank slow = ranks[1];
  ASSERT_TRUE(apply_slow_injection(slow, "bandwidth.dram.read", 0.5));
  EXPECT_DOUBLE_EQ(slow.figures[0].value->median, 500);
  EXPECT_FALSE(apply_slow_injection(slow, "no.such.figure", 0.5));
  const FleetReport rep = analyse_fleet({ranks[0], slow}, {});
  EXPECT_EQ(rep.exit_code(), 3);
  EXPECT_EQ(verdict_of(rep, 1).verdict, GpuVerdict::outlier);
  EXPECT_EQ(verdict_of(rep, 0).verdict, GpuVerdict::healthy);
  EXPECT_FALSE(rep.notes.empty());
}

TEST(Fleet, FailedRankAndFailedFigure) {
  std::vector<FleetRank> ranks;
  for (int k = 0; k < 4; ++k) ranks.push_back(gpu(k, 1000));
  ranks[2].status = {StatusCode::timeout, "killed after the per-rank timeout"};
  ranks[2].figures.clear();
  ranks[3].figures[1].status = {StatusCode::error, "chase ended on the wrong line"};
  ranks[3].figures[1].value.reset();
  const FleetReport rep = analyse_fleet(ranks, {});
  EXPECT_EQ(rep.exit_code(), 3);
  EXPECT_EQ(rep.ranks[rep.gpus[0].index].rank, 2);  // failed first
  EXPECT_EQ(rep.gpus[0].verdict, GpuVerdict::failed);
  EXPECT_EQ(verdict_of(rep, 3).verdict, GpuVerdict::outlier);
  EXPECT_EQ(rep.rows[1].cells[3].mark, CellMark::failed);
  EXPECT_EQ(verdict_of(rep, 0).verdict, GpuVerdict::healthy);
  EXPECT_EQ(rep.unhealthy(), 2);
}

TEST(Fleet, ThrottlingFlags) {
  std::vector<FleetRank> ranks = {gpu(0, 1000), gpu(1, 1000), gpu(2, 1000)};
  ranks[0].telemetry = Telemetry{};
  ranks[0].telemetry->throttle_reasons = {"gpu_idle", "sw_power_cap"};
  ranks[1].telemetry = Telemetry{};
  ranks[1].telemetry->throttle_reasons = {"hw_thermal_slowdown"};
  ranks[2].device.extra["ecc"] = "enabled";
  ranks[2].device.extra["ecc_uncorrected_volatile"] = "2";
  const FleetReport rep = analyse_fleet(ranks, {});
  EXPECT_EQ(verdict_of(rep, 0).verdict, GpuVerdict::healthy);
  EXPECT_EQ(verdict_of(rep, 1).verdict, GpuVerdict::outlier);
  EXPECT_EQ(verdict_of(rep, 2).verdict, GpuVerdict::outlier);
  EXPECT_EQ(fleet_ecc(ranks[2]), "ECC enabled, 2 uncorrected / ? corrected errors");
}

TEST(Fleet, BaselineRegression) {
  std::vector<FleetRank> ranks = {gpu(0, 1000), gpu(1, 1000), gpu(2, 1000)};
  CompareInput base;
  base.name = "baseline";
  base.figures = {fig("bandwidth.dram.read", 1200), fig("latency.global.L2", 500, false, "ns")};
  FleetOptions o;
  o.baseline_tolerance = 0.05;
  const FleetReport rep = analyse_fleet(ranks, o, &base);
  EXPECT_EQ(rep.exit_code(), 3);
  for (const auto& g : rep.gpus) {
    EXPECT_EQ(g.verdict, GpuVerdict::regressed);
    EXPECT_EQ(g.baseline_regressions, 1);
  }
  o.baseline_tolerance = 0.25;
  EXPECT_EQ(analyse_fleet(ranks, o, &base).exit_code(), 0);
}

TEST(Fleet, SameGpuTwiceIsNoted) {
  std::vector<FleetRank> ranks = {gpu(0, 1000), gpu(0, 1000), gpu(2, 1000)};
  ranks[1].rank = 1;
  const FleetReport rep = analyse_fleet(ranks, {});
  bool noted = false;
  for (const auto& n : rep.notes) noted |= n.find("same GPU") != std::string::npos;
  EXPECT_TRUE(noted);
}

TEST(Fleet, InjectionSpecs) {
  auto s = parse_fleet_injection("slow:1:bandwidth.dram.read:0.5");
  EXPECT_EQ(s.kind, "slow");
  EXPECT_EQ(s.rank, 1);
  EXPECT_EQ(s.figure, "bandwidth.dram.read");
  EXPECT_DOUBLE_EQ(s.factor, 0.5);
  EXPECT_EQ(parse_fleet_injection("fail:3").rank, 3);
  EXPECT_EQ(parse_fleet_injection("hang:0").kind, "hang");
  for (const char* bad :
       {"slow:1:x", "slow:a:x:1", "slow:1:x:-2", "fail", "fail:x", "boom:1", "slow:1::2"})
    EXPECT_THROW(parse_fleet_injection(bad), std::invalid_argument) << bad;
}

TEST(Fleet, JsonRoundTripAndPage) {
  std::vector<FleetRank> ranks = {gpu(0, 1000), gpu(1, 1000), gpu(2, 500)};
  ranks[2].injected = "slow: bandwidth.dram.read x 0.5";
  ranks[1].device.extra["uuid"] = "GPU-1234";
  const nlohmann::json rj = ranks[1];
  const FleetRank back = rj.get<FleetRank>();
  EXPECT_EQ(back.rank, 1);
  EXPECT_EQ(fleet_uuid(back), "GPU-1234");
  EXPECT_EQ(back.figures.size(), 2u);
  const FleetReport rep = analyse_fleet(ranks, {});
  const nlohmann::json j = fleet_to_json(rep, {{"mode", "test"}});
  EXPECT_EQ(j.at("exit_status"), 3);
  EXPECT_EQ(j.at("verdicts").at(0).at("rank"), 2);
  EXPECT_EQ(j.at("verdicts").at(0).at("verdict"), "outlier");
  EXPECT_EQ(j.at("ranks").size(), 3u);
  const std::string html = report::fleet_html(rep, "test fleet");
  EXPECT_NE(html.find("class=\"out\""), std::string::npos);
  EXPECT_NE(html.find("GPU-1234"), std::string::npos);
  EXPECT_NE(html.find("fault injected"), std::string::npos);
}

// The links run once per node travels with that node's first rank and becomes the report's
// per-node table (JSON "nodes", a page section, terminal lines).
TEST(Fleet, NodeLinksPerNode) {
  std::vector<FleetRank> ranks = {gpu(0, 1000), gpu(1, 1000), gpu(4, 1000), gpu(5, 1000)};
  NodeLinks a;
  a.device_id = "cuda:0";
  a.wall_seconds = 31.5;
  a.figures = {fig("links.p2p.ce.read", 389.5), fig("links.nccl.all_reduce.busbw", 331.0)};
  NodeLinks b;
  b.status = {StatusCode::timeout, "killed after the per-rank timeout of 300 s"};
  ranks[0].node_links = a;  // node0 (ranks 0-3)
  ranks[2].node_links = b;  // node1 (ranks 4-7)
  const FleetRank back = nlohmann::json(ranks[0]).get<FleetRank>();
  ASSERT_TRUE(back.node_links);
  EXPECT_EQ(back.node_links->device_id, "cuda:0");
  EXPECT_EQ(back.node_links->figures.size(), 2u);
  EXPECT_FALSE(nlohmann::json(ranks[1]).contains("node_links"));
  const FleetReport rep = analyse_fleet(ranks, {});
  ASSERT_EQ(rep.nodes.size(), 2u);
  EXPECT_EQ(rep.nodes[0].host, "node0");
  EXPECT_EQ(rep.nodes[1].host, "node1");
  EXPECT_EQ(rep.exit_code(), 0);  // the links are shown, not judged
  const nlohmann::json j = fleet_to_json(rep, {{"mode", "test"}});
  ASSERT_EQ(j.at("nodes").size(), 2u);
  EXPECT_EQ(j.at("nodes")[0].at("figures").size(), 2u);
  EXPECT_EQ(j.at("nodes")[1].at("status"), "timeout");
  const std::string html = report::fleet_html(rep, "test fleet");
  EXPECT_NE(html.find("Links per node"), std::string::npos);
  EXPECT_NE(html.find("links.nccl.all_reduce.busbw"), std::string::npos);
  EXPECT_NE(html.find("killed after the per-rank timeout"), std::string::npos);
  std::ostringstream os;
  report::print_fleet(os, rep);
  EXPECT_NE(os.str().find("links on node0 (rank 0): ok"), std::string::npos) << os.str();
  EXPECT_NE(os.str().find("links.p2p.ce.read  389.5 GB/s"), std::string::npos) << os.str();
}

// ---- a rank's own soak (fleet --duration, or a collected run --duration JSON) ----

namespace {

nlohmann::json soak_section() {
  return nlohmann::json::parse(R"({
    "repetitions": [{"started_s": 0}, {"started_s": 30}, {"started_s": 60}],
    "figures": [
      {"id": "bandwidth.dram.read", "unit": "GB/s", "regressed": false, "first": 3000,
       "last": 2990, "drift_percent": -0.3},
      {"id": "compute.fp32.fma", "unit": "TFLOP/s", "regressed": true, "first": 60,
       "last": 48, "drift_percent": -20}],
    "throttle_events": {"sw_power_cap": 3},
    "ecc_before": {"corrected": 0, "uncorrected": 0},
    "ecc_after": {"corrected": 2, "uncorrected": 0}})");
}

}  // namespace

TEST(FleetSoak, DriftRegressesTheGpuThatSoaked) {
  std::vector<FleetRank> ranks;
  for (int k = 0; k < 4; ++k) ranks.push_back(gpu(k, 3000));
  ranks[2].result = {{"soak", soak_section()}};
  ranks[3].result = {{"soak", soak_section()}};
  ranks[3].result["soak"]["figures"][1]["regressed"] = false;
  const FleetReport rep = analyse_fleet(ranks, {});
  EXPECT_EQ(rep.exit_code(), 3);
  const FleetGpu& g = verdict_of(rep, 2);
  EXPECT_EQ(g.verdict, GpuVerdict::regressed);
  ASSERT_EQ(g.reasons.size(), 1u);
  // A power cap is not alarming, nor are corrected ECC errors: only the drift is named.
  EXPECT_EQ(g.reasons[0],
            "compute.fp32.fma drifted -20.0% over the soak (60.0 TFLOP/s -> 48.0 TFLOP/s)");
  EXPECT_EQ(g.soak_regressions, 1);
  EXPECT_EQ(verdict_of(rep, 3).verdict, GpuVerdict::healthy);
  EXPECT_EQ(verdict_of(rep, 3).soak_regressions, 0);
  EXPECT_FALSE(verdict_of(rep, 0).soak_regressions.has_value());
  const nlohmann::json j = fleet_to_json(rep, {});
  EXPECT_EQ(j["verdicts"][0]["rank"], 2);
  EXPECT_EQ(j["verdicts"][0]["soak_regressions"], 1);
}

TEST(FleetSoak, ThermalThrottleAndNewUncorrectedEccMakeAnOutlier) {
  FleetRank r = gpu(0, 3000);
  r.result = {{"soak", soak_section()}};
  r.result["soak"]["throttle_events"] = {{"hw_thermal_slowdown", 2}, {"sw_power_cap", 9}};
  r.result["soak"]["ecc_after"]["uncorrected"] = 1;
  const FleetReport rep = analyse_fleet({r}, {});
  const FleetGpu& g = verdict_of(rep, 0);
  EXPECT_EQ(g.verdict, GpuVerdict::outlier);
  ASSERT_EQ(g.reasons.size(), 3u);
  EXPECT_EQ(g.reasons[0],
            "clocks throttled during the soak: hw_thermal_slowdown in 2 repetition(s)");
  EXPECT_EQ(g.reasons[1], "uncorrected ECC errors during the soak: 0 -> 1");
}

TEST(FleetSoak, AMalformedSoakFailsTheGpuWithoutACrash) {
  for (const char* bad : {R"("text")", R"({"figures": 7})", R"({"figures": [{"no": "id"}]})",
                          R"({"figures": [], "throttle_events": {"hw_slowdown": "x"},
                              "ecc_before": {"uncorrected": "0"}, "ecc_after": []})"}) {
    FleetRank r = gpu(0, 3000);
    r.result = {{"soak", nlohmann::json::parse(bad)}};
    const FleetReport rep = analyse_fleet({r}, {});
    const FleetGpu& g = verdict_of(rep, 0);
    const bool wrong_types_only = std::string(bad).find("throttle_events") != std::string::npos;
    // Fields of the wrong type are ignored; a section without its figures cannot be judged.
    EXPECT_EQ(g.verdict, wrong_types_only ? GpuVerdict::healthy : GpuVerdict::failed) << bad;
  }
}
