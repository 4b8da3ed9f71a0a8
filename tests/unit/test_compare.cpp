// The comparison engine: matching figures across inputs (some missing), normalisation per
// SM and per clock, baseline verdicts and tolerance edges, and the reference database (the
// real data/reference folder, every file).
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "compare_report.hpp"
#include "gpudissect/compare.hpp"
#include "gpudissect/result.hpp"
#include "registry.hpp"

namespace fs = std::filesystem;
using json = nlohmann::json;
using namespace gd;

namespace {

const fs::path kRepo = fs::path(GD_FIXTURES) / ".." / "..";
const fs::path kReferenceDir = kRepo / "data" / "reference";
const fs::path kH200 = fs::path(GD_FIXTURES) / "h200_run.json";  // a trimmed H200 run

Figure fig(const std::string& id, double v, const std::string& unit, bool higher = true) {
  Figure f;
  f.id = id;
  f.label = id;
  f.value = single_value(v);
  f.unit = unit;
  f.higher_is_better = higher;
  return f;
}

Figure failed(const std::string& id, const std::string& unit) {
  Figure f;
  f.id = id;
  f.label = id;
  f.unit = unit;
  f.status = {StatusCode::error, "the kernel's check failed"};
  return f;
}

CompareInput input(const std::string& name, int units, std::optional<double> clock,
                   std::vector<Figure> figures, const std::string& backend = "cuda") {
  CompareInput in;
  in.name = name;
  in.backend = backend;
  in.units = units;
  in.clock_mhz = clock;
  in.clock_source = clock ? "measured" : "";
  in.figures = std::move(figures);
  return in;
}

const CompareRow* row(const Comparison& c, const std::string& id) {
  for (const CompareRow& r : c.rows)
    if (r.id == id) return &r;
  return nullptr;
}

RunResult load_h200() {
  std::ifstream in(kH200);
  EXPECT_TRUE(in) << kH200;
  return run_result_from_json(json::parse(in), probe_registry());
}

json minimal_reference() {
  return json::parse(R"({
    "format": "gpudissect-reference", "format_version": 1, "name": "Test GPU",
    "sources": [{"key": "s", "document": "doc.txt", "title": "A title"}],
    "facts": {"compute_units": {"value": 10, "unit_name": "SM", "source": "s"},
              "clock_mhz": {"value": 1000, "source": "s"}},
    "figures": [
      {"id": "latency.global.L2", "value": 100, "unit": "ns", "method": "m", "source": "s"},
      {"id": "latency.global.L2.cycles", "value": 200, "unit": "cycles", "method": "m", "source": "s"},
      {"id": "bandwidth.l1.read", "value": 64, "unit": "B/clk/SM", "qualifier": "at most", "method": "m", "source": "s"},
      {"id": "bandwidth.l2.read", "value": 1000, "unit": "GB/s", "method": "m", "source": "s"}
    ]})");
}

}  // namespace

// ---- matching ----

TEST(Compare, MatchesFiguresAcrossInputsWithMissingOnes) {
  std::vector<CompareInput> in;
  in.push_back(input("A", 100, 1000,
                     {fig("x.a", 10, "GB/s"), fig("x.b", 1, "GB/s"), fig("x.d", 4, "GB/s")}));
  in.push_back(input("B", 100, 1000, {fig("x.a", 20, "GB/s"), fig("x.c", 3, "GB/s")}));
  in.push_back(
      input("C", 100, 1000, {fig("x.c", 6, "GB/s"), fig("x.a", 5, "GB/s"), failed("x.d", "GB/s")}));
  const Comparison c = compare(in);
  ASSERT_EQ(c.rows.size(), 3u);
  EXPECT_EQ(c.rows[0].id, "x.a");  // first-seen order
  EXPECT_EQ(c.rows[1].id, "x.d");
  EXPECT_EQ(c.rows[2].id, "x.c");
  // x.b is in one input only: listed, not a row.
  ASSERT_EQ(c.only_in.count("A"), 1u);
  EXPECT_EQ(c.only_in.at("A"), std::vector<std::string>{"x.b"});
  const CompareRow& a = *row(c, "x.a");
  EXPECT_DOUBLE_EQ(*a.cells[1].ratio, 2.0);
  EXPECT_DOUBLE_EQ(*a.cells[2].ratio, 0.5);
  // x.c: the first input lacks it, so no ratio to it.
  const CompareRow& cc = *row(c, "x.c");
  EXPECT_FALSE(cc.cells[0].present);
  EXPECT_FALSE(cc.cells[2].ratio);
  EXPECT_DOUBLE_EQ(*cc.cells[2].value, 6);
  // x.d failed in C: present, status kept, no value and no ratio.
  const CompareRow& d = *row(c, "x.d");
  EXPECT_TRUE(d.cells[2].present);
  EXPECT_EQ(d.cells[2].status.name(), "error");
  EXPECT_FALSE(d.cells[2].value);
  EXPECT_FALSE(d.cells[2].ratio);
  EXPECT_FALSE(d.cells[1].present);
}

TEST(Compare, RepeatedNamesGetDistinctLabels) {
  const Comparison c = compare(
      {input("H200", 132, 1980, {}), input("H200", 132, 1980, {}), input("H200", 132, 1980, {})});
  EXPECT_EQ(c.inputs[0].label, "H200");
  EXPECT_EQ(c.inputs[1].label, "H200 #2");
  EXPECT_EQ(c.inputs[2].label, "H200 #3");
}

// ---- normalisation ----

