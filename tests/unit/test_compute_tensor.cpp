// The compute table's tensor rows beyond dense f32-accumulate (issue 21): FP64 DMMA, FP16
// accumulate, 2:4 sparse mma.sp and wgmma.sp. GPU-free: the generated CUDA source, the FLOP
// counts and peaks, and the figure ids.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "compute/compute.hpp"
#include "gpudissect/figure_ids.hpp"
#include "registry.hpp"

namespace {

std::size_t count(const std::string& s, const std::string& what) {
  std::size_t n = 0;
  for (std::size_t p = s.find(what); p != std::string::npos; p = s.find(what, p + 1)) ++n;
  return n;
}

const gd::ComputeOp& op(const std::string& name) {
  const gd::ComputeOp* o = gd::find_compute_op(name);
  if (!o) ADD_FAILURE() << "no op " << name;
  return o ? *o : *gd::find_compute_op("fp32.fma");
}

// Documented flop (or op) per clock per SM an op is held against.
double peak_flops(const gd::ComputeOp& o) { return *o.peak_per_clk_sm * o.flops_per_op; }

// Instances of the op's instruction in its generated kernel: every step of every chain.
std::size_t instances(const gd::ComputeOp& o, int ilp) {
  const std::string src = gd::generate_cuda_source(o, {ilp});
  return count(src, o.ptx_expect);
}

gd::ComputeFigure figure_of(const gd::ComputeOp& o) {
  gd::ComputeFigure f;
  f.op = o.name;
  f.label = o.label;
  f.klass = o.klass;
  f.flops_per_op = o.flops_per_op;
  return f;
}

}  // namespace

// DMMA: m8n8k4 (sm_80) and the sm_90 m16n8k{4,8,16} shapes, f64 fragments in "d" registers,
// held against 256 flop/clk/SM (66.9 TFLOP/s = 132 SMs x 1980 MHz x 256).
TEST(ComputeTensor, DmmaShapesFragmentsAndPeak) {
  struct Case {
    const char* name;
    const char* asm_text;
    int m, k, cc;
  };
  const Case cases[] = {
      {"mma.f64", "m8n8k4.row.col.f64.f64.f64.f64 {%0,%1}, {%2}, {%3}, {%0,%1};", 8, 4, 80},
      {"mma.f64_m16n8k4", "m16n8k4.row.col.f64.f64.f64.f64 {%0,%1,%2,%3}, {%4,%5}, {%6}, ", 16, 4,
       90},
      {"mma.f64_m16n8k8", "m16n8k8.row.col.f64.f64.f64.f64 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, ",
       16, 8, 90},
      {"mma.f64_m16n8k16",
       "m16n8k16.row.col.f64.f64.f64.f64 {%0,%1,%2,%3}, {%4,%5,%6,%7,%8,%9,%10,%11}, "
       "{%12,%13,%14,%15}, {%0,%1,%2,%3};",
       16, 16, 90}};
  for (const Case& c : cases) {
    const gd::ComputeOp& o = op(c.name);
    const std::string src = gd::generate_cuda_source(o, {8});
    EXPECT_NE(src.find(std::string("mma.sync.aligned.") + c.asm_text), std::string::npos) << c.name;
    EXPECT_NE(src.find("double a7["), std::string::npos) << c.name;
    EXPECT_NE(src.find("\"+d\"(a0[0])"), std::string::npos) << c.name;
    EXPECT_NE(src.find("const double ta = db + (double)(uc >> 8);"), std::string::npos);
    EXPECT_EQ(instances(o, 8), 64u) << c.name;  // 64 steps a loop, 8 chains
    ASSERT_EQ(o.sass_expect.size(), 1u);
    EXPECT_EQ(o.sass_expect[0], "DMMA");
    EXPECT_DOUBLE_EQ(o.flops_per_op, 2.0 * c.m * 8 * c.k / 32) << c.name;
    EXPECT_DOUBLE_EQ(peak_flops(o), 256) << c.name;
    EXPECT_EQ(o.min_cc, c.cc) << c.name;
    EXPECT_FALSE(o.sm90a) << c.name;
    // Its 8 chains of m16n8 accumulators (64 registers) do not fit 1024-thread blocks.
    const std::string bound = c.m == 16 ? "__launch_bounds__(256) " : "__launch_bounds__(1024) ";
    EXPECT_NE(src.find(bound + "gd_ilp8"), std::string::npos) << c.name;
    EXPECT_EQ(gd::rate_unit(figure_of(o)), "TFLOP/s");
  }
  // Twice DFMA's FP64 rate per clock (64 FMA = 128 flop/clk/SM).
  const gd::ComputeOp& dfma = op("fp64.fma");
  EXPECT_DOUBLE_EQ(peak_flops(op("mma.f64")), 2 * *dfma.peak_per_clk_sm * dfma.flops_per_op);
}

