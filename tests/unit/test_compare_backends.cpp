// One GPU through several backends: which runs are one GPU, the cross-backend comparison
// (tolerance edges, units, ids ok on one side only, the instruction listings), the parity
// table, and their writers line by line on committed runs cut down to a few figures per
// probe (tests/fixtures/backends/, make_backends.py; the pattern tables beside them).
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <sstream>

#include "compare_report.hpp"
#include "compute/compute.hpp"
#include "gpudissect/compare_backends.hpp"
#include "gpudissect/json_read.hpp"
#include "output_lines.hpp"
#include "registry.hpp"

namespace fs = std::filesystem;
using json = nlohmann::json;
using namespace gd;
using output_lines::lines_match;
using output_lines::read_file;
using output_lines::split;

namespace {

const fs::path kDir = fs::path(GD_FIXTURES) / "backends";

CompareInput load(const std::string& name) {
  const fs::path p = kDir / name;
  return input_from_result(run_result_from_json(read_json_file(p), probe_registry()),
                           "tests/fixtures/backends/" + name);
}

std::vector<std::string> patterns(const std::string& name) {
  const fs::path p = kDir / name;
  EXPECT_TRUE(fs::is_regular_file(p)) << p;
  return split(read_file(p.string()));
}

Figure fig(const std::string& id, double v, const std::string& unit) {
  Figure f;
  f.id = id;
  f.label = id;
  f.value = single_value(v);
  f.unit = unit;
  return f;
}

Figure not_ok(const std::string& id, const std::string& status, const std::string& reason) {
  Figure f;
  f.id = id;
  f.label = id;
  f.unit = "ns";
  f.status = {gd::parse_status(status), reason};
  return f;
}

// A result of `backend` on a device with that name and UUID (as extra["uuid"]).
CompareInput run_of(const std::string& backend, const std::string& name, const std::string& uuid,
                    std::vector<Figure> figures = {}) {
  RunResult r;
  r.device.backend = backend;
  r.device.name = name;
  if (!uuid.empty()) r.device.extra["uuid"] = uuid;
  r.figures = std::move(figures);
  return input_from_result(std::move(r), backend + ".json");
}

const BackendItem* item(const CrossBackendReport& r, const std::string& id) {
  for (const BackendItem& it : r.items)
    if (it.id == id) return &it;
  return nullptr;
}

// A fresh file name under the temporary folder, removed with the test.
struct Scratch {
  fs::path dir = fs::temp_directory_path() / ("gd-xbackend-" + std::to_string(::getpid()));
  Scratch() { fs::create_directories(dir); }
  ~Scratch() {
    std::error_code ec;
    fs::remove_all(dir, ec);
  }
};

}  // namespace

// ---- one GPU ----

TEST(CrossBackend, OneGpuByUuidAsEachBackendSpellsItElseByName) {
  const auto cuda = run_of("cuda", "NVIDIA H200", "GPU-42220441-a8a1-f256-9497-df80bad21d49");
  const auto vk = run_of("vulkan", "NVIDIA H200", "42220441A8A1F2569497DF80BAD21D49");
  EXPECT_EQ(device_uuid(cuda), "42220441a8a1f2569497df80bad21d49");
  EXPECT_EQ(same_gpu(cuda, vk), GpuMatch::uuid);
  EXPECT_TRUE(cross_backend_inputs(cuda, vk));
  // OpenCL gives no UUID: the device name decides, case and blanks aside.
  const auto cl = run_of("opencl", " nvidia h200 ", "");
  EXPECT_EQ(device_uuid(cl), "");
  EXPECT_EQ(same_gpu(cuda, cl), GpuMatch::name);
  // Another board of the model: UUIDs differ, the name matches.
  const auto other = run_of("vulkan", "NVIDIA H200", "720306a79665294dd3368c0269992d07");
  EXPECT_EQ(same_gpu(cuda, other), GpuMatch::name);
  // Same UUID, names spelled differently by two APIs: still one GPU.
  EXPECT_EQ(same_gpu(cuda, run_of("vulkan", "H200 (renamed)", "42220441a8a1f2569497df80bad21d49")),
            GpuMatch::uuid);
  EXPECT_EQ(same_gpu(cuda, run_of("opencl", "NVIDIA H100 80GB HBM3", "")), GpuMatch::none);
  EXPECT_FALSE(cross_backend_inputs(cuda, run_of("opencl", "NVIDIA H100 80GB HBM3", "")));
  // Same backend, or a backend unknown: not on its own.
  EXPECT_FALSE(cross_backend_inputs(cuda, run_of("cuda", "NVIDIA H200", "")));
  EXPECT_FALSE(cross_backend_inputs(cuda, run_of("", "NVIDIA H200", "")));
  // Anything but 16 bytes of hex is no UUID.
  EXPECT_EQ(device_uuid(run_of("cuda", "x", "GPU-1234")), "");
  EXPECT_EQ(device_uuid(run_of("cuda", "x", "zz220441a8a1f2569497df80bad21d49")), "");
}