TEST(Compare, NormalisationArithmetic) {
  // 4600 GB/s over 132 SMs at 1980 MHz: 4600e9 / (132 * 1980e6) bytes per clock per SM.
  EXPECT_NEAR(*per_sm_per_clock(4600, "GB/s", 132, 1980), 4600e9 / (132 * 1980e6), 1e-9);
  EXPECT_NEAR(*per_sm_per_clock(4.6, "TB/s", 132, 1980), 4600e9 / (132 * 1980e6), 1e-9);
  // 66.27 TFLOP/s -> FLOP per clock per SM (an FMA counts two).
  EXPECT_NEAR(*per_sm_per_clock(66.27, "TFLOP/s", 132, 1980), 66.27e12 / (132 * 1980e6), 1e-9);
  EXPECT_EQ(*per_clock_unit("TFLOP/s"), "FLOP/clk/SM");
  EXPECT_EQ(*per_clock_unit("GB/s"), "B/clk/SM");
  EXPECT_EQ(*per_clock_unit("TOP/s"), "OP/clk/SM");
  // A latency in ns at a clock is that many cycles; it needs no SM count.
  EXPECT_NEAR(*per_sm_per_clock(16.17, "ns", 0, 1980), 16.17 * 1.98, 1e-9);
  EXPECT_EQ(*per_clock_unit("ns"), "cycles");
  // Nothing without a clock or an SM count, and nothing for cycles or bytes.
  EXPECT_FALSE(per_sm_per_clock(4600, "GB/s", 132, std::nullopt));
  EXPECT_FALSE(per_sm_per_clock(4600, "GB/s", 0, 1980));
  EXPECT_FALSE(per_sm_per_clock(4600, "GB/s", 132, 0.0));
  EXPECT_FALSE(per_sm_per_clock(32, "cycles", 132, 1980));
  EXPECT_FALSE(per_sm_per_clock(1024, "bytes", 132, 1980));
  // Per SM: GB/s per SM is bytes per ns per SM, whatever the clock.
  EXPECT_NEAR(*per_sm(4600, "GB/s", 132), 4600.0 / 132, 1e-12);
  EXPECT_FALSE(per_sm(16, "ns", 132));
  EXPECT_FALSE(per_sm(4600, "GB/s", 0));
  // Unit conversion within a dimension only.
  EXPECT_NEAR(*convert_unit(4.6, "TB/s", "GB/s"), 4600, 1e-9);
  EXPECT_NEAR(*convert_unit(8.72, "us", "ns"), 8720, 1e-9);
  EXPECT_FALSE(convert_unit(1, "ns", "cycles"));
  EXPECT_FALSE(convert_unit(1, "GB/s", "TFLOP/s"));
}

TEST(Compare, DifferentClocksAndSmCounts) {
  // A: 100 SMs at 1000 MHz, 1000 GB/s -> 10 B/clk/SM, 10 GB/s per SM.
  // B: 50 SMs at 2000 MHz, 500 GB/s -> 5 B/clk/SM, 10 GB/s per SM.
  const Comparison c =
      compare({input("A", 100, 1000, {fig("bandwidth.l2.read", 1000, "GB/s")}),
               input("B", 50, 2000, {fig("bandwidth.l2.read", 500, "GB/s")}, "opencl")});
  const CompareRow& r = *row(c, "bandwidth.l2.read");
  EXPECT_NEAR(*r.cells[0].per_clk, 10, 1e-12);
  EXPECT_NEAR(*r.cells[1].per_clk, 5, 1e-12);
  EXPECT_EQ(r.cells[1].per_clk_unit, "B/clk/SM");
  EXPECT_TRUE(r.cells[1].per_clk_derived);
  EXPECT_NEAR(*r.cells[1].ratio, 0.5, 1e-12);
  EXPECT_NEAR(*r.cells[1].per_clk_ratio, 0.5, 1e-12);
  EXPECT_NEAR(*r.cells[0].per_sm, 10, 1e-12);
  EXPECT_NEAR(*r.cells[1].per_sm, 10, 1e-12);
  EXPECT_EQ(r.per_sm_unit, "GB/s/SM");
  // Readers are told what differs.
  std::string all;
  for (const auto& s : c.caveats) all += s + "\n";
  EXPECT_NE(all.find("different clocks"), std::string::npos) << all;
  EXPECT_NE(all.find("different backends"), std::string::npos) << all;
  // A clock within 2 % is the same clock: no caveat about it.
  const Comparison same = compare({input("A", 100, 1979.7, {}), input("B", 100, 1980, {})});
  for (const auto& s : same.caveats) EXPECT_EQ(s.find("different clocks"), std::string::npos) << s;
  EXPECT_NE(all.find("numbers of SMs"), std::string::npos) << all;
}

TEST(Compare, FigureClockOverridesTheInputClock) {
  Figure f = fig("compute.wgmma.bf16", 1000, "TFLOP/s");
  f.clock_mhz = 1000;  // the tensor cores ran slower than the rest
  const Comparison c =
      compare({input("A", 100, 2000, {f}),
               input("B", 100, 2000, {fig("compute.wgmma.bf16", 1000, "TFLOP/s")})});
  const CompareRow& r = *row(c, "compute.wgmma.bf16");
  EXPECT_NEAR(*r.cells[0].per_clk, 1000e12 / (100 * 1000e6), 1e-6);
  EXPECT_NEAR(*r.cells[1].per_clk, 1000e12 / (100 * 2000e6), 1e-6);
}

TEST(Compare, StatedAndDerivedPerClockShareOneUnit) {
  // The tool states FP32 FMA per clock in thread-instructions (ops/clk/SM); a reference gives
  // TFLOP/s only. The first input's pair fixes 2 FLOP per FMA.
  Figure ours = fig("compute.fp32.fma", 66.27, "TFLOP/s");
  ours.per_sm_per_clk = 126.9;
  ours.per_sm_per_clk_unit = "ops/clk/SM";
  const Comparison c =
      compare({input("H200", 132, 1980, {ours}),
               input("peer", 132, 1980, {fig("compute.fp32.fma", 66.16, "TFLOP/s")})});
  const CompareRow& r = *row(c, "compute.fp32.fma");
  EXPECT_EQ(r.cells[1].per_clk_unit, "ops/clk/SM");
  EXPECT_TRUE(r.cells[1].per_clk_derived);
  const double k = 66.27e12 / (132 * 1980e6) / 126.9;
  EXPECT_NEAR(*r.cells[1].per_clk, 66.16e12 / (132 * 1980e6) / k, 1e-9);
  EXPECT_NEAR(*r.cells[1].per_clk_ratio, 66.16 / 66.27, 1e-9);
}

TEST(Compare, ReferenceLevelsMarkTheLatencyChart) {
  const ReferenceDb db = load_reference_dir(kReferenceDir);
  const ReferenceGpu* g = find_reference(db, "RTX PRO 6000 Blackwell");
  ASSERT_TRUE(g);
  const std::vector<CompareInput> in = {input("H200", 132, 1980, {}), input_from_reference(*g)};
  const auto marks = latency_marks(in, "global", false);
  std::map<std::string, double> by_level;
  for (const LevelMark& m : marks) by_level[m.level] = m.value;
  EXPECT_EQ(by_level.at("L2"), 130);
  EXPECT_EQ(by_level.at("device_memory"), 329);
  EXPECT_EQ(by_level.count("dram_minus_last_cache"), 0u);  // a difference, not a level
  EXPECT_TRUE(latency_marks(in, "global", true).empty());  // the source gives no cycles
}

