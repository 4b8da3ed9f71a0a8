// The compute probe's GPU-free parts: the generator, Little's law, SASS parsing, the JSON
// mapping and the options.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <fstream>
#include <set>
#include <sstream>

#include "compute/compute.hpp"
#include "compute/run.hpp"
#include "fake_device.hpp"
#include "figure_ids_check.hpp"
#include "gpudissect/result.hpp"
#include "registry.hpp"
#include "sections.hpp"

namespace {

std::size_t count(const std::string& s, const std::string& what) {
  std::size_t n = 0;
  for (std::size_t p = s.find(what); p != std::string::npos; p = s.find(what, p + 1)) ++n;
  return n;
}

}  // namespace

TEST(ComputeGenerator, EveryOpHasItsFragmentsAndUniqueName) {
  std::set<std::string> names;
  for (const auto& op : gd::compute_ops()) {
    EXPECT_TRUE(names.insert(op.name).second) << op.name;
    EXPECT_FALSE(op.step.empty()) << op.name;
    EXPECT_FALSE(op.sass_expect.empty()) << op.name;
    EXPECT_FALSE(op.ptx_expect.empty()) << op.name;
    if (op.peak_per_clk_sm) EXPECT_FALSE(op.peak_source.empty()) << op.name;
  }
  EXPECT_NE(gd::find_compute_op("fp32.fma"), nullptr);
  EXPECT_EQ(gd::find_compute_op("nope"), nullptr);
}

TEST(ComputeGenerator, StepsTimesIlpFillTheBody) {
  const auto& op = *gd::find_compute_op("fp32.fma");
  for (int ilp : {1, 2, 4, 8}) {
    const std::string src = gd::generate_cuda_source(op, {ilp});
    EXPECT_EQ(count(src, "fma.rn.f32"), static_cast<std::size_t>(512)) << ilp;
    EXPECT_NE(src.find(gd::compute_kernel_name(ilp)), std::string::npos);
    EXPECT_EQ(gd::ops_per_thread(op, ilp, 10), 5120u);
  }
  // ILP chains are distinct variables: a0..a7.
  const std::string src8 = gd::generate_cuda_source(op, {8});
  EXPECT_NE(src8.find("float a7 ="), std::string::npos);
  EXPECT_EQ(src8.find("float a8 ="), std::string::npos);
  EXPECT_EQ(src8.find("{i}"), std::string::npos);
}

TEST(ComputeGenerator, TypesAndInstructions) {
  for (const char* n : {"fp64.fma", "fp16x2.fma", "bf16x2.fma", "int32.mad", "sfu.rsqrt",
                        "mma.bf16", "warp.shfl_xor"}) {
    const auto& op = *gd::find_compute_op(n);
    const std::string src = gd::generate_cuda_source(op, {1, 4});
    EXPECT_NE(src.find(op.ptx_expect), std::string::npos) << n;
    EXPECT_NE(src.find("gd_ilp1"), std::string::npos) << n;
    EXPECT_NE(src.find("gd_ilp4"), std::string::npos) << n;
  }
  // Cross-chain operands: the next chain at ILP 4, itself at ILP 1.
  const std::string add4 = gd::generate_cuda_source(*gd::find_compute_op("int32.add"), {4});
  EXPECT_NE(add4.find("\"+r\"(a3) : \"r\"(a0)"), std::string::npos);
}

TEST(ComputeGenerator, WgmmaIsOneWarpgroupChain) {
  const auto& op = *gd::find_compute_op("wgmma.bf16");
  EXPECT_TRUE(op.sm90a);
  const std::string src = gd::generate_cuda_source(op, {1});
  EXPECT_EQ(count(src, "wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16"),
            static_cast<std::size_t>(op.steps_per_iter * 8));
  EXPECT_NE(src.find("__launch_bounds__(256, 1)"), std::string::npos);
  // 2 * 64 * 256 * 16 flops per warpgroup instruction, per thread.
  EXPECT_DOUBLE_EQ(op.flops_per_op, 4096.0);
  EXPECT_DOUBLE_EQ(*op.peak_per_clk_sm, 1.0);
}

TEST(ComputeGenerator, MixedInterleavesBothOps) {
  const auto& a = *gd::find_compute_op("fp32.fma");
  const auto& b = *gd::find_compute_op("int32.mad");
  const std::string src = gd::generate_cuda_source(a, {8}, &b);
  EXPECT_EQ(count(src, "fma.rn.f32"), 256u);
  EXPECT_EQ(count(src, "mad.lo.u32"), 256u);
  EXPECT_NE(src.find("a107"), std::string::npos);
  EXPECT_EQ(gd::ops_per_thread(b, 8, 1, &a), 256u);
}

TEST(ComputeGenerator, OpenCL) {
  const auto& op = *gd::find_compute_op("fp64.fma");
  const std::string src = gd::generate_opencl_source(op, {1, 2});
  EXPECT_NE(src.find("cl_khr_fp64"), std::string::npos);
  EXPECT_NE(src.find("__kernel void gd_ilp2"), std::string::npos);
  EXPECT_EQ(count(src, "fma("), 64u + 64u);
}

TEST(ComputeLittlesLaw, LatencyAndInFlight) {
  // 64 warps x ILP 1 sustaining 1 warp-instruction/clk/SM: 64 cycles of latency hidden.
  EXPECT_DOUBLE_EQ(gd::littles_law_latency(64, 1.0), 64.0);
  EXPECT_DOUBLE_EQ(gd::littles_law_in_flight(4.0, 4.0), 16.0);
  EXPECT_DOUBLE_EQ(gd::littles_law_latency(8, 0), 0.0);
}