TEST(CrossBackend, ListingsOneEntryALine) {
  Figure f = fig("latency.global.L1", 1, "ns");
  f.instruction = "s_load_dword s0\r\n\n  v_add_u32 v1, v0, v2\n";
  const auto in = run_of("vulkan", "G", "");
  EXPECT_EQ(instruction_listing(in, f),
            (std::vector<std::string>{"s_load_dword s0", "  v_add_u32 v1, v0, v2"}));
  f.instruction = "";
  EXPECT_TRUE(instruction_listing(in, f).empty());
  // A compute figure without its table row (the probe's data left out): the figure's own.
  Figure c = fig("compute.fp32.fma.latency", 4, "cycles");
  c.instruction = "FFMA";
  EXPECT_EQ(instruction_listing(in, c), std::vector<std::string>{"FFMA"});
}

// A latency figure lists its own loop (one chain), which ptxas may compile otherwise than the
// table's loop; the JSON keeps both.
TEST(CrossBackend, LatencyFigureListsItsOwnLoop) {
  RunResult r;
  r.device.backend = "cuda";
  r.device.name = "G";
  ComputeProbeResult c;
  ComputeFigure row;
  row.op = "fp16x2.fma";
  row.opcodes = {"HFMA2 x256", "HFMA2.MMA x256"};
  row.latency_opcodes = {"HFMA2.MMA x128", "BRA x1"};
  c.table.push_back(row);
  r.put(c);
  const auto in = input_from_result(std::move(r), "cuda.json");
  EXPECT_EQ(instruction_listing(in, fig("compute.fp16x2.fma.latency", 8, "cycles")),
            row.latency_opcodes);
  EXPECT_EQ(instruction_listing(in, fig("compute.fp16x2.fma", 126, "ops/clk/SM")), row.opcodes);
  const json j = row;
  EXPECT_EQ(j.get<ComputeFigure>().latency_opcodes, row.latency_opcodes);
  EXPECT_FALSE(json(ComputeFigure{}).contains("latency_opcodes"));
}

// ---- verdicts ----