TEST(Compare, ReferenceBandwidthMarks) {
  const ReferenceDb db = load_reference_dir(kReferenceDir);
  const std::vector<CompareInput> in = {
      input("H200", 132, 1980, {}),
      input_from_reference(*find_reference(db, "RTX PRO 6000 Blackwell")),
      input_from_reference(*find_reference(db, "RX 9070"))};
  std::map<std::string, LevelMark> gb, clk;
  for (const LevelMark& m : bandwidth_marks(in, "read", false)) gb[m.input + " " + m.level] = m;
  for (const LevelMark& m : bandwidth_marks(in, "read", true)) clk[m.input + " " + m.level] = m;
  EXPECT_EQ(gb.at("RX 9070 L2").value, 8400);
  EXPECT_EQ(gb.at("RTX PRO 6000 Blackwell L1").qualifier, "at least");  // "more than 60 TB/s"
  // Per clock: the stated 128 B/clk is exact; RX 9070's L2 is derived from 8.4 TB/s at
  // 28 WGPs and 2.6 GHz.
  EXPECT_EQ(clk.at("RTX PRO 6000 Blackwell L1").value, 128);
  EXPECT_EQ(clk.at("RTX PRO 6000 Blackwell L1").qualifier, "");
  EXPECT_FALSE(clk.at("RTX PRO 6000 Blackwell L1").derived);
  EXPECT_NEAR(clk.at("RX 9070 L2").value, 8400e9 / (28 * 2600e6), 1e-9);
  EXPECT_TRUE(clk.at("RX 9070 L2").derived);
  EXPECT_EQ(clk.count("RTX PRO 6000 Blackwell L2"), 0u);  // no clock stated: nothing derived
}

TEST(Compare, UnitsConvertedOrFlagged) {
  const Comparison c = compare(
      {input("A", 1, 1000, {fig("bandwidth.dram.read", 4600, "GB/s"), fig("y.t", 1, "GB/s")}),
       input("B", 1, 1000, {fig("bandwidth.dram.read", 4.5, "TB/s"), fig("y.t", 1, "ns")})});
  EXPECT_NEAR(*row(c, "bandwidth.dram.read")->cells[1].value, 4500, 1e-9);
  const CompareCell& bad = row(c, "y.t")->cells[1];
  EXPECT_TRUE(bad.unit_mismatch);
  EXPECT_FALSE(bad.value);
  EXPECT_FALSE(bad.ratio);
}

TEST(Compare, ReferenceInputFromDocument) {
  const ReferenceGpu g = reference_from_json(minimal_reference(), "test.json");
  const CompareInput in = input_from_reference(g);
  EXPECT_TRUE(in.reference);
  EXPECT_EQ(in.units, 10);
  ASSERT_TRUE(in.clock_mhz);
  EXPECT_EQ(*in.clock_mhz, 1000);
  // A figure stated per clock only becomes a per-clock value, not a GB/s value.
  const Figure* l1 = nullptr;
  for (const Figure& f : in.figures)
    if (f.id == "bandwidth.l1.read") l1 = &f;
  ASSERT_TRUE(l1);
  EXPECT_FALSE(l1->value);
  EXPECT_EQ(*l1->per_sm_per_clk, 64);
  EXPECT_EQ(in.qualifiers.at("bandwidth.l1.read"), "at most");
  // Latencies are lower-is-better.
  for (const Figure& f : in.figures)
    if (f.unit == "ns" || f.unit == "cycles") EXPECT_FALSE(f.higher_is_better) << f.id;
  // Against a result: the per-clock-only figure lines up with the result's per-clock value.
  Figure ours = fig("bandwidth.l1.read", 32000, "GB/s");
  ours.per_sm_per_clk = 123.5;
  ours.per_sm_per_clk_unit = "B/clk/SM";
  const Comparison c = compare({input("H200", 132, 1980, {ours}), in});
  const CompareRow& r = *row(c, "bandwidth.l1.read");
  EXPECT_EQ(r.unit, "GB/s");
  EXPECT_FALSE(r.cells[1].value);
  EXPECT_NEAR(*r.cells[1].per_clk_ratio, 64 / 123.5, 1e-12);
}

// ---- baseline ----

TEST(Baseline, ParseTolerance) {
  EXPECT_NEAR(*parse_tolerance("3%"), 0.03, 1e-15);
  EXPECT_NEAR(*parse_tolerance("3"), 0.03, 1e-15);
  EXPECT_NEAR(*parse_tolerance(" 0.5 %"), 0.005, 1e-15);
  EXPECT_NEAR(*parse_tolerance("0%"), 0.0, 1e-15);
  EXPECT_FALSE(parse_tolerance("-1%"));
  EXPECT_FALSE(parse_tolerance("abc"));
  EXPECT_FALSE(parse_tolerance(""));
  EXPECT_FALSE(parse_tolerance("%"));
  EXPECT_FALSE(parse_tolerance("3%%"));
}

namespace {
Verdict verdict_of(double base, double now, bool higher, double tol) {
  const CompareInput b = input("GPU", 1, 1, {fig("f.x", base, "GB/s", higher)});
  const CompareInput n = input("GPU", 1, 1, {fig("f.x", now, "GB/s", higher)});
  const BaselineReport r = compare_baseline(b, n, tol);
  EXPECT_EQ(r.items.size(), 1u);
  return r.items.at(0).verdict;
}
}  // namespace

