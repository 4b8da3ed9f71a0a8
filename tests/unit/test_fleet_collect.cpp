// fleet --collect (core/src/fleet_collect.cpp), the Prometheus writer (core/src/prometheus.cpp)
// and the fleet page's units (report/fleet_report.cpp): GPU-free.
#include <gtest/gtest.h>

#include <cmath>

#include "fleet_report.hpp"
#include "gpudissect/fleet.hpp"
#include "gpudissect/fleet_collect.hpp"
#include "gpudissect/fleet_units.hpp"
#include "gpudissect/prometheus.hpp"
#include "gpudissect/result.hpp"

using namespace gd;

namespace {

Figure figure(const std::string& id, double v, const std::string& unit, bool higher = true) {
  Figure f;
  f.id = id;
  f.label = id;
  f.unit = unit;
  f.value = single_value(v);
  f.higher_is_better = higher;
  return f;
}

// A run JSON as `gpudissect run` writes it, trimmed to what a fleet reads.
nlohmann::json run_json(int gpu, double dram, const std::string& host) {
  DeviceInfo d;
  d.id = "cuda:0";
  d.name = "Test GPU";
  d.backend = "cuda";
  d.extra["uuid"] = "GPU-" + std::to_string(gpu);
  d.extra["pci_bus_id"] = "0000:0" + std::to_string(gpu) + ":00.0";
  nlohmann::json j = {{"schema_version", kSchemaVersion},
                      {"tool", {{"name", "gpudissect"}, {"started_at", "2026-11-25T10:00:00Z"}}},
                      {"device", d},
                      {"probes", nlohmann::json::object()}};
  j["figures"] = std::vector<Figure>{figure("bandwidth.dram.read", dram, "GB/s"),
                                     figure("latency.global.L2", 500 + gpu, "ns", false)};
  if (!host.empty()) j["provenance"] = {{"host", host}};
  return j;
}

const FleetGpu& verdict_of(const FleetReport& rep, int rank) {
  for (const auto& g : rep.gpus)
    if (rep.ranks[g.index].rank == rank) return g;
  throw std::runtime_error("no such rank");
}

}  // namespace

TEST(FleetCollect, HostFromProvenanceElseFileName) {
  EXPECT_EQ(run_json_host(run_json(0, 1, "node7")), "node7");
  EXPECT_EQ(run_json_host(run_json(0, 1, "")), "");
  EXPECT_EQ(collect_source_name("/x/y/node-a.json"), "node-a");
  EXPECT_EQ(collect_source_name("node-b.json.gz"), "node-b");
  const FleetRank r = fleet_rank_from_run_json(run_json(3, 1000, ""), "/d/gpu3.json", 5);
  EXPECT_EQ(r.host, "gpu3");
  EXPECT_EQ(r.rank, 5);
  EXPECT_EQ(r.device_id, "cuda:0");
  EXPECT_EQ(fleet_uuid(r), "GPU-3");
  EXPECT_EQ(fleet_bus_id(r), "0000:03:00.0");
  EXPECT_TRUE(r.status.ok());
  ASSERT_EQ(r.figures.size(), 2u);
}

TEST(FleetCollect, ProbeThatFailedIsNoted) {
  nlohmann::json j = run_json(0, 1000, "n");
  j["probes"]["compute"] = {{"status", "error"}, {"reason", "no tensor cores"}};
  const FleetRank r = fleet_rank_from_run_json(j, "n.json", 0);
  EXPECT_TRUE(r.status.ok());
  EXPECT_NE(r.note.find("compute error: no tensor cores"), std::string::npos) << r.note;
}

TEST(FleetCollect, LocalRanksByHost) {
  std::vector<FleetRank> ranks(4);
  const char* hosts[] = {"a", "b", "a", "a"};
  for (int k = 0; k < 4; ++k) ranks[k].host = hosts[k];
  assign_local_ranks(ranks);
  EXPECT_EQ(ranks[0].local_rank, 0);
  EXPECT_EQ(ranks[1].local_rank, 0);
  EXPECT_EQ(ranks[2].local_rank, 1);
  EXPECT_EQ(ranks[3].local_rank, 2);
}