TEST(CrossBackend, ToleranceEdgesUnitsAndZeros) {
  const auto a =
      run_of("cuda", "G", "",
             {fig("x.at_edge", 100, "ns"), fig("x.past_edge", 100, "ns"), fig("x.units", 1, "TB/s"),
              fig("x.other_units", 1, "ns"), fig("x.zero", 0, "ns"), fig("x.zero_one", 0, "ns")});
  const auto b = run_of(
      "opencl", "G", "",
      {fig("x.at_edge", 105, "ns"), fig("x.past_edge", 105.01, "ns"), fig("x.units", 1030, "GB/s"),
       fig("x.other_units", 1, "GB/s"), fig("x.zero", 0, "ns"), fig("x.zero_one", 1, "ns")});
  const auto r = compare_backends(a, b, 0.05);
  ASSERT_EQ(r.items.size(), 6u);
  EXPECT_EQ(item(r, "x.at_edge")->verdict, BackendVerdict::within);  // exactly at it
  EXPECT_EQ(item(r, "x.past_edge")->verdict, BackendVerdict::differs);
  EXPECT_NEAR(*item(r, "x.past_edge")->ratio, 1.0501, 1e-9);
  // Converted to the first run's unit before the ratio.
  EXPECT_EQ(item(r, "x.units")->verdict, BackendVerdict::within);
  EXPECT_NEAR(*item(r, "x.units")->b, 1.03, 1e-12);
  EXPECT_EQ(item(r, "x.units")->unit, "TB/s");
  EXPECT_EQ(item(r, "x.other_units")->verdict, BackendVerdict::not_comparable);
  EXPECT_NE(item(r, "x.other_units")->note.find("units differ"), std::string::npos);
  EXPECT_EQ(item(r, "x.zero")->verdict, BackendVerdict::within);
  EXPECT_EQ(item(r, "x.zero_one")->verdict, BackendVerdict::differs);
  EXPECT_FALSE(item(r, "x.zero_one")->ratio);
  EXPECT_EQ(r.common(), 6);
  // A wider tolerance lets the 5.01 % through.
  EXPECT_EQ(item(compare_backends(a, b, 0.06), "x.past_edge")->verdict, BackendVerdict::within);
}

// A difference no larger than the step the first run's figure states (a capacity between
// sweep points) is counted apart, and only the first run's step counts: the second run's
// cannot widen it.
TEST(CrossBackend, ADifferenceInsideTheFirstRunsStepIsCountedApart) {
  Figure cap = fig("x.capacity", 100, "bytes"), wide = fig("x.too_far", 100, "bytes");
  cap.resolution = wide.resolution = 0.10;
  Figure own = fig("x.second_claims", 100, "bytes");
  const auto a = run_of("cuda", "G", "", {cap, wide, own, fig("x.plain", 100, "bytes")});
  Figure claims = fig("x.second_claims", 109, "bytes");
  claims.resolution = 0.5;
  const auto b = run_of("opencl", "G", "",
                        {fig("x.capacity", 109, "bytes"), fig("x.too_far", 111, "bytes"), claims,
                         fig("x.plain", 109, "bytes")});
  const auto r = compare_backends(a, b, 0.05);
  EXPECT_EQ(item(r, "x.capacity")->verdict, BackendVerdict::differs);
  EXPECT_TRUE(item(r, "x.capacity")->inside_step);
  EXPECT_NE(item(r, "x.capacity")->note.find("step (10.0 %)"), std::string::npos)
      << item(r, "x.capacity")->note;
  EXPECT_FALSE(item(r, "x.too_far")->inside_step);
  EXPECT_FALSE(item(r, "x.second_claims")->inside_step);
  EXPECT_FALSE(item(r, "x.plain")->inside_step);
  EXPECT_EQ(r.inside_step(), 1);
  const ParityTable t = backend_parity({a, b}, 0.05);
  EXPECT_EQ(*t.total.cells[1].common, 4);
  EXPECT_EQ(*t.total.cells[1].agree, 0);
  EXPECT_EQ(*t.total.cells[1].inside_step, 1);
}