TEST(ComputeSass, FindsTheLoopAndCountsOpcodes) {
  const std::string sass = R"(
        Function : gd_ilp1
        /*0000*/                   LDC R1, c[0x0][0x28] ;
        /*0010*/                   MOV R2, R3 ;
        /*0020*/                   FFMA R4, R4, R2, R3 ;
        /*0030*/                   FFMA.FTZ R4, R4, R2, R3 ;
        /*0040*/                   IADD3 R5, R5, 0x1, RZ ;
        /*0050*/               @P0 BRA 0x20 ;
        /*0060*/                   EXIT ;
        /*0070*/                   BRA 0x70;
        Function : gd_ilp2
        /*0000*/                   EXIT ;
)";
  const auto loops = gd::parse_sass_loops(sass);
  ASSERT_EQ(loops.count("gd_ilp1"), 1u);
  const auto& l = loops.at("gd_ilp1");
  EXPECT_TRUE(l.read);
  EXPECT_EQ(l.loop_instructions, 4);
  EXPECT_EQ(gd::count_opcodes(l, {"FFMA"}), 2);
  EXPECT_EQ(gd::count_opcodes(l, {"FFMA.FTZ"}), 1);
  EXPECT_EQ(gd::count_opcodes(l, {"FF"}), 0);  // prefixes end at a dot
  EXPECT_EQ(loops.at("gd_ilp2").loop_instructions, 0);
}

TEST(ComputeJson, RoundTrip) {
  gd::ComputeProbeResult r;
  r.status = {gd::StatusCode::interrupted, "stopped"};
  r.language = "cuda";
  r.sms = 132;
  r.clock_mhz = 1980;
  r.wall_seconds = 12.5;
  gd::ComputeFigure f;
  f.op = "fp32.fma";
  f.label = "FP32 fma";
  f.klass = "fp32";
  f.ilp = 8;
  f.warps_per_sm = 64;
  f.ops_per_clk_sm = gd::Summary{127, 126.5, 127.2, 126, 128, 3};
  f.ops_per_s = gd::Summary{3.3e13, 3.2e13, 3.4e13, 3e13, 3.5e13, 3};
  f.latency_cycles = gd::Summary{4, 4, 4, 4, 4, 3};
  f.peak_per_clk_sm = 128;
  f.fraction_of_peak = 127.0 / 128;
  f.opcodes = {"FFMA x512", "BRA x1"};
  f.sass_per_op = 1;
  r.table.push_back(f);
  f.mix = "int32.mad";
  f.mix_ops_per_clk_sm = gd::Summary{44, 44, 44, 44, 44, 3};
  r.mixed.push_back(f);
  f.missing_instruction = true;
  f.status = {gd::StatusCode::error, "no FFMA"};
  f.implied_latency = 4.5;
  r.sweep.push_back(f);
  const nlohmann::json j = r;
  const auto back = j.get<gd::ComputeProbeResult>();
  EXPECT_EQ(nlohmann::json(back), j);
  EXPECT_EQ(back.status.name(), "interrupted");
  EXPECT_EQ(back.table.at(0).ops_per_clk_sm->median, 127);
  EXPECT_TRUE(back.sweep.at(0).missing_instruction);
  EXPECT_EQ(back.mixed.at(0).mix, "int32.mad");
}

TEST(ComputeOptions, Parse) {
  auto o = gd::parse_compute_options({{"sweep", "1"}, {"ops", "fp32,int32.mad"}, {"ms", "0.5"}});
  EXPECT_TRUE(o.sweep);
  EXPECT_EQ(o.ops.size(), 2u);
  EXPECT_DOUBLE_EQ(o.target_ms, 0.5);
  EXPECT_TRUE(gd::parse_compute_options({{"quick", "yes"}}).quick);
  EXPECT_THROW(gd::parse_compute_options({{"sweep", "maybe"}}), std::invalid_argument);
  EXPECT_THROW(gd::parse_compute_options({{"ops", "fp99"}}), std::invalid_argument);
  EXPECT_THROW(gd::parse_compute_options({{"ms", "-1"}}), std::invalid_argument);
  EXPECT_THROW(gd::parse_compute_options({{"bogus", "1"}}), std::invalid_argument);
}

TEST(ComputeGenerator, WarpOpsCannotBeFolded) {
  // The shuffle's source lane is the value itself (varies per lane and per step).
  const std::string idx = gd::generate_cuda_source(*gd::find_compute_op("warp.shfl_idx"), {1});
  EXPECT_NE(idx.find("shfl.sync.idx.b32 %0, %0, %0, 31, -1;"), std::string::npos);
  // __syncwarp's mask is unknown to ptxas (a literal -1 compiles to NOP).
  const auto& sw = *gd::find_compute_op("warp.syncwarp");
  EXPECT_NE(gd::generate_cuda_source(sw, {1}).find("bar.warp.sync %0;"), std::string::npos);
  EXPECT_EQ(sw.sass_expect, std::vector<std::string>{"WARPSYNC"});
  // FP8 mma.sync counts only a native QMMA (sm_90 emulates it with HMMA).
  EXPECT_EQ(gd::find_compute_op("mma.e4m3")->sass_expect, std::vector<std::string>{"QMMA"});
  EXPECT_EQ(gd::find_compute_op("mma.bf16")->sass_expect, std::vector<std::string>{"HMMA"});
}

