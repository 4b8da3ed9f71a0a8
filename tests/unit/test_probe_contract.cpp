// The probe contract: a probe that exists only in this test is registered, run through the
// CLI's sequence (options, run, figures), written as JSON, read back, and rendered by every
// writer; nothing outside its own definition and the registry line knows it.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "bandwidth/bandwidth.hpp"
#include "fake_device.hpp"
#include "gpudissect/json_fields.hpp"
#include "gpudissect/options.hpp"
#include "gpudissect/progress.hpp"
#include "gpudissect/result.hpp"
#include "host_memory/host_memory.hpp"
#include "probe_report.hpp"
#include "registry.hpp"
#include "report.hpp"
#include "sections.hpp"

namespace gd {
namespace {

namespace fs = std::filesystem;

struct EchoOptions {
  int times = 2;
};

struct EchoResult {
  static constexpr const char* kProbe = "echo";
  Status status;
  double wall_seconds = 0;
  std::vector<double> values;
};
void to_json(nlohmann::json& j, const EchoResult& r) {
  j = {{"status", r.status.name()}, {"wall_seconds", r.wall_seconds}, {"values", r.values}};
}
void from_json(const nlohmann::json& j, EchoResult& r) {
  gd::json_fields::Reader<gd::StatusCode>::read(j.at("status"), r.status.code);
  j.at("wall_seconds").get_to(r.wall_seconds);
  j.at("values").get_to(r.values);
}

class EchoProbe final : public TypedProbe<EchoOptions, EchoResult> {
 public:
  std::string name() const override { return "echo"; }
  std::string description() const override { return "repeats the number of SMs"; }
  std::vector<OptionSpec> options() const override { return {{"times", "2", "how often"}}; }
  std::vector<Figure> figures(const RunResult& r) const override {
    const EchoResult* e = r.get<EchoResult>();
    if (!e || e->values.empty()) return {};
    Figure f;
    f.id = "echo.sms";
    f.label = "SMs, echoed";
    f.unit = "SMs";
    f.value = single_value(e->values.front());
    return {f};
  }
  std::vector<std::string> figure_ids() const override { return {"echo.sms"}; }