TEST(Baseline, ToleranceEdges) {
  // Higher is better (bandwidths, rates).
  EXPECT_EQ(verdict_of(100, 97, true, 0.03), Verdict::within);  // exactly at the tolerance
  EXPECT_EQ(verdict_of(100, 96.9, true, 0.03), Verdict::regressed);
  EXPECT_EQ(verdict_of(100, 103, true, 0.03), Verdict::within);
  EXPECT_EQ(verdict_of(100, 103.1, true, 0.03), Verdict::improved);
  EXPECT_EQ(verdict_of(100, 90, true, 0.03), Verdict::regressed);  // 10 % worse
  // Lower is better (latencies): an increase is the regression.
  EXPECT_EQ(verdict_of(100, 103, false, 0.03), Verdict::within);
  EXPECT_EQ(verdict_of(100, 103.5, false, 0.03), Verdict::regressed);
  EXPECT_EQ(verdict_of(100, 90, false, 0.03), Verdict::improved);
  // Zero tolerance: equal is within, any worsening is a regression.
  EXPECT_EQ(verdict_of(100, 100, true, 0.0), Verdict::within);
  EXPECT_EQ(verdict_of(100, 99.99, true, 0.0), Verdict::regressed);
  EXPECT_EQ(verdict_of(0, 0, true, 0.03), Verdict::within);
  EXPECT_EQ(verdict_of(0, 5, true, 0.03), Verdict::not_comparable);
}

TEST(Baseline, CapacityWithinItsSweepStepIsNotFlagged) {
  // The H200's quick run found the far L2 edge one point (2^(1/8)) below the full run's:
  // 58.7 -> 53.8 MiB, -8.3 %, inside the 9.05 % between the bracket's two footprints.
  auto cap = [](double mib, std::optional<double> step) {
    Figure f = fig("latency.global.L2_far.capacity", mib * 1048576, "bytes", true);
    f.resolution = step;
    return f;
  };
  const double step = 0.0905077326652577;
  auto verdict = [&](Figure b, Figure n, std::string* reason = nullptr) {
    const BaselineReport r =
        compare_baseline(input("GPU", 1, 1, {b}), input("GPU", 1, 1, {n}), 0.03);
    if (reason) *reason = r.items.at(0).reason;
    return r.items.at(0).verdict;
  };
  std::string why;
  EXPECT_EQ(verdict(cap(58.7, step), cap(53.8, step), &why), Verdict::within);
  EXPECT_NE(why.find("step (9.1 %)"), std::string::npos) << why;
  // The baseline's step counts, never the new file's: a new file cannot widen the gate.
  EXPECT_EQ(verdict(cap(58.7, std::nullopt), cap(53.8, step)), Verdict::regressed);
  EXPECT_EQ(verdict(cap(58.7, step), cap(53.8, std::nullopt)), Verdict::within);
  // Two steps away is a change; without a step on either side, the tolerance alone.
  EXPECT_EQ(verdict(cap(58.7, step), cap(49.3, step)), Verdict::regressed);
  EXPECT_EQ(verdict(cap(58.7, std::nullopt), cap(53.8, std::nullopt)), Verdict::regressed);
  EXPECT_EQ(verdict(cap(53.8, step), cap(53.8 * (1 + step), step)), Verdict::within);
  EXPECT_EQ(verdict(cap(53.8, step), cap(53.8 * (1 + step) * 1.01, step)), Verdict::improved);
  // Within the tolerance itself: no reason given.
  EXPECT_EQ(verdict(cap(58.7, step), cap(58.0, step), &why), Verdict::within);
  EXPECT_TRUE(why.empty()) << why;
  // The step travels through the JSON.
  nlohmann::json j = cap(58.7, step);
  EXPECT_NEAR(j.at("resolution").get<double>(), step, 1e-15);
  EXPECT_NEAR(*j.get<Figure>().resolution, step, 1e-15);
  EXPECT_FALSE(nlohmann::json(cap(58.7, std::nullopt)).contains("resolution"));
}

TEST(Baseline, StatusAndMissingFigures) {
  const CompareInput base =
      input("GPU", 1, 1,
            {fig("a", 100, "GB/s"), fig("b", 100, "GB/s"), failed("c", "GB/s"), failed("d", "GB/s"),
             fig("gone", 1, "GB/s"), fig("u", 1, "GB/s")});
  const CompareInput now = input("GPU", 1, 1,
                                 {fig("a", 100, "GB/s"), failed("b", "GB/s"), fig("c", 100, "GB/s"),
                                  failed("d", "GB/s"), fig("new", 1, "GB/s"), fig("u", 1, "ns")});
  const BaselineReport r = compare_baseline(base, now, 0.03);
  std::map<std::string, Verdict> v;
  for (const BaselineItem& it : r.items) v[it.id] = it.verdict;
  EXPECT_EQ(v.at("a"), Verdict::within);
  EXPECT_EQ(v.at("b"), Verdict::failed);  // not ok now, ok in the baseline: a regression
  EXPECT_EQ(v.at("c"), Verdict::recovered);
  EXPECT_EQ(v.at("d"), Verdict::failed_both);
  EXPECT_EQ(v.at("new"), Verdict::only_new);
  EXPECT_EQ(v.at("gone"), Verdict::failed);  // ok in the baseline, absent now
  EXPECT_EQ(v.at("u"), Verdict::failed);     // another unit: not what the baseline measured
  EXPECT_EQ(r.regressions(), 3);
  EXPECT_EQ(r.improvements(), 1);
  EXPECT_TRUE(is_regression(Verdict::failed));
  EXPECT_FALSE(is_regression(Verdict::only_baseline));
  // Partial runs: a missing figure is listed, not a failure; a changed unit still fails.
  const BaselineReport partial = compare_baseline(base, now, 0.03, /*allow_missing=*/true);
  std::map<std::string, Verdict> pv;
  for (const BaselineItem& it : partial.items) pv[it.id] = it.verdict;
  EXPECT_EQ(pv.at("gone"), Verdict::only_baseline);
  EXPECT_EQ(pv.at("u"), Verdict::failed);
  EXPECT_EQ(partial.regressions(), 2);
}