TEST(ComputeGenerator, Fp64FmaForms) {
  // The table's form has two register sources (immediate multiplier); the others stay.
  const std::string src = gd::generate_cuda_source(*gd::find_compute_op("fp64.fma"), {8});
  EXPECT_EQ(count(src, "fma.rn.f64 %0, %0, 0d3FEFF80000000000, %1;"), 256u);
  EXPECT_NE(gd::find_compute_op("fp64.fma_rrr"), nullptr);
  EXPECT_NE(gd::find_compute_op("fp64.fma_2reg"), nullptr);
  // 1 - 2^-10 has a zero low word: DFMA's 32-bit immediate holds it exactly.
  EXPECT_EQ(0.9990234375, 1.0 - 1.0 / 1024);
}

TEST(ComputeReference, ReplaysTheChain) {
  const gd::ComputeSeeds z;
  // One chain, two steps, by hand.
  float a = std::fma(std::fma(z.fs, z.fb, z.fc), z.fb, z.fc);
  unsigned w;
  std::memcpy(&w, &a, 4);
  EXPECT_EQ(gd::reference_checksum(*gd::find_compute_op("fp32.fma"), 1, 2), w);
  // Chains xor together; a chain with a different seed changes the sum.
  const auto r1 = gd::reference_checksum(*gd::find_compute_op("fp32.fma"), 1, 100);
  const auto r2 = gd::reference_checksum(*gd::find_compute_op("fp32.fma"), 2, 100);
  EXPECT_NE(r1, r2);
  double d = std::fma(static_cast<double>(z.fs), 0.9990234375, static_cast<double>(z.fc));
  unsigned long long dw;
  std::memcpy(&dw, &d, 8);
  EXPECT_EQ(gd::reference_checksum(*gd::find_compute_op("fp64.fma"), 1, 1),
            static_cast<unsigned>(dw) ^ static_cast<unsigned>(dw >> 32));
  EXPECT_FALSE(gd::reference_checksum(*gd::find_compute_op("sfu.rsqrt"), 1, 1));
}

TEST(ComputeGenerator, OpenCLSubgroupsAndInts) {
  const auto& sh = *gd::find_compute_op("warp.shfl_idx");
  const std::string src = gd::generate_opencl_source(sh, {1});
  EXPECT_NE(src.find("cl_khr_subgroup_shuffle : enable"), std::string::npos);
  EXPECT_NE(src.find("cl_khr_subgroups : enable"), std::string::npos);
  EXPECT_NE(src.find("gd_sgm"), std::string::npos);
  for (const char* n : {"int32.add", "int32.mul", "int32.mad", "warp.redux", "warp.shfl_xor"})
    EXPECT_FALSE(gd::find_compute_op(n)->cl_step.empty()) << n;
  EXPECT_EQ(gd::opencl_steps_per_iteration(sh, 8), 8);
}

// Ops whose OpenCL C needs an extension enable it in the source (PoCL lacks these, so the
// integration test cannot see their kernels); the __local chase declares its array before
// the chains; the IEEE ops ask for correctly rounded divide and sqrt; integer seeds depend on
// the work-item; what OpenCL C cannot state has no OpenCL version.
TEST(ComputeGenerator, OpenCLExtensionsPrologueAndOptions) {
  const std::vector<std::pair<const char*, const char*>> need = {
      {"fp16x2.add", "cl_khr_fp16"},
      {"fp16x2.mul", "cl_khr_fp16"},
      {"fp16.fma", "cl_khr_fp16"},
      {"int32.brev", "cl_khr_extended_bit_ops"},
      {"int32.dp4a", "cl_khr_integer_dot_product"},
      {"warp.shfl_up", "cl_khr_subgroup_shuffle_relative"},
      {"warp.shfl_down", "cl_khr_subgroup_shuffle_relative"},
      {"warp.ballot", "cl_khr_subgroup_ballot"},
      {"fp64.fma_rrr", "cl_khr_fp64"},
      {"conv.f64_f32", "cl_khr_fp64"}};
  for (const auto& [name, ext] : need) {
    SCOPED_TRACE(name);
    const auto& op = *gd::find_compute_op(name);
    EXPECT_EQ(op.cl_ext, ext);
    const std::string src = gd::generate_opencl_source(op, {1, 8});
    EXPECT_NE(src.find(std::string("#pragma OPENCL EXTENSION ") + ext + " : enable"),
              std::string::npos);
    if (op.klass == "warp") EXPECT_NE(src.find("cl_khr_subgroups : enable"), std::string::npos);
  }
  EXPECT_EQ(
      count(gd::generate_opencl_source(*gd::find_compute_op("int32.brev"), {1}), "bit_reverse("),
      64u);
  EXPECT_NE(gd::generate_opencl_source(*gd::find_compute_op("int32.dp4a"), {1})
                .find("dot_4x8packed_uu_uint("),
            std::string::npos);

  const std::string lds = gd::generate_opencl_source(*gd::find_compute_op("lds.chase"), {2});
  const std::size_t arr = lds.find("__local uint gd_lds[1024];");
  ASSERT_NE(arr, std::string::npos);
  EXPECT_LT(arr, lds.find("barrier(CLK_LOCAL_MEM_FENCE)"));
  EXPECT_LT(lds.find("barrier(CLK_LOCAL_MEM_FENCE)"), lds.find("uint a1 ="));
  EXPECT_TRUE(gd::find_compute_op("fp32.fma")->cl_prologue.empty());

  for (const char* n : {"precise.div", "precise.sqrt"})
    EXPECT_EQ(gd::find_compute_op(n)->cl_options, "-cl-fp32-correctly-rounded-divide-sqrt") << n;
  EXPECT_TRUE(gd::find_compute_op("precise.sin")->cl_options.empty());

  for (const char* n : {"int32.mulhi", "int32.lop3", "int32.shl", "int32.rot", "int32.popc",
                        "int32.clz", "int32.brev", "int32.dp4a", "int64.add", "int64.mul"})
    EXPECT_NE(gd::find_compute_op(n)->cl_decl.find("get_local_id"), std::string::npos) << n;
  for (const char* n :
       {"fp32.max", "fp64.fma_2reg", "fp64.fma_acc", "fp64.add", "fp64.mul", "sfu.sqrt", "sfu.cos",
        "precise.sin", "conv.f32_i32", "conv.f32_f16", "lds.chase", "sync.bar"})
    EXPECT_FALSE(gd::find_compute_op(n)->cl_step.empty()) << n;
  for (const char* n :
       {"bf16x2.fma", "int32.dp2a", "warp.match", "warp.syncwarp", "mma.f16", "wgmma.f16"})
    EXPECT_TRUE(gd::find_compute_op(n)->cl_step.empty()) << n;
  // The f16 round trip is core OpenCL C 1.2 (vstore_half/vload_half), no extension.
  EXPECT_TRUE(gd::find_compute_op("conv.f32_f16")->cl_ext.empty());
}