// A compute rate measured at SM clocks further apart than the tolerance is judged per clock
// (an instruction's rate is a count per clock; the clock was the run's condition), and the
// note names both clocks. Close clocks, another probe, or a side without its clock: the value.
TEST(CrossBackend, ComputeRatesAtDifferentClocksAreJudgedPerClock) {
  auto rate = [](const std::string& id, double tops, double per_clk, std::optional<double> mhz) {
    Figure f = fig(id, tops, "Tinst/s");
    f.per_sm_per_clk = per_clk;
    f.per_sm_per_clk_unit = "ops/clk/SM";
    f.clock_mhz = mhz;
    return f;
  };
  const auto a = run_of(
      "cuda", "G", "",
      {rate("compute.int32.popc", 4.18, 16.0, 1980), rate("compute.int32.clz", 4.18, 16.0, 1980),
       rate("compute.int32.brev", 4.18, 16.0, 1980), rate("bandwidth.l2.read", 4.18, 16.0, 1980)});
  const auto b = run_of(
      "vulkan", "G", "",
      {rate("compute.int32.popc", 3.36, 15.99, 1590), rate("compute.int32.clz", 3.36, 12.0, 1590),
       rate("compute.int32.brev", 3.36, 15.99, std::nullopt),
       rate("bandwidth.l2.read", 3.36, 15.99, 1590)});
  const auto r = compare_backends(a, b, 0.05);
  const BackendItem* popc = item(r, "compute.int32.popc");
  EXPECT_EQ(popc->verdict, BackendVerdict::within);
  EXPECT_EQ(popc->unit, "ops/clk/SM");
  EXPECT_NEAR(*popc->ratio, 15.99 / 16.0, 1e-12);
  EXPECT_NE(popc->note.find("per clock: [1] at 1980 MHz, [2] at 1590 MHz"), std::string::npos)
      << popc->note;
  // Per clock and still apart: differs, in per-clock units.
  EXPECT_EQ(item(r, "compute.int32.clz")->verdict, BackendVerdict::differs);
  EXPECT_NEAR(*item(r, "compute.int32.clz")->ratio, 0.75, 1e-12);
  // No clock on one side, or not a compute rate: the values.
  EXPECT_EQ(item(r, "compute.int32.brev")->verdict, BackendVerdict::differs);
  EXPECT_EQ(item(r, "compute.int32.brev")->unit, "Tinst/s");
  EXPECT_EQ(item(r, "bandwidth.l2.read")->verdict, BackendVerdict::differs);
  // Clocks within the tolerance of each other: the values, as before.
  const auto near = run_of("vulkan", "G", "", {rate("compute.int32.popc", 3.36, 15.99, 1960)});
  EXPECT_EQ(item(compare_backends(a, near, 0.05), "compute.int32.popc")->unit, "Tinst/s");
}

TEST(CrossBackend, AnIdOkOnOneSideIsListedWithTheOtherSidesStatus) {
  const auto a = run_of("cuda", "G", "",
                        {fig("p.both", 1, "ns"), fig("p.first_only", 2, "ns"),
                         not_ok("p.neither", "error", "broken"), fig("q.unsupported_b", 3, "ns")});
  const auto b = run_of("vulkan", "G", "",
                        {fig("p.both", 1, "ns"), not_ok("p.neither", "unsupported", "no"),
                         not_ok("q.unsupported_b", "unsupported", "no GLSL form of this op"),
                         fig("r.second_only", 4, "ns"), not_ok("p.first_only", "unstable", "")});
  const auto r = compare_backends(a, b, 0.05);
  EXPECT_FALSE(item(r, "p.neither"));  // ok on neither side: not listed
  ASSERT_TRUE(item(r, "p.first_only"));
  EXPECT_EQ(item(r, "p.first_only")->verdict, BackendVerdict::only_first);
  EXPECT_EQ(item(r, "p.first_only")->status_b.name(), "unstable");  // not ok counts as not ok
  EXPECT_EQ(item(r, "q.unsupported_b")->status_b.reason, "no GLSL form of this op");
  ASSERT_TRUE(item(r, "r.second_only"));
  EXPECT_EQ(item(r, "r.second_only")->verdict, BackendVerdict::only_second);
  EXPECT_EQ(item(r, "r.second_only")->status_a.name(), "absent");
  EXPECT_EQ(*item(r, "r.second_only")->b, 4);
  EXPECT_EQ(r.count(BackendVerdict::only_first), 2);
  EXPECT_EQ(r.count(BackendVerdict::only_second), 1);
  EXPECT_EQ(r.common(), 1);
  // The writer lists it with the other side's status and reason.
  std::ostringstream os;
  report::print_cross_backend(os, r);
  EXPECT_NE(os.str().find("q.unsupported_b  ok in [1] only (3 ns); [2]: unsupported: no GLSL "
                          "form of this op"),
            std::string::npos)
      << os.str();
  EXPECT_NE(os.str().find("r.second_only    ok in [2] only (4 ns); [1]: absent"), std::string::npos)
      << os.str();
}