TEST(Baseline, TheFileJudgedCannotTalkItsWayOut) {
  const CompareInput h = input_from_result(load_h200(), kH200.string());
  // 50 % worse on every figure, each claiming a step of 1000 %. Host-side figures gated too
  // (include_host): none of them talks its way out either.
  CompareInput worse = h;
  // Left out: a figure whose own baseline resolution is 50 % or more (a span of one or two
  // GPU timer steps), which a 50 % change cannot be told from.
  int ok = 0;
  for (Figure& f : worse.figures) {
    if (!f.status.ok() || !f.value) continue;
    f.value->median *= f.higher_is_better ? 0.5 : 1.5;
    if (!f.resolution || *f.resolution < 0.5) ++ok;
    f.resolution = 10;
  }
  ASSERT_GT(ok, 50);
  EXPECT_EQ(compare_baseline(h, worse, 0.05, false, true).regressions(), ok);
  // Flipping what is better does not help either: the baseline's direction counts.
  for (Figure& f : worse.figures) f.higher_is_better = !f.higher_is_better;
  EXPECT_EQ(compare_baseline(h, worse, 0.05, false, true).regressions(), ok);
  // A run with no figures, or with every id renamed, fails on every figure the baseline had.
  int base_ok = 0;
  for (const Figure& f : h.figures)
    base_ok +=
        (f.status.ok() || f.status.code == StatusCode::unstable) && (f.value || f.per_sm_per_clk);
  CompareInput none = h;
  none.figures.clear();
  EXPECT_EQ(compare_baseline(h, none, 0.05, false, true).regressions(), base_ok);
  CompareInput renamed = h;
  for (Figure& f : renamed.figures) f.id += "_x";
  EXPECT_EQ(compare_baseline(h, renamed, 0.05, false, true).regressions(), base_ok);
  EXPECT_EQ(compare_baseline(h, none, 0.05, /*allow_missing=*/true).regressions(), 0);
}

TEST(Baseline, CommittedH200AgainstItselfAndADoctoredCopy) {
  const CompareInput h = input_from_result(load_h200(), kH200.string());
  ASSERT_GT(h.figures.size(), 50u);
  EXPECT_EQ(compare_baseline(h, h, 0.0).regressions(), 0);
  // The DRAM read 10 % lower and the global L1 latency 10 % higher: two regressions at 3 %.
  CompareInput worse = h;
  int changed = 0;
  for (Figure& f : worse.figures) {
    if (f.id == "bandwidth.dram.read") f.value->median *= 0.9, ++changed;
    if (f.id == "latency.global.L1") f.value->median *= 1.1, ++changed;
  }
  ASSERT_EQ(changed, 2);
  const BaselineReport r = compare_baseline(h, worse, 0.03);
  EXPECT_EQ(r.regressions(), 2);
  for (const BaselineItem& it : r.items)
    if (is_regression(it.verdict))
      EXPECT_TRUE(it.id == "bandwidth.dram.read" || it.id == "latency.global.L1") << it.id;
}

// ---- the gate and noise: the baseline's spread, host-side figures ----

namespace {
// A figure of five repeats with the given quartiles around `median`.
Figure spread_fig(const std::string& id, double median, double q1, double q3, bool higher = true) {
  Figure f = fig(id, median, "GB/s", higher);
  f.value->q1 = q1;
  f.value->q3 = q3;
  f.value->min = std::min(q1, median);
  f.value->max = std::max(q3, median);
  f.value->n = 5;
  return f;
}
BaselineItem judged(const Figure& base, const Figure& now, double tol, bool host = false) {
  const BaselineReport r =
      compare_baseline(input("GPU", 1, 1, {base}), input("GPU", 1, 1, {now}), tol, false, host);
  EXPECT_EQ(r.items.size(), 1u);
  return r.items.at(0);
}
}  // namespace

TEST(Baseline, MeasuredSpreadIsTheIqrOverTheMedian) {
  EXPECT_NEAR(measured_spread(spread_fig("a.b", 100, 95, 105)), 0.10, 1e-12);
  EXPECT_NEAR(measured_spread(spread_fig("a.b", -100, -105, -95)), 0.10, 1e-12);
  EXPECT_EQ(measured_spread(fig("a.b", 100, "GB/s")), 0.0);           // one sample
  EXPECT_EQ(measured_spread(spread_fig("a.b", 100, 0, 0)), 0.0);      // quartiles absent (0, 0)
  EXPECT_EQ(measured_spread(spread_fig("a.b", 100, 101, 140)), 0.0);  // not bracketing
  EXPECT_EQ(measured_spread(spread_fig("a.b", 0, -1, 1)), 0.0);
  Figure none = failed("a.b", "GB/s");
  EXPECT_EQ(measured_spread(none), 0.0);
}

TEST(Baseline, TheBaselinesSpreadWidensTheBand) {
  // The baseline measured 100 with an IQR of 10 (10 %); the tolerance is 3 %.
  const Figure base = spread_fig("f.x", 100, 95, 105);
  // Within the spread, beyond the tolerance: passes, and says why.
  BaselineItem it = judged(base, fig("f.x", 92, "GB/s"), 0.03);
  EXPECT_EQ(it.verdict, Verdict::within);
  EXPECT_NE(it.reason.find("baseline's spread (IQR 10.0 % of median)"), std::string::npos)
      << it.reason;
  EXPECT_NEAR(it.spread, 0.10, 1e-12);
  EXPECT_EQ(judged(base, fig("f.x", 90, "GB/s"), 0.03).verdict, Verdict::within);  // at it
  // Beyond both: a regression or an improvement.
  EXPECT_EQ(judged(base, fig("f.x", 89, "GB/s"), 0.03).verdict, Verdict::regressed);
  EXPECT_EQ(judged(base, fig("f.x", 85, "GB/s"), 0.03).verdict, Verdict::regressed);
  EXPECT_EQ(judged(base, fig("f.x", 111, "GB/s"), 0.03).verdict, Verdict::improved);
  // A tolerance wider than the spread still counts.
  EXPECT_EQ(judged(base, fig("f.x", 85, "GB/s"), 0.20).verdict, Verdict::within);
  // Lower is better: a latency 8 % up within a 10 % spread passes, 12 % up does not.
  const Figure lat = spread_fig("f.lat", 100, 95, 105, /*higher=*/false);
  EXPECT_EQ(judged(lat, fig("f.lat", 108, "GB/s", false), 0.03).verdict, Verdict::within);
  EXPECT_EQ(judged(lat, fig("f.lat", 112, "GB/s", false), 0.03).verdict, Verdict::regressed);
  // Within the tolerance itself: no reason.
  EXPECT_TRUE(judged(base, fig("f.x", 98, "GB/s"), 0.03).reason.empty());
}

