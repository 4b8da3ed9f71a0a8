// Provenance (issue 22): the parsers of /proc/cpuinfo and /etc/os-release, the JSON writer
// (every key), the reader of an old (schema 2, no provenance) and a new file, and the
// report writers showing where a run ran, escaped.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "gpudissect/json_read.hpp"
#include "gpudissect/provenance.hpp"
#include "gpudissect/result.hpp"
#include "registry.hpp"
#include "report.hpp"

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

const char* const kKeys[] = {"host",        "os",           "kernel",         "machine",
                             "cpu_model",   "backend",      "driver_version", "runtime_version",
                             "driver_name", "tool_version", "git_revision",   "build_type",
                             "command_line"};

gd::RunResult old_fixture() {
  return gd::run_result_from_json(gd::read_json_file(std::string(GD_FIXTURES) + "/h200_run.json"),
                                  gd::probe_registry());
}

std::string slurp(const fs::path& p) {
  std::ifstream in(p);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace

TEST(Provenance, CpuModelFromCpuinfo) {
  EXPECT_EQ(gd::cpu_model_from_cpuinfo("processor\t: 0\nvendor_id\t: GenuineIntel\nmodel name\t: "
                                       "Intel(R) Xeon(R) Platinum 8480+\nflags\t: fpu\n"),
            "Intel(R) Xeon(R) Platinum 8480+");
  EXPECT_EQ(gd::cpu_model_from_cpuinfo("processor : 0\nBogoMIPS : 2000\nHardware : NVIDIA Grace\n"),
            "NVIDIA Grace");
  EXPECT_EQ(gd::cpu_model_from_cpuinfo("processor : 0\nflags : fpu\n"), "");
}

TEST(Provenance, OsFromOsRelease) {
  EXPECT_EQ(
      gd::os_from_os_release("NAME=\"Ubuntu\"\nPRETTY_NAME=\"Ubuntu 24.04.1 LTS\"\nID=ubuntu\n"),
      "Ubuntu 24.04.1 LTS");
  EXPECT_EQ(gd::os_from_os_release("PRETTY_NAME=Debian\n"), "Debian");
  EXPECT_EQ(gd::os_from_os_release("NAME=x\n"), "");
}

TEST(Provenance, CollectedHereSaysEveryField) {
  gd::DeviceInfo d;
  d.backend = "opencl";
  d.driver_version = "6.0";
  d.toolkit_version = "OpenCL 3.0 PoCL";
  const gd::Provenance p = gd::collect_provenance(d, {"gpudissect", "run", "--quick"});
  EXPECT_EQ(p.backend, "opencl");
  EXPECT_EQ(p.driver_version, "6.0");
  EXPECT_EQ(p.runtime_version, "OpenCL 3.0 PoCL");
  EXPECT_EQ(p.driver_name, gd::kUnknown);  // OpenCL has none
  EXPECT_EQ(p.tool_version, GD_VERSION);
  EXPECT_EQ(p.command_line, (std::vector<std::string>{"gpudissect", "run", "--quick"}));
  EXPECT_NE(p.host, gd::kUnknown);  // gethostname answers on any Linux
  EXPECT_EQ(p.kernel.rfind("Linux ", 0), 0u) << p.kernel;
  for (const std::string* s :
       {&p.host, &p.os, &p.kernel, &p.machine, &p.cpu_model, &p.git_revision, &p.build_type})
    EXPECT_FALSE(s->empty());
}

TEST(Provenance, WriterEmitsEveryKey) {
  gd::RunResult r = old_fixture();
  r.provenance = gd::collect_provenance(r.device, {"gpudissect", "run", "a b", "--x=\"y\""});
  const json j = gd::to_json(r, gd::probe_registry());
  EXPECT_EQ(j.at("schema_version"), 3);
  ASSERT_TRUE(j.contains("provenance"));
  const json& p = j.at("provenance");
  EXPECT_EQ(p.size(), std::size(kKeys));
  for (const char* k : kKeys) {
    ASSERT_TRUE(p.contains(k)) << k;
    if (std::string(k) == "command_line")
      EXPECT_TRUE(p[k].is_array());
    else
      EXPECT_TRUE(p[k].is_string() && !p[k].get<std::string>().empty()) << k;
  }
  EXPECT_EQ(p.at("command_line"), json({"gpudissect", "run", "a b", "--x=\"y\""}));
}

TEST(Provenance, OldFileReadsWithoutIt) {
  const json j = gd::read_json_file(std::string(GD_FIXTURES) + "/h200_run.json");
  ASSERT_LT(j.at("schema_version").get<int>(), 3);
  ASSERT_FALSE(j.contains("provenance"));
  const gd::RunResult r = gd::run_result_from_json(j, gd::probe_registry());
  EXPECT_FALSE(r.provenance);
  EXPECT_FALSE(r.soak);
  EXPECT_EQ(r.schema_version, gd::kSchemaVersion);  // written back as the current version
  EXPECT_FALSE(gd::to_json(r, gd::probe_registry()).contains("provenance"));
}

TEST(Provenance, NewFileRoundTrips) {
  gd::RunResult r = old_fixture();
  r.provenance = gd::collect_provenance(r.device, {"gpudissect", "run"});
  r.provenance->host = "node-17";
  r.soak = json{{"repetitions", json::array()}};
  const json j = gd::to_json(r, gd::probe_registry());
  const gd::RunResult back = gd::run_result_from_json(j, gd::probe_registry());
  ASSERT_TRUE(back.provenance);
  EXPECT_EQ(back.provenance->host, "node-17");
  EXPECT_EQ(back.provenance->command_line, r.provenance->command_line);
  EXPECT_EQ(gd::to_json(back, gd::probe_registry()), j);
  ASSERT_TRUE(back.soak);
  EXPECT_EQ(*back.soak, *r.soak);
}

TEST(Provenance, ReaderRejectsWrongTypesAndFillsGaps) {
  json j = gd::to_json(old_fixture(), gd::probe_registry());
  j["provenance"] = {{"host", "n1"}};  // a newer writer may drop keys: they read as unknown
  gd::RunResult r = gd::run_result_from_json(j, gd::probe_registry());
  ASSERT_TRUE(r.provenance);
  EXPECT_EQ(r.provenance->host, "n1");
  EXPECT_EQ(r.provenance->os, gd::kUnknown);
  j["provenance"] = {{"host", 7}};
  try {
    gd::run_result_from_json(j, gd::probe_registry());
    FAIL() << "a number for the host was read";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("provenance"), std::string::npos) << e.what();
  }
  j["provenance"] = "here";
  EXPECT_THROW(gd::run_result_from_json(j, gd::probe_registry()), std::runtime_error);
  j["soak"] = 3;
  j.erase("provenance");
  EXPECT_THROW(gd::run_result_from_json(j, gd::probe_registry()), std::runtime_error);
}

TEST(Provenance, ReportsShowWhereItRanEscaped) {
  gd::RunResult r = old_fixture();
  r.provenance = gd::collect_provenance(r.device, {"gpudissect"});
  r.provenance->host = "<b>evil</b>\x1b[2J";
  r.provenance->cpu_model = "CPU & co";
  const fs::path dir =
      fs::temp_directory_path() / ("gd_test_provenance_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  gd::report::write_html(dir / "r.html", r, gd::probe_registry(), {});
  const std::string html = slurp(dir / "r.html");
  fs::remove_all(dir);
  EXPECT_NE(html.find("&lt;b&gt;evil&lt;/b&gt;"), std::string::npos);
  EXPECT_EQ(html.find("<b>evil"), std::string::npos);
  EXPECT_NE(html.find("CPU &amp; co"), std::string::npos);
  EXPECT_NE(html.find(r.provenance->git_revision), std::string::npos);
  std::ostringstream term;
  gd::report::print_summary(term, r, gd::probe_registry());
  EXPECT_NE(term.str().find("host <b>evil</b> "), std::string::npos) << term.str();
  EXPECT_EQ(term.str().find('\x1b'), std::string::npos);
  EXPECT_NE(term.str().find("CPU CPU & co"), std::string::npos);
}