// FP16 accumulators: 2 f16x2 registers for mma.sync, 64 for wgmma; dense FP16 peak.
TEST(ComputeTensor, Fp16AccumulateFragments) {
  const gd::ComputeOp& m = op("mma.f16acc");
  const std::string src = gd::generate_cuda_source(m, {4});
  EXPECT_NE(src.find("mma.sync.aligned.m16n8k16.row.col.f16.f16.f16.f16 {%0,%1}, {%2,%3,%4,%5}, "
                     "{%6,%7}, {%0,%1};\" : \"+r\"(a0[0]), \"+r\"(a0[1]) : \"r\"(ta), \"r\"(ta), "
                     "\"r\"(ta), \"r\"(ta), \"r\"(tb), \"r\"(tb));"),
            std::string::npos)
      << src;
  // A's halves are (x, -x), B's (x, x): the products cancel and the sums stay finite.
  EXPECT_NE(src.find("ta = ((hb & 0xffffu) * 0x10001u ^ 0x80000000u) + (uc >> 8);"),
            std::string::npos);
  EXPECT_NE(src.find("tb = (hb) + (uc >> 8);"), std::string::npos);
  EXPECT_EQ(instances(m, 4), 64u);
  EXPECT_DOUBLE_EQ(peak_flops(m), peak_flops(op("mma.f16")));
  EXPECT_EQ(m.sass_expect, std::vector<std::string>{"HMMA"});

  const gd::ComputeOp& w = op("wgmma.f16acc");
  const std::string ws = gd::generate_cuda_source(w, {1});
  EXPECT_EQ(count(ws, "wgmma.mma_async.sync.aligned.m64n256k16.f16.f16.f16 {%0,"),
            static_cast<std::size_t>(w.steps_per_iter * 8));
  EXPECT_NE(ws.find(",%63}, %64, %65, p, 1, 1, 0, 0;"), std::string::npos);
  EXPECT_EQ(ws.find("%66}"), std::string::npos);
  EXPECT_NE(ws.find("setp.ne.b32 p, %66, 0;"), std::string::npos);
  EXPECT_NE(ws.find("unsigned a0[64];"), std::string::npos);
  EXPECT_DOUBLE_EQ(peak_flops(w), peak_flops(op("wgmma.f16")));
  EXPECT_EQ(w.sass_expect, std::vector<std::string>{"HGMMA"});
}

// Every dense type has a 2:4 sparse twin: twice the K, the dense-equivalent FLOPs of that K,
// and twice the dense peak per clock (the whitepaper's "with sparsity" figures).
TEST(ComputeTensor, SparseTwinsDoubleTheDensePeak) {
  const char* types[] = {"f16", "bf16", "tf32", "s8", "e4m3"};
  for (const char* t : types) {
    const gd::ComputeOp& d = op(std::string("mma.") + t);
    const gd::ComputeOp& s = op(std::string("mma.sp_") + t);
    EXPECT_DOUBLE_EQ(peak_flops(s), 2 * peak_flops(d)) << t;
    EXPECT_DOUBLE_EQ(s.flops_per_op, 2 * d.flops_per_op) << t;  // K doubled, same registers
    EXPECT_EQ(s.ptx_expect.rfind("mma.sp::ordered_metadata.sync.aligned.m16n8k", 0), 0u) << t;
    EXPECT_EQ(gd::rate_unit(figure_of(s)), gd::rate_unit(figure_of(d))) << t;
    EXPECT_NE(s.label.find("dense-eq"), std::string::npos) << t;
    EXPECT_EQ(instances(s, 8), 64u) << t;
  }
  const char* wtypes[] = {"f16", "bf16", "tf32", "e4m3", "e5m2", "s8"};
  for (const char* t : wtypes) {
    const gd::ComputeOp& d = op(std::string("wgmma.") + t);
    const gd::ComputeOp& s = op(std::string("wgmma.sp_") + t);
    EXPECT_TRUE(s.sm90a && s.warpgroup) << t;
    EXPECT_DOUBLE_EQ(peak_flops(s), 2 * peak_flops(d)) << t;
    EXPECT_DOUBLE_EQ(s.flops_per_op, 2 * d.flops_per_op) << t;
    EXPECT_EQ(s.sass_expect, std::vector<std::string>{d.sass_expect[0] + ".SP"}) << t;
    EXPECT_EQ(gd::rate_unit(figure_of(s)), gd::rate_unit(figure_of(d))) << t;
    EXPECT_NE(s.label.find("dense-eq"), std::string::npos) << t;
    EXPECT_EQ(instances(s, 1), static_cast<std::size_t>(s.steps_per_iter * 8)) << t;
  }
  EXPECT_EQ(gd::rate_unit(figure_of(op("mma.sp_s8"))), "TOP/s");
  EXPECT_EQ(gd::rate_unit(figure_of(op("wgmma.sp_bf16"))), "TFLOP/s");
  // FP8 mma.sp has no QMMA.SP on sm_90: the figure says what ptxas does instead.
  EXPECT_NE(op("mma.sp_e4m3").missing_why.find("HMMA.SP"), std::string::npos);
}