TEST(Baseline, TheJudgedFileCannotClaimASpread) {
  // The new file claims a huge spread for itself; only the baseline's counts.
  const Figure claims = spread_fig("f.x", 85, 1, 1000);
  EXPECT_EQ(judged(fig("f.x", 100, "GB/s"), claims, 0.03).verdict, Verdict::regressed);
  EXPECT_EQ(judged(spread_fig("f.x", 100, 95, 105), claims, 0.03).verdict, Verdict::regressed);
  // Against a baseline of one sample, the tolerance alone.
  EXPECT_EQ(judged(fig("f.x", 100, "GB/s"), spread_fig("f.x", 96, 50, 150), 0.03).verdict,
            Verdict::regressed);
  // The committed H200 run, every figure 50 % worse and claiming a 1000 % spread: each one
  // the gate sees regresses.
  const CompareInput h = input_from_result(load_h200(), kH200.string());
  CompareInput worse = h;
  int gated = 0;
  for (Figure& f : worse.figures) {
    if (!f.status.ok() || !f.value) continue;
    f.value->median *= f.higher_is_better ? 0.5 : 1.5;
    f.value->q1 = f.value->median * -10;
    f.value->q3 = f.value->median * 10;
    f.value->n = 100;
    gated += !is_host_figure(f.id) && !(f.resolution && *f.resolution >= 0.5);
  }
  ASSERT_GT(gated, 50);
  EXPECT_EQ(compare_baseline(h, worse, 0.05).regressions(), gated);
}

TEST(Baseline, HostFiguresAreNotGatedUnlessAskedFor) {
  EXPECT_TRUE(is_host_figure("host.memory.write"));
  EXPECT_TRUE(is_host_figure("host.memory.write_streaming"));
  EXPECT_TRUE(is_host_figure("bandwidth.host.h2d_pageable"));
  EXPECT_TRUE(is_host_figure("bandwidth.host.d2h_pageable"));
  EXPECT_FALSE(is_host_figure("bandwidth.host.h2d_pinned"));
  EXPECT_FALSE(is_host_figure("links.host.h2d.all"));
  EXPECT_TRUE(is_host_figure("atomics.host.pingpong"));
  EXPECT_TRUE(is_host_figure("atomics.host.pingpong.cycles"));
  EXPECT_FALSE(is_host_figure("atomics.global.cas_pingpong"));
  EXPECT_FALSE(is_host_figure("bandwidth.dram.read"));
  EXPECT_FALSE(is_host_figure("hostile.memory.read"));
  EXPECT_TRUE(is_host_figure("frontend.launch.round_trip"));
  EXPECT_TRUE(is_host_figure("frontend.launch.rate.plain"));
  EXPECT_FALSE(is_host_figure("frontend.dispatch.first_wave"));

  const CompareInput base =
      input("GPU", 1, 1,
            {fig("host.memory.write", 46, "GB/s"), fig("bandwidth.host.h2d_pageable", 14, "GB/s"),
             fig("bandwidth.host.h2d_pinned", 55, "GB/s"), fig("bandwidth.dram.read", 3000, "GB/s"),
             fig("host.memory.read", 90, "GB/s")});
  // A quick run on a busy host: host memory -24 %, pageable copies -37 %, the host read gone;
  // the GPU and its link unchanged.
  const CompareInput quick = input(
      "GPU", 1, 1,
      {fig("host.memory.write", 35, "GB/s"), fig("bandwidth.host.h2d_pageable", 8.8, "GB/s"),
       fig("bandwidth.host.h2d_pinned", 55, "GB/s"), fig("bandwidth.dram.read", 3000, "GB/s")});
  const BaselineReport r = compare_baseline(base, quick, 0.03);
  std::map<std::string, const BaselineItem*> v;
  for (const BaselineItem& it : r.items) v[it.id] = &it;
  EXPECT_EQ(r.regressions(), 0);
  EXPECT_EQ(r.not_gated(), 3);
  EXPECT_FALSE(r.include_host);
  EXPECT_EQ(v.at("host.memory.write")->verdict, Verdict::not_gated);
  EXPECT_EQ(v.at("host.memory.write")->reason, "would be regressed");
  ASSERT_TRUE(v.at("host.memory.write")->change);
  EXPECT_NEAR(*v.at("host.memory.write")->change, 35.0 / 46 - 1, 1e-12);
  EXPECT_EQ(v.at("bandwidth.host.h2d_pageable")->verdict, Verdict::not_gated);
  EXPECT_EQ(v.at("host.memory.read")->verdict, Verdict::not_gated);
  EXPECT_NE(v.at("host.memory.read")->reason.find("missing from the new run"), std::string::npos);
  EXPECT_EQ(v.at("bandwidth.host.h2d_pinned")->verdict, Verdict::within);
  EXPECT_EQ(to_string(Verdict::not_gated), "not gated (host)");
  EXPECT_FALSE(is_regression(Verdict::not_gated));
  // Asked for, they are gated like any other figure.
  const BaselineReport all = compare_baseline(base, quick, 0.03, false, /*include_host=*/true);
  EXPECT_EQ(all.regressions(), 3);
  EXPECT_EQ(all.not_gated(), 0);
  // The pinned link is a GPU figure: gated by default.
  CompareInput slow_link = quick;
  for (Figure& f : slow_link.figures)
    if (f.id == "bandwidth.host.h2d_pinned") f.value->median = 40;
  EXPECT_EQ(compare_baseline(base, slow_link, 0.03).regressions(), 1);
  // The terminal lists them apart and counts them.
  std::ostringstream os;
  report::print_baseline(os, r);
  EXPECT_NE(os.str().find("Not gated (host; --include-host gates them) (3):"), std::string::npos)
      << os.str();
  EXPECT_NE(os.str().find("3 not gated (host)."), std::string::npos) << os.str();
  EXPECT_NE(os.str().find("RESULT: no regression"), std::string::npos);
}

TEST(Baseline, CommittedH200HostFiguresMovedAlone) {
  // The fixture run against a copy whose host-side figures are 30 % worse: no regression by
  // default, one per host figure with --include-host.
  const CompareInput h = input_from_result(load_h200(), kH200.string());
  CompareInput worse = h;
  int host = 0;
  for (Figure& f : worse.figures)
    if (is_host_figure(f.id) && f.status.ok() && f.value) {
      f.value->median *= f.higher_is_better ? 0.7 : 1.3;
      ++host;
    }
  ASSERT_GE(host, 3);
  EXPECT_EQ(compare_baseline(h, worse, 0.03).regressions(), 0);
  EXPECT_EQ(compare_baseline(h, worse, 0.03, false, true).regressions(), host);
}

// ---- results as inputs ----