// CUDA's texture path and OpenCL's and Vulkan's image path are one fetch under two names:
// paired where each run has only its own name, in either order; never where a run has both.
TEST(CrossBackend, TexturePathMeetsImagePath) {
  const auto cuda = run_of("cuda", "G", "",
                           {fig("latency.texture.L1.cycles", 88, "cycles"),
                            fig("latency.texture.L2_far.cycles", 556, "cycles"),
                            fig("latency.global.L1.cycles", 32, "cycles")});
  const auto vk = run_of(
      "vulkan", "G", "",
      {fig("latency.image.L1.cycles", 88, "cycles"),
       fig("latency.image.L2_far.cycles", 620, "cycles"),
       fig("latency.image.L9.cycles", 1, "cycles"), fig("latency.global.L1.cycles", 32, "cycles")});
  const auto r = compare_backends(cuda, vk, 0.05);
  ASSERT_TRUE(item(r, "latency.texture.L1.cycles"));
  EXPECT_EQ(item(r, "latency.texture.L1.cycles")->verdict, BackendVerdict::within);
  EXPECT_NE(item(r, "latency.texture.L1.cycles")->note.find("[2] as latency.image.L1.cycles"),
            std::string::npos);
  EXPECT_EQ(item(r, "latency.texture.L2_far.cycles")->verdict, BackendVerdict::differs);
  EXPECT_FALSE(item(r, "latency.image.L1.cycles"));  // not listed again as [2]'s alone
  ASSERT_TRUE(item(r, "latency.image.L9.cycles"));   // no texture counterpart: [2]'s alone
  EXPECT_EQ(item(r, "latency.image.L9.cycles")->verdict, BackendVerdict::only_second);
  EXPECT_EQ(r.common(), 3);

  const auto back = compare_backends(vk, cuda, 0.05);  // the other way round
  ASSERT_TRUE(item(back, "latency.image.L1.cycles"));
  EXPECT_EQ(item(back, "latency.image.L1.cycles")->verdict, BackendVerdict::within);
  EXPECT_FALSE(item(back, "latency.texture.L1.cycles"));

  auto both = vk;  // a run with both names compares each with its own
  both.figures.push_back(fig("latency.texture.L1.cycles", 90, "cycles"));
  const auto r2 = compare_backends(cuda, both, 0.05);
  EXPECT_TRUE(item(r2, "latency.texture.L1.cycles")->note.empty());
  EXPECT_EQ(item(r2, "latency.image.L1.cycles")->verdict, BackendVerdict::only_second);
}

// ---- the committed H100 runs through CUDA and OpenCL ----