// An impossible figure is never reported as a rate: folded OpenCL chains (no machine code to
// check) are withheld; a CUDA loop whose instructions were read keeps its rate but loses the
// peak that does not apply to it.
TEST(ComputeWithhold, ImpossibleFiguresAreNotReported) {
  gd::ComputeFigure folded;
  folded.ops_per_clk_sm = gd::Summary{115.4, 115, 116, 115, 116, 3};
  folded.ops_per_s = gd::Summary{1e12, 1e12, 1e12, 1e12, 1e12, 3};
  folded.peak_per_clk_sm = 64;
  folded.fraction_of_peak = 1.80;
  gd::withhold_impossible(folded);
  EXPECT_EQ(folded.status.name(), "error");
  EXPECT_NE(folded.status.reason.find("180%"), std::string::npos) << folded.status.reason;
  EXPECT_FALSE(folded.fraction_of_peak);
  EXPECT_FALSE(folded.ops_per_s);

  gd::ComputeFigure no_latency;
  no_latency.latency_cycles = gd::Summary{2e-6, 0, 0, 0, 0, 3};
  gd::withhold_impossible(no_latency);
  EXPECT_EQ(no_latency.status.name(), "error");

  gd::ComputeFigure read;
  read.opcodes = {"F2I.TRUNC.NTZ x128", "I2FP.F32.S32 x128"};
  read.peak_per_clk_sm = 16;
  read.fraction_of_peak = 1.94;
  read.ops_per_s = gd::Summary{8e12, 8e12, 8e12, 8e12, 8e12, 3};
  gd::withhold_impossible(read);
  EXPECT_TRUE(read.status.ok());
  EXPECT_FALSE(read.fraction_of_peak);
  EXPECT_FALSE(read.peak_per_clk_sm);
  EXPECT_TRUE(read.ops_per_s);

  // An INT32 add at up to twice the integer pipe's peak, machine code unread (Vulkan on the
  // H200: 122.1/clk/SM against 64): the add split over two pipes, a rate, not a fold.
  gd::ComputeFigure split;
  split.op = "int32.add";
  split.ops_per_clk_sm = gd::Summary{122.1, 122, 122.2, 122, 122.2, 3};
  split.ops_per_s = gd::Summary{32e12, 32e12, 32e12, 32e12, 32e12, 3};
  split.peak_per_clk_sm = 64;
  split.fraction_of_peak = 1.91;
  gd::withhold_impossible(split);
  EXPECT_TRUE(split.status.ok()) << split.status.reason;
  EXPECT_TRUE(split.ops_per_s);
  EXPECT_FALSE(split.fraction_of_peak);
  EXPECT_NE(split.note.find("IMAD.IADD"), std::string::npos);
  split.fraction_of_peak = 2.5;  // past two pipes: folded after all
  gd::withhold_impossible(split);
  EXPECT_EQ(split.status.name(), "error");

  gd::ComputeFigure fine;
  fine.fraction_of_peak = 0.99;
  fine.peak_per_clk_sm = 128;
  gd::withhold_impossible(fine);
  EXPECT_TRUE(fine.status.ok());
  EXPECT_TRUE(fine.fraction_of_peak);
}

// Integer arithmetic is counted in OP/s, never FLOP/s (IMAD and dp4a were "TFLOP/s").
TEST(ComputeRateUnit, IntegerOpsAreOpsNotFlops) {
  auto fig = [](const std::string& name) {
    const gd::ComputeOp& op = *gd::find_compute_op(name);
    gd::ComputeFigure f;
    f.op = op.name;
    f.label = op.label;
    f.klass = op.klass;
    f.flops_per_op = op.flops_per_op;
    f.ops_per_s = gd::Summary{};
    f.ops_per_s->median = 1e12;
    return f;
  };
  EXPECT_EQ(gd::rate_unit(fig("int32.mad")), "TOP/s");
  EXPECT_EQ(gd::rate_unit(fig("int32.dp4a")), "TOP/s");
  EXPECT_EQ(gd::rate_unit(fig("int32.dp2a")), "TOP/s");
  EXPECT_EQ(gd::rate_unit(fig("mma.s8")), "TOP/s");
  EXPECT_EQ(gd::rate_unit(fig("wgmma.s8")), "TOP/s");
  EXPECT_EQ(gd::rate_unit(fig("fp32.fma")), "TFLOP/s");
  EXPECT_EQ(gd::rate_unit(fig("fp16x2.fma")), "TFLOP/s");
  EXPECT_EQ(gd::rate_unit(fig("mma.e4m3")), "TFLOP/s");
  EXPECT_EQ(gd::rate_unit(fig("wgmma.bf16")), "TFLOP/s");
  EXPECT_EQ(gd::rate_unit(fig("int32.mul")), "Tinst/s");
  EXPECT_EQ(gd::rate_unit(fig("warp.shfl_idx")), "Tinst/s");
  // dp4a: 8 operations per instruction.
  EXPECT_DOUBLE_EQ(*gd::rate_tera(fig("int32.dp4a")), 8.0);
  EXPECT_DOUBLE_EQ(*gd::rate_tera(fig("int32.mul")), 1.0);
}