// The sparse operands: metadata after C, sparsity selector 0, and a metadata word whose every
// 4-bit group names two ascending element indices (what ordered_metadata requires).
TEST(ComputeTensor, SparseMetadataAndOperands) {
  const std::string mma = gd::generate_cuda_source(op("mma.sp_f16"), {1});
  EXPECT_NE(mma.find("m16n8k32.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
                     "{%8,%9,%10,%11}, {%0,%1,%2,%3}, %12, 0x0;"),
            std::string::npos)
      << mma;
  EXPECT_NE(mma.find("\"r\"(ta), \"r\"(gd_meta));"), std::string::npos);
  const std::string wg = gd::generate_cuda_source(op("wgmma.sp_bf16"), {1});
  EXPECT_NE(wg.find("wgmma.mma_async.sp.sync.aligned.m64n256k32.f32.bf16.bf16 {%0,"),
            std::string::npos);
  EXPECT_NE(wg.find(",%127}, %128, %129, %131, 0, p, 1, 1, 0, 0;"), std::string::npos);
  EXPECT_NE(wg.find("\"r\"(ub | 1u), \"r\"(gd_meta) : \"memory\");"), std::string::npos);
  // Sparse B rows are 64 B: the tile holds them and its descriptor steps 512 B per 8 rows.
  EXPECT_NE(wg.find("gd_tile[64 * 32 + 256 * 64]"), std::string::npos);
  EXPECT_NE(wg.find("desc_b = gd_desc(gd_base + 64 * 32) + (16ull << 32);"), std::string::npos);
  const std::string s8 = gd::generate_cuda_source(op("wgmma.sp_s8"), {1});
  EXPECT_NE(s8.find(",%127}, %128, %129, %131, 0, p;"), std::string::npos);
  for (const std::string& src : {mma, wg, s8}) {
    const std::size_t at = src.find("gd_meta = 0x");
    ASSERT_NE(at, std::string::npos);
    const unsigned long meta = std::strtoul(src.c_str() + at + 10, nullptr, 16);
    for (int g = 0; g < 8; ++g) {
      const unsigned nib = (meta >> (4 * g)) & 0xF;
      EXPECT_LT(nib & 3u, nib >> 2) << "group " << g << " of " << std::hex << meta;
    }
  }
  // The dense forms keep their 32 B rows and carry no metadata.
  const std::string dense = gd::generate_cuda_source(op("wgmma.bf16"), {1});
  EXPECT_NE(dense.find("gd_tile[(64 + 256) * 32]"), std::string::npos);
  EXPECT_EQ(dense.find("gd_meta"), std::string::npos);
}

// Every new row's figures carry ids the compute probe declares.
TEST(ComputeTensor, NewRowsAreDeclaredFigureIds) {
  const gd::Probe* probe = gd::probe_registry().find("compute");
  ASSERT_TRUE(probe);
  const std::vector<std::string> declared = probe->figure_ids();
  int n = 0;
  for (const gd::ComputeOp& o : gd::compute_ops()) {
    if (o.klass != "tensor") continue;
    ++n;
    EXPECT_TRUE(gd::figure_id_declared(declared, "compute." + o.name)) << o.name;
    EXPECT_TRUE(gd::figure_id_declared(declared, "compute." + o.name + ".latency")) << o.name;
  }
  EXPECT_EQ(n, 12 + 4 + 2 + 2 + 5 + 6);  // dense, DMMA, FP16 accumulate, m16n8k8, mma.sp, wgmma.sp
}

// m16n8k8 f16 with f32 and f16 accumulators (HMMA.1688): A in 2 registers, B in 1; the rows
// Vulkan's 16x8x8 cooperative matrices are held against.
TEST(ComputeTensor, M16n8k8F16FragmentsAndPeak) {
  const struct {
    const char* name;
    const char* asm_text;
  } cases[] = {
      {"mma.f16_m16n8k8",
       "m16n8k8.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5}, {%6}, {%0,%1,%2,%3};"},
      {"mma.f16acc_m16n8k8", "m16n8k8.row.col.f16.f16.f16.f16 {%0,%1}, {%2,%3}, {%4}, {%0,%1};"}};
  for (const auto& c : cases) {
    const gd::ComputeOp& o = op(c.name);
    const std::string src = gd::generate_cuda_source(o, {8});
    EXPECT_NE(src.find(std::string("mma.sync.aligned.") + c.asm_text), std::string::npos) << c.name;
    EXPECT_EQ(instances(o, 8), 64u) << c.name;
    EXPECT_EQ(o.sass_expect, std::vector<std::string>{"HMMA"});
    EXPECT_DOUBLE_EQ(o.flops_per_op, 2.0 * 16 * 8 * 8 / 32) << c.name;
    EXPECT_DOUBLE_EQ(peak_flops(o), 4096) << c.name;
  }
}