TEST(CrossBackend, H100CudaAgainstOpenClFromTheCommittedRuns) {
  const auto cuda = load("h100-cuda.json"), cl = load("h100-opencl.json");
  ASSERT_TRUE(cross_backend_inputs(cuda, cl));
  const auto r = compare_backends(cuda, cl, 0.05);
  EXPECT_EQ(r.match, GpuMatch::name);  // OpenCL gives no UUID
  // The disagreements are among the differences, the listings beside them.
  const BackendItem* rsqrt = item(r, "compute.sfu.rsqrt.latency");
  ASSERT_TRUE(rsqrt);
  EXPECT_EQ(rsqrt->verdict, BackendVerdict::differs);
  EXPECT_NEAR(*rsqrt->a, 17, 0.01);
  EXPECT_NEAR(*rsqrt->b, 39.75, 0.01);
  ASSERT_FALSE(rsqrt->listing_a.empty());
  EXPECT_EQ(rsqrt->listing_a.front().rfind("MUFU.RSQ x", 0), 0u) << rsqrt->listing_a.front();
  EXPECT_TRUE(rsqrt->listing_b.empty());  // OpenCL's machine code is not read
  const BackendItem* l1 = item(r, "latency.global.L1");
  ASSERT_TRUE(l1);
  EXPECT_EQ(l1->verdict, BackendVerdict::differs);
  EXPECT_NEAR(*l1->ratio, 20.001953125 / 16.1640625, 1e-9);
  EXPECT_EQ(l1->listing_a, std::vector<std::string>{"LDG.E.64.STRONG.SM"});
  EXPECT_EQ(item(r, "compute.fp32.fma")->verdict, BackendVerdict::within);
  EXPECT_EQ(item(r, "frontend.icache.L1i.capacity")->listing_b,
            std::vector<std::string>{"fma (OpenCL C; machine code not read)"});
  // Ok on one side only, both ways, with the other side's status and reason.
  EXPECT_EQ(item(r, "compute.fp16x2.fma")->verdict, BackendVerdict::only_first);
  EXPECT_EQ(item(r, "compute.fp16x2.fma")->status_b.name(), "unsupported");
  EXPECT_EQ(item(r, "compute.int32.add")->status_b.name(), "error");
  EXPECT_EQ(item(r, "latency.global.L2")->verdict, BackendVerdict::only_second);
  EXPECT_EQ(item(r, "latency.global.L2")->status_a.name(), "absent");
  EXPECT_EQ(item(r, "frontend.launch.round_trip")->status_a.name(), "unstable");
  EXPECT_EQ(item(r, "memory.carveout.default.l1_capacity")->status_b.name(), "absent");
}

TEST(CrossBackend, WritersLineByLine) {
  const auto r = compare_backends(load("h100-cuda.json"), load("h100-opencl.json"), 0.05);
  std::ostringstream os;
  report::print_cross_backend(os, r);
  EXPECT_TRUE(lines_match("cross-h100.txt", os.str(), patterns("cross-h100.txt")));
  std::ostringstream verbose;
  report::print_cross_backend(verbose, r, true);
  EXPECT_NE(verbose.str().find("Within the tolerance ("), std::string::npos);
  EXPECT_EQ(os.str().find("Within the tolerance ("), std::string::npos);
  Scratch s;
  report::write_cross_backend_csv(s.dir / "x.csv", r);
  EXPECT_TRUE(lines_match("cross-h100.csv.txt", read_file((s.dir / "x.csv").string()),
                          patterns("cross-h100.csv.txt")));
  report::write_cross_backend_json(s.dir / "x.json", r);
  const json j = read_json_file(s.dir / "x.json");
  EXPECT_EQ(j.at("format"), "gpudissect-cross-backend");
  EXPECT_EQ(j.at("same_gpu"), "name");
  EXPECT_EQ(j.at("counts").at("differs"), r.count(BackendVerdict::differs));
  EXPECT_EQ(j.at("figures").size(), r.items.size());
  EXPECT_EQ(j.at("one_sided_per_probe").at("memory").at("only_first"), 2);
  for (const json& f : j.at("figures"))
    if (f.at("id") == "compute.sfu.rsqrt.latency") {
      EXPECT_EQ(f.at("verdict"), "differs");
      EXPECT_EQ(f.at("instructions").at(1).size(), 0u);
      EXPECT_EQ(f.at("instructions").at(0).at(0).get<std::string>().rfind("MUFU.RSQ", 0), 0u);
    }
}