// The H200 fixture (a trimmed run), re-rendered: no integer row says FLOP/s.
TEST(ComputeRateUnit, H200TableHasNoIntegerFlops) {
  std::ifstream in(std::string(GD_FIXTURES) + "/h200_run.json");
  ASSERT_TRUE(in) << "H200 fixture missing";
  const gd::RunResult r = gd::run_result_from_json(nlohmann::json::parse(in), gd::probe_registry());
  ASSERT_TRUE(r.get<gd::ComputeProbeResult>());
  std::ostringstream os;
  gd::report::print_compute_summary(os, r);
  std::istringstream lines(os.str());
  std::string line;
  int integer_rows = 0;
  while (std::getline(lines, line)) {
    if (line.rfind("INT", 0) == 0 || line.find("s8->s32") != std::string::npos) {
      ++integer_rows;
      EXPECT_EQ(line.find("FLOP/s"), std::string::npos) << line;
    }
  }
  EXPECT_GE(integer_rows, 10);
  EXPECT_NE(os.str().find("TOP/s"), std::string::npos);
}

// Per-clock throughput from each SM's own window (first block start to last block end, in its
// clock), not from the launch span x a median clock reading: the H200's FP32 max (FMNMX) came
// out at 100.4% of its 64/clk/SM that way, its clock reading below what its rate needs.
TEST(ComputeSmWindows, WindowsPerSmInTheirOwnClock) {
  // SM 0: two blocks, the second starting 100 cycles later; SM 1: one block, its clock64
  // counter near the 48-bit wrap (the windows never compare counters across SMs).
  const uint64_t wrap = uint64_t(1) << 48;
  std::vector<gd::BlockClock> b = {
      {0, 1000, 5000, 10, 2510},
      {0, 1100, 5000, 60, 2560},
      {1, wrap - 50, 4000, 20, 2020},
      {1, 30, 3000, 60, 1560},  // wrapped: starts 80 later
  };
  const gd::SmWindows w = gd::sm_windows(b);
  EXPECT_EQ(w.sms, 2);
  EXPECT_DOUBLE_EQ(w.cycles, 5100.0 + 4000.0);
  EXPECT_DOUBLE_EQ(w.ns, 2550.0 + 2000.0);
  EXPECT_EQ(gd::pack_sm_clock(3, (uint64_t(7) << 48) + 5) >> 48, 3u);
  EXPECT_EQ(gd::pack_sm_clock(3, (uint64_t(7) << 48) + 5) & (wrap - 1), 5u);
}

TEST(ComputeSmWindows, RateOverSmCyclesCannotExceedWhatTheSmsIssued) {
  // 3 SMs, one block each, all 1 ms long and issuing exactly 64 ops per cycle. SM 0 runs at
  // 1980 MHz throughout; SMs 1 and 2 drop to 1800 MHz for the last 10%, so their own clock
  // readings (cycles / ns) are 1962 MHz, and so is the median over blocks.
  const double peak = 64, ns = 1e6;
  const std::vector<double> cycles = {1.98e6, 0.9e6 * 1.98 + 0.1e6 * 1.8,
                                      0.9e6 * 1.98 + 0.1e6 * 1.8};
  std::vector<gd::BlockClock> b;
  double ops = 0;
  std::vector<double> mhz;
  for (int sm = 0; sm < 3; ++sm) {
    b.push_back({sm, 1000, uint64_t(cycles[sm]), 0, uint64_t(ns)});
    ops += peak * cycles[sm];
    mhz.push_back(cycles[sm] / ns * 1000);
  }
  std::sort(mhz.begin(), mhz.end());
  // The former form: ops / (SMs x span x median clock reading) -> above what the SMs issued.
  const double old_form = ops / (3 * ns * mhz[1] / 1000);
  EXPECT_GT(old_form, peak * 1.002);
  // Over the SMs' own cycles: exactly what they issued.
  const gd::SmWindows w = gd::sm_windows(b);
  EXPECT_NEAR(ops / w.cycles, peak, 1e-9);
}

TEST(ComputeGenerator, KernelsRecordTheirSmAndStartClock) {
  const std::string src = gd::generate_cuda_source(*gd::find_compute_op("fp32.max"), {8});
  EXPECT_NE(src.find("%%smid"), std::string::npos);
  EXPECT_NE(src.find("tim[4 * blockIdx.x + 3]"), std::string::npos);
}

