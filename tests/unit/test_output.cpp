// Every probe's writers on a fixture result, line by line (output_lines.hpp): the terminal
// summary, each CSV file and the JSON. Per probe, tests/fixtures/output/<probe>/ holds
// result.json (a measured result trimmed to a few points: make_fixtures.py), terminal.txt
// (the summary's patterns) and csv/<file>.txt (each CSV file's patterns). The JSON writer
// must write result.json back exactly: the fixture is the JSON writer's own output.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <set>
#include <sstream>
#include <string>

#include "gpudissect/result.hpp"
#include "output_lines.hpp"
#include "registry.hpp"
#include "report.hpp"

namespace gd {
namespace {

namespace fs = std::filesystem;
using output_lines::lines_match;
using output_lines::read_file;
using output_lines::split;

const fs::path kOutput = fs::path(GD_FIXTURES) / "output";

class ProbeOutput : public ::testing::TestWithParam<std::string> {
 protected:
  fs::path dir() const { return kOutput / GetParam(); }
  RunResult load() const {
    const std::string text = read_file((dir() / "result.json").string());
    EXPECT_FALSE(text.empty()) << dir() / "result.json";
    return run_result_from_json(nlohmann::json::parse(text), probe_registry());
  }
  std::vector<std::string> patterns(const fs::path& file) const {
    EXPECT_TRUE(fs::is_regular_file(file)) << file;
    return split(read_file(file.string()));
  }
  // A fresh folder for written files, removed with the test.
  fs::path scratch() {
    tmp_ =
        fs::temp_directory_path() / ("gd-output-" + GetParam() + "-" + std::to_string(::getpid()));
    fs::remove_all(tmp_);
    return tmp_;
  }
  void TearDown() override {
    std::error_code ec;
    if (!tmp_.empty()) fs::remove_all(tmp_, ec);
  }

 private:
  fs::path tmp_;
};

TEST_P(ProbeOutput, FixtureHoldsThisProbeAlone) {
  const RunResult r = load();
  ASSERT_EQ(r.probes.size(), 1u);
  EXPECT_EQ(r.probes.begin()->first, GetParam());
  EXPECT_FALSE(r.figures.empty());
}

TEST_P(ProbeOutput, Terminal) {
  std::ostringstream os;
  report::print_summary(os, load(), probe_registry());
  EXPECT_TRUE(lines_match(GetParam() + "/terminal", os.str(), patterns(dir() / "terminal.txt")));
}

TEST_P(ProbeOutput, Csv) {
  const fs::path out = scratch();
  std::set<std::string> written, expected;
  for (const fs::path& f : report::write_csv(out, load(), probe_registry()))
    written.insert(f.filename().string());
  for (const auto& e : fs::directory_iterator(dir() / "csv"))
    expected.insert(e.path().stem().string());  // figures.csv.txt -> figures.csv
  EXPECT_EQ(written, expected) << "the CSV files written and the tables in " << dir() / "csv";
  for (const std::string& name : written)
    if (expected.count(name))
      EXPECT_TRUE(lines_match(GetParam() + "/" + name, read_file((out / name).string()),
                              patterns(dir() / "csv" / (name + ".txt"))));
}

TEST_P(ProbeOutput, Json) {
  const fs::path out = scratch() / "result.json";
  report::write_json(out, load(), probe_registry());
  std::vector<std::string> expected;
  for (const std::string& line : split(read_file((dir() / "result.json").string())))
    expected.push_back(output_lines::literal(line));
  EXPECT_TRUE(lines_match(GetParam() + "/result.json", read_file(out.string()), expected));
}

INSTANTIATE_TEST_SUITE_P(EveryProbe, ProbeOutput,
                         ::testing::Values("latency", "memory", "bandwidth", "compute", "frontend",
                                           "atomics", "host", "links"),
                         [](const ::testing::TestParamInfo<std::string>& p) { return p.param; });

// The checker itself: a changed, a missing and an extra line each fail with their number.
TEST(OutputLines, NamesTheLineThatDiffers) {
  const std::vector<std::string> table = {"a {{[0-9]+}} b", "c.d"};
  EXPECT_TRUE(lines_match("t", "a 12 b\nc.d\n", table));
  const auto changed = lines_match("t", "a 12 b\ncxd\n", table);
  EXPECT_FALSE(changed);
  EXPECT_NE(std::string(changed.message()).find("t:2: line:    cxd"), std::string::npos)
      << changed.message();
  const auto missing = lines_match("t", "a 1 b\n", table);
  EXPECT_NE(std::string(missing.message()).find("t:2: missing line"), std::string::npos);
  const auto extra = lines_match("t", "a 1 b\nc.d\ne\n", table);
  EXPECT_NE(std::string(extra.message()).find("t:3: extra line: e"), std::string::npos);
  EXPECT_FALSE(lines_match("t", "a x b\nc.d\n", table));
  EXPECT_TRUE(lines_match("t", "{{x}}", {output_lines::literal("{{x}}")}));
}

}  // namespace
}  // namespace gd
