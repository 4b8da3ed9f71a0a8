// Soak runs (issue 22): durations, and each figure's first, last, worst value, drift and
// regression over the repetitions.
#include <gtest/gtest.h>

#include "gpudissect/soak.hpp"

using nlohmann::json;

namespace {

gd::Figure fig(const std::string& id, std::optional<double> v, bool higher_is_better = true,
               const std::string& status = "ok") {
  gd::Figure f;
  f.id = id;
  f.unit = higher_is_better ? "GB/s" : "ns";
  f.higher_is_better = higher_is_better;
  f.status = {gd::parse_status(status), status == "ok" ? "" : "why"};
  if (v) f.value = gd::single_value(*v);
  return f;
}

gd::SoakSeries series(std::vector<std::optional<double>> v, bool higher_is_better = true) {
  gd::SoakSeries s;
  s.id = "x";
  s.higher_is_better = higher_is_better;
  s.values = std::move(v);
  for (const auto& x : s.values) s.statuses.push_back(x ? "ok" : "error");
  return s;
}

}  // namespace

TEST(Soak, ParsesDurations) {
  EXPECT_EQ(gd::parse_duration("20s"), 20);
  EXPECT_EQ(gd::parse_duration("10m"), 600);
  EXPECT_EQ(gd::parse_duration("1.5h"), 5400);
  EXPECT_EQ(gd::parse_duration("90"), 90);
  for (const char* bad : {"", "s", "0", "0s", "-5s", "10x", "10 m", "5ms", "inf", "nan", "1e9h",
                          "m10", "10mm", " 10s"})
    EXPECT_FALSE(gd::parse_duration(bad)) << bad;
}

TEST(Soak, FirstLastWorstDrift) {
  const gd::SoakSeries s = series({100.0, 98.0, 90.0, 95.0});
  EXPECT_EQ(s.first(), 100);
  EXPECT_EQ(s.last(), 95);
  EXPECT_EQ(s.worst(), 90);
  EXPECT_EQ(s.worst_index(), 2u);
  EXPECT_DOUBLE_EQ(*s.drift(), -0.05);
  EXPECT_DOUBLE_EQ(*s.worst_change(), -0.10);
  // Judged on the last third against the first (95 against 100 here), not the worst:
  EXPECT_FALSE(s.regressed(0.05));  // exactly at the tolerance: within
  EXPECT_TRUE(s.regressed(0.04));
}

// A soak holds a GPU to what it does for a while, not to its one slowest repetition: a
// hiccup in the middle is reported (worst) and passes; a last third slower than the first
// fails; the first third's own spread widens what is allowed.
TEST(Soak, SustainedChangeNotOneSlowRepetition) {
  std::vector<std::optional<double>> v(30, 100.0);
  v[15] = 60.0;
  EXPECT_FALSE(series(v).regressed(0.05));
  EXPECT_DOUBLE_EQ(*series(v).worst_change(), -0.4);
  for (std::size_t i = 20; i < 30; ++i) v[i] = 90.0;
  EXPECT_TRUE(series(v).regressed(0.05));
  // A figure that swings by 20 % in the first third: 10 % lower later is within its noise.
  for (std::size_t i = 0; i < 10; ++i) v[i] = i % 2 ? 110.0 : 90.0;
  double spread = 0;
  EXPECT_DOUBLE_EQ(*series(v).sustained_change(&spread), -0.1);
  EXPECT_GT(spread, 0.1);
  EXPECT_FALSE(series(v).regressed(0.05));
}

TEST(Soak, WorstOfALatencyIsItsHighest) {
  const gd::SoakSeries s = series({10.0, 9.0, 12.0}, false);
  EXPECT_EQ(s.worst(), 12);
  EXPECT_DOUBLE_EQ(*s.worst_change(), 0.2);
  EXPECT_TRUE(s.regressed(0.1));
  EXPECT_FALSE(series({10.0, 8.0}, false).regressed(0.1));  // faster is no regression
  EXPECT_FALSE(series({100.0, 130.0}).regressed(0.1));      // more bandwidth neither
}

TEST(Soak, ResolutionWidensTheTolerance) {
  gd::SoakSeries s = series({100.0, 91.0});
  EXPECT_TRUE(s.regressed(0.05));
  s.resolution = 0.09;  // one step of the sweep apart: the same measurement
  EXPECT_FALSE(s.regressed(0.05));
}

TEST(Soak, FailingLaterIsARegressionFailingFirstIsNot) {
  EXPECT_TRUE(series({100.0, std::nullopt}).regressed(0.5));
  EXPECT_FALSE(series({std::nullopt, 100.0}).regressed(0.05));
  EXPECT_FALSE(series({std::nullopt, 100.0}).drift());
  EXPECT_FALSE(series({}).worst());
  EXPECT_FALSE(series({0.0, 1.0}).drift());  // no change from zero
}