 protected:
  EchoOptions parse(const OptionValues& kv) const override {
    EchoOptions o;
    for (const auto& [k, v] : kv) {
      if (k == "times")
        o.times = options::integer("echo", k, v, 1, 10);
      else
        options::unknown_key("echo", k, options());
    }
    return o;
  }
  void run_typed(Device& dev, const EchoOptions& opt, const RunResult&, Progress&,
                 const std::atomic<bool>&, EchoResult& out) const override {
    for (int i = 0; i < opt.times; ++i) out.values.push_back(dev.info().compute_units);
  }
};

// The probe's report half, which the writers find by the probe's name.
class EchoReport final : public report::ProbeReport {
 public:
  void print_summary(std::ostream& os, const RunResult& r) const override {
    os << "\nEcho: " << r.get<EchoResult>()->values.size() << " values\n";
  }
  std::vector<fs::path> write_csv(const fs::path& dir, const RunResult&) const override {
    std::ofstream(dir / "echo.csv") << "value\n";
    return {dir / "echo.csv"};
  }
  std::string html_section(const RunResult&, report::SectionContext&) const override {
    return "<h2 id=\"echo\">Echo section</h2>\n";
  }
};

class NoKernelsDevice final : public fakes::FakeDevice {
 public:
  NoKernelsDevice() {
    info_.backend = "fake";
    info_.name = "Fake GPU";
    info_.compute_units = 7;
  }
};

ProbeRegistry registry_with_echo() {
  ProbeRegistry r;
  // What probes/registry.cpp's add() does for each probe: both halves under its name (the
  // one line a new probe adds there).
  auto add = [&r](std::unique_ptr<Probe> probe, std::unique_ptr<report::ProbeReport> rep) {
    report::probe_reports().add(probe->name(), std::move(rep));
    r.add(std::move(probe));
  };
  add(make_latency_probe(), make_latency_report());
  add(std::make_unique<EchoProbe>(), std::make_unique<EchoReport>());
  return r;
}

TEST(ProbeContract, RegistryFindsAndRejectsDuplicates) {
  ProbeRegistry r = registry_with_echo();
  EXPECT_EQ(r.names(), (std::vector<std::string>{"latency", "echo"}));
  EXPECT_NE(r.find("echo"), nullptr);
  EXPECT_EQ(r.find("nope"), nullptr);
  EXPECT_THROW(r.add(std::make_unique<EchoProbe>()), std::invalid_argument);
}

TEST(ProbeContract, OptionsAreValidated) {
  const ProbeRegistry r = registry_with_echo();
  const Probe& echo = *r.find("echo");
  EXPECT_EQ(std::any_cast<EchoOptions>(echo.parse_options({{"times", "5"}})).times, 5);
  EXPECT_THROW(echo.parse_options({{"times", "0"}}), std::invalid_argument);
  EXPECT_THROW(echo.parse_options({{"times", "x"}}), std::invalid_argument);
  try {
    echo.parse_options({{"tims", "3"}});
    FAIL() << "an unknown key was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("times"), std::string::npos) << e.what();
  }
}

TEST(ProbeContract, RunJsonAndEveryWriter) {
  const ProbeRegistry registry = registry_with_echo();
  const Probe& echo = *registry.find("echo");
  NoKernelsDevice dev;
  RunResult r;
  r.device = dev.info();
  NullProgress progress;
  std::atomic<bool> stop{false};
  std::any result = echo.new_result();
  echo.run(dev, echo.parse_options({{"times", "3"}}), r, progress, stop, result);
  r.probes["echo"] = result;
  r.figures = collect_figures(r, registry);
  ASSERT_EQ(r.figures.size(), 1u);
  EXPECT_EQ(r.figures[0].id, "echo.sms");
  EXPECT_DOUBLE_EQ(r.figures[0].value->median, 7);

  const nlohmann::json j = to_json(r, registry);
  EXPECT_EQ(j["probes"]["echo"]["values"].size(), 3u);
  EXPECT_EQ(j["figures"][0]["id"], "echo.sms");
  const RunResult back = run_result_from_json(j, registry);
  ASSERT_NE(back.get<EchoResult>(), nullptr);
  EXPECT_EQ(back.get<EchoResult>()->values, (std::vector<double>{7, 7, 7}));
  EXPECT_EQ(to_json(back, registry), j);

  std::ostringstream summary;
  report::print_summary(summary, back, registry);
  EXPECT_NE(summary.str().find("Echo: 3 values"), std::string::npos) << summary.str();

  const fs::path dir = fs::temp_directory_path() / ("gd-contract-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const auto csvs = report::write_csv(dir, back, registry);
  EXPECT_TRUE(fs::exists(dir / "echo.csv"));
  EXPECT_TRUE(fs::exists(dir / "figures.csv"));
  EXPECT_EQ(csvs.size(), 2u);
  report::write_html(dir / "r.html", back, registry, {});
  std::ifstream in(dir / "r.html");
  std::stringstream html;
  html << in.rdbuf();
  EXPECT_NE(html.str().find("Echo section"), std::string::npos);
  EXPECT_NE(html.str().find("echo.sms"), std::string::npos);  // the figures table
  report::write_json(dir / "r.json", back, registry);
  std::ifstream jin(dir / "r.json");
  EXPECT_EQ(nlohmann::json::parse(jin), j);
  fs::remove_all(dir);
}

// The registry the tool ships: each probe has options with help and a figure id prefix of
// its own name.
TEST(ProbeContract, ShippedProbesDescribeThemselves) {
  for (const Probe* p : probe_registry().all()) {
    EXPECT_FALSE(p->description().empty()) << p->name();
    for (const OptionSpec& o : p->options()) EXPECT_FALSE(o.help.empty()) << p->name() << o.key;
    EXPECT_THROW(p->parse_options({{"no_such_key", "1"}}), std::invalid_argument) << p->name();
  }
}

}  // namespace
}  // namespace gd

namespace gd {
namespace {

// The host memory probe runs for real (it needs no GPU): every point is checked exactly by
// the probe itself, so an ok point means the reads summed right and the writes and copies
// landed.
TEST(HostMemoryProbe, MeasuresAndChecksSmallFootprints) {
  const Probe& host = *probe_registry().find("host");
  NoKernelsDevice dev;
  RunResult r;
  r.device = dev.info();
  NullProgress progress;
  std::atomic<bool> stop{false};
  std::any result = host.new_result();
  host.run(dev, host.parse_options({{"max_footprint", "256K"}, {"repeats", "2"}, {"threads", "1"}}),
           r, progress, stop, result);
  const auto& h = std::any_cast<const HostMemoryResult&>(result);
  EXPECT_EQ(h.status.name(), "ok") << h.status.reason;
  EXPECT_EQ(h.threads, 1);
  for (const char* op : {"read", "write", "write_streaming", "copy"}) {
    ASSERT_TRUE(h.curves.count(op)) << op;
    const BandwidthCurve& c = h.curves.at(op);
#if !defined(__x86_64__)
    if (std::string(op) == "write_streaming") {
      EXPECT_EQ(c.status.name(), "unsupported");
      continue;
    }
#endif
    ASSERT_EQ(c.points.size(), 5u) << op;  // 16K .. 256K, one per doubling
    for (const BandwidthPoint& p : c.points) {
      EXPECT_TRUE(p.status.ok()) << op << " " << p.x << ": " << p.status.reason;
      ASSERT_TRUE(p.gbps) << op;
      EXPECT_GT(p.gbps->median, 0) << op;  // its speed depends on the load of the machine
    }
  }
  // 256K is inside every cache a CPU has: no "memory" figure is claimed from it.
  r.probes["host"] = result;
  EXPECT_TRUE(host.figures(r).empty());
  EXPECT_THROW(host.parse_options({{"threads", "0"}}), std::invalid_argument);
  EXPECT_THROW(host.parse_options({{"min_footprint", "1M"}, {"max_footprint", "64K"}}),
               std::invalid_argument);
}

}  // namespace
}  // namespace gd