// Three GPUs, one 30 % slower: collected from run JSONs it is judged exactly as the live
// fleet judges the same runs (each rank reads its run, then its report travels as JSON).
TEST(FleetCollect, SameVerdictAsTheLivePath) {
  const std::vector<nlohmann::json> runs = {run_json(0, 3000, "n0"), run_json(1, 2100, "n0"),
                                            run_json(2, 3010, "n1")};
  std::vector<FleetRank> collected, live;
  for (size_t k = 0; k < runs.size(); ++k) {
    collected.push_back(
        fleet_rank_from_run_json(runs[k], "f" + std::to_string(k) + ".json", static_cast<int>(k)));
    FleetRank r;  // what measure() makes of its run
    r.rank = static_cast<int>(k);
    r.host = runs[k]["provenance"]["host"].get<std::string>();
    fleet_fill_from_result(r, runs[k]);
    r.device_id = r.device.id;
    live.push_back(nlohmann::json(r).get<FleetRank>());  // the worker's report, read back
  }
  assign_local_ranks(collected);
  live[1].local_rank = 1;
  const FleetReport a = analyse_fleet(collected, {}), b = analyse_fleet(live, {});
  EXPECT_EQ(a.exit_code(), 3);
  EXPECT_EQ(verdict_of(a, 1).verdict, GpuVerdict::outlier);
  EXPECT_EQ(verdict_of(a, 0).verdict, GpuVerdict::healthy);
  ASSERT_FALSE(verdict_of(a, 1).reasons.empty());
  EXPECT_EQ(verdict_of(a, 1).reasons[0].rfind("bandwidth.dram.read 2.10 TB/s: -30.1% vs median "
                                              "3.00 TB/s of the others",
                                              0),
            0u)
      << verdict_of(a, 1).reasons[0];
  const nlohmann::json ja = fleet_to_json(a, {}), jb = fleet_to_json(b, {});
  EXPECT_EQ(ja["verdicts"], jb["verdicts"]);
  EXPECT_EQ(ja["figures"], jb["figures"]);
  EXPECT_EQ(ja["exit_status"], jb["exit_status"]);
}

TEST(FleetCollect, BusyGpuFromItsRunsGpuState) {
  nlohmann::json busy = run_json(1, 1000, "n");
  busy["gpu_state"] = {{"verdict", "shared"},
                       {"shared", true},
                       {"reasons", nlohmann::json::array({"pid 42 used it"})}};
  std::vector<FleetRank> ranks = {fleet_rank_from_run_json(run_json(0, 3000, "n"), "a", 0),
                                  fleet_rank_from_run_json(busy, "b", 1)};
  const FleetReport rep = analyse_fleet(ranks, {});
  EXPECT_EQ(verdict_of(rep, 1).verdict, GpuVerdict::busy);
  EXPECT_EQ(rep.exit_code(), 4);
}

TEST(Prometheus, NamesAndLabelValues) {
  EXPECT_EQ(prometheus_metric_name("gpudissect_bandwidth.dram.read"),
            "gpudissect_bandwidth_dram_read");
  EXPECT_EQ(prometheus_metric_name("9lives-x"), "_9lives_x");
  EXPECT_EQ(prometheus_metric_name("a:b_c"), "a:b_c");
  EXPECT_EQ(prometheus_label_value("a\\b\"c\nd"), "a\\\\b\\\"c\\nd");
  EXPECT_EQ(prometheus_number(3201.5), "3201.5");
  EXPECT_EQ(prometheus_number(0.1), "0.1");
  EXPECT_EQ(prometheus_number(HUGE_VAL), "+Inf");
  EXPECT_EQ(prometheus_number(-HUGE_VAL), "-Inf");
  EXPECT_EQ(prometheus_number(std::nan("")), "NaN");
  ASSERT_TRUE(iso8601_to_unix("1970-01-02T00:00:10Z").has_value());
  EXPECT_EQ(*iso8601_to_unix("1970-01-02T00:00:10Z"), 86410.0);
  EXPECT_FALSE(iso8601_to_unix("yesterday").has_value());
}

