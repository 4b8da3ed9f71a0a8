// The compute table's tensor-core rows: mma.sync (dense, 2:4 sparse, FP64 DMMA, FP16
// accumulate) and wgmma (sm_90a, dense and sparse), each with the instruction the SASS must
// show and the whitepaper peak it is held against.
#include <string>
#include <vector>

#include "compute/compute.hpp"

namespace gd {

namespace {

// Tensor peaks from the NVIDIA H100 Tensor Core GPU Architecture whitepaper (dense
// FP16/BF16 989.4 TFLOP/s = 132 SMs x 1830 MHz x 4096 flop/clk/SM; TF32 half of it;
// FP8/INT8 twice it; 2:4 sparse twice the dense; FP64 tensor below).
constexpr const char* kWhitepaper = "NVIDIA H100 architecture whitepaper, tensor peaks";

// One mma.sync form: the fragments' registers per thread (PTX ISA, "Matrix fragments for
// mma"), their C type, and the words A and B hold (values do not change the timing, and small
// ones keep the sums finite; b_word empty: B takes A's word).
struct MmaForm {
  std::string shape, types;
  std::string acc = "float";  // float, int, double, or unsigned (f16x2 accumulators)
  int n_acc = 4, n_a = 4, n_b = 2;
  std::string a_word, b_word;
  // 2:4 sparse A (mma.sp::ordered_metadata): one metadata register, sparsity selector 0.
  bool sparse = false;
  double flops_per_warp = 0;  // 2 x M x N x K of the shape (sparse: K as written, see below)
  double peak_flops = 0;      // documented flop/clk/SM of this type
};

std::string reg_list(int from, int n) {
  std::string s;
  for (int j = 0; j < n; ++j) s += (j ? ",%" : "%") + std::to_string(from + j);
  return s;
}

ComputeOp mma_op(std::string name, std::string label, const MmaForm& f) {
  ComputeOp o;
  o.name = std::move(name);
  o.klass = "tensor";
  o.label = std::move(label);
  const bool f64 = f.acc == "double";
  const std::string c = f.acc == "float" ? "f" : f64 ? "d" : "r";
  const std::string in = f64 ? "d" : "r";
  // uc >> 8 is 0 at run time, unknown to ptxas: constant fragments let it fold the
  // (emulated) FP8 mma.sync into FADDs.
  const std::string word = f64 ? "const double " : "const unsigned ";
  const std::string zero = f64 ? " + (double)(uc >> 8);" : ") + (uc >> 8);";
  o.prologue = word + "ta = " + (f64 ? "" : "(") + f.a_word + zero;
  if (!f.b_word.empty()) o.prologue += "\n  " + word + "tb = " + (f64 ? "" : "(") + f.b_word + zero;
  // 0x4 per 4-bit group: elements 0 and 1 of each 4 non-zero, the ascending pair that
  // ordered_metadata asks for, and valid for tf32's 1:2 groups too.
  if (f.sparse) o.prologue += "\n  const unsigned gd_meta = 0x44444444u | (uc >> 8);";
  std::string zeros, outs, ins, sum;
  for (int j = 0; j < f.n_acc; ++j) {
    const std::string e = "a{i}[" + std::to_string(j) + "]";
    zeros += j ? ", 0" : "0";
    outs += (j ? ", \"+" : "\"+") + c + "\"(" + e + ")";
    sum += (j ? " + " : "") + e;
  }
  const std::string tb = f.b_word.empty() ? "ta" : "tb";
  for (int j = 0; j < f.n_a + f.n_b; ++j)
    ins += (j ? ", \"" : "\"") + in + "\"(" + (j < f.n_a ? "ta" : tb) + ")";
  const int n_in = f.n_acc + f.n_a + f.n_b;
  const std::string acc_regs = "{" + reg_list(0, f.n_acc) + "}";
  const std::string instr = std::string(f.sparse ? "mma.sp::ordered_metadata" : "mma") +
                            ".sync.aligned." + f.shape + ".row.col." + f.types;
  o.decl = f.acc + " a{i}[" + std::to_string(f.n_acc) + "] = {" + zeros + "};";
  o.step = "asm volatile(\"" + instr + " " + acc_regs + ", {" + reg_list(f.n_acc, f.n_a) + "}, {" +
           reg_list(f.n_acc + f.n_a, f.n_b) + "}, " + acc_regs +
           (f.sparse ? ", %" + std::to_string(n_in) + ", 0x0" : "") + ";\" : " + outs + " : " +
           ins + (f.sparse ? ", \"r\"(gd_meta)" : "") + ");";
  o.fold = f64 ? "{ unsigned long long w = (unsigned long long)__double_as_longlong(" + sum +
                     "); acc ^= (unsigned)w ^ (unsigned)(w >> 32); }"
           : f.acc == "float" ? "acc ^= __float_as_uint(" + sum + ");"
                              : "acc ^= (unsigned)(" + sum + ");";
  o.ptx_expect = instr;
  o.flops_per_op = f.flops_per_warp / 32;
  // Peak per SM per clock, in thread-instructions of this shape.
  o.peak_per_clk_sm = f.peak_flops / o.flops_per_op;
  o.peak_source = kWhitepaper;
  return o;
}

// mma.sync m16n8kK: 4 f32 (or s32) accumulators, 4 A and 2 B registers (the same words).
ComputeOp mma_sync(std::string name, std::string label, const std::string& shape,
                   const std::string& types, bool integer, const std::string& a_word,
                   double flops_per_warp) {
  MmaForm f;
  f.shape = shape;
  f.types = types;
  f.acc = integer ? "int" : "float";
  f.a_word = a_word;
  f.flops_per_warp = flops_per_warp;
  // Dense peak per SM per clock.
  f.peak_flops = types.find("tf32") != std::string::npos ? 2048
                 : (types.find("e4m3") != std::string::npos ||
                    types.find("e5m2") != std::string::npos || integer)
                     ? 8192
                     : 4096;
  ComputeOp o = mma_op(std::move(name), std::move(label), f);
  o.ptx_expect = "mma.sync.aligned." + shape;
  // FP8 mma.sync has a native QMMA on sm_89/sm_120 only: on sm_90 ptxas emulates it (F2FP
  // conversions to f16 + HMMA, or folds it), so only QMMA counts and sm_90's loop is flagged.
  const bool fp8 =
      types.find("e4m3") != std::string::npos || types.find("e5m2") != std::string::npos;
  o.sass_expect = {integer ? "IMMA" : fp8 ? "QMMA" : "HMMA"};
  if (fp8)
    o.missing_why =
        "no QMMA: ptxas emulates FP8 mma.sync on sm_90 and sm_90a alike (F2FP.F16.E4M3/E5M2 "
        "to f16, then 2 HMMA.16816.F32 per m16n8k32; QMMA.16832 exists on sm_89) and hoists "
        "the loop-invariant products, so the loop is FADD accumulation. Its rate is not FP8 "
        "tensor work: even unhoisted, 2 HMMA.16816 per op cap it at the f16 mma.sync rate "
        "(~650 TFLOP/s on an H200), so a 1000+ TFLOP/s mma.sync e4m3 figure measures FADDs. "
        "FP8 on sm_90 is wgmma (QGMMA)";
  return o;
}

// wgmma m64n256kK, both operands from shared memory through descriptors (no swizzle, K-major
// core matrices of 8 rows x 16 bytes). One step: fence, kGroup wgmmas on the same
// accumulators, commit, wait: the tensor core pipelines the group; two warpgroups per SM
// cover each other's drain. The accumulator type is the first of `types`: f32 and s32 take
// 128 registers per thread, f16 64 (f16x2). Sparse (wgmma.mma_async.sp): A is 2:4 compressed,
// so `k` (the K written in the shape, twice the dense one) spans 64 B of each B row and A
// keeps its 32 B; one metadata register, sparsity selector 0.
constexpr int kWgmmaGroup = 8;
ComputeOp wgmma(std::string name, std::string label, const std::string& types, int k, bool integer,
                bool transposable, const std::string& fill_byte, bool sparse = false) {
  ComputeOp o;
  o.name = std::move(name);
  o.klass = "tensor";
  o.label = std::move(label);
  o.sm90a = true;
  o.warpgroup = true;
  o.steps_per_iter = 2;
  o.insts_per_step = kWgmmaGroup;
  const double flops = 2.0 * 64 * 256 * k;  // per warpgroup instruction
  o.flops_per_op = flops / 128;             // per thread
  const int dense_k = sparse ? k / 2 : k;
  const double peak_flops = (sparse ? 2 : 1) * ((dense_k == 8)    ? 2048
                                                : (dense_k == 32) ? 8192
                                                                  : 4096);
  o.peak_per_clk_sm = peak_flops / o.flops_per_op;
  o.peak_source = kWhitepaper;
  // A: 64 rows x 32 bytes, B: 256 rows x 32 bytes (k elements of 16/k*2 bytes... always 32 B
  // per row: k16 x 2 B, k8 x 4 B, k32 x 1 B).
  const std::string tile = sparse ? "64 * 32 + 256 * 64" : "(64 + 256) * 32";
  o.prologue =
      "__shared__ __align__(1024) unsigned char gd_tile[" + tile +
      "];\n"
      "  for (int j = threadIdx.x; j < " +
      tile +
      "; j += blockDim.x)\n"
      "    gd_tile[j] = (unsigned char)(" +
      fill_byte +
      ");\n"
      "  asm volatile(\"fence.proxy.async.shared::cta;\");\n"
      "  __syncthreads();\n"
      "  const unsigned gd_base = (unsigned)__cvta_generic_to_shared(gd_tile);\n"
      "  auto gd_desc = [](unsigned addr) {\n"
      "    return (unsigned long long)((addr & 0x3FFFF) >> 4) | (8ull << 16) | (16ull << 32);\n"
      "  };\n"
      "  const unsigned long long desc_a = gd_desc(gd_base), desc_b = gd_desc(gd_base + 64 * 32)";
  // Sparse B rows are 64 B: its 8-row groups of core matrices are 512 B apart, not 256.
  // Metadata 0x4 per 4-bit group: elements 0 and 1 of each 4, valid for tf32's pairs too.
  o.prologue +=
      sparse ? " + (16ull << 32);\n  const unsigned gd_meta = 0x44444444u | (uc >> 8);" : ";";
  const bool f16acc = types.compare(0, 4, "f16.") == 0;
  const int n = f16acc ? 64 : 128;
  const std::string ns = std::to_string(n);
  const std::string t = integer ? "int" : f16acc ? "unsigned" : "float";
  const std::string c = integer || f16acc ? "r" : "f";
  o.decl = t + " a{i}[" + ns + "];\n  for (int j = 0; j < " + ns + "; ++j) a{i}[j] = 0;";
  std::string regs, outs;
  for (int j = 0; j < n; ++j) {
    regs += (j ? "," : "") + std::string("%") + std::to_string(j);
    outs += (j ? ", " : "") + std::string("\"+") + c + "\"(a{i}[" + std::to_string(j) + "])";
  }
  auto op = [&](int i) { return "%" + std::to_string(n + i); };
  std::string tail = integer ? "p" : transposable ? "p, 1, 1, 0, 0" : "p, 1, 1";
  if (sparse) tail = op(3) + ", 0, " + tail;
  const std::string instr = std::string(sparse ? "wgmma.mma_async.sp" : "wgmma.mma_async") +
                            ".sync.aligned.m64n256k" + std::to_string(k);
  std::string one =
      instr + "." + types + " {" + regs + "}, " + op(0) + ", " + op(1) + ", " + tail + ";\\n";
  std::string body;
  for (int g = 0; g < kWgmmaGroup; ++g) body += one;
  o.step =
      "asm volatile(\"{\\n.reg .pred p;\\nsetp.ne.b32 p, " + op(2) +
      ", 0;\\nwgmma.fence.sync.aligned;\\n" + body +
      "wgmma.commit_group.sync.aligned;\\nwgmma.wait_group.sync.aligned 0;\\n}\\n\" : " + outs +
      " : \"l\"(desc_a), \"l\"(desc_b), \"r\"(ub | 1u)" + (sparse ? ", \"r\"(gd_meta)" : "") +
      " : \"memory\");";
  o.fold = integer
               ? "{ int s = 0; for (int j = 0; j < 128; ++j) s += a{i}[j]; acc ^= (unsigned)s; }"
           : f16acc ? "{ unsigned s = 0; for (int j = 0; j < 64; ++j) s ^= a{i}[j]; acc ^= s; }"
                    : "{ float s = 0; for (int j = 0; j < 128; ++j) s += a{i}[j]; acc ^= "
                      "__float_as_uint(s); }";
  o.ptx_expect = instr;
  const bool fp8 =
      types.find("e4m3") != std::string::npos || types.find("e5m2") != std::string::npos;
  o.sass_expect = {std::string(integer ? "IGMMA" : (fp8 ? "QGMMA" : "HGMMA")) +
                   (sparse ? ".SP" : "")};
  return o;
}

}  // namespace

// shape: the tensor rows of the table, in report order; one entry per op
void append_tensor_ops(std::vector<ComputeOp>& v) {
  auto add = [&](ComputeOp o) -> ComputeOp& { return v.emplace_back(std::move(o)); };
  // Tensor cores: mma.sync (warp-wide, sm_80+ shapes; FP8 from sm_89).
  add(mma_sync("mma.f16", "mma.sync m16n8k16 f16->f32", "m16n8k16", "f32.f16.f16.f32", false, "hb",
               4096));
  add(mma_sync("mma.bf16", "mma.sync m16n8k16 bf16->f32", "m16n8k16", "f32.bf16.bf16.f32", false,
               "bb", 4096));
  add(mma_sync("mma.tf32", "mma.sync m16n8k8 tf32->f32", "m16n8k8", "f32.tf32.tf32.f32", false,
               "__float_as_uint(fb)", 2048));
  add(mma_sync("mma.e4m3", "mma.sync m16n8k32 e4m3->f32", "m16n8k32", "f32.e4m3.e4m3.f32", false,
               "0x30303030u", 8192));
  add(mma_sync("mma.e5m2", "mma.sync m16n8k32 e5m2->f32", "m16n8k32", "f32.e5m2.e5m2.f32", false,
               "0x38383838u", 8192));
  add(mma_sync("mma.s8", "mma.sync m16n8k32 s8->s32", "m16n8k32", "s32.s8.s8.s32", true,
               "0x01010101u", 8192));
  // wgmma (sm_90a): tiles of varied small values (0.5..2, fp8 0.5..1, s8 -3..3): constant
  // tiles toggle fewer bits and would flatter the clock under load.
  add(wgmma("wgmma.f16", "wgmma m64n256k16 f16->f32", "f32.f16.f16", 16, false, true,
            "(j & 1) ? 0x38 + ((j >> 1) & 3) : (j * 37) & 0xff"));
  add(wgmma("wgmma.bf16", "wgmma m64n256k16 bf16->f32", "f32.bf16.bf16", 16, false, true,
            "(j & 1) ? 0x3f : 0x80 | ((j * 37) & 0x7f)"));
  add(wgmma("wgmma.tf32", "wgmma m64n256k8 tf32->f32", "f32.tf32.tf32", 8, false, false,
            "(j & 3) == 3 ? 0x3f : (j & 3) == 2 ? 0x80 | ((j * 37) & 0x7f) : (j * 37) & 0xff"));
  add(wgmma("wgmma.e4m3", "wgmma m64n256k32 e4m3->f32", "f32.e4m3.e4m3", 32, false, false,
            "0x30 + ((j * 37) & 7)"));
  add(wgmma("wgmma.e5m2", "wgmma m64n256k32 e5m2->f32", "f32.e5m2.e5m2", 32, false, false,
            "0x38 + ((j * 37) & 3)"));
  add(wgmma("wgmma.s8", "wgmma m64n256k32 s8->s32", "s32.s8.s8", 32, true, false, "1"));
  // FP64 tensor ops (DMMA; no wgmma takes f64: its types are f16/bf16/tf32/e4m3/e5m2/s8/u8/b1,
  // so DMMA is mma.sync only). Peak: the whitepaper's FP64 Tensor Core 66.9 TFLOP/s (H100
  // SXM5) = 132 SMs x 1980 MHz x 256 flop/clk/SM (66.9e12 / (132 x 1.98e9) = 256.0): 128 FP64
  // FMA per clock per SM, twice DFMA's 64. It is counted at 1980 MHz, like its FP64 33.5 =
  // 132 x 1.98e9 x 128; at the 1830 MHz of the dense FP16 figure it would be 277 flop/clk.
  auto dmma = [&](const char* n, const char* shape, int m, int k, int n_a, int n_b, int cc) {
    MmaForm f;
    f.shape = shape;
    f.types = "f64.f64.f64.f64";
    f.acc = "double";
    f.n_acc = m / 4;  // m8n8: 2 per thread, m16n8: 4
    f.n_a = n_a;
    f.n_b = n_b;
    f.a_word = "db";
    f.flops_per_warp = 2.0 * m * 8 * k;
    f.peak_flops = 256;
    ComputeOp& o = add(mma_op(n, std::string("mma.sync ") + shape + " f64 (DMMA)", f));
    o.sass_expect = {"DMMA"};
    o.min_cc = cc;
    if (m == 16) o.launch_bound = 256;  // 64 registers of accumulators at ILP 8
  };
  dmma("mma.f64", "m8n8k4", 8, 4, 1, 1, 80);
  // The m16n8k{4,8,16} f64 shapes are PTX ISA 7.8, sm_90.
  dmma("mma.f64_m16n8k4", "m16n8k4", 16, 4, 2, 1, 90);
  dmma("mma.f64_m16n8k8", "m16n8k8", 16, 8, 4, 2, 90);
  dmma("mma.f64_m16n8k16", "m16n8k16", 16, 16, 8, 4, 90);
  // FP16 accumulate. The whitepaper's dense FP16 peak is the same with FP16 and FP32
  // accumulators (989.4 TFLOP/s, H100 SXM5). A's k-pairs are (x, -x) and B's (x, x): every
  // pair of products cancels, so the f16 accumulators stay finite (a sum growing by 16 x^2
  // per step would reach inf within a few thousand steps).
  {
    MmaForm f;
    f.shape = "m16n8k16";
    f.types = "f16.f16.f16.f16";
    f.acc = "unsigned";
    f.n_acc = 2;
    f.a_word = "(hb & 0xffffu) * 0x10001u ^ 0x80000000u";
    f.b_word = "hb";
    f.flops_per_warp = 4096;
    f.peak_flops = 4096;
    add(mma_op("mma.f16acc", "mma.sync m16n8k16 f16->f16", f)).sass_expect = {"HMMA"};
  }
  // m16n8k8 f16 (HMMA.1688), with f32 and f16 accumulators: half the K of the rows above, the
  // shape Vulkan's cooperative matrices list as 16x8x8 beside 16x8x16. A 2 registers, B 1.
  for (const bool f16_acc : {false, true}) {
    MmaForm f;
    f.shape = "m16n8k8";
    f.types = f16_acc ? "f16.f16.f16.f16" : "f32.f16.f16.f32";
    f.acc = f16_acc ? "unsigned" : "float";
    f.n_acc = f16_acc ? 2 : 4;
    f.n_a = 2;
    f.n_b = 1;
    // f16 accumulators: A's k-pairs (x, -x) cancel against B's (x, x), as mma.f16acc's.
    f.a_word = f16_acc ? "(hb & 0xffffu) * 0x10001u ^ 0x80000000u" : "hb";
    f.b_word = f16_acc ? "hb" : "";
    f.flops_per_warp = 2.0 * 16 * 8 * 8;
    f.peak_flops = 4096;
    add(mma_op(f16_acc ? "mma.f16acc_m16n8k8" : "mma.f16_m16n8k8",
               f16_acc ? "mma.sync m16n8k8 f16->f16" : "mma.sync m16n8k8 f16->f32", f))
        .sass_expect = {"HMMA"};
  }
  add(wgmma("wgmma.f16acc", "wgmma m64n256k16 f16->f16", "f16.f16.f16", 16, false, true,
            "(j & 1) ? (0x38 + ((j >> 2) & 3)) | (j < 64 * 32 && (j & 2) ? 0x80 : 0) "
            ": ((j >> 2) * 37) & 0xff"));
  // 2:4 structured sparsity: A holds 2 of every 4 elements along K, so a sparse shape's K is
  // twice the dense one's for the same registers. FLOPs are dense-equivalent (2 x M x N x K
  // with the K written in the shape), as the whitepaper's "with sparsity" peaks (twice the
  // dense ones: FP16 1979 TFLOP/s) and clpeak's mma.sp rows count them; the labels say so
  // ("dense-eq"; m16n8 for mma.sp, m64n256 for wgmma.sp, f32 or s32 accumulators).
  auto mma_sp = [&](const char* n, const char* label, const char* shape, const char* types,
                    const char* word, double flops, const char* sass) -> ComputeOp& {
    MmaForm f;
    f.shape = shape;
    f.types = types;
    f.acc = types[0] == 's' ? "int" : "float";
    f.n_b = 4;
    f.a_word = word;
    f.sparse = true;
    f.flops_per_warp = flops;
    // Twice the dense peak (f16/bf16 8192, tf32 4096, s8/fp8 16384 flop/clk/SM): for these
    // shapes, one warp-instruction's FLOPs.
    f.peak_flops = flops;
    ComputeOp& o = add(mma_op(n, label, f));
    o.sass_expect = {sass};
    return o;
  };
  mma_sp("mma.sp_f16", "mma.sp k32 f16 dense-eq", "m16n8k32", "f32.f16.f16.f32", "hb", 8192,
         "HMMA.SP");
  mma_sp("mma.sp_bf16", "mma.sp k32 bf16 dense-eq", "m16n8k32", "f32.bf16.bf16.f32", "bb", 8192,
         "HMMA.SP");
  mma_sp("mma.sp_tf32", "mma.sp k16 tf32 dense-eq", "m16n8k16", "f32.tf32.tf32.f32",
         "__float_as_uint(fb)", 4096, "HMMA.SP");
  mma_sp("mma.sp_s8", "mma.sp k64 s8 dense-eq", "m16n8k64", "s32.s8.s8.s32", "0x01010101u", 16384,
         "IMMA.SP");
  mma_sp("mma.sp_e4m3", "mma.sp k64 e4m3 dense-eq", "m16n8k64", "f32.e4m3.e4m3.f32", "0x30303030u",
         16384, "QMMA.SP")
      .missing_why =
      "no QMMA.SP: ptxas (13.0) accepts FP8 mma.sp on sm_90a and emulates it: F2FP.F16.E4M3 "
      "to f16, the metadata re-dealt through SHFL.UP/SHFL.DOWN, SEL and PRMT, then 2 "
      "HMMA.SP.16832.F32 per m16n8k64 (at ILP 8: 128 HMMA.SP in a loop of ~3950 instructions "
      "with register spills). Not FP8 tensor work, and capped at the f16 mma.sp rate; sparse "
      "FP8 on sm_90 is wgmma.sp (QGMMA.SP)";
  // wgmma.sp (sm_90a): the dense types at twice the K, the tiles filled as the dense ones.
  add(wgmma("wgmma.sp_f16", "wgmma.sp k32 f16 dense-eq", "f32.f16.f16", 32, false, true,
            "(j & 1) ? 0x38 + ((j >> 1) & 3) : (j * 37) & 0xff", true));
  add(wgmma("wgmma.sp_bf16", "wgmma.sp k32 bf16 dense-eq", "f32.bf16.bf16", 32, false, true,
            "(j & 1) ? 0x3f : 0x80 | ((j * 37) & 0x7f)", true));
  add(wgmma("wgmma.sp_tf32", "wgmma.sp k16 tf32 dense-eq", "f32.tf32.tf32", 16, false, false,
            "(j & 3) == 3 ? 0x3f : (j & 3) == 2 ? 0x80 | ((j * 37) & 0x7f) : (j * 37) & 0xff",
            true));
  add(wgmma("wgmma.sp_e4m3", "wgmma.sp k64 e4m3 dense-eq", "f32.e4m3.e4m3", 64, false, false,
            "0x30 + ((j * 37) & 7)", true));
  add(wgmma("wgmma.sp_e5m2", "wgmma.sp k64 e5m2 dense-eq", "f32.e5m2.e5m2", 64, false, false,
            "0x38 + ((j * 37) & 3)", true));
  add(wgmma("wgmma.sp_s8", "wgmma.sp k64 s8 dense-eq", "s32.s8.s8", 64, true, false, "1", true));
}

}  // namespace gd