// __syncwarp with a warp-uniform mask in converged code is NOP x256 on sm_90: a finding (no
// cost beyond an issue slot), not a flagged figure.
TEST(ComputeSass, SyncwarpCompiledToNopIsZeroCostNotFlagged) {
  const gd::ComputeOp& op = *gd::find_compute_op("warp.syncwarp");
  gd::LoopSass s;
  s.read = true;
  s.opcodes = {{"NOP", 256}, {"BRA", 1}, {"ISETP.LE.AND", 1}, {"UIADD3", 1}};
  gd::ComputeFigure f;
  const int n = gd::count_opcodes(s, op.sass_expect);
  gd::judge_loop_sass(f, op, s, n, 256);
  EXPECT_TRUE(f.compiled_away);
  EXPECT_FALSE(f.missing_instruction);
  EXPECT_TRUE(f.status.ok());
  EXPECT_NE(f.note.find("NOP"), std::string::npos);
  // A loop that holds neither is still flagged.
  gd::LoopSass other = s;
  other.opcodes = {{"IADD3", 256}};
  gd::ComputeFigure g;
  gd::judge_loop_sass(g, op, other, 0, 256);
  EXPECT_TRUE(g.missing_instruction);
  EXPECT_FALSE(g.compiled_away);
  // The terminal shows no rate and no flag for it; the JSON keeps the note.
  gd::RunResult r;
  r.put(gd::ComputeProbeResult{});
  f.op = op.name;
  f.label = op.label;
  f.klass = op.klass;
  f.ops_per_clk_sm = gd::Summary{126.5, 126.5, 126.5, 126.5, 126.5, 3};
  r.get<gd::ComputeProbeResult>()->table.push_back(f);
  std::ostringstream os;
  gd::report::print_compute_summary(os, r);
  EXPECT_NE(os.str().find("0 (no instruction)"), std::string::npos) << os.str();
  EXPECT_EQ(os.str().find("FLAGGED"), std::string::npos) << os.str();
  const gd::RunResult back =
      gd::run_result_from_json(gd::to_json(r, gd::probe_registry()), gd::probe_registry());
  EXPECT_TRUE(back.get<gd::ComputeProbeResult>()->table.at(0).compiled_away);
  EXPECT_EQ(back.get<gd::ComputeProbeResult>()->table.at(0).note, f.note);
}

// NVIDIA's Vulkan compiler rewrote the f32->f16->f32 chain into LOP3 and PRMT, keeping 4
// F2FP and 8 HADD2.F32 of 256 counted conversions (its SASS on an H200): not a conversion
// rate, whatever the loop measured. Half as many (CUDA's packed F2FP) is a conversion rate.
TEST(ComputeSass, LoopWithAQuarterOfTheCountedInstructionsIsFlagged) {
  const gd::ComputeOp& op = *gd::find_compute_op("conv.f32_f16");
  gd::LoopSass s;
  s.read = true;
  s.opcodes = {{"LOP3.LUT", 256}, {"PRMT", 256}, {"HADD2.F32", 8}, {"F2FP.F16.F32.PACK_AB", 4}};
  gd::ComputeFigure f;
  gd::judge_loop_sass(f, op, s, gd::count_opcodes(s, op.sass_expect), 256);
  EXPECT_TRUE(f.missing_instruction);
  EXPECT_EQ(f.status.code, gd::StatusCode::error);
  EXPECT_NE(f.status.reason.find("holds 12 F2F for 256 counted"), std::string::npos)
      << f.status.reason;
  gd::LoopSass packed = s;
  packed.opcodes = {{"HADD2.F32", 128}, {"F2FP.F16.F32.PACK_AB", 64}};
  gd::ComputeFigure g;
  gd::judge_loop_sass(g, op, packed, gd::count_opcodes(packed, op.sass_expect), 256);
  EXPECT_FALSE(g.missing_instruction);
  EXPECT_TRUE(g.status.ok());
}

// CUDA's FP16x2 latency chain alternates HFMA2 and HFMA2.MMA (H200: 8.03 cycles, HFMA2 alone
// 4.04): the figure says its latency is the two pipes' mean. One form, a few of another, a
// step made of two instructions by design (conversions), or two instructions every step
// (H200: a 64-bit multiply's IMAD and IMAD.WIDE.U32, Vulkan's rotate idiom's two shifts) say
// nothing.
TEST(ComputeSass, ChainAlternatingTwoFormsIsNoted) {
  gd::LoopSass s;
  s.read = true;
  s.opcodes = {{"HFMA2", 256}, {"HFMA2.MMA", 256}, {"BRA", 1}};
  const std::string note = gd::mixed_chain_note(s, *gd::find_compute_op("fp16x2.fma"), 512);
  EXPECT_NE(note.find("alternates HFMA2 and HFMA2.MMA"), std::string::npos) << note;
  s.opcodes = {{"HFMA2", 500}, {"HFMA2.MMA", 12}, {"BRA", 1}};
  EXPECT_EQ(gd::mixed_chain_note(s, *gd::find_compute_op("fp16x2.fma"), 512), "");
  s.opcodes = {{"FFMA", 512}, {"BRA", 1}};
  EXPECT_EQ(gd::mixed_chain_note(s, *gd::find_compute_op("fp32.fma"), 512), "");
  s.opcodes = {{"F2I.TRUNC.NTZ", 128}, {"I2FP.F32.S32", 128}};
  EXPECT_EQ(gd::mixed_chain_note(s, *gd::find_compute_op("conv.f32_i32"), 128), "");
  s.opcodes = {{"LOP3.LUT", 256}, {"SHF.L.U32", 256}, {"SHF.R.U32.HI", 256}};
  EXPECT_EQ(gd::mixed_chain_note(s, *gd::find_compute_op("int32.rot"), 256), "");
  s.opcodes = {{"IMAD", 256}, {"IMAD.WIDE.U32", 256}};
  EXPECT_EQ(gd::mixed_chain_note(s, *gd::find_compute_op("int64.mul"), 256), "");
  s.opcodes = {{"IADD3", 129}, {"IMAD.IADD", 127}};
  EXPECT_NE(gd::mixed_chain_note(s, *gd::find_compute_op("int32.add"), 256), "");
}

