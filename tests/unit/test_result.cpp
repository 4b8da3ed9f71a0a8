// The result model's JSON form: round trip, absent optionals, documented shape, rejects.
// Also the memory-path names.
#include <gtest/gtest.h>

#include <set>
#include <stdexcept>
#include <string>

#include "gpudissect/device.hpp"
#include "gpudissect/result.hpp"
#include "gpudissect/units.hpp"
#include "registry.hpp"

using nlohmann::json;

namespace {

gd::Summary summary(double median, double q1, double q3, double mn, double mx, std::size_t n) {
  gd::Summary s;
  s.median = median;
  s.q1 = q1;
  s.q3 = q3;
  s.min = mn;
  s.max = mx;
  s.n = n;
  return s;
}

gd::RunResult sample_result() {
  gd::RunResult r;
  r.tool.version = "0.1.0";
  r.tool.command = "gpudissect run --probe latency";
  r.tool.started_at = "2024-05-01T12:00:00Z";

  gd::DeviceInfo& d = r.device;
  d.backend = "cuda";
  d.id = "cuda:0";
  d.name = "NVIDIA H200";
  d.vendor = "NVIDIA";
  d.compute_units = 132;
  d.clock_mhz_reported = 1980.0;
  d.memory_bus_width_bits = 6144;
  d.memory_bytes = 150754820096ull;
  d.l2_bytes = 52428800ull;
  d.shared_per_block_bytes = 49152;
  d.compute_capability = "9.0";
  d.driver_version = "550.54.15";
  d.toolkit_version = "12.4";
  d.extra["ecc"] = "on";
  // memory_clock_mhz, l1_or_cacheline_bytes, shared_per_sm_bytes,
  // shared_per_block_optin_bytes, constant_bytes: absent.

  gd::LatencyProbeResult lat;
  lat.wall_seconds = 12.5;
  lat.clock_mhz_measured = 1755.25;
  gd::Telemetry before;
  before.sm_clock_mhz = 1980;
  before.temperature_c = 41;
  before.power_w = 120.5;
  before.throttle_reasons = {"sw_power_cap", "hw_slowdown"};
  lat.telemetry_before = before;
  gd::Telemetry after;
  after.sm_clock_mhz = 1755;
  after.memory_clock_mhz = 2619;
  lat.telemetry_after = after;  // no throttle reasons, no temperature, no power

  gd::CurveResult constant;
  constant.status.code = gd::StatusCode::unsupported;
  constant.status.reason = "constant bank is 64 KiB; no chase on this backend";
  lat.paths["constant"] = constant;

  gd::CurveResult global;
  global.stride_bytes = 128;
  global.wall_seconds = 9.75;
  global.timed_instruction = "LDG.E.64";
  gd::LatencyPoint p0;
  p0.footprint_bytes = 1024;
  p0.stride_bytes = 128;
  p0.cycles = summary(33.5, 33.25, 33.75, 33.0, 34.0, 5);
  p0.ns = summary(19.125, 19.0, 19.25, 18.875, 19.5, 5);
  p0.clock_mhz = 1755.5;
  gd::LatencyPoint p1;  // ns only: no "cycles" key
  p1.footprint_bytes = 64ull << 20;
  p1.stride_bytes = 128;
  p1.ns = summary(480.5, 478.0, 483.0, 470.0, 490.0, 7);
  gd::LatencyPoint p2;  // skipped
  p2.footprint_bytes = 256ull << 30;
  p2.stride_bytes = 128;
  p2.status = {gd::StatusCode::skipped, "allocation failed"};
  global.points = {p0, p1, p2};

  gd::Level l1;
  l1.name = "L1";
  l1.capacity_bytes = 229376;
  l1.capacity_lo_bytes = 212992;
  l1.capacity_hi_bytes = 245760;
  l1.latency_cycles = 33.5;
  l1.latency_ns = 19.125;
  l1.confidence = 0.875;
  gd::Level l2;
  l2.name = "L2";
  l2.capacity_bytes = 52428800;
  l2.capacity_lo_bytes = 50331648;
  l2.capacity_hi_bytes = 54525952;
  l2.latency_cycles = 262.0;
  l2.latency_ns = 149.5;
  l2.confidence = 0.75;
  gd::Level dram;  // last level: no capacity, no interval, no cycles
  dram.name = "device memory";
  dram.latency_ns = 480.5;
  dram.step_ns = 331.0;
  dram.confidence = 0.5;
  global.levels = {l1, l2, dram};
  global.dram_minus_last_cache_ns = 331.0;
  lat.paths["global"] = global;

  gd::CurveResult tlb;
  tlb.stride_bytes = 2ull << 20;
  tlb.wall_seconds = 1.5;
  gd::LatencyPoint t0;
  t0.footprint_bytes = 32ull << 20;
  t0.stride_bytes = 2ull << 20;
  t0.cycles = summary(500, 499, 501, 498, 503, 5);
  t0.ns = summary(285, 284, 286, 283, 290, 5);
  tlb.points = {t0};
  gd::Level tl;
  tl.name = "L1 TLB";
  tl.capacity_bytes = 32ull << 20;
  tl.latency_cycles = 500;
  tl.step_cycles = 38;
  tl.confidence = 0.625;
  tlb.levels = {tl};
  lat.tlb["stride_2097152"] = tlb;

  r.put(lat);
  return r;
}

std::string reject_message(const json& j) {
  try {
    (void)gd::run_result_from_json(j, gd::probe_registry());
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  return "<accepted>";
}

}  // namespace

TEST(ResultJson, RoundTripIsIdentical) {
  const gd::RunResult r = sample_result();
  const json j1 = gd::to_json(r, gd::probe_registry());
  const json j2 =
      gd::to_json(gd::run_result_from_json(j1, gd::probe_registry()), gd::probe_registry());
  EXPECT_EQ(j1, j2);
  EXPECT_EQ(j1.dump(2), j2.dump(2));
  // Through text as well.
  const json j3 = gd::to_json(
      gd::run_result_from_json(json::parse(j1.dump()), gd::probe_registry()), gd::probe_registry());
  EXPECT_EQ(j1.dump(), j3.dump());
}

TEST(ResultJson, RoundTripKeepsValuesAndAbsences) {
  const gd::RunResult r = gd::run_result_from_json(
      gd::to_json(sample_result(), gd::probe_registry()), gd::probe_registry());
  EXPECT_EQ(r.schema_version, gd::kSchemaVersion);
  EXPECT_EQ(r.tool.name, "gpudissect");
  EXPECT_EQ(r.tool.started_at, "2024-05-01T12:00:00Z");
  EXPECT_EQ(r.device.name, "NVIDIA H200");
  EXPECT_EQ(r.device.compute_units, 132);
  EXPECT_EQ(r.device.l2_bytes, std::optional<uint64_t>(52428800ull));
  EXPECT_EQ(r.device.memory_bytes, std::optional<uint64_t>(150754820096ull));
  EXPECT_FALSE(r.device.memory_clock_mhz.has_value());
  EXPECT_FALSE(r.device.constant_bytes.has_value());
  EXPECT_EQ(r.device.extra.at("ecc"), "on");
  ASSERT_TRUE((r.get<gd::LatencyProbeResult>() != nullptr));
  const auto& lat = *r.get<gd::LatencyProbeResult>();
  EXPECT_EQ(lat.clock_mhz_measured, std::optional<double>(1755.25));
  ASSERT_TRUE(lat.telemetry_before.has_value());
  EXPECT_EQ(lat.telemetry_before->throttle_reasons,
            (std::vector<std::string>{"sw_power_cap", "hw_slowdown"}));
  ASSERT_TRUE(lat.telemetry_after.has_value());
  EXPECT_TRUE(lat.telemetry_after->throttle_reasons.empty());
  EXPECT_FALSE(lat.telemetry_after->power_w.has_value());

  const auto& c = lat.paths.at("constant");
  EXPECT_EQ(c.status.name(), "unsupported");
  EXPECT_FALSE(c.status.ok());
  EXPECT_NE(c.status.reason.find("constant bank"), std::string::npos);

  const auto& g = lat.paths.at("global");
  EXPECT_TRUE(g.status.ok());
  ASSERT_EQ(g.points.size(), 3u);
  ASSERT_TRUE(g.points[0].cycles.has_value());
  EXPECT_DOUBLE_EQ(g.points[0].cycles->median, 33.5);
  EXPECT_DOUBLE_EQ(g.points[0].cycles->q1, 33.25);
  EXPECT_DOUBLE_EQ(g.points[0].cycles->max, 34.0);
  EXPECT_EQ(g.points[0].cycles->n, 5u);
  EXPECT_FALSE(g.points[1].cycles.has_value());
  ASSERT_TRUE(g.points[1].ns.has_value());
  EXPECT_DOUBLE_EQ(g.points[1].ns->q3, 483.0);
  EXPECT_EQ(g.points[2].status.code, gd::StatusCode::skipped);
  EXPECT_EQ(g.points[2].status.reason, "allocation failed");
  EXPECT_FALSE(g.points[2].ns.has_value());
  ASSERT_EQ(g.levels.size(), 3u);
  EXPECT_EQ(g.levels[0].capacity_lo_bytes, std::optional<uint64_t>(212992));
  EXPECT_EQ(g.levels[0].capacity_hi_bytes, std::optional<uint64_t>(245760));
  EXPECT_FALSE(g.levels[2].capacity_bytes.has_value());
  EXPECT_FALSE(g.levels[2].capacity_lo_bytes.has_value());
  EXPECT_FALSE(g.levels[2].latency_cycles.has_value());
  EXPECT_FALSE(g.dram_minus_last_cache_cycles.has_value());
  EXPECT_EQ(g.dram_minus_last_cache_ns, std::optional<double>(331.0));
  EXPECT_EQ(g.timed_instruction, std::optional<std::string>("LDG.E.64"));
  EXPECT_FALSE(c.timed_instruction.has_value());

  const auto& t = lat.tlb.at("stride_2097152");
  ASSERT_EQ(t.levels.size(), 1u);
  EXPECT_EQ(t.levels[0].name, "L1 TLB");
  EXPECT_EQ(t.levels[0].step_cycles, std::optional<double>(38));
  EXPECT_FALSE(t.levels[0].step_ns.has_value());
}

TEST(ResultJson, AbsentOptionalsAreAbsentKeys) {
  const json j = gd::to_json(sample_result(), gd::probe_registry());
  const json& dev = j["device"];
  for (const char* k : {"memory_clock_mhz", "l1_or_cacheline_bytes", "shared_per_sm_bytes",
                        "shared_per_block_optin_bytes", "constant_bytes"})
    EXPECT_FALSE(dev.contains(k)) << k;
  EXPECT_TRUE(dev.contains("l2_bytes"));
  EXPECT_EQ(dev["shared_per_block_bytes"], 49152);

  const json& lat = j["probes"]["latency"];
  EXPECT_FALSE(lat.contains("reason"));  // ok status has no reason
  EXPECT_FALSE(lat["telemetry_after"].contains("power_w"));
  EXPECT_FALSE(lat["telemetry_after"].contains("temperature_c"));
  EXPECT_EQ(lat["telemetry_after"]["throttle_reasons"], json::array());

  const json& pts = lat["paths"]["global"]["points"];
  // A point without cycles has no "cycles" key (not null, not 0), anywhere.
  EXPECT_FALSE(pts[1].contains("cycles"));
  EXPECT_TRUE(pts[1].contains("ns"));
  EXPECT_FALSE(pts[1]["spread"].contains("cycles"));
  EXPECT_FALSE(pts[1].contains("clock_mhz"));
  EXPECT_FALSE(pts[1].contains("reason"));
  // A skipped point has neither figures nor a spread.
  for (const char* k : {"cycles", "ns", "spread", "clock_mhz"})
    EXPECT_FALSE(pts[2].contains(k)) << k;
  EXPECT_EQ(pts[2]["status"], "skipped");
  EXPECT_EQ(pts[2]["reason"], "allocation failed");

  const json& last = lat["paths"]["global"]["levels"][2];
  for (const char* k :
       {"capacity_bytes", "capacity_interval_bytes", "latency_cycles", "step_cycles"})
    EXPECT_FALSE(last.contains(k)) << k;
  EXPECT_EQ(last["latency_ns"], 480.5);
  EXPECT_FALSE(lat["paths"]["global"].contains("dram_minus_last_cache_cycles"));
  EXPECT_FALSE(lat["paths"]["constant"].contains("dram_minus_last_cache_ns"));
  EXPECT_FALSE(lat["paths"]["constant"].contains("timed_instruction"));

  // A run without the latency probe has an empty probes object.
  gd::RunResult bare = sample_result();
  bare.probes.erase("latency");
  const json jb = gd::to_json(bare, gd::probe_registry());
  EXPECT_EQ(jb["probes"], json::object());
  EXPECT_FALSE(gd::run_result_from_json(jb, gd::probe_registry()).get<gd::LatencyProbeResult>() !=
               nullptr);
}

TEST(ResultJson, DocumentedShape) {
  const json j = gd::to_json(sample_result(), gd::probe_registry());
  EXPECT_EQ(j["schema_version"], gd::kSchemaVersion);
  ASSERT_TRUE(j.contains("figures"));
  EXPECT_TRUE(j["figures"].is_array());
  EXPECT_EQ(j["tool"]["name"], "gpudissect");
  EXPECT_EQ(j["tool"]["version"], "0.1.0");
  EXPECT_EQ(j["device"]["name"], "NVIDIA H200");
  EXPECT_EQ(j["device"]["backend"], "cuda");

  const json& lat = j.at("probes").at("latency");
  EXPECT_EQ(lat["status"], "ok");
  EXPECT_EQ(lat["clock_mhz_measured"], 1755.25);
  EXPECT_EQ(lat["telemetry_before"]["throttle_reasons"], (json{"sw_power_cap", "hw_slowdown"}));

  const json& g = lat.at("paths").at("global");
  EXPECT_EQ(g["status"], "ok");
  EXPECT_EQ(g["stride_bytes"], 128);
  const json& p0 = g.at("points").at(0);
  EXPECT_EQ(p0["footprint_bytes"], 1024);
  EXPECT_EQ(p0["stride_bytes"], 128);
  EXPECT_EQ(p0["status"], "ok");
  // Flat medians beside the full spread.
  EXPECT_EQ(p0["cycles"], 33.5);
  EXPECT_EQ(p0["ns"], 19.125);
  EXPECT_EQ(p0["clock_mhz"], 1755.5);
  EXPECT_EQ(p0["spread"]["cycles"]["median"], 33.5);
  EXPECT_EQ(p0["spread"]["cycles"]["q1"], 33.25);
  EXPECT_EQ(p0["spread"]["cycles"]["q3"], 33.75);
  EXPECT_EQ(p0["spread"]["cycles"]["min"], 33.0);
  EXPECT_EQ(p0["spread"]["cycles"]["max"], 34.0);
  EXPECT_EQ(p0["spread"]["cycles"]["n"], 5);
  EXPECT_EQ(p0["spread"]["ns"]["q3"], 19.25);

  const json& l0 = g.at("levels").at(0);
  EXPECT_EQ(l0["name"], "L1");
  EXPECT_EQ(l0["capacity_bytes"], 229376);
  EXPECT_EQ(l0["latency_cycles"], 33.5);
  EXPECT_EQ(l0["latency_ns"], 19.125);
  EXPECT_EQ(l0["confidence"], 0.875);
  ASSERT_TRUE(l0["capacity_interval_bytes"].is_array());
  ASSERT_EQ(l0["capacity_interval_bytes"].size(), 2u);
  EXPECT_EQ(l0["capacity_interval_bytes"][0], 212992);
  EXPECT_EQ(l0["capacity_interval_bytes"][1], 245760);
  EXPECT_EQ(g["dram_minus_last_cache_ns"], 331.0);
  EXPECT_EQ(g["timed_instruction"], "LDG.E.64");

  const json& c = lat.at("paths").at("constant");
  EXPECT_EQ(c["status"], "unsupported");
  EXPECT_EQ(c["reason"], "constant bank is 64 KiB; no chase on this backend");
  EXPECT_EQ(c["points"], json::array());

  const json& t = lat.at("tlb").at("stride_2097152");
  EXPECT_EQ(t["stride_bytes"], 2097152);
  EXPECT_EQ(t["levels"][0]["name"], "L1 TLB");
  EXPECT_EQ(t["levels"][0]["step_cycles"], 38.0);
}

TEST(ResultJson, FlatMediansAloneStillRead) {
  json j = gd::to_json(sample_result(), gd::probe_registry());
  json& p0 = j["probes"]["latency"]["paths"]["global"]["points"][0];
  p0.erase("spread");
  const auto r = gd::run_result_from_json(j, gd::probe_registry());
  const auto& pt = r.get<gd::LatencyProbeResult>()->paths.at("global").points[0];
  ASSERT_TRUE(pt.cycles.has_value());
  EXPECT_DOUBLE_EQ(pt.cycles->median, 33.5);
  ASSERT_TRUE(pt.ns.has_value());
  EXPECT_DOUBLE_EQ(pt.ns->median, 19.125);
}

TEST(ResultJsonReject, NonObject) {
  EXPECT_THROW(gd::run_result_from_json(json::array({1, 2}), gd::probe_registry()),
               std::runtime_error);
  EXPECT_THROW(gd::run_result_from_json(json("text"), gd::probe_registry()), std::runtime_error);
  EXPECT_THROW(gd::run_result_from_json(json(nullptr), gd::probe_registry()), std::runtime_error);
}

TEST(ResultJsonReject, MissingOrBadSchemaVersion) {
  json j = gd::to_json(sample_result(), gd::probe_registry());
  j.erase("schema_version");
  EXPECT_NE(reject_message(j).find("schema_version"), std::string::npos) << reject_message(j);
  j["schema_version"] = "1";
  EXPECT_NE(reject_message(j), "<accepted>");
}

TEST(ResultJsonReject, SchemaVersionFromTheFutureOrZero) {
  for (int v : {0, gd::kSchemaVersion + 1, 99}) {
    json j = gd::to_json(sample_result(), gd::probe_registry());
    j["schema_version"] = v;
    const std::string msg = reject_message(j);
    EXPECT_NE(msg, "<accepted>") << v;
    EXPECT_NE(msg.find("schema_version"), std::string::npos) << msg;
  }
}

TEST(ResultJson, VersionOneStillLoadsAndGainsFigures) {
  json j = gd::to_json(sample_result(), gd::probe_registry());
  j["schema_version"] = 1;
  j.erase("figures");
  const gd::RunResult r = gd::run_result_from_json(j, gd::probe_registry());
  ASSERT_TRUE(r.get<gd::LatencyProbeResult>());
  ASSERT_FALSE(r.figures.empty());
  EXPECT_EQ(r.schema_version, gd::kSchemaVersion);  // written back as the current version
  bool l1 = false;
  for (const gd::Figure& f : r.figures) l1 = l1 || f.id == "latency.global.L1";
  EXPECT_TRUE(l1);
}

TEST(ResultJson, UnknownProbeIsKeptAsWritten) {
  json j = gd::to_json(sample_result(), gd::probe_registry());
  j["probes"]["from_the_future"] = json{{"status", "ok"}, {"answer", 42}};
  const gd::RunResult r = gd::run_result_from_json(j, gd::probe_registry());
  const json back = gd::to_json(r, gd::probe_registry());
  EXPECT_EQ(back["probes"]["from_the_future"]["answer"], 42);
}

TEST(ResultJsonReject, DeviceWithoutName) {
  json j = gd::to_json(sample_result(), gd::probe_registry());
  j["device"].erase("name");
  const std::string msg = reject_message(j);
  EXPECT_NE(msg, "<accepted>");
  EXPECT_EQ(msg.rfind("malformed", 0), 0u) << msg;
}

TEST(ResultJsonReject, FootprintAsString) {
  json j = gd::to_json(sample_result(), gd::probe_registry());
  j["probes"]["latency"]["paths"]["global"]["points"][0]["footprint_bytes"] = "1024";
  const std::string msg = reject_message(j);
  EXPECT_NE(msg, "<accepted>");
  EXPECT_EQ(msg.rfind("malformed", 0), 0u) << msg;
}

TEST(ResultJsonReject, PointStatusNotAStatusWord) {
  json j = gd::to_json(sample_result(), gd::probe_registry());
  j["probes"]["latency"]["paths"]["global"]["points"][0]["status"] = "fine";
  const std::string msg = reject_message(j);
  EXPECT_EQ(msg.rfind("malformed", 0), 0u) << msg;
  EXPECT_NE(msg.find("points[0].status"), std::string::npos) << msg;
  EXPECT_NE(msg.find("not a status: \"fine\""), std::string::npos) << msg;
}

TEST(ResultJsonReject, MissingToolOrProbes) {
  json j = gd::to_json(sample_result(), gd::probe_registry());
  j.erase("probes");
  EXPECT_EQ(reject_message(j).rfind("malformed", 0), 0u) << reject_message(j);
  json k = gd::to_json(sample_result(), gd::probe_registry());
  k.erase("tool");
  EXPECT_EQ(reject_message(k).rfind("malformed", 0), 0u) << reject_message(k);
}

// ---- memory paths ----

TEST(MemPathNames, RoundTripEveryPath) {
  const auto& all = gd::all_mem_paths();
  EXPECT_EQ(all.size(), 8u);
  std::set<std::string> names;
  for (gd::MemPath p : all) {
    const std::string name = gd::to_string(p);
    EXPECT_NE(name, "unknown");
    names.insert(name);
    const auto back = gd::parse_mem_path(name);
    ASSERT_TRUE(back.has_value()) << name;
    EXPECT_EQ(*back, p) << name;
  }
  EXPECT_EQ(names.size(), all.size());  // distinct names
}

TEST(MemPathNames, KnownNames) {
  EXPECT_EQ(gd::to_string(gd::MemPath::global), "global");
  EXPECT_EQ(gd::to_string(gd::MemPath::l2), "l2");
  EXPECT_EQ(gd::to_string(gd::MemPath::image), "image");
  EXPECT_EQ(gd::parse_mem_path("texture"), std::optional<gd::MemPath>(gd::MemPath::texture));
  EXPECT_EQ(gd::parse_mem_path("shared"), std::optional<gd::MemPath>(gd::MemPath::shared));
}

TEST(MemPathNames, UnknownNameIsNullopt) {
  for (const char* bad : {"dram", "", "Global", "global ", "l3", "unknown"})
    EXPECT_FALSE(gd::parse_mem_path(bad).has_value()) << "'" << bad << "'";
}

// Vulkan reports no L2 size; the CUDA view of the same GPU (the same UUID) lends its own.
TEST(BorrowFacts, L2SizeFromTheEntryWithTheSameUuid) {
  gd::DeviceEntry cuda0, cuda1, vk0, vk1, cl;
  cuda0.id = "cuda:0";
  cuda0.uuid = "8c9d0e1f00112233445566778899aabb";
  cuda0.l2_bytes = 62914560;
  cuda1.id = "cuda:1";
  cuda1.uuid = "00000000000000000000000000000001";
  cuda1.l2_bytes = 52428800;
  cuda1.sm_arch = "sm_90";
  vk0.id = "vulkan:0";
  vk0.uuid = "00000000000000000000000000000001";  // the second CUDA GPU
  vk1.id = "vulkan:1";
  vk1.uuid = "ffffffffffffffffffffffffffffffff";  // lavapipe: no CUDA twin
  cl.id = "opencl:0.0";                           // no UUID at all
  const std::vector<gd::DeviceEntry> all = {cuda0, cuda1, vk0, vk1, cl};
  const gd::BorrowedFacts b = gd::borrow_facts(vk0, all);
  ASSERT_TRUE(b.l2_bytes);
  EXPECT_EQ(*b.l2_bytes, 52428800u);
  EXPECT_EQ(b.source, "L2 size of cuda:1 (the same UUID)");
  EXPECT_EQ(b.sm_arch, "sm_90");
  EXPECT_EQ(b.sm_arch_source, "SM architecture of cuda:1 (the same UUID)");
  EXPECT_TRUE(gd::borrow_facts(vk1, all).sm_arch.empty());
  EXPECT_FALSE(gd::borrow_facts(vk1, all).l2_bytes);
  EXPECT_FALSE(gd::borrow_facts(cl, all).l2_bytes);
  // An entry that knows its own L2 keeps it; one never matches itself.
  EXPECT_FALSE(gd::borrow_facts(cuda0, all).l2_bytes);
  gd::DeviceEntry twin = vk0;
  EXPECT_FALSE(gd::borrow_facts(twin, {twin}).l2_bytes);
}

// What an OpenCL or Vulkan chase refuses before it reaches the device.
TEST(ValidateIndexChase, RefusesWhatA32BitIndexChainCannotWalk) {
  const std::vector<uint32_t> ok = {1, 2, 0}, bad = {1, 3, 0};
  gd::ChaseRequest r;
  r.next = &ok;
  r.stride_bytes = 64;
  r.hops_per_repeat = 10;
  r.repeats = 1;
  EXPECT_NO_THROW(gd::validate_index_chase(r));
  auto refused = [](gd::ChaseRequest q, const std::string& why) {
    try {
      gd::validate_index_chase(q);
    } catch (const std::invalid_argument& e) {
      return std::string(e.what()).find(why) != std::string::npos;
    }
    return false;
  };
  gd::ChaseRequest q = r;
  q.next = nullptr;
  EXPECT_TRUE(refused(q, "no chain"));
  q = r;
  q.stride_bytes = 6;
  EXPECT_TRUE(refused(q, "multiple of 4"));
  q = r;
  q.hops_per_repeat = 0;
  EXPECT_TRUE(refused(q, "hops_per_repeat is 0"));
  q = r;
  q.repeats = 0;
  EXPECT_TRUE(refused(q, "repeats"));
  q = r;
  q.stride_bytes = 1ull << 36;  // 3 lines of 64 GiB: past 2^32 four-byte elements
  EXPECT_TRUE(refused(q, "32-bit element indices"));
  q = r;
  q.next = &bad;
  EXPECT_TRUE(refused(q, "out of range"));
}

TEST(HexBytes, DeviceUuidsInOneForm) {
  const unsigned char cuda_uuid[16] = {0x8c, 0x9d, 0x0e, 0x1f, 0,    0x11, 0x22, 0x33,
                                       0x44, 0x55, 0x66, 0x77, 0x88, 0x99, 0xaa, 0xbb};
  const char as_chars[16] = {char(0x8c), char(0x9d), 0x0e,       0x1f,      0,    0x11,
                             0x22,       0x33,       0x44,       0x55,      0x66, 0x77,
                             char(0x88), char(0x99), char(0xaa), char(0xbb)};  // CUDA's char[16]
  EXPECT_EQ(gd::hex_bytes(cuda_uuid, 16), "8c9d0e1f00112233445566778899aabb");
  EXPECT_EQ(gd::hex_bytes(as_chars, 16), gd::hex_bytes(cuda_uuid, 16));
  EXPECT_EQ(gd::hex_bytes(cuda_uuid, 0), "");
}

// The chain image an OpenCL or Vulkan chase uploads: line i's first word holds the element
// index of line next[i], every other word 0.
TEST(IndexChaseImage, HoldsTheNextLinesElementIndexInEachLinesFirstWord) {
  const std::vector<uint32_t> next = {2, 0, 1};
  gd::ChaseRequest r;
  r.next = &next;
  r.stride_bytes = 16;  // 4 words a line
  const std::vector<uint32_t> image = gd::index_chase_image(r);
  const std::vector<uint32_t> want = {8, 0, 0, 0, 0, 0, 0, 0, 4, 0, 0, 0};
  EXPECT_EQ(image, want);
}

TEST(CheckChaseFootprint, SkipsAChainPastTheLimitAndNamesBothSizes) {
  const std::vector<uint32_t> next(1024, 0);
  gd::ChaseRequest r;
  r.next = &next;
  r.stride_bytes = 64;  // 64 KiB
  EXPECT_NO_THROW(gd::check_chase_footprint(r, 65536, "dev"));
  try {
    gd::check_chase_footprint(r, 65535, "dev");
    ADD_FAILURE() << "a chain one byte past the limit was let through";
  } catch (const gd::AllocationFailed& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("65536 bytes"), std::string::npos) << m;
    EXPECT_NE(m.find("on dev"), std::string::npos) << m;
  }
}