// Text from the files (labels, instructions, reasons) cannot move the terminal's cursor or
// forge a line, nor break a Markdown table.
TEST(CrossBackend, HostileTextIsMadePlain) {
  Figure fa = fig("p.x", 1, "ns"), fb = fig("p.x", 2, "ns");
  fa.label = "label\x1b[2J\nRESULT: fine";
  fa.instruction = "LDG\r\x1b]0;title\x07";
  auto a = run_of("cuda", "G\x1b[31m|x", "", {fa, not_ok("p.y", "ok", "")});
  auto b = run_of("vulkan", "G\x1b[31m|x", "", {fb, not_ok("p.y", "error", "why\n| forged |")});
  std::ostringstream os;
  report::print_cross_backend(os, compare_backends(a, b, 0.05));
  EXPECT_EQ(os.str().find('\x1b'), std::string::npos);
  EXPECT_EQ(os.str().find('\r'), std::string::npos);
  EXPECT_EQ(os.str().find("\nRESULT"), std::string::npos);
  EXPECT_EQ(os.str().find("\n| forged"), std::string::npos);
  std::ostringstream md;
  report::print_parity_markdown(md, backend_parity({a, b}, 0.05));
  EXPECT_EQ(md.str().find('\x1b'), std::string::npos);  // ESC becomes a blank
  EXPECT_NE(md.str().find("G \\[31m\\|x"), std::string::npos) << md.str();
  for (const std::string& line : split(md.str()))
    if (!line.empty() && line[0] == '|') EXPECT_EQ(line.find(" |x"), std::string::npos) << line;
}

// ---- parity ----

TEST(Parity, H200ThroughCudaOpenClAndVulkan) {
  const ParityTable t = backend_parity(
      {load("h200-cuda.json"), load("h200-opencl.json"), load("h200-vulkan.json")}, 0.05);
  EXPECT_TRUE(t.notes.empty());
  ASSERT_EQ(t.total.cells.size(), 3u);
  // Counted by hand from the fixtures (make_backends.py's ids).
  EXPECT_EQ(t.total.cells[0].ok, 23);
  EXPECT_FALSE(t.total.cells[0].common);
  const ParityRow* compute = nullptr;
  for (const ParityRow& r : t.rows)
    if (r.probe == "compute") compute = &r;
  ASSERT_TRUE(compute);
  EXPECT_EQ(compute->cells[0].ok, 6);
  EXPECT_EQ(compute->cells[1].ok, 4);
  EXPECT_EQ(*compute->cells[1].common, 4);
  EXPECT_EQ(*compute->cells[1].agree, 2);  // fp32.fma and its latency
  EXPECT_EQ(*compute->cells[2].common, 5);
  EXPECT_EQ(*compute->cells[2].agree, 1);
  int ok = 0, common = 0;
  for (const ParityRow& r : t.rows) {
    ok += r.cells[2].ok;
    common += *r.cells[2].common;
  }
  EXPECT_EQ(ok, t.total.cells[2].ok);
  EXPECT_EQ(common, *t.total.cells[2].common);
  // Another GPU than the first is named in a note.
  const ParityTable mixed =
      backend_parity({load("h200-cuda.json"), load("h100-opencl.json")}, 0.05);
  ASSERT_EQ(mixed.notes.size(), 1u);
  EXPECT_NE(mixed.notes[0].find("[2] NVIDIA H100 80GB HBM3 is not the GPU of [1]"),
            std::string::npos);
}

TEST(Parity, WritersLineByLine) {
  const ParityTable t = backend_parity(
      {load("h200-cuda.json"), load("h200-opencl.json"), load("h200-vulkan.json")}, 0.05);
  std::ostringstream text, md;
  report::print_parity(text, t);
  EXPECT_TRUE(lines_match("parity-h200.txt", text.str(), patterns("parity-h200.txt")));
  report::print_parity_markdown(md, t);
  EXPECT_TRUE(lines_match("parity-h200.md.txt", md.str(), patterns("parity-h200.md.txt")));
  Scratch s;
  report::write_parity_csv(s.dir / "p.csv", t);
  EXPECT_TRUE(lines_match("parity-h200.csv.txt", read_file((s.dir / "p.csv").string()),
                          patterns("parity-h200.csv.txt")));
  report::write_parity_json(s.dir / "p.json", t);
  const json j = read_json_file(s.dir / "p.json");
  EXPECT_EQ(j.at("format"), "gpudissect-parity");
  EXPECT_EQ(j.at("total").at("ok").at(0), t.total.cells[0].ok);
  EXPECT_TRUE(j.at("total").at("common").at(0).is_null());
  EXPECT_EQ(j.at("probes").size(), t.rows.size());
}