// FP8 mma.sync on sm_90 (and sm_90a): F2FP + 2 HMMA.16816 per op, products hoisted, FADDs in
// the loop. Flagged with the reason, never a tensor rate.
TEST(ComputeSass, Fp8MmaSyncFlaggedWithTheEmulationExplained) {
  for (const char* name : {"mma.e4m3", "mma.e5m2"}) {
    const gd::ComputeOp& op = *gd::find_compute_op(name);
    EXPECT_FALSE(op.sm90a) << name;  // sm_90a emulates it the same way: nothing to gain
    gd::LoopSass s;
    s.read = true;
    s.opcodes = {{"FADD", 256}, {"F2FP.F16.E4M3.UNPACK_B", 2}, {"HMMA.16816.F32", 2}};
    gd::ComputeFigure f;
    gd::judge_loop_sass(f, op, s, gd::count_opcodes(s, op.sass_expect), 64);
    EXPECT_TRUE(f.missing_instruction) << name;
    EXPECT_NE(f.status.reason.find("sm_90a"), std::string::npos) << f.status.reason;
    EXPECT_NE(f.status.reason.find("HMMA.16816"), std::string::npos) << f.status.reason;
  }
}

// A rate whose repeats spread over 10 % is marked in the table itself, not only in the list
// of unstable figures after all summaries (issue 11: shown as unstable, not as a result).
TEST(ComputeReport, UnstableRateIsMarkedInTheTable) {
  gd::RunResult r;
  r.put(gd::ComputeProbeResult{});
  gd::ComputeFigure steady, noisy;
  steady.op = "fp32.fma";
  steady.label = "FP32 FMA";
  steady.ops_per_clk_sm = gd::Summary{127.9, 127.8, 128.0, 127.7, 128.1, 5};
  noisy.op = "fp64.fma";
  noisy.label = "FP64 FMA";
  // median, q1, q3, min, max, n: IQR 20 over 60 = 33 %.
  noisy.ops_per_clk_sm = gd::Summary{60, 50, 70, 45, 75, 5};
  r.get<gd::ComputeProbeResult>()->table = {steady, noisy};
  std::ostringstream os;
  gd::report::print_compute_summary(os, r);
  std::string fp32, fp64;
  std::istringstream lines(os.str());
  for (std::string l; std::getline(lines, l);) {
    if (l.rfind("FP32 FMA", 0) == 0) fp32 = l;
    if (l.rfind("FP64 FMA", 0) == 0) fp64 = l;
  }
  EXPECT_NE(fp64.find("UNSTABLE"), std::string::npos) << os.str();
  EXPECT_EQ(fp32.find("UNSTABLE"), std::string::npos) << os.str();
}

// ---- a backend that reads a clock after each launch (Vulkan on an NVIDIA GPU) ----

namespace {

// Counts no cycles in the kernel (no sm_cycles, no cycles_per_block), only a clock read after
// the launch and the highest clock seen: 132 SMs at 128 FP32 fma/clk/SM, a dependent step of
// 4 cycles, at `mhz`. Records every launch's span.
class ClockAfterLaunchCompute final : public gd::ComputeKernels {
 public:
  double mhz = 1980, peak = 1980, floor_ms = 0;
  std::vector<double> spans;
  bool beside = false;                             // compiles_beside_measurements
  std::vector<std::vector<std::string>> prepared;  // "op|mix" of each prepare call
  bool compiles_beside_measurements() const override { return beside; }
  void prepare(const std::vector<gd::ComputeLaunch>& ls, const std::atomic<bool>*) override {
    std::vector<std::string> v;
    for (const auto& l : ls) v.push_back(l.op + "|" + l.mix);
    prepared.push_back(v);
  }
  std::string language() const override { return "glsl"; }
  gd::Support supports(const gd::ComputeOp&) override { return gd::Support::yes(); }
  double min_launch_ms() const override { return floor_ms; }
  gd::ComputeTiming run(const gd::ComputeLaunch& l) override {
    gd::ComputeTiming t;
    t.ops_per_thread = l.iters * 64;
    t.sms = l.latency ? 1 : 132;
    t.threads = l.latency ? 32 : 132 * 2048;
    t.warps_per_sm = l.latency ? 1 : 64;
    const double cycles = l.latency ? 4.0 * double(t.ops_per_thread)
                                    : double(t.ops_per_thread) * double(t.threads) / 128 / 132;
    t.span_ns = cycles / mhz * 1e3;
    t.clock_mhz = mhz;
    t.clock_peak_mhz = peak;
    spans.push_back(t.span_ns);
    return t;
  }
};

class ClockAfterLaunchDevice final : public gd::fakes::FakeDevice {
 public:
  ClockAfterLaunchDevice() {
    info_.backend = "vulkan";
    info_.name = "Fake GPU through Vulkan";
    info_.compute_units = 132;
    serve(gd::ComputeKernels::kProbe, &kernels);
  }
  ClockAfterLaunchCompute kernels;
};

gd::ComputeFigure fma_on(ClockAfterLaunchDevice& dev, gd::ComputeProbeResult* all = nullptr) {
  gd::NullProgress progress;
  std::atomic<bool> stop{false};
  gd::ComputeProbeResult out;
  const auto opt = gd::parse_compute_options(
      {{"ops", "fp32.fma"}, {"repeats", "2"}, {"ms", "0.2"}, {"mixed", "0"}, {"tensor", "0"}});
  gd::run_compute(dev, opt, progress, stop, out);
  EXPECT_TRUE(out.status.ok()) << out.status.reason;
  EXPECT_EQ(out.table.size(), 1u);
  if (all) *all = out;
  return out.table.empty() ? gd::ComputeFigure{} : out.table.front();
}

}  // namespace

