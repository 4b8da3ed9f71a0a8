// The report's opening summary (report/article.*): the hierarchy diagram shows measured
// figures or "-", never an invented one; the standouts against the reference GPUs.
#include <gtest/gtest.h>

#include <string>

#include "article.hpp"
#include "gpudissect/compare.hpp"

using namespace gd;
using namespace gd::report::detail;

namespace {

Figure figure(const std::string& id, double v, const std::string& unit,
              std::optional<double> per_clk = {}, const std::string& per_clk_unit = "") {
  Figure f;
  f.id = id;
  f.label = id;
  f.value = single_value(v);
  f.unit = unit;
  f.per_sm_per_clk = per_clk;
  f.per_sm_per_clk_unit = per_clk_unit;
  f.clock_mhz = 1000;
  f.higher_is_better = unit != "ns" && unit != "cycles";
  f.status = {StatusCode::ok, ""};
  return f;
}

RunResult run_with(std::vector<Figure> figures) {
  RunResult r;
  r.device.name = "Test GPU X";
  r.device.backend = "cuda";
  r.device.compute_units = 10;
  r.device.clock_mhz_reported = 1000;
  r.figures = std::move(figures);
  return r;
}

ReferenceGpu reference(const std::string& name, double fp32_per_clk, double l2_ns,
                       const std::string& l2_qualifier = "") {
  nlohmann::json j = nlohmann::json::parse(R"({
    "format": "gpudissect-reference", "format_version": 1, "name": "",
    "sources": [{"key": "s", "document": "doc.txt", "title": "A title"}],
    "facts": {"compute_units": {"value": 10, "unit_name": "SM", "source": "s"},
              "clock_mhz": {"value": 1000, "source": "s"}},
    "figures": []})");
  j["name"] = name;
  j["figures"].push_back({{"id", "compute.fp32.fma"},
                          {"value", fp32_per_clk},
                          {"unit", "ops/clk/SM"},
                          {"method", "m"},
                          {"source", "s"}});
  j["figures"].push_back({{"id", "latency.global.L2"},
                          {"value", l2_ns},
                          {"unit", "ns"},
                          {"method", "m"},
                          {"source", "s"}});
  if (!l2_qualifier.empty()) j["figures"].back()["qualifier"] = l2_qualifier;
  return reference_from_json(j, name + ".json");
}

}  // namespace

TEST(ArticleDiagram, AbsentFiguresAreDashesNotNumbers) {
  const std::string svg = hierarchy_svg(run_with({}));
  EXPECT_EQ(svg.rfind("<svg", 0), 0u);
  EXPECT_NE(svg.find("</svg>"), std::string::npos);
  EXPECT_EQ(svg.find("cycles"), std::string::npos);  // no latency anywhere
  EXPECT_EQ(svg.find("TB/s"), std::string::npos);
  EXPECT_EQ(svg.find("GB/s"), std::string::npos);
  EXPECT_NE(svg.find(">-</tspan>"), std::string::npos);
  EXPECT_NE(svg.find("One SM (× 10)"), std::string::npos);
}

TEST(ArticleDiagram, ShowsTheRunsFigures) {
  const std::string svg =
      hierarchy_svg(run_with({figure("latency.global.L2_near.cycles", 281, "cycles"),
                              figure("latency.global.L2_near", 142, "ns"),
                              figure("latency.global.L2_far.cycles", 513, "cycles"),
                              figure("latency.global.L1.capacity", 220416, "bytes"),
                              figure("bandwidth.dram.read", 4603, "GB/s", 17.6, "B/clk/SM")}));
  EXPECT_NE(svg.find("L2 near partition"), std::string::npos);
  EXPECT_NE(svg.find("281 cycles · 142 ns"), std::string::npos);
  EXPECT_NE(svg.find("513 cycles"), std::string::npos);
  EXPECT_NE(svg.find("215 KiB"), std::string::npos);
  EXPECT_NE(svg.find("4.6 TB/s · 17.6 B/clk/SM"), std::string::npos);
}

TEST(ArticleStandouts, FurthestOutsideTheReferencesAgainstTheNearest) {
  const RunResult r = run_with({figure("compute.fp32.fma", 2.56, "TFLOP/s", 128, "ops/clk/SM"),
                                figure("latency.global.L2", 150, "ns")});
  const std::vector<ReferenceGpu> refs = {reference("Old GPU", 32, 300),
                                          reference("Newer GPU", 64, 100),
                                          // the same GPU measured by others: left out
                                          reference("Test GPU X (peer tools)", 128, 150)};
  const auto top = standouts(r, refs);
  // fp32: 128 against at most 64 (Newer GPU): x2. L2 latency 150 ns lies between 100 and
  // 300: nothing sets it apart.
  ASSERT_EQ(top.size(), 1u);
  EXPECT_EQ(top[0].id, "compute.fp32.fma");
  EXPECT_EQ(top[0].against, "Newer GPU");
  EXPECT_DOUBLE_EQ(top[0].ratio, 2.0);
  EXPECT_EQ(top[0].references, 2);
  EXPECT_TRUE(top[0].better);
  EXPECT_EQ(top[0].unit, "ops/clk/SM");
}

TEST(ArticleStandouts, LowerThanEveryReferenceCountsAndSaysWhetherBetter) {
  const RunResult r = run_with({figure("latency.global.L2", 50, "ns")});
  const auto top = standouts(r, {reference("A", 32, 100), reference("B", 64, 400)});
  ASSERT_EQ(top.size(), 1u);
  EXPECT_EQ(top[0].against, "A");
  EXPECT_DOUBLE_EQ(top[0].ratio, 0.5);
  EXPECT_TRUE(top[0].better);  // a lower latency
}

TEST(ArticleSummary, SaysWhyThereAreNoReferences) {
  const std::string html = article_summary(run_with({}), nullptr, "no reference database found");
  EXPECT_NE(html.find("no reference database found"), std::string::npos);
  EXPECT_NE(html.find("this run has no compute figures"), std::string::npos);
}

TEST(ArticleContents, ListsTheSectionsInOrder) {
  const std::string toc = table_of_contents(
      "<h2 id=\"a\">Alpha &amp; co</h2><p>x</p><h2>no id</h2><h2 id=\"b\">Beta</h2>");
  const auto a = toc.find("<a href=\"#a\">Alpha &amp; co</a>");
  const auto b = toc.find("<a href=\"#b\">Beta</a>");
  ASSERT_NE(a, std::string::npos);
  ASSERT_NE(b, std::string::npos);
  EXPECT_LT(a, b);
  EXPECT_EQ(toc.find("no id"), std::string::npos);
  EXPECT_EQ(table_of_contents("<p>nothing</p>"), "");
}

TEST(ArticleStandouts, AQualifiedReferenceBoundsOneSideOnly) {
  // 137 ns against "over 130 ns": the reference may be higher, so nothing sets it apart.
  const RunResult r = run_with({figure("latency.global.L2", 137, "ns")});
  EXPECT_TRUE(standouts(r, {reference("A", 32, 130, "at least")}).empty());
  // 120 ns against "over 130 ns": lower for sure.
  const auto low = standouts(run_with({figure("latency.global.L2", 120, "ns")}),
                             {reference("A", 32, 130, "at least")});
  ASSERT_EQ(low.size(), 1u);
  EXPECT_EQ(low[0].qualifier, "at least");
  // 137 ns against "below 130 ns": higher for sure.
  EXPECT_EQ(standouts(r, {reference("A", 32, 130, "at most")}).size(), 1u);
}
