// The report writers, run on the committed H200 fixture (synthetic figures).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "gpudissect/result.hpp"
#include "registry.hpp"
#include "report.hpp"

namespace fs = std::filesystem;
using namespace gd;

namespace {

RunResult load_fixture() {
  std::ifstream in(fs::path(GD_FIXTURES) / "h200_latency_sample.json");
  if (!in) throw std::runtime_error("fixture missing");
  return run_result_from_json(nlohmann::json::parse(in), gd::probe_registry());
}

std::string read(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::vector<std::string> lines_of(const std::string& s) {
  std::vector<std::string> out;
  std::istringstream in(s);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

std::vector<std::string> words(const std::string& s) {
  std::vector<std::string> out;
  std::istringstream in(s);
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

// A fresh folder under the temp dir, removed afterwards.
struct TempDir {
  fs::path path;
  TempDir() {
    path = fs::temp_directory_path() /
           ("gd_test_report_" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) +
            "_" + ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(path);
    fs::create_directories(path);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

// Sets an environment variable for the scope of a test.
struct ScopedEnv {
  std::string name;
  std::optional<std::string> old;
  ScopedEnv(std::string n, const std::string& value) : name(std::move(n)) {
    if (const char* v = std::getenv(name.c_str())) old = v;
    ::setenv(name.c_str(), value.c_str(), 1);
  }
  ~ScopedEnv() {
    if (old)
      ::setenv(name.c_str(), old->c_str(), 1);
    else
      ::unsetenv(name.c_str());
  }
};

RunResult without_cycles(RunResult r) {
  r.get<gd::LatencyProbeResult>()->clock_mhz_measured.reset();
  auto strip = [](CurveResult& c) {
    for (auto& p : c.points) {
      p.cycles.reset();
      p.clock_mhz.reset();
    }
    for (auto& l : c.levels) {
      l.latency_cycles.reset();
      l.step_cycles.reset();
    }
    c.dram_minus_last_cache_cycles.reset();
  };
  for (auto& [n, c] : r.get<gd::LatencyProbeResult>()->paths) strip(c);
  for (auto& [n, c] : r.get<gd::LatencyProbeResult>()->tlb) strip(c);
  return r;
}

}  // namespace

TEST(ReportFixture, LoadsAsDescribed) {
  const RunResult r = load_fixture();
  EXPECT_EQ(r.device.name, "NVIDIA H200");
  EXPECT_EQ(r.device.backend, "cuda");
  EXPECT_EQ(r.device.compute_units, 132);
  EXPECT_NE(r.tool.command.find("synthetic fixture for tests"), std::string::npos);
  ASSERT_TRUE(r.get<gd::LatencyProbeResult>());
  const auto& p = *r.get<gd::LatencyProbeResult>();
  ASSERT_EQ(p.paths.count("global"), 1u);
  EXPECT_GE(p.paths.at("global").points.size(), 25u);
  ASSERT_EQ(p.paths.at("global").levels.size(), 3u);
  EXPECT_EQ(p.paths.at("global").levels[2].name, "device memory");
  EXPECT_EQ(p.paths.at("texture").status.name(), "unsupported");
  EXPECT_TRUE(p.paths.at("texture").points.empty());
  ASSERT_EQ(p.tlb.count("stride_2097152"), 1u);
  EXPECT_EQ(p.tlb.at("stride_2097152").levels.size(), 2u);
}

TEST(ReportSummary, ShowsDeviceLevelsAndFigures) {
  const RunResult r = load_fixture();
  std::ostringstream os;
  report::print_summary(os, r, gd::probe_registry());
  const std::string s = os.str();
  for (const char* want : {"NVIDIA H200", "132", "1979 MHz", "1980 MHz", "L1", "L2",
                           "device memory", "unsupported", "texture", "shared", "33.1", "271.4",
                           "689.0", "224 KiB", "48 MiB", "L1 TLB", "L2 TLB", "417.6", "0.95"})
    EXPECT_NE(s.find(want), std::string::npos) << "missing " << want << " in\n" << s;
  for (const std::string& line : lines_of(s)) EXPECT_LE(line.size(), 100u) << "too wide: " << line;
}

TEST(ReportSummary, RowsCarryTheirFigures) {
  const RunResult r = load_fixture();
  std::ostringstream os;
  report::print_summary(os, r, gd::probe_registry());
  bool found = false;
  for (const std::string& line : lines_of(os.str())) {
    const auto w = words(line);
    if (w.size() >= 2 && w[0] == "global" && w[1] == "L1") {
      found = true;
      EXPECT_NE(line.find("33.1"), std::string::npos) << line;
      EXPECT_NE(line.find("16.7"), std::string::npos) << line;  // 33.1 cycles at 1980 MHz
    }
    if (w.size() >= 3 && w[0] == "global" && w[1] == "device" && w[2] == "memory")
      EXPECT_EQ(w[3], "-") << "the last level has no capacity: " << line;
  }
  EXPECT_TRUE(found);
}

TEST(ReportSummary, AbsentCyclesPrintAsDashNotZero) {
  const RunResult r = without_cycles(load_fixture());
  std::ostringstream os;
  report::print_summary(os, r, gd::probe_registry());
  const std::string s = os.str();
  bool checked = false;
  for (const std::string& line : lines_of(s)) {
    const auto w = words(line);
    // global L1 224 KiB 224 KiB..240 KiB <cycles> <ns> <conf>
    if (w.size() >= 2 && w[0] == "global" && w[1] == "L1") {
      ASSERT_EQ(w.size(), 10u) << line;
      EXPECT_EQ(w[7], "-") << line;
      EXPECT_EQ(w[8], "16.7") << line;
      checked = true;
    }
  }
  EXPECT_TRUE(checked) << s;
  EXPECT_EQ(s.find(" 0.0 "), std::string::npos) << s;
  EXPECT_NE(s.find("clock: - measured"), std::string::npos) << s;
}

TEST(ReportCsv, WritesOneFilePerCurveAndLevels) {
  TempDir tmp;
  const RunResult r = load_fixture();
  const fs::path dir = tmp.path / "csv" / "nested";
  const auto files = report::write_csv(dir, r, gd::probe_registry());
  std::vector<std::string> names;
  for (const auto& f : files) names.push_back(f.filename().string());
  for (const char* want : {"latency_global.csv", "latency_shared.csv", "latency_texture.csv",
                           "tlb_2097152.csv", "levels.csv"}) {
    EXPECT_NE(std::find(names.begin(), names.end(), want), names.end()) << want;
    EXPECT_TRUE(fs::exists(dir / want)) << want;
  }
  const std::string header =
      "footprint_bytes,stride_bytes,status,cycles_median,cycles_q1,cycles_q3,ns_median,ns_q1,"
      "ns_q3,clock_mhz";
  const auto global = lines_of(read(dir / "latency_global.csv"));
  ASSERT_FALSE(global.empty());
  EXPECT_EQ(global[0], header);
  EXPECT_EQ(global.size(), 1 + r.get<gd::LatencyProbeResult>()->paths.at("global").points.size());
  EXPECT_EQ(global[1].rfind("1024,128,ok,", 0), 0u) << global[1];

  const auto shared = lines_of(read(dir / "latency_shared.csv"));
  EXPECT_EQ(shared.size(), 1 + r.get<gd::LatencyProbeResult>()->paths.at("shared").points.size());
  // The skipped point has its status and empty value fields.
  EXPECT_EQ(shared.back(), "262144,128,skipped,,,,,,,");

  EXPECT_EQ(lines_of(read(dir / "latency_texture.csv")).size(), 1u);
  const auto tlb = lines_of(read(dir / "tlb_2097152.csv"));
  EXPECT_EQ(tlb[0], header);
  EXPECT_EQ(tlb.size(),
            1 + r.get<gd::LatencyProbeResult>()->tlb.at("stride_2097152").points.size());

  const auto levels = lines_of(read(dir / "levels.csv"));
  EXPECT_EQ(levels[0].rfind("probe,curve,level,capacity_bytes", 0), 0u) << levels[0];
  EXPECT_EQ(levels.size(), 1u + 3 + 1 + 2);  // global 3, shared 1, tlb 2
}

TEST(ReportCsv, AbsentCyclesAreEmptyFields) {
  TempDir tmp;
  const RunResult r = without_cycles(load_fixture());
  report::write_csv(tmp.path, r, gd::probe_registry());
  const auto global = lines_of(read(tmp.path / "latency_global.csv"));
  ASSERT_GE(global.size(), 2u);
  EXPECT_EQ(global[1].rfind("1024,128,ok,,,,", 0), 0u) << global[1];
}

TEST(ReportHtml, ContainsDevicePathsAndCharts) {
  TempDir tmp;
  const RunResult r = load_fixture();
  const fs::path file = tmp.path / "sub" / "report.html";
  report::write_html(file, r, gd::probe_registry(), {});
  const std::string html = read(file);
  EXPECT_NE(html.find("NVIDIA H200"), std::string::npos);
  for (const char* path : {"global", "shared", "texture"})
    EXPECT_NE(html.find(std::string("Path: ") + path), std::string::npos) << path;
  EXPECT_NE(html.find("How to read this report"), std::string::npos);
  EXPECT_NE(html.find("device memory"), std::string::npos);
  EXPECT_NE(html.find("<details>"), std::string::npos);
  EXPECT_NE(html.find("synthetic fixture for tests"), std::string::npos);
  EXPECT_EQ(html.find("http://fonts"), std::string::npos);
  EXPECT_EQ(html.find("<script"), std::string::npos);
  EXPECT_EQ(html.find("<link"), std::string::npos);
  std::string why;
  if (!report::gnuplot_available(&why)) GTEST_SKIP() << "gnuplot not available: " << why;
  EXPECT_NE(html.find("<svg"), std::string::npos);
  EXPECT_EQ(html.find("could not be drawn"), std::string::npos);
  EXPECT_EQ(html.find("<?xml"), std::string::npos);
}

TEST(ReportHtml, EscapesText) {
  TempDir tmp;
  RunResult r = load_fixture();
  r.device.name = "Card <b>&\"quoted\"";
  r.get<gd::LatencyProbeResult>()->paths.at("texture").status.reason = "needs <texture> & more";
  const fs::path file = tmp.path / "r.html";
  ScopedEnv env("GD_GNUPLOT", (tmp.path / "no-such-gnuplot").string());
  report::write_html(file, r, gd::probe_registry(), {});
  const std::string html = read(file);
  EXPECT_EQ(html.find("<b>&"), std::string::npos);
  EXPECT_NE(html.find("Card &lt;b&gt;&amp;&quot;quoted&quot;"), std::string::npos);
  EXPECT_NE(html.find("needs &lt;texture&gt; &amp; more"), std::string::npos);
}

TEST(ReportHtml, WithoutGnuplotSaysSoAndKeepsTables) {
  TempDir tmp;
  ScopedEnv env("GD_GNUPLOT", (tmp.path / "no-such-gnuplot").string());
  std::string why;
  EXPECT_FALSE(report::gnuplot_available(&why));
  EXPECT_FALSE(why.empty());
  const RunResult r = load_fixture();
  const fs::path file = tmp.path / "report.html";
  report::HtmlOptions opt;
  opt.png = true;
  const auto pngs = report::write_html(file, r, gd::probe_registry(), opt);
  EXPECT_TRUE(pngs.empty());
  const std::string html = read(file);
  EXPECT_NE(html.find("charts need gnuplot, which was not found ("), std::string::npos);
  // Only the summary's hierarchy diagram, which is drawn without gnuplot.
  const auto first = html.find("<svg");
  ASSERT_NE(first, std::string::npos);
  EXPECT_EQ(html.compare(first, 20, "<svg class=\"diagram\""), 0);
  EXPECT_EQ(html.find("<svg", first + 1), std::string::npos);
  EXPECT_NE(html.find("271.4"), std::string::npos);  // the L2 row is still there
  EXPECT_NE(html.find("L1 TLB"), std::string::npos);
  EXPECT_NE(html.find("<table"), std::string::npos);
}

TEST(ReportHtml, SaysWhichChartFailed) {
  TempDir tmp;
  // A "gnuplot" that answers --version but fails on every chart.
  const fs::path fake = tmp.path / "fake-gnuplot";
  std::ofstream(fake)
      << "#!/bin/sh\nif [ \"$1\" = --version ]; then echo 'gnuplot 5.4'; exit 0; fi\n"
         "echo 'line 1: boom' >&2; exit 1\n";
  fs::permissions(fake, fs::perms::owner_all);
  ScopedEnv env("GD_GNUPLOT", fake.string());
  ASSERT_TRUE(report::gnuplot_available(nullptr));
  const fs::path file = tmp.path / "report.html";
  report::write_html(file, load_fixture(), gd::probe_registry(), {});
  const std::string html = read(file);
  EXPECT_NE(html.find("<code>latency_global</code> could not be drawn"), std::string::npos);
  EXPECT_NE(html.find("line 1: boom"), std::string::npos);
  EXPECT_NE(html.find("271.4"), std::string::npos);
}

TEST(ReportHtml, WritesPngs) {
  std::string why;
  if (!report::gnuplot_available(&why)) GTEST_SKIP() << "gnuplot not available: " << why;
  TempDir tmp;
  const RunResult r = load_fixture();
  report::HtmlOptions opt;
  opt.png = true;
  opt.png_dir = tmp.path / "png";
  const auto pngs = report::write_html(tmp.path / "report.html", r, gd::probe_registry(), opt);
  std::vector<std::string> names;
  for (const auto& p : pngs) {
    names.push_back(p.filename().string());
    EXPECT_GT(fs::file_size(p), 1000u) << p;
    EXPECT_EQ(read(p).substr(1, 3), "PNG") << p;
  }
  for (const char* want :
       {"latency_all.png", "latency_global.png", "latency_shared.png", "tlb.png"})
    EXPECT_NE(std::find(names.begin(), names.end(), want), names.end()) << want;
  EXPECT_EQ(std::find(names.begin(), names.end(), "latency_texture.png"), names.end());
}

TEST(ReportHtml, ChartsWithoutCycles) {
  std::string why;
  if (!report::gnuplot_available(&why)) GTEST_SKIP() << "gnuplot not available: " << why;
  TempDir tmp;
  const RunResult r = without_cycles(load_fixture());
  report::write_html(tmp.path / "report.html", r, gd::probe_registry(), {});
  const std::string html = read(tmp.path / "report.html");
  EXPECT_NE(html.find("<svg"), std::string::npos);
  EXPECT_EQ(html.find("could not be drawn"), std::string::npos);
  EXPECT_NE(html.find("no device cycle counter"), std::string::npos);
}

TEST(ReportHtml, ThrowsNamingThePath) {
  const RunResult r = load_fixture();
  try {
    report::write_html("/etc/passwd/report.html", r, gd::probe_registry(), {});
    FAIL() << "no exception";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("/etc/passwd/report.html"), std::string::npos) << e.what();
  }
}

TEST(ReportFiles, EnsureWritableThrowsUnderARegularFile) {
  try {
    report::ensure_writable("/etc/passwd/x");
    FAIL() << "no exception";
  } catch (const std::runtime_error& e) {
    const std::string msg = e.what();
    EXPECT_EQ(msg.rfind("cannot write /etc/passwd/x: ", 0), 0u) << msg;
  }
}

TEST(ReportFiles, EnsureWritableCreatesFoldersAndKeepsFiles) {
  TempDir tmp;
  const fs::path fresh = tmp.path / "a" / "b" / "out.json";
  report::ensure_writable(fresh);
  EXPECT_TRUE(fs::is_directory(fresh.parent_path()));
  EXPECT_FALSE(fs::exists(fresh));  // the probe file is gone again

  const fs::path existing = tmp.path / "keep.json";
  std::ofstream(existing) << "precious";
  report::ensure_writable(existing);
  EXPECT_EQ(read(existing), "precious");
}

TEST(ReportFiles, WriteJsonRoundTrips) {
  TempDir tmp;
  const RunResult r = load_fixture();
  const fs::path file = tmp.path / "out" / "run.json";
  report::write_json(file, r, gd::probe_registry());
  EXPECT_FALSE(fs::exists(tmp.path / "out" / "run.json.tmp"));
  const nlohmann::json j = nlohmann::json::parse(read(file));
  EXPECT_EQ(j, to_json(r, gd::probe_registry()));
  EXPECT_EQ(to_json(run_result_from_json(to_json(r, gd::probe_registry()), gd::probe_registry()),
                    gd::probe_registry()),
            to_json(r, gd::probe_registry()));
  EXPECT_EQ(to_json(run_result_from_json(j, gd::probe_registry()), gd::probe_registry()),
            to_json(r, gd::probe_registry()));
}

TEST(ReportFiles, WriteJsonThrowsWhenItCannotWrite) {
  const RunResult r = load_fixture();
  EXPECT_THROW(report::write_json("/etc/passwd/run.json", r, gd::probe_registry()),
               std::runtime_error);
}

TEST(ReportJson, RejectsUnknownSchemaAndNonObjects) {
  nlohmann::json j = to_json(load_fixture(), gd::probe_registry());
  j["schema_version"] = 99;
  try {
    run_result_from_json(j, gd::probe_registry());
    FAIL() << "no exception";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("schema_version 99"), std::string::npos) << e.what();
  }
  try {
    run_result_from_json(nlohmann::json::array({1, 2}), gd::probe_registry());
    FAIL() << "no exception";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("not a JSON object"), std::string::npos) << e.what();
  }
}