// Only a clock known (no per-SM cycles, no cycles per block): throughput per clock per SM is
// the ops over SMs x span x clock, latency the span at the clock over the steps; no note.
TEST(ComputeClockAfterLaunch, PerClockFiguresFromTheSpanAtTheClock) {
  ClockAfterLaunchDevice dev;
  gd::ComputeProbeResult out;
  const gd::ComputeFigure f = fma_on(dev, &out);
  ASSERT_TRUE(f.status.ok()) << f.status.reason;
  ASSERT_TRUE(f.ops_per_clk_sm);
  EXPECT_NEAR(f.ops_per_clk_sm->median, 128, 1e-6);
  ASSERT_TRUE(f.latency_cycles);
  EXPECT_NEAR(f.latency_cycles->median, 4, 1e-9);
  EXPECT_FALSE(f.latency_ns);
  EXPECT_EQ(f.clock_source, "measured");
  ASSERT_TRUE(f.clock_mhz);
  EXPECT_DOUBLE_EQ(*f.clock_mhz, 1980);
  ASSERT_TRUE(out.clock_mhz);
  EXPECT_DOUBLE_EQ(*out.clock_mhz, 1980);
  // 132 SMs x 128 fma x 2 FLOP x 1.98 GHz = 66.9 TFLOP/s.
  ASSERT_TRUE(gd::rate_tera(f));
  EXPECT_NEAR(*gd::rate_tera(f), 132 * 128 * 2 * 1.98e9 / 1e12, 1e-6);
  EXPECT_EQ(f.note, "");
}

// The GPU at 345 MHz against 1980 seen before (the H200's idle clock through NVIDIA's Vulkan
// driver): per clock the figures stand, per second they are 5.7x low, and the figure says the
// clock was low, in the table and in its headline figures.
TEST(ComputeClockAfterLaunch, LowClockIsNotedNotSilent) {
  ClockAfterLaunchDevice dev;
  dev.kernels.mhz = 345;
  gd::ComputeProbeResult out;
  const gd::ComputeFigure f = fma_on(dev, &out);
  ASSERT_TRUE(f.ops_per_clk_sm);
  EXPECT_NEAR(f.ops_per_clk_sm->median, 128, 1e-6);
  ASSERT_TRUE(f.latency_cycles);
  EXPECT_NEAR(f.latency_cycles->median, 4, 1e-9);
  EXPECT_NE(f.note.find("GPU clock low: 345 MHz"), std::string::npos) << f.note;
  EXPECT_NE(f.note.find("1980 MHz"), std::string::npos) << f.note;
  gd::RunResult r;
  r.put(out);
  EXPECT_GT(gd::expect_figure_ids_declared(r), 0);
  std::ostringstream os;
  gd::report::print_compute_summary(os, r);
  EXPECT_NE(os.str().find("GPU clock low"), std::string::npos) << os.str();
  const gd::Probe* probe = gd::probe_registry().find("compute");
  ASSERT_TRUE(probe);
  int noted = 0;
  for (const gd::Figure& fig : probe->figures(r))
    noted += fig.where.find("GPU clock low") != std::string::npos;
  EXPECT_EQ(noted, 2);  // the rate and the latency
  // Within 80 % of the highest clock seen: no note (a GPU under load may run a little lower).
  dev.kernels.mhz = 1700;
  EXPECT_EQ(fma_on(dev).note, "");
}

// A backend's floor on the launch length (Vulkan on a GPU: 10 ms) overrides a shorter target;
// 0 leaves the target alone.
TEST(ComputeClockAfterLaunch, BackendFloorOnTheLaunchLength) {
  ClockAfterLaunchDevice dev;
  fma_on(dev);
  ASSERT_FALSE(dev.kernels.spans.empty());
  EXPECT_LT(dev.kernels.spans.back(), 1e6);  // the 0.2 ms target (latency: 0.05 ms)
  dev.kernels.spans.clear();
  dev.kernels.floor_ms = 10;
  fma_on(dev);
  ASSERT_FALSE(dev.kernels.spans.empty());
  EXPECT_GE(dev.kernels.spans.back(), 5e6);  // at least half the floor, as any target
  EXPECT_LT(dev.kernels.spans.back(), 20e6);
}

// The head start (Probe::ahead) compiles exactly the sources the probe's turn prepares, and
// none where the backend's compiles must not overlap other probes' measurements.
TEST(ComputeAhead, CompilesWhatTheRunPrepares) {
  ClockAfterLaunchDevice dev;
  const gd::Probe* probe = gd::probe_registry().find("compute");
  const std::any opt = gd::parse_compute_options({{"quick", "1"}});
  EXPECT_FALSE(probe->ahead(dev, opt));
  dev.kernels.beside = true;
  const gd::AheadWork work = probe->ahead(dev, opt);
  ASSERT_TRUE(work);
  std::atomic<bool> cancel{false};
  work(cancel);
  ASSERT_EQ(dev.kernels.prepared.size(), 1u);
  EXPECT_GE(dev.kernels.prepared[0].size(), 3u);  // quick: FP32, FP64, tensor ... at least
  gd::NullProgress progress;
  std::atomic<bool> stop{false};
  gd::ComputeProbeResult out;
  gd::run_compute(dev, std::any_cast<const gd::ComputeOptions&>(opt), progress, stop, out);
  ASSERT_EQ(dev.kernels.prepared.size(), 2u);
  EXPECT_EQ(dev.kernels.prepared[1], dev.kernels.prepared[0]);
}