TEST(Soak, SeriesFollowFiguresAcrossRepetitions) {
  gd::Soak soak(60, 0.05);
  soak.add({0, 10, 0}, {fig("bw", 100.0), fig("lat", 10.0, false)}, std::nullopt);
  soak.add({10, 10, 0}, {fig("bw", 97.0), fig("new", 1.0)}, std::nullopt);  // lat missing
  soak.add({20, 10, 0}, {fig("bw", 96.0), fig("lat", 10.5, false), fig("new", 2.0)}, std::nullopt);
  ASSERT_EQ(soak.series().size(), 3u);
  const gd::SoakSeries& bw = soak.series()[0];
  EXPECT_EQ(bw.values, (std::vector<std::optional<double>>{100.0, 97.0, 96.0}));
  const gd::SoakSeries& lat = soak.series()[1];
  EXPECT_EQ(lat.statuses, (std::vector<std::string>{"ok", "missing", "ok"}));
  const gd::SoakSeries& nw = soak.series()[2];
  EXPECT_EQ(nw.values, (std::vector<std::optional<double>>{std::nullopt, 1.0, 2.0}));
  // lat vanished once (not judged); bw lost 4 %: within 5 %.
  EXPECT_TRUE(soak.regressions().empty());
  soak.add({30, 10, 0}, {fig("bw", 94.0), fig("lat", 10.0, false)}, std::nullopt);
  EXPECT_EQ(soak.regressions(), std::vector<std::string>{"bw"});  // 6 % now
  EXPECT_FALSE(soak.throttle_events());                           // no reading knew the GPU's state
}

TEST(Soak, UnstableFiguresAreFollowedFailedOnesAreNot) {
  gd::Soak soak(60, 0.05);
  soak.add({0, 1, 0}, {fig("a", 100.0), fig("b", 5.0)}, std::nullopt);
  soak.add({1, 1, 1}, {fig("a", 99.0, true, "unstable"), fig("b", std::nullopt, true, "error")},
           std::nullopt);
  EXPECT_EQ(soak.series()[0].values[1], 99.0);
  EXPECT_FALSE(soak.series()[1].values[1]);
  EXPECT_EQ(soak.series()[1].statuses[1], "error");
  EXPECT_EQ(soak.regressions(), std::vector<std::string>{"b"});
}

TEST(Soak, ThrottleEventsAndEccInTheJson) {
  gd::Soak soak(30, 0.05);
  gd::GpuState st;
  gd::GpuStateSample quiet, hot;
  quiet.known = hot.known = true;
  hot.throttle_reasons = {"hw_thermal_slowdown", "sw_power_cap"};
  st.samples = {quiet, hot, hot};
  soak.add({0, 12, 0}, {fig("bw", 100.0)}, st);
  soak.add({12, 12, 0}, {fig("bw", 80.0)}, st);
  soak.set_ecc(gd::EccCounts{0, 0}, gd::EccCounts{3, 1});
  soak.set_finished(true, 24.5);
  const auto t = soak.throttle_events();
  ASSERT_TRUE(t);
  EXPECT_EQ(t->at("hw_thermal_slowdown"), 4);
  const json j = soak.to_json();
  EXPECT_EQ(j.at("duration_s"), 30);
  EXPECT_EQ(j.at("elapsed_s"), 24.5);
  EXPECT_EQ(j.at("complete"), true);
  EXPECT_EQ(j.at("tolerance_percent"), 5);
  EXPECT_EQ(j.at("repetitions").size(), 2u);
  EXPECT_EQ(j.at("throttle_events").at("sw_power_cap"), 4);
  EXPECT_EQ(j.at("ecc_after").at("corrected"), 3);
  EXPECT_EQ(j.at("ecc_after").at("uncorrected"), 1);
  const json& f = j.at("figures").at(0);
  EXPECT_EQ(f.at("id"), "bw");
  EXPECT_EQ(f.at("first"), 100);
  EXPECT_EQ(f.at("last"), 80);
  EXPECT_EQ(f.at("worst"), 80);
  EXPECT_EQ(f.at("worst_repetition"), 1);
  EXPECT_DOUBLE_EQ(f.at("drift_percent").get<double>(), -20);
  EXPECT_EQ(f.at("regressed"), true);
  EXPECT_EQ(j.at("regressions"), json({"bw"}));
  gd::Soak none(30, 0.05);
  EXPECT_EQ(none.to_json().at("ecc_before"), "not available");
  EXPECT_EQ(none.to_json().at("throttle_events"), "not available");
}