TEST(Compare, SchemaOneResultAsInput) {
  const CompareInput h = input_from_result(load_h200(), kH200.string());
  EXPECT_EQ(h.units, 132);
  ASSERT_TRUE(h.clock_mhz);
  EXPECT_NEAR(*h.clock_mhz, 1980, 5);
  EXPECT_EQ(h.clock_source, "measured");
  // Every id the tool writes has the shape the reference database is checked against, and
  // every unit is one the comparison knows.
  const auto& units = known_units();
  for (const Figure& f : h.figures) {
    EXPECT_TRUE(well_formed_figure_id(f.id)) << f.id;
    EXPECT_NE(std::find(units.begin(), units.end(), f.unit), units.end()) << f.id << " " << f.unit;
    if (f.per_sm_per_clk)
      EXPECT_NE(std::find(units.begin(), units.end(), f.per_sm_per_clk_unit), units.end()) << f.id;
  }
  const Comparison c = compare({h, h});
  ASSERT_FALSE(c.rows.empty());
  for (const CompareRow& r : c.rows)
    if (r.cells[1].ratio) EXPECT_DOUBLE_EQ(*r.cells[1].ratio, 1.0) << r.id;
  EXPECT_FALSE(latency_series(c.inputs, "global", true).empty());
  EXPECT_FALSE(latency_series(c.inputs, "global", false).empty());
  EXPECT_FALSE(bandwidth_series(c.inputs, "read", false).empty());
  // Writers: CSV has one line per figure and input.
  const fs::path dir =
      fs::temp_directory_path() / ("gd-compare-test-" + std::to_string(::getpid()));
  report::write_comparison_csv(dir / "c.csv", c);
  std::ifstream csv(dir / "c.csv");
  std::string line;
  int lines = 0;
  while (std::getline(csv, line)) ++lines;
  EXPECT_GE(lines, 1 + 2 * static_cast<int>(c.rows.size()));
  fs::remove_all(dir);
}

TEST(Compare, SchemaOneAndSchemaTwoOfOneRunAgree) {
  // The fixture is schema 1 (figures derived on loading); written again it is schema 2
  // (figures saved). Either version compares, and they agree figure for figure.
  const RunResult r1 = load_h200();
  const json j2 = to_json(r1, probe_registry());
  ASSERT_EQ(j2.at("schema_version").get<int>(), kSchemaVersion);
  ASSERT_TRUE(j2.contains("figures"));
  const CompareInput a = input_from_result(r1, "v1.json");
  const CompareInput b = input_from_result(run_result_from_json(j2, probe_registry()), "v2.json");
  EXPECT_EQ(a.figures.size(), b.figures.size());
  const BaselineReport rep = compare_baseline(a, b, 0.0);
  EXPECT_EQ(rep.regressions(), 0);
  for (const BaselineItem& it : rep.items) {
    EXPECT_NE(it.verdict, Verdict::only_new) << it.id;
    EXPECT_NE(it.verdict, Verdict::only_baseline) << it.id;
  }
}

// ---- the reference database ----

TEST(Reference, EveryShippedFileIsValid) {
  ASSERT_TRUE(fs::is_directory(kReferenceDir)) << kReferenceDir;
  int files = 0;
  for (const auto& e : fs::directory_iterator(kReferenceDir)) {
    if (e.path().extension() != ".json") continue;
    ++files;
    std::ifstream in(e.path());
    json j;
    ASSERT_NO_THROW(j = json::parse(in)) << e.path();
    const auto problems = validate_reference_json(j);
    std::string all;
    for (const auto& p : problems) all += "\n  " + p;
    EXPECT_TRUE(problems.empty()) << e.path() << all;
    // Every figure has id, value, unit and a source that names a document and a title.
    std::set<std::string> ids;
    for (const json& f : j["figures"]) {
      EXPECT_TRUE(f.contains("id") && f.contains("value") && f.contains("unit") &&
                  f.contains("source"))
          << e.path() << " " << f.dump();
      EXPECT_TRUE(ids.insert(f.value("id", "")).second)
          << e.path() << " duplicate " << f.value("id", "");
    }
    EXPECT_FALSE(ids.empty()) << e.path() << " has no figure";
  }
  EXPECT_GE(files, 18);
  const ReferenceDb db = load_reference_dir(kReferenceDir);
  std::string errors;
  for (const auto& e : db.errors) errors += "\n  " + e;
  EXPECT_TRUE(db.errors.empty()) << errors;
  EXPECT_EQ(static_cast<int>(db.gpus.size()), files);
  for (const char* name :
       {"GTX 980 Ti", "GTX 680", "Tesla K80", "RTX PRO 6000 Blackwell", "RX 9070", "R9 390",
        "HD 7950", "Apple M1", "Apple M2", "GTX 560 Ti", "Quadro 600",
        // published Hopper microbenchmark papers (Luo et al. 2024 / 2025)
        "H800 PCIe (Luo et al. 2024)", "A100 PCIe (Luo et al. 2024)", "RTX 4090 (Luo et al. 2024)",
        "H800 PCIe (Luo et al. 2025)", "A100 PCIe (Luo et al. 2025)"})
    EXPECT_TRUE(find_reference(db, name)) << name;
  // Names are unique, also against other files' aliases.
  std::set<std::string> names;
  for (const ReferenceGpu& g : db.gpus) {
    EXPECT_TRUE(names.insert(g.name).second) << g.name;
    EXPECT_EQ(find_reference(db, g.name), &g) << g.name;
    for (const auto& a : g.aliases) EXPECT_EQ(find_reference(db, a), &g) << a;
    EXPECT_FALSE(g.sources.empty()) << g.name;
    (void)input_from_reference(g);
  }
}

TEST(Reference, LookupIsCaseInsensitive) {
  const ReferenceDb db = load_reference_dir(kReferenceDir);
  ASSERT_TRUE(find_reference(db, "gtx 980 ti"));
  EXPECT_EQ(find_reference(db, "gtx 980 ti")->name, "GTX 980 Ti");
  EXPECT_EQ(find_reference(db, "TESLA K80")->name, "Tesla K80");
  EXPECT_EQ(find_reference(db, "k80")->name, "Tesla K80");    // alias
  EXPECT_EQ(find_reference(db, "rx-9070")->name, "RX 9070");  // file stem
  EXPECT_FALSE(find_reference(db, "GTX 9800"));
}

