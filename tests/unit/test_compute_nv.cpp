// The compute probe's NVIDIA OpenCL path without a GPU: the clocked OpenCL C the generator
// writes (and the plain one elsewhere), the per-work-group clock records, the platform test,
// finding CUDA's tools and the PTX -> SASS pipeline on committed fixtures (ptxas where it is
// installed; a stand-in cuobjdump that prints a committed listing).
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "compute/compute.hpp"
#include "compute/ptx_sass.hpp"
#include "compute/run.hpp"
#include "fake_device.hpp"

namespace {

namespace fs = std::filesystem;

std::size_t count(const std::string& s, const std::string& what) {
  std::size_t n = 0;
  for (std::size_t p = s.find(what); p != std::string::npos; p = s.find(what, p + 1)) ++n;
  return n;
}

std::string read(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

const fs::path kFixtures = fs::path(GD_FIXTURES) / "compute";

// The text between the loop's opening line and its closing brace.
std::string loop_body(const std::string& src) {
  const std::size_t b = src.find("for (int it = 0;");
  const std::size_t e = src.find("\n  }\n", b);
  return b == std::string::npos || e == std::string::npos ? "" : src.substr(b, e - b);
}

// A private directory with executable scripts, removed at the end of the test.
class ToolDir {
 public:
  ToolDir() {
    std::string t = (fs::temp_directory_path() / "gd_test_tools_XXXXXX").string();
    EXPECT_NE(mkdtemp(t.data()), nullptr);
    dir_ = t;
  }
  ~ToolDir() {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  std::string add(const std::string& name, const std::string& script) {
    const fs::path p = dir_ / name;
    std::ofstream(p) << "#!/bin/sh\n" << script;
    chmod(p.c_str(), 0755);
    return p.string();
  }
  const fs::path& dir() const { return dir_; }

 private:
  fs::path dir_;
};

}  // namespace

TEST(ComputeOpenCLNv, PlainSourceHasNoClock) {
  const auto& op = *gd::find_compute_op("fp32.fma");
  const std::string src = gd::generate_opencl_source(op, {8});
  EXPECT_EQ(src.find("asm"), std::string::npos);
  EXPECT_EQ(src.find("#pragma unroll"), std::string::npos);
  EXPECT_NE(src.find("tim[0] = (ulong)iters;"), std::string::npos);
  // The default options are the plain source.
  EXPECT_EQ(src, gd::generate_opencl_source(op, {8}, gd::OpenCLSourceOptions{}));
}

TEST(ComputeOpenCLNv, ClockedSourceRecordsWhatCudaRecords) {
  const auto& op = *gd::find_compute_op("fp32.fma");
  gd::OpenCLSourceOptions o;
  o.nv_clock = true;
  const std::string src = gd::generate_opencl_source(op, {1, 8}, o);
  const std::string plain = gd::generate_opencl_source(op, {1, 8});
  // Per kernel: clock64 and globaltimer before and after the loop, the SM id once.
  EXPECT_EQ(count(src, "%%clock64;"), 4u);
  EXPECT_EQ(count(src, "%%globaltimer;"), 4u);
  EXPECT_EQ(count(src, "%%smid;"), 2u);
  EXPECT_EQ(count(src, "#pragma unroll 1\n  for (int it = 0;"), 2u);
  // CUDA's record per block, here per work-group: cycles, t0, t1, pack_sm_clock.
  for (const char* w : {"tim[4 * gd_g] = gd_c1 - gd_c0;", "tim[4 * gd_g + 1] = gd_t0;",
                        "tim[4 * gd_g + 2] = gd_t1;",
                        "tim[4 * gd_g + 3] = ((ulong)gd_sm << 48) | (gd_c0 & 0xFFFFFFFFFFFFUL);"})
    EXPECT_EQ(count(src, w), 2u) << w;
  EXPECT_EQ(count(src, "if (get_local_id(0) == 0) {"), 2u);
  EXPECT_EQ(src.find("tim[0] = (ulong)iters;"), std::string::npos);
  // The op under test is the same portable OpenCL C, as often: no PTX in the loop.
  EXPECT_EQ(count(src, "fma(a"), count(plain, "fma(a"));
  const std::string body = loop_body(src);
  ASSERT_FALSE(body.empty());
  EXPECT_EQ(body.find("asm"), std::string::npos);
  EXPECT_EQ(count(body, "fma(a"), 64u);
  // Clocks read outside the loop, on both sides of it.
  const std::size_t loop = src.find("for (int it = 0;");
  EXPECT_LT(src.find("%%clock64;"), loop);
  EXPECT_GT(src.find("%%clock64;", loop), loop);
}

TEST(ComputeOpenCLNv, EveryOpenCLOpTakesTheClock) {
  gd::OpenCLSourceOptions o;
  o.nv_clock = true;
  for (const auto& op : gd::compute_ops()) {
    if (op.cl_step.empty()) continue;
    const std::string src = gd::generate_opencl_source(op, {1}, o);
    EXPECT_EQ(count(src, "%%clock64;"), 2u) << op.name;
    EXPECT_EQ(loop_body(src).find("asm"), std::string::npos) << op.name;
  }
}

TEST(ComputeOpenCLNv, PlatformIsNvidias) {
  EXPECT_TRUE(gd::is_nvidia_opencl("NVIDIA CUDA", "NVIDIA Corporation"));
  EXPECT_TRUE(gd::is_nvidia_opencl("", "NVIDIA Corporation"));
  EXPECT_FALSE(gd::is_nvidia_opencl("Portable Computing Language", "The pocl project"));
  EXPECT_FALSE(
      gd::is_nvidia_opencl("AMD Accelerated Parallel Processing", "Advanced Micro Devices, Inc."));
  EXPECT_FALSE(gd::is_nvidia_opencl("", ""));
}

TEST(ComputeOpenCLNv, BlockClocksAsCuda) {
  // Two groups on SM 3 back to back, one on SM 5; 2000 cycles per us.
  std::vector<uint64_t> tim = {
      2000, 1000, 2000, gd::pack_sm_clock(3, 50000),  //
      2000, 2000, 3000, gd::pack_sm_clock(3, 52000),  //
      4000, 1000, 3000, gd::pack_sm_clock(5, 90000),  //
  };
  gd::ComputeTiming t;
  t.span_ns = 123456;  // the event's, replaced by the groups' own
  gd::apply_block_clocks(t, tim, 3, false);
  EXPECT_DOUBLE_EQ(t.span_ns, 2000);
  EXPECT_DOUBLE_EQ(t.cycles_per_block, 2000);
  EXPECT_DOUBLE_EQ(t.sm_cycles, 8000);  // 4000 on each SM
  EXPECT_DOUBLE_EQ(t.sm_ns, 4000);
  ASSERT_TRUE(t.clock_mhz);
  EXPECT_DOUBLE_EQ(*t.clock_mhz, 2000);
  // A latency launch: one group, its own cycles over its own time, no per-SM window.
  gd::ComputeTiming l;
  gd::apply_block_clocks(l, {3000, 100, 2100, gd::pack_sm_clock(0, 7)}, 1, true);
  EXPECT_DOUBLE_EQ(l.cycles_per_block, 3000);
  ASSERT_TRUE(l.clock_mhz);
  EXPECT_DOUBLE_EQ(*l.clock_mhz, 1500);
  EXPECT_EQ(l.sm_cycles, 0);
  // No record (timer never ran): nothing is made up.
  gd::ComputeTiming z;
  z.span_ns = 5;
  gd::apply_block_clocks(z, std::vector<uint64_t>(8, 0), 2, false);
  EXPECT_DOUBLE_EQ(z.span_ns, 5);
  EXPECT_FALSE(z.clock_mhz);
}

TEST(ComputeOpenCLNv, SmTargetAndVersions) {
  EXPECT_EQ(gd::sm_target(9, 0), "sm_90");
  EXPECT_EQ(gd::sm_target(10, 0), "sm_100");
  EXPECT_EQ(gd::ptxas_current_version(
                "ptxas fatal   : Unsupported .version 9.1; current version is '8.8'\n"),
            "8.8");
  EXPECT_EQ(gd::ptxas_current_version("ptxas fatal   : Unresolved extern function 'f'\n"), "");
  EXPECT_EQ(gd::ptxas_current_version("Unsupported .version 9.1; current version is '8;rm'"), "");
  const std::string ptx = "// .version 1.0 in a comment\n.version 9.1\n.target sm_90\n";
  EXPECT_EQ(gd::ptx_with_version(ptx, "8.8"),
            "// .version 1.0 in a comment\n.version 8.8\n.target sm_90\n");
  EXPECT_EQ(gd::first_line("ptxas warning : x\nptxas fatal : bad\nmore"), "ptxas fatal : bad");
  EXPECT_EQ(gd::first_line(""), "no output");
}

TEST(ComputeOpenCLNv, PtxHoldsTheIntendedInstruction) {
  const std::string ptx =
      "\t// fma.rn.f32 in a comment is no instruction\n"
      "\tfma.rn.ftz.f32 \t%f3, %f3, %f1, %f2;\n"
      "\t@%p1 bra \t$L__BB0_1;\n"
      "\tadd.s32 \t%r5, %r5, %r6;\n"
      "\tex2.approx.ftz.f32 %f4, %f4;\n"
      "\tmov.u64 %rd7, %clock64;\n";
  EXPECT_TRUE(gd::ptx_holds(ptx, "fma.rn.f32"));   // .ftz between
  EXPECT_TRUE(gd::ptx_holds(ptx, "add.u32"));      // s32 for u32
  EXPECT_TRUE(gd::ptx_holds(ptx, "ex2.approx"));   // type after
  EXPECT_TRUE(gd::ptx_holds(ptx, "bra"));          // after a predicate
  EXPECT_FALSE(gd::ptx_holds(ptx, "fma.rn.f64"));  // another type
  EXPECT_FALSE(gd::ptx_holds(ptx, "mad.lo.u32"));
  EXPECT_FALSE(gd::ptx_holds(ptx, "add.u64"));  // another width
  EXPECT_FALSE(gd::ptx_holds(ptx, "rn.f32"));   // the opcode must lead
  EXPECT_FALSE(gd::ptx_holds(ptx, ""));
  // The fixture PTX, as ptxas is handed it.
  const std::string fixture = read(kFixtures / "nv_fp32_fma_ilp8.ptx");
  EXPECT_TRUE(gd::ptx_holds(fixture, gd::find_compute_op("fp32.fma")->ptx_expect));
  EXPECT_FALSE(gd::ptx_holds(fixture, gd::find_compute_op("fp64.fma")->ptx_expect));
}

TEST(ComputeOpenCLNv, FindsToolsInOrder) {
  ToolDir a, b;
  const std::string in_b = b.add("ptxas", "exit 0\n");
  std::ofstream(a.dir() / "ptxas") << "not executable";
  const auto dirs =
      gd::cuda_tool_dirs((a.dir().string() + ":" + b.dir().string()).c_str(), "/opt/cuda-home");
  ASSERT_GE(dirs.size(), 4u);
  EXPECT_EQ(dirs[2], "/opt/cuda-home/bin");
  EXPECT_EQ(dirs.back(), "/usr/local/cuda/bin");
  EXPECT_EQ(gd::find_tool("ptxas", dirs), in_b);  // a's is not executable
  EXPECT_EQ(gd::find_tool("no-such-tool-gd", dirs), "");
  EXPECT_EQ(gd::cuda_tool_dirs(nullptr, nullptr).size(), 1u);
}

TEST(ComputeOpenCLNv, RunToolTakesArgumentsLiterally) {
  ToolDir d;
  const std::string echo = d.add("args", "for a in \"$@\"; do echo \"[$a]\"; done\nexit 3\n");
  const gd::ToolRun r = gd::run_tool({echo, "a b", "$(touch x)", "'q'"});
  EXPECT_EQ(r.rc, 3);
  EXPECT_EQ(r.out, "[a b]\n[$(touch x)]\n['q']\n");
  EXPECT_FALSE(fs::exists("x"));
  EXPECT_EQ(gd::run_tool({(d.dir() / "missing").string()}).rc, 127);
}

TEST(ComputeOpenCLNv, WithoutToolsPtxOnly) {
  const gd::PtxSass r = gd::ptx_to_sass(".version 9.0\n", "sm_90", gd::SassTools{});
  EXPECT_TRUE(r.sass.empty());
  EXPECT_EQ(r.why, "no ptxas/cuobjdump found");
  EXPECT_EQ(r.why + ": PTX only", "no ptxas/cuobjdump found: PTX only");
}

TEST(ComputeOpenCLNv, FixtureSassLoop) {
  const auto loops = gd::parse_sass_loops(read(kFixtures / "nv_fp32_fma_ilp8.sass"));
  ASSERT_EQ(loops.count("gd_ilp8"), 1u);
  const auto& l = loops.at("gd_ilp8");
  EXPECT_EQ(gd::count_opcodes(l, {"FFMA"}), 64);
  // The loop as a memory figure's listing shows it: most frequent first, 8 at most.
  EXPECT_EQ(gd::loop_listing(loops, "gd_ilp8").rfind("; loop: FFMA x64, ", 0), 0u)
      << gd::loop_listing(loops, "gd_ilp8");
  EXPECT_EQ(gd::loop_listing(loops, "no_such_kernel"), "");
  EXPECT_EQ(l.loop_instructions, 67);
  // The OpenCL body at ILP 8 counts 8 steps of 8 chains: one FFMA per counted op.
  const auto& op = *gd::find_compute_op("fp32.fma");
  EXPECT_EQ(gd::opencl_steps_per_iteration(op, 8) * 8 * op.insts_per_step, 64);
}

// The whole pipeline: the fixture PTX through the installed ptxas, then a stand-in
// cuobjdump that checks it was handed a cubin and prints the committed listing.
TEST(ComputeOpenCLNv, PtxToSassPipeline) {
  const std::string ptxas =
      gd::find_tool("ptxas", gd::cuda_tool_dirs(std::getenv("PATH"), std::getenv("CUDA_HOME")));
  if (ptxas.empty()) GTEST_SKIP() << "no ptxas installed";
  ToolDir d;
  const std::string listing = (kFixtures / "nv_fp32_fma_ilp8.sass").string();
  const std::string dump = d.add("cuobjdump",
                                 "[ \"$1\" = --dump-sass ] || exit 5\n"
                                 "[ \"$(head -c 4 \"$2\" | tail -c 3)\" = ELF ] || exit 6\n"
                                 "cat '" +
                                     listing + "'\n");
  const std::string ptx = read(kFixtures / "nv_fp32_fma_ilp8.ptx");
  ASSERT_NE(ptx.find("fma.rn.f32"), std::string::npos);
  const gd::PtxSass r = gd::ptx_to_sass(ptx, "sm_90", gd::SassTools{ptxas, dump});
  EXPECT_EQ(r.why, "");
  const auto loops = gd::parse_sass_loops(r.sass);
  ASSERT_EQ(loops.count("gd_ilp8"), 1u);
  EXPECT_EQ(gd::count_opcodes(loops.at("gd_ilp8"), {"FFMA"}), 64);
  // A PTX version beyond this ptxas: retried under its own.
  const gd::PtxSass v =
      gd::ptx_to_sass(gd::ptx_with_version(ptx, "99.9"), "sm_90", gd::SassTools{ptxas, dump});
  EXPECT_EQ(v.why, "");
  EXPECT_FALSE(v.sass.empty());
  // Broken PTX: ptxas's own words, no listing.
  const gd::PtxSass bad = gd::ptx_to_sass(".version 9.0\n.target sm_90\nnonsense;\n", "sm_90",
                                          gd::SassTools{ptxas, dump});
  EXPECT_TRUE(bad.sass.empty());
  EXPECT_EQ(bad.why.rfind("ptxas failed: ", 0), 0u) << bad.why;
}

namespace {

// NVIDIA's OpenCL as the probe sees it: a shorter body than CUDA's (64 ops per iteration at
// ILP 8, one FFMA each), per-SM windows from the clocked kernels, the loop's SASS or (without
// the tools) an error for PTX that lacks the instruction.
class NvOpenCLCompute final : public gd::ComputeKernels {
 public:
  bool ptx_only_missing = false;
  std::string language() const override { return "opencl"; }
  gd::Support supports(const gd::ComputeOp&) override { return gd::Support::yes(); }
  gd::ComputeTiming run(const gd::ComputeLaunch& l) override {
    gd::ComputeTiming t;
    t.ops_per_thread = l.iters * 64;
    t.sms = l.latency ? 1 : 132;
    t.threads = l.latency ? 32 : 132 * 2048;
    t.warps_per_sm = l.latency ? 1 : 64;
    const double per_sm = double(t.ops_per_thread) * double(t.threads) / 132 / 128;
    const double cycles = l.latency ? 4.0 * double(t.ops_per_thread) : per_sm;
    t.span_ns = cycles / 1980 * 1e3;
    t.clock_mhz = 1980;
    t.cycles_per_block = l.latency ? cycles : 0;
    if (!l.latency) {
      t.sm_cycles = per_sm * 132;
      t.sm_ns = t.span_ns * 132;
    }
    return t;
  }
  gd::LoopSass sass(const gd::ComputeLaunch&) override {
    if (ptx_only_missing) throw gd::BackendError("the PTX of the timed kernel holds no fma.rn.f32");
    gd::LoopSass s;
    s.read = true;
    s.opcodes = {{"FFMA", 64}, {"IADD3", 1}, {"ISETP.NE.AND", 1}, {"BRA", 1}};
    s.loop_instructions = 67;
    s.ops_per_iteration = 64;
    return s;
  }
};

gd::ComputeFigure nv_fma(NvOpenCLCompute& k) {
  gd::DeviceInfo info;
  info.backend = "opencl";
  info.name = "Fake NVIDIA GPU through OpenCL";
  info.compute_units = 132;
  info.clock_mhz_reported = 1755;
  gd::fakes::FakeDevice dev(info);
  dev.serve(gd::ComputeKernels::kProbe, &k);
  gd::NullProgress progress;
  std::atomic<bool> stop{false};
  gd::ComputeProbeResult out;
  const auto opt = gd::parse_compute_options(
      {{"ops", "fp32.fma"}, {"repeats", "2"}, {"ms", "0.2"}, {"mixed", "0"}, {"tensor", "0"}});
  gd::run_compute(dev, opt, progress, stop, out);
  return out.table.empty() ? gd::ComputeFigure{} : out.table.front();
}

}  // namespace

// The OpenCL loop counts 64 ops an iteration, not CUDA's 512: one FFMA per op, a measured
// clock, the figure as CUDA's.
TEST(ComputeOpenCLNv, ProbeJudgesTheOpenCLLoopByItsOwnCount) {
  NvOpenCLCompute k;
  const gd::ComputeFigure f = nv_fma(k);
  ASSERT_TRUE(f.status.ok()) << f.status.reason;
  EXPECT_EQ(f.clock_source, "measured");
  ASSERT_TRUE(f.sass_per_op);
  EXPECT_DOUBLE_EQ(*f.sass_per_op, 1.0);
  EXPECT_FALSE(f.missing_instruction);
  ASSERT_FALSE(f.opcodes.empty());
  EXPECT_EQ(f.opcodes.front().rfind("FFMA", 0), 0u) << f.opcodes.front();
  ASSERT_TRUE(f.ops_per_clk_sm);
  EXPECT_NEAR(f.ops_per_clk_sm->median, 128, 1e-6);
  ASSERT_TRUE(f.latency_cycles);
  EXPECT_NEAR(f.latency_cycles->median, 4, 1e-9);
}

TEST(ComputeOpenCLNv, PtxWithoutTheInstructionIsNotItsFigure) {
  NvOpenCLCompute k;
  k.ptx_only_missing = true;
  const gd::ComputeFigure f = nv_fma(k);
  EXPECT_EQ(f.status.name(), "error");
  EXPECT_NE(f.status.reason.find("holds no fma.rn.f32"), std::string::npos) << f.status.reason;
  EXPECT_FALSE(f.ops_per_clk_sm);
}