TEST(Prometheus, RunFile) {
  PrometheusGpu g;
  g.uuid = "GPU-1";
  g.pci_bus_id = "0000:01:00.0";
  g.host = "node\"1";
  g.backend = "cuda";
  g.started_unix = 86400;
  g.figures = {figure("bandwidth.dram.read", 3000, "GB/s"), figure("x.y", 2, "ns")};
  Figure failed = figure("compute.fp32.fma", 1, "TFLOP/s");
  failed.status = {StatusCode::error, "boom"};
  g.figures.push_back(failed);
  const std::string t = prometheus_text({g});
  EXPECT_NE(t.find("# TYPE gpudissect_bandwidth_dram_read gauge\n"), std::string::npos) << t;
  EXPECT_NE(t.find("gpudissect_bandwidth_dram_read{figure=\"bandwidth.dram.read\",unit=\"GB/s\","
                   "uuid=\"GPU-1\",pci_bus_id=\"0000:01:00.0\",host=\"node\\\"1\","
                   "backend=\"cuda\"} 3000\n"),
            std::string::npos)
      << t;
  EXPECT_NE(t.find("gpudissect_run_timestamp_seconds{"), std::string::npos);
  EXPECT_EQ(t.find("compute_fp32_fma"), std::string::npos) << "a failed figure has no value";
  EXPECT_EQ(t.find("verdict"), std::string::npos) << "a run has no verdict";
}

TEST(Prometheus, FleetVerdicts) {
  std::vector<FleetRank> ranks = {fleet_rank_from_run_json(run_json(0, 3000, "n"), "a", 0),
                                  fleet_rank_from_run_json(run_json(1, 1000, "n"), "b", 1)};
  const std::string t = prometheus_fleet(analyse_fleet(ranks, {}));
  EXPECT_NE(t.find("uuid=\"GPU-1\",pci_bus_id=\"0000:01:00.0\",host=\"n\",backend=\"cuda\","
                   "rank=\"1\",verdict=\"outlier\"} 1\n"),
            std::string::npos)
      << t;
  EXPECT_NE(t.find("rank=\"1\",verdict=\"healthy\"} 0\n"), std::string::npos) << t;
  EXPECT_NE(t.find("gpudissect_fleet_gpu_healthy{uuid=\"GPU-0\""), std::string::npos) << t;
  EXPECT_NE(t.find("gpudissect_fleet_exit_status 3\n"), std::string::npos) << t;
  // One HELP and TYPE per metric, however many GPUs.
  size_t n = 0;
  for (size_t p = 0; (p = t.find("# TYPE gpudissect_bandwidth_dram_read ", p)) != std::string::npos;
       ++p)
    ++n;
  EXPECT_EQ(n, 1u);
}

TEST(FleetPage, FiguresInTheirUnits) {
  EXPECT_EQ(fleet_quantity(32010, "GB/s"), "32.0 TB/s");
  EXPECT_EQ(fleet_quantity(789.4, "GB/s"), "789 GB/s");
  EXPECT_EQ(fleet_quantity(0.5, "TFLOP/s"), "500 GFLOP/s");
  EXPECT_EQ(fleet_quantity(1500, "ns"), "1.50 us");
  EXPECT_EQ(fleet_quantity(31.25, "ns"), "31.3 ns");
  EXPECT_EQ(fleet_quantity(12345, "kernels/s"), "12345 kernels/s");
  EXPECT_EQ(fleet_quantity(812, "cycles"), "812 cycles");
  EXPECT_EQ(fleet_quantity(65536, "bytes"), "64 KiB");
}

TEST(FleetPage, TableValuesHaveNoExponent) {
  std::vector<FleetRank> ranks = {fleet_rank_from_run_json(run_json(0, 32010, "n"), "a", 0),
                                  fleet_rank_from_run_json(run_json(1, 32050, "n"), "b", 1)};
  const std::string html = report::fleet_html(analyse_fleet(ranks, {}), "t");
  EXPECT_NE(html.find(">32.0 TB/s<"), std::string::npos);
  EXPECT_EQ(html.find("e+04"), std::string::npos);
  EXPECT_EQ(html.find("e+03"), std::string::npos);
  EXPECT_NE(html.find("class=\"box\""), std::string::npos);
}