TEST(Reference, ValidatorRejectsBadDocuments) {
  EXPECT_TRUE(validate_reference_json(minimal_reference()).empty());
  auto broken = [](auto edit) {
    json j = minimal_reference();
    edit(j);
    return validate_reference_json(j);
  };
  EXPECT_FALSE(
      broken([](json& j) { j["figures"].push_back(j["figures"][0]); }).empty());  // duplicate
  EXPECT_FALSE(broken([](json& j) { j["figures"][0]["unit"] = "parsecs"; }).empty());
  EXPECT_FALSE(broken([](json& j) { j["figures"][0]["id"] = "Latency..L2"; }).empty());
  EXPECT_FALSE(broken([](json& j) { j["figures"][0].erase("source"); }).empty());
  EXPECT_FALSE(broken([](json& j) { j["figures"][0]["source"] = "nowhere"; }).empty());
  EXPECT_FALSE(broken([](json& j) { j["figures"][0].erase("value"); }).empty());
  EXPECT_FALSE(broken([](json& j) { j["figures"][0]["value"] = "100"; }).empty());
  EXPECT_FALSE(broken([](json& j) { j["figures"][1]["unit"] = "ns"; }).empty());  // .cycles in ns
  EXPECT_FALSE(broken([](json& j) { j["figures"][3]["unit"] = "ns"; }).empty());  // bandwidth in ns
  EXPECT_FALSE(broken([](json& j) { j["figures"][0]["qualifier"] = "roughly"; }).empty());
  EXPECT_FALSE(broken([](json& j) { j["figures"][0].erase("method"); }).empty());
  EXPECT_FALSE(broken([](json& j) { j.erase("name"); }).empty());
  EXPECT_FALSE(broken([](json& j) { j["format_version"] = 2; }).empty());
  EXPECT_FALSE(broken([](json& j) { j["facts"]["compute_units"]["value"] = 0; }).empty());
  EXPECT_THROW(reference_from_json(json::parse("{}")), std::runtime_error);
  EXPECT_TRUE(well_formed_figure_id("latency.global.L2_near.cycles"));
  EXPECT_TRUE(well_formed_figure_id("compute.fp32.fma"));
  EXPECT_FALSE(well_formed_figure_id("compute"));
  EXPECT_FALSE(well_formed_figure_id("Compute.fp32"));
  EXPECT_FALSE(well_formed_figure_id("compute.fp32 fma"));
  EXPECT_FALSE(well_formed_figure_id("compute.fp32."));
}

TEST(Reference, FolderFoundNextToTheExecutable) {
  const fs::path root = fs::temp_directory_path() / ("gd-refdir-" + std::to_string(::getpid()));
  fs::create_directories(root / "bin");
  fs::create_directories(root / "build" / "sub");
  fs::create_directories(root / "data" / "reference");
  ::unsetenv("GD_REFERENCE_DIR");
  auto found = find_reference_dir(root / "bin" / "gpudissect");  // <exe>/../data/reference
  ASSERT_TRUE(found);
  EXPECT_EQ(fs::canonical(*found), fs::canonical(root / "data" / "reference"));
  found = find_reference_dir(root / "build" / "sub" / "gpudissect");  // <exe>/../../data/reference
  ASSERT_TRUE(found);
  EXPECT_EQ(fs::canonical(*found), fs::canonical(root / "data" / "reference"));
  ::setenv("GD_REFERENCE_DIR", "/somewhere/else", 1);
  EXPECT_EQ(*find_reference_dir(root / "bin" / "gpudissect"), fs::path("/somewhere/else"));
  ::unsetenv("GD_REFERENCE_DIR");
  fs::remove_all(root / "data");
  EXPECT_FALSE(find_reference_dir(root / "bin" / "gpudissect"));
  EXPECT_TRUE(find_reference_dir(root / "bin" / "gpudissect", kReferenceDir));  // the fallback
  fs::remove_all(root);
}

// An unstable figure is judged by its median: within the band it passes (saying it was
// unstable), beyond it it regresses; it never widens its own band.
TEST(Baseline, AnUnstableFigureIsJudgedByItsMedian) {
  const CompareInput h = input_from_result(load_h200(), kH200.string());
  CompareInput noisy = h;
  Figure* dram = nullptr;
  for (Figure& f : noisy.figures)
    if (f.id == "bandwidth.dram.read") dram = &f;
  ASSERT_NE(dram, nullptr);
  ASSERT_TRUE(dram->status.ok());
  dram->status = {StatusCode::unstable, "relative spread (IQR over median) 12 %"};
  BaselineReport r = compare_baseline(h, noisy, 0.03);
  EXPECT_EQ(r.regressions(), 0);
  for (const BaselineItem& it : r.items)
    if (it.id == "bandwidth.dram.read") EXPECT_NE(it.reason.find("unstable"), std::string::npos);
  dram->value->median *= 0.8;
  dram->value->q1 = 0;
  dram->value->q3 = 1e9;  // its own huge spread: not read
  r = compare_baseline(h, noisy, 0.03);
  EXPECT_EQ(r.regressions(), 1);
}

// --quick skips some figures on purpose (status skipped): with --allow-missing that is a
// figure left out, listed; without it, still a failure.
TEST(Baseline, ASkippedFigureCountsAsMissingWithAllowMissing) {
  const CompareInput base = input("GPU", 1, 1,
                                  {fig("links.p2p.latency.chase.best_sm", 800, "ns"),
                                   fig("bandwidth.dram.read", 3000, "GB/s")});
  CompareInput quick = base;
  quick.figures[0].status = {StatusCode::skipped,
                             "not measured (links.chase_sms = 0, as with quick)"};
  quick.figures[0].value.reset();
  const BaselineReport partial = compare_baseline(base, quick, 0.03, /*allow_missing=*/true);
  EXPECT_EQ(partial.regressions(), 0);
  ASSERT_FALSE(partial.items.empty());
  bool listed = false;
  for (const BaselineItem& it : partial.items)
    if (it.id == "links.p2p.latency.chase.best_sm") {
      listed = true;
      EXPECT_EQ(it.verdict, Verdict::only_baseline);
      EXPECT_NE(it.reason.find("skipped"), std::string::npos) << it.reason;
    }
  EXPECT_TRUE(listed);
  EXPECT_EQ(compare_baseline(base, quick, 0.03, /*allow_missing=*/false).regressions(), 1);
}
