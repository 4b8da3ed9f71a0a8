// Input that came from outside (issue 25, items 3 and 4): bounded JSON (size, depth), and
// every reader error naming its key path in words, never the JSON library's own text.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "committed_results.hpp"
#include "gpudissect/compare.hpp"
#include "gpudissect/fleet.hpp"
#include "gpudissect/json_read.hpp"
#include "gpudissect/result.hpp"
#include "registry.hpp"

namespace fs = std::filesystem;
using nlohmann::json;
using namespace gd;

namespace {

const fs::path kRepo = fs::path(GD_FIXTURES) / ".." / "..";

std::string nested(int depth, const std::string& inner = "1") {
  return std::string(depth, '[') + inner + std::string(depth, ']');
}

// A small valid result: a device, one figure list.
json small_result() {
  json fig = {
      {"id", "bandwidth.dram.read"},
      {"label", "x"},
      {"unit", "GB/s"},
      {"value", {{"median", 100}, {"q1", 99}, {"q3", 101}, {"min", 98}, {"max", 102}, {"n", 5}}},
      {"status", "ok"}};
  json figs = json::array();
  for (int i = 0; i < 14; ++i) {
    fig["id"] = "bandwidth.dram.read" + std::to_string(i);
    figs.push_back(fig);
  }
  return {{"schema_version", 2},
          {"tool", {{"name", "gpudissect"}, {"version", "0.1.0"}}},
          {"device", {{"backend", "cuda"}, {"name", "GPU"}}},
          {"probes", json::object()},
          {"figures", figs}};
}

// The message run_result_from_json gives for `j`; "" when it reads.
std::string read_error(const json& j) {
  try {
    run_result_from_json(j, probe_registry());
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST(JsonInput, DepthIsBoundedBeforeParsing) {
  EXPECT_NO_THROW(parse_json_text(nested(kMaxJsonDepth)));
  try {
    parse_json_text(nested(kMaxJsonDepth + 1));
    FAIL() << "a document one level too deep was read";
  } catch (const JsonReadError& e) {
    EXPECT_NE(std::string(e.what()).find("nested deeper than 64 levels"), std::string::npos)
        << e.what();
  }
  // What crashed report, compare and fleet --baseline: a million levels under a probe this
  // build does not know.
  const std::string deep =
      R"({"schema_version": 2, "tool": {}, "device": {"backend": "x", "name": "y"},
          "probes": {"future": )" +
      nested(1000000) + "}}";
  EXPECT_THROW(parse_json_text(deep), JsonReadError);
  // Brackets inside strings do not count; unbalanced ones outside are the parser's to refuse.
  EXPECT_NO_THROW(parse_json_text("[\"" + std::string(500, '[') + "\\\"[\"]"));
  EXPECT_THROW(parse_json_text(std::string(10, ']')), JsonReadError);
}

TEST(JsonInput, SizeIsBounded) {
  const fs::path f =
      fs::temp_directory_path() / ("gd-input-size-" + std::to_string(::getpid()) + ".json");
  { std::ofstream(f) << "[1]"; }
  EXPECT_EQ(read_json_file(f), json::array({1}));
  fs::resize_file(f, kMaxJsonBytes + 1);  // sparse: no disk used
  try {
    read_json_file(f);
    FAIL() << "a file over the cap was read";
  } catch (const JsonReadError& e) {
    EXPECT_NE(std::string(e.what()).find("larger than 256 MiB"), std::string::npos) << e.what();
  }
  fs::remove(f);
  EXPECT_THROW(read_json_file(f), JsonReadError);  // gone: cannot read
}

TEST(JsonInput, ParseErrorsAreWordsNotLibraryTags) {
  try {
    parse_json_text("{\"a\": tru}");
    FAIL();
  } catch (const JsonReadError& e) {
    const std::string m = e.what();
    EXPECT_EQ(m.find("[json.exception"), std::string::npos) << m;
    EXPECT_NE(m.find("not valid JSON"), std::string::npos) << m;
  }
}

TEST(ResultReader, ErrorsNameTheKeyPath) {
  ASSERT_EQ(read_error(small_result()), "");
  json j = small_result();
  j["figures"][12]["value"] = "fast";
  std::string m = read_error(j);
  EXPECT_NE(m.find("figures[12].value: expected a number or a summary, got a string"),
            std::string::npos)
      << m;
  EXPECT_EQ(m.find("json.exception"), std::string::npos) << m;

  j = small_result();
  j["figures"][3]["value"]["median"] = "x";
  m = read_error(j);
  EXPECT_NE(m.find("figures[3].value.median: expected a number, got a string"), std::string::npos)
      << m;

  j = small_result();
  j["figures"][0].erase("id");
  m = read_error(j);
  EXPECT_NE(m.find("figures[0]: missing key \"id\""), std::string::npos) << m;

  j = small_result();
  j["device"]["name"] = 5;
  m = read_error(j);
  EXPECT_NE(m.find("device.name: expected a string, got a number"), std::string::npos) << m;

  j = small_result();
  j["figures"] = {{"a", 1}};
  m = read_error(j);
  EXPECT_NE(m.find("figures: expected a list, got an object"), std::string::npos) << m;

  j = small_result();
  j["probes"]["latency"] = {{"paths", {{"global", {{"points", {{{"footprint_bytes", "1K"}}}}}}}}};
  m = read_error(j);
  EXPECT_NE(m.find("probes.latency.paths.global.points[0].footprint_bytes: expected a number"),
            std::string::npos)
      << m;

  j = small_result();
  j["tool"] = "gpudissect";
  m = read_error(j);
  EXPECT_NE(m.find("tool: expected an object, got a string"), std::string::npos) << m;
}

TEST(ResultReader, EveryCommittedResultStillReads) {
  int n = 0;
  for (const fs::path& path : gd::testing::committed_json_files(kRepo / "results")) {
    const std::string name = path.filename().string();
    if (name == "fleet.json" || name == "fleet.json.gz") continue;
    const std::optional<json> doc = gd::testing::read_committed_json(path);
    ASSERT_TRUE(doc) << path;
    const json& j = *doc;
    if (!j.is_object() || !j.contains("schema_version")) continue;  // not a run result
    EXPECT_NO_THROW(run_result_from_json(j, probe_registry())) << path;
    ++n;
  }
  EXPECT_GT(n, 10);
}

TEST(ResultReader, SchemaVersionIsComparedWhole) {
  json j = small_result();
  j["schema_version"] = 4294967298ull;  // 2 + 2^32: read as 2 by a 32-bit conversion
  EXPECT_NE(read_error(j).find("unknown schema_version 4294967298"), std::string::npos)
      << read_error(j);
  j["schema_version"] = -4294967294ll;
  EXPECT_NE(read_error(j).find("unknown schema_version"), std::string::npos);
  j["schema_version"] = 1;
  EXPECT_EQ(read_error(j), "");
}

TEST(ResultReader, KeysThatNameFilesArePlainNames) {
  json j = small_result();
  j["probes"]["host"] = {{"status", "ok"}, {"curves", {{"../../evil", json::object()}}}};
  std::string m = read_error(j);
  EXPECT_NE(m.find("probes.host.curves: key \"../../evil\" is not a name"), std::string::npos) << m;
  j = small_result();
  j["probes"]["latency"] = {{"paths", {{"a/b", json::object()}}}};
  m = read_error(j);
  EXPECT_NE(m.find("probes.latency.paths: key \"a/b\" is not a name"), std::string::npos) << m;
  EXPECT_TRUE(plain_name("stride_4096"));
  EXPECT_TRUE(plain_name("nt_write"));
  EXPECT_FALSE(plain_name(""));
  EXPECT_FALSE(plain_name(".."));
  EXPECT_FALSE(plain_name("a b"));
  EXPECT_FALSE(plain_name(std::string(65, 'a')));
}

TEST(ResultReader, ASummaryMayBeASingleNumber) {
  json j = small_result();
  j["figures"][0]["value"] = 42.5;
  const RunResult r = run_result_from_json(j, probe_registry());
  ASSERT_TRUE(r.figures.at(0).value);
  EXPECT_EQ(r.figures.at(0).value->median, 42.5);
  EXPECT_EQ(r.figures.at(0).value->n, 1u);
}

// A number read into an integer field must be a whole number in the field's range: 4e97 into
// an unsigned field was undefined behaviour in nlohmann's get<unsigned>() (clang's UBSan
// float-cast-overflow stopped the fuzz test there) and -1 wrapped to 2^64 - 1.
TEST(ResultReader, IntegersOutOfRangeAreKeyPathErrors) {
  const std::vector<std::pair<json, std::string>> bad = {
      {json::parse("4e97"), "4e+97"}, {-1, "-1"}, {1.5, "1.5"}, {json::parse("1e300"), "1e+300"}};
  for (const auto& [value, shown] : bad) {
    json j = small_result();
    j["probes"]["latency"] = {
        {"paths", {{"global", {{"points", {{{"footprint_bytes", value}}}}}}}}};
    std::string m = read_error(j);
    EXPECT_NE(m.find("probes.latency.paths.global.points[0].footprint_bytes: expected an integer "
                     "from 0 to 18446744073709551615, got " +
                     shown),
              std::string::npos)
        << m;

    j = small_result();
    j["figures"][2]["value"]["n"] = value;
    m = read_error(j);
    EXPECT_NE(m.find("figures[2].value.n: expected an integer from 0 to"), std::string::npos) << m;

    if (shown == "-1") continue;  // an int field: -1 is in range
    json rank = {{"rank", value}, {"status", "ok"}};
    try {
      (void)rank.get<FleetRank>();
      ADD_FAILURE() << "rank " << shown << " was read";
    } catch (const JsonReadError& e) {
      EXPECT_NE(std::string(e.what()).find(
                    "rank: expected an integer from -2147483648 to 2147483647, got " + shown),
                std::string::npos)
          << e.what();
    }
  }
  json j = small_result();
  j["figures"][2]["value"]["n"] = 7.0;  // a whole number written with a point still reads
  EXPECT_EQ(read_error(j), "");
}

TEST(JsonInput, IntegersAreCheckedAgainstTheirTypesRange) {
  EXPECT_EQ(json_to_integer<uint32_t>(json(4294967295u)), 4294967295u);
  EXPECT_FALSE(json_to_integer<uint32_t>(json(4294967296ull)));
  EXPECT_FALSE(json_to_integer<uint32_t>(json(-1)));
  EXPECT_EQ(json_to_integer<uint64_t>(json(18446744073709551615ull)), 18446744073709551615ull);
  EXPECT_FALSE(json_to_integer<uint64_t>(json(18446744073709551616.0)));                // 2^64
  EXPECT_EQ(json_to_integer<uint64_t>(json(9007199254740992.0)), 9007199254740992ull);  // 2^53
  EXPECT_EQ(json_to_integer<int64_t>(json(-9223372036854775807ll - 1)), INT64_MIN);
  EXPECT_EQ(json_to_integer<int64_t>(json(-9223372036854775808.0)), INT64_MIN);
  EXPECT_FALSE(json_to_integer<int64_t>(json(9223372036854775808.0)));  // 2^63
  EXPECT_EQ(json_to_integer<int>(json(-3.0)), -3);
  EXPECT_FALSE(json_to_integer<int>(json(0.5)));
  EXPECT_FALSE(json_to_integer<int>(json(std::numeric_limits<double>::infinity())));
  EXPECT_FALSE(json_to_integer<int>(json(std::nan(""))));
  EXPECT_FALSE(json_to_integer<int>(json("3")));
  EXPECT_FALSE(json_to_integer<int>(json(true)));
  EXPECT_THROW(json_integer<int>(json("3")), JsonReadError);
  try {
    (void)json_integer<uint16_t>(json(70000));
    ADD_FAILURE();
  } catch (const JsonReadError& e) {
    EXPECT_EQ(std::string(e.what()), "expected an integer from 0 to 65535, got 70000");
  }
}
