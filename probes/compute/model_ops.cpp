// The compute probe's table of ops: every dependent chain it times, in PTX and in OpenCL,
// with the instruction the SASS must show and the peak it is held against.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <deque>
#include <mutex>
#include <regex>
#include <sstream>

#include "compute/compute.hpp"
#include "gpudissect/json_fields.hpp"
#include "gpudissect/result.hpp"

namespace gd {

namespace {

// Sources of the peaks. The CUDA C++ Programming Guide's table "Throughput of Native
// Arithmetic Instructions (operations per clock cycle per multiprocessor)", column 9.0;
// tensor peaks: model_tensor.cpp.
constexpr const char* kGuide = "CUDA C++ Programming Guide, arithmetic throughput table, cc 9.0";

// The fold of a chain's state into the 32-bit checksum, per C type.
std::string fold_for(const std::string& ctype) {
  if (ctype == "float") return "acc ^= __float_as_uint(a{i});";
  if (ctype == "double")
    return "{ unsigned long long w = (unsigned long long)__double_as_longlong(a{i}); acc ^= "
           "(unsigned)w ^ (unsigned)(w >> 32); }";
  if (ctype == "unsigned long long") return "acc ^= (unsigned)a{i} ^ (unsigned)(a{i} >> 32);";
  return "acc ^= (unsigned)a{i};";
}

std::string cl_fold_for(const std::string& ctype) {
  if (ctype == "float") return "acc ^= as_uint(a{i});";
  if (ctype == "double") return "acc ^= (uint)as_ulong(a{i}) ^ (uint)(as_ulong(a{i}) >> 32);";
  if (ctype == "half2") return "acc ^= as_uint(a{i});";
  if (ctype == "half") return "acc ^= (uint)as_ushort(a{i});";
  if (ctype == "ulong") return "acc ^= (uint)a{i} ^ (uint)(a{i} >> 32);";
  return "acc ^= a{i};";
}

// A single-instruction dependent chain `a = op(a, ...)` in inline PTX.
ComputeOp chain(std::string name, std::string klass, std::string label, const std::string& ctype,
                const std::string& cons, const std::string& init, const std::string& ptx,
                const std::string& inputs, std::string ptx_expect, std::vector<std::string> sass,
                double flops, std::optional<double> peak, int insts = 1) {
  ComputeOp o;
  o.name = std::move(name);
  o.klass = std::move(klass);
  o.label = std::move(label);
  o.decl = ctype + " a{i} = " + init + ";";
  o.step = "asm volatile(\"" + ptx + "\" : \"+" + cons + "\"(a{i})" +
           (inputs.empty() ? "" : " : " + inputs) + ");";
  o.fold = fold_for(ctype);
  o.ptx_expect = std::move(ptx_expect);
  o.sass_expect = std::move(sass);
  o.flops_per_op = flops;
  o.peak_per_clk_sm = peak;
  if (peak) o.peak_source = kGuide;
  o.insts_per_step = insts;
  return o;
}

// OpenCL twin of an op.
void cl(ComputeOp& o, const std::string& ctype, const std::string& init, const std::string& step,
        const std::string& ext = "") {
  o.cl_decl = ctype + " a{i} = " + init + ";";
  o.cl_step = step;
  o.cl_fold = cl_fold_for(ctype);
  o.cl_ext = ext;
}

constexpr const char* kF = "fs + 0.0625f * {i}";
constexpr const char* kD = "(double)fs + 0.0625 * {i}";
// Lane-dependent: with warp-uniform values ptxas moves integer chains to the uniform
// datapath (UIMAD, USHF) or folds shuffles of a uniform value away.
constexpr const char* kU = "ub + 7u * {i} + 0x01000193u * lane";
constexpr const char* kH2 = "hb ^ (unsigned){i}";
constexpr const char* kHs = "(unsigned short)(hs ^ (unsigned short){i})";
// OpenCL seeds. Integer ones depend on the work-item, like kU (NVIDIA's compiler moves
// warp-uniform integer chains to the uniform datapath too); the host check compares work-
// groups item by item, so a seed may depend on get_local_id.
constexpr const char* kFcl = "fs + 0.0625f * {i}";
constexpr const char* kDcl = "(double)fs + 0.0625 * {i}";
constexpr const char* kUcl = "ub + 7u * {i} + 0x01000193u * (uint)get_local_id(0)";
constexpr const char* kU64cl = "((((ulong)uc << 32) | ub) + {i} + 0x01000193ul * get_local_id(0))";
constexpr const char* kH2cl = "(half2)((half)fs, (half)(fs + 0.0625f * {i}))";
constexpr const char* kSgcl = "ub + 7u * {i} + 0x01000193u * get_sub_group_local_id()";

// shape: the table of every op, in the order the report lists them; one entry per op
std::vector<ComputeOp> build_ops() {
  std::vector<ComputeOp> v;
  auto add = [&](ComputeOp o) -> ComputeOp& { return v.emplace_back(std::move(o)); };
  const std::string F = "\"f\"(fb), \"f\"(fc)", Fb = "\"f\"(fb)";
  const std::string D = "\"d\"(db), \"d\"(dc)", Db = "\"d\"(db)";
  const std::string U = "\"r\"(ub), \"r\"(uc)", Ub = "\"r\"(ub)";
  const std::string H = "\"r\"(hb), \"r\"(hc)", Hb = "\"r\"(hb)";
  const std::string Hs = "\"h\"(hs), \"h\"(hs)";

  // FP32. a*b+c with b<1 and c>0 converges: finite whatever the iteration count.
  cl(add(chain("fp32.fma", "fp32", "FP32 fma", "float", "f", kF, "fma.rn.f32 %0, %0, %1, %2;", F,
               "fma.rn.f32", {"FFMA"}, 2, 128)),
     "float", "fs + 0.0625f * {i}", "a{i} = fma(a{i}, fb, fc);");
  v.back().ref = "f32fma";
  cl(add(chain("fp32.add", "fp32", "FP32 add", "float", "f", kF, "add.rn.f32 %0, %0, %1;", Fb,
               "add.rn.f32", {"FADD"}, 1, 128)),
     "float", "fs + 0.0625f * {i}", "a{i} = a{i} + fc;");
  cl(add(chain("fp32.mul", "fp32", "FP32 mul", "float", "f", kF, "mul.rn.f32 %0, %0, %1;", Fb,
               "mul.rn.f32", {"FMUL"}, 1, 128)),
     "float", "fs + 0.0625f * {i}", "a{i} = a{i} * fb;");
  // fmax(fmax(a, b), b) folds to fmax(a, b); the negated operand is free in FMNMX and
  // leaves nothing to fold (the value settles at fb, which the compiler cannot know).
  cl(add(chain("fp32.max", "fp32", "FP32 max", "float", "f", kF, "max.f32 %0, %0, %1;", Fb,
               "max.f32", {"FMNMX"}, 1, 64)),
     "float", kFcl, "a{i} = fmax(-a{i}, fb);");
  // FP64. DFMA reads three 64-bit registers; ptxas sets .reuse on the loop-invariant
  // operands but drops it on every 6th DFMA, and the register-only form then has its two
  // invariant operands in the same banks (R20, R12: banks 0/1): a 1-cycle bank conflict per
  // 6 DFMAs (12 issue cycles) predicts 12/13 = 92.3% of 64, which is what it measured. The
  // table's FP64 fma takes the multiplier as an immediate (1 - 2^-10: low word zero, so it
  // fits DFMA's 32-bit immediate), leaving two register reads per DFMA; the other forms stay
  // as evidence.
  cl(add(chain("fp64.fma", "fp64", "FP64 fma (a = a*K + c)", "double", "d", kD,
               "fma.rn.f64 %0, %0, 0d3FEFF80000000000, %1;", "\"d\"(dc)", "fma.rn.f64", {"DFMA"}, 2,
               64)),
     "double", "(double)fs + 0.0625 * {i}", "a{i} = fma(a{i}, 0.9990234375, (double)fc);",
     "cl_khr_fp64");
  v.back().ref = "f64fma_imm";
  // OpenCL: IEEE fma is exact and a + b, a * b are not reassociated without fast-math, so
  // none of these chains folds; a*b + b settles at b/(1-b), b*c + a grows by 1e-6 a step.
  cl(add(chain("fp64.fma_rrr", "fp64", "FP64 fma (a = a*b + c, 3 regs)", "double", "d", kD,
               "fma.rn.f64 %0, %0, %1, %2;", D, "fma.rn.f64", {"DFMA"}, 2, 64)),
     "double", kDcl, "a{i} = fma(a{i}, (double)fb, (double)fc);", "cl_khr_fp64");
  v.back().ref = "f64fma";
  cl(add(chain("fp64.fma_2reg", "fp64", "FP64 fma (a = a*b + b)", "double", "d", kD,
               "fma.rn.f64 %0, %0, %1, %1;", Db, "fma.rn.f64", {"DFMA"}, 2, 64)),
     "double", kDcl, "a{i} = fma(a{i}, (double)fb, (double)fb);", "cl_khr_fp64");
  cl(add(chain("fp64.fma_acc", "fp64", "FP64 fma (a = b*c + a)", "double", "d", kD,
               "fma.rn.f64 %0, %1, %2, %0;", "\"d\"(db), \"d\"(dc * 1e-3)", "fma.rn.f64", {"DFMA"},
               2, 64)),
     "double", kDcl, "a{i} = fma((double)fb, (double)fc * 1e-3, a{i});", "cl_khr_fp64");
  cl(add(chain("fp64.add", "fp64", "FP64 add", "double", "d", kD, "add.rn.f64 %0, %0, %1;", Db,
               "add.rn.f64", {"DADD"}, 1, 64)),
     "double", kDcl, "a{i} = a{i} + (double)fb;", "cl_khr_fp64");
  cl(add(chain("fp64.mul", "fp64", "FP64 mul", "double", "d", kD, "mul.rn.f64 %0, %0, %1;", Db,
               "mul.rn.f64", {"DMUL"}, 1, 64)),
     "double", kDcl, "a{i} = a{i} * (double)fb;", "cl_khr_fp64");
  // FP16: half2 and scalar, BF16x2
  cl(add(chain("fp16x2.fma", "fp16", "FP16x2 fma (HFMA2)", "unsigned", "r", kH2,
               "fma.rn.f16x2 %0, %0, %1, %2;", H, "fma.rn.f16x2", {"HFMA2"}, 4, 128)),
     "half2", "(half2)((half)fs, (half)(fs + 0.0625f * {i}))", "a{i} = fma(a{i}, hb, hc);",
     "cl_khr_fp16");
  // OpenCL half arithmetic needs cl_khr_fp16. a + c stops growing at 4 (0.001 is under half
  // an ulp there), a * b decays to 0.
  cl(add(chain("fp16x2.add", "fp16", "FP16x2 add", "unsigned", "r", kH2, "add.rn.f16x2 %0, %0, %1;",
               Hb, "add.rn.f16x2", {"HADD2", "HFMA2.MMA"}, 2, 128)),
     "half2", kH2cl, "a{i} = a{i} + hc;", "cl_khr_fp16");
  cl(add(chain("fp16x2.mul", "fp16", "FP16x2 mul", "unsigned", "r", kH2, "mul.rn.f16x2 %0, %0, %1;",
               Hb, "mul.rn.f16x2", {"HMUL2", "HFMA2.MMA"}, 2, 128)),
     "half2", kH2cl, "a{i} = a{i} * hb;", "cl_khr_fp16");
  cl(add(chain("fp16.fma", "fp16", "FP16 fma (scalar)", "unsigned short", "h", kHs,
               "fma.rn.f16 %0, %0, %1, %2;", Hs, "fma.rn.f16", {"HFMA2"}, 2, std::nullopt)),
     "half", "(half)(fs + 0.0625f * {i})", "a{i} = fma(a{i}, hb.s0, hc.s0);", "cl_khr_fp16");
  add(chain("bf16x2.fma", "fp16", "BF16x2 fma", "unsigned", "r", kH2,
            "fma.rn.bf16x2 %0, %0, %1, %2;", "\"r\"(bb), \"r\"(bc)", "fma.rn.bf16x2", {"HFMA2"}, 4,
            128));
  // INT32
  // IMAD.IADD is an add too (on the FMA pipe): ptxas splits adds between it and IADD3, so
  // both count. Counting IADD3 alone made the ILP 8 loop's "0.5 SASS per op", and the latency
  // of one chain was doubled by it (10.1 cycles on an H200 for a 5-cycle chain).
  cl(add(chain("int32.add", "int32", "INT32 add", "unsigned", "r", kU, "add.u32 %0, %0, %1;",
               "\"r\"(a{j})", "add.u32", {"IADD3", "IADD", "IMAD.IADD"}, 1, 64)),
     // A Fibonacci step: one add per step whose inputs are the chain's two previous values.
     // `a + a{j}` folds at ILP 1 (a + a is a shift) and a loop-invariant addend is turned
     // into a multiply by induction-variable rewriting; this has no closed form to fold to.
     "uint", std::string(kUcl) + ", p{i} = uc ^ {i}u",
     "{ uint t = a{i}; a{i} += p{i}; p{i} = t; }");
  cl(add(chain("int32.mul", "int32", "INT32 mul.lo", "unsigned", "r", kU, "mul.lo.u32 %0, %0, %1;",
               "\"r\"(a{j})", "mul.lo.u32", {"IMAD"}, 1, 64)),
     // Odd seeds keep every product odd (never 0); at ILP 1 a{j} is a{i}: a square, as CUDA's.
     "uint", std::string(kUcl) + " | 1u", "a{i} = a{i} * a{j};");
  cl(add(chain("int32.mulhi", "int32", "INT32 mul.hi", "unsigned", "r", kU,
               "mul.hi.u32 %0, %0, %1;", Ub, "mul.hi.u32", {"IMAD.HI"}, 1, 64)),
     "uint", kUcl, "a{i} = mul_hi(a{i}, ub);");
  cl(add(chain("int32.mad", "int32", "INT32 mad (IMAD)", "unsigned", "r", kU,
               "mad.lo.u32 %0, %0, %1, %2;", U, "mad.lo.u32", {"IMAD"}, 2, 64)),
     "uint", "ub + 7u * {i}", "a{i} = a{i} * ub + uc;");
  // OpenCL: a three-input xor of a chain with constants (or with its own earlier values) is
  // linear over GF(2) and compilers collapse it (clang 14 folds a body of 32 into 3 XORs);
  // an AND of the chain's last two values keeps it nonlinear and still one three-input
  // function, LOP3 on NVIDIA (the int32.add trick: p holds the previous value).
  cl(add(chain("int32.lop3", "int32", "INT32 lop3 (xor3)", "unsigned", "r", kU,
               "lop3.b32 %0, %0, %1, %2, 0x96;", U, "lop3.b32", {"LOP3"}, 1, 64)),
     "uint", std::string(kUcl) + ", p{i} = uc ^ {i}u",
     "{ uint t = a{i}; a{i} = (a{i} & p{i}) ^ ub; p{i} = t; }");
  // OpenCL masks the shift count to 5 bits: NVIDIA's wrapping SHF does that in itself.
  cl(add(chain("int32.shl", "int32", "INT32 shift (shl)", "unsigned", "r", kU,
               "shl.b32 %0, %0, %1;", "\"r\"(a{j})", "shl.b32", {"SHF", "IMAD.SHL", "SHL"}, 1, 64)),
     "uint", kUcl, "a{i} = a{i} << a{j};");
  cl(add(chain("int32.rot", "int32", "INT32 funnel shift", "unsigned", "r", kU,
               "shf.l.wrap.b32 %0, %0, %0, %1;", "\"r\"(a{j})", "shf.l.wrap", {"SHF"}, 1, 64)),
     "uint", kUcl, "a{i} = rotate(a{i}, a{j});");
  cl(add(chain("int32.popc", "int32", "INT32 popc", "unsigned", "r", kU, "popc.b32 %0, %0;", "",
               "popc.b32", {"POPC"}, 1, 16)),
     "uint", kUcl, "a{i} = popcount(a{i});");
  // brev(brev(x)) = x: a pure bit_reverse chain folds away, so one add rides along (the
  // figure's latency holds it; its rate is still bounded by the 16/clk BREV).
  cl(add(chain("int32.brev", "int32", "INT32 brev", "unsigned", "r", kU, "brev.b32 %0, %0;", "",
               "brev.b32", {"BREV"}, 1, 16)),
     "uint", kUcl, "a{i} = bit_reverse(a{i}) + ub;", "cl_khr_extended_bit_ops");
  // OpenCL's clz(0) is 32: FLO and an IADD3 (31 - position) on NVIDIA, as clz.b32 in PTX.
  cl(add(chain("int32.clz", "int32", "INT32 clz", "unsigned", "r", kU, "clz.b32 %0, %0;", "",
               "clz.b32", {"FLO"}, 1, 16)),
     "uint", kUcl, "a{i} = clz(a{i});");
  // The chain feeds the dot product's bytes: a constant pair would be hoisted, leaving an add.
  cl(add(chain("int32.dp4a", "int32", "INT8 dp4a", "unsigned", "r", kU,
               "dp4a.u32.u32 %0, %1, %2, %0;", U, "dp4a.u32.u32", {"IDP.4A"}, 8, std::nullopt)),
     "uint", kUcl, "a{i} = dot_4x8packed_uu_uint(a{i}, ub) + a{i};", "cl_khr_integer_dot_product");
  add(chain("int32.dp2a", "int32", "INT16 dp2a", "unsigned", "r", kU,
            "dp2a.lo.u32.u32 %0, %1, %2, %0;", U, "dp2a.lo.u32.u32", {"IDP.2A"}, 4, std::nullopt));
  // INT64: emulated with 32-bit halves; the SASS says how.
  // a + K and a * K by a constant fold: OpenCL compilers reassociate them into one multiply
  // or add per loop, and ptxas merged two PTX adds of K into one three-input IADD3 pair (2.1
  // cycles a step on an H200) and strength-reduced the product on the uniform datapath. The
  // chain's last two values (a Fibonacci step, a product of two odd values) have no closed
  // form, on every backend: the PTX step is one add.u64 / mul.lo.u64 of them.
  add(chain("int64.add", "int64", "INT64 add", "unsigned long long", "l",
            "ub64 + {i} + 0x01000193ull * lane, p{i} = ((unsigned long long)uc ^ {i}u) + lane",
            "add.u64 %0, %0, %1;", "\"l\"(p{i})", "add.u64", {"IADD3", "IADD"}, 1, std::nullopt));
  v.back().step =
      "{ unsigned long long t = a{i}; asm volatile(\"add.u64 %0, %0, %1;\" : \"+l\"(a{i}) : "
      "\"l\"(p{i})); p{i} = t; }";
  cl(v.back(), "ulong", std::string(kU64cl) + ", p{i} = (ulong)uc ^ {i}u",
     "{ ulong t = a{i}; a{i} += p{i}; p{i} = t; }");
  add(chain("int64.mul", "int64", "INT64 mul.lo", "unsigned long long", "l",
            "(ub64 + {i} + 0x01000193ull * lane) | 1ull, p{i} = ((unsigned long long)uc ^ {i}u) | "
            "1ull",
            "mul.lo.u64 %0, %0, %1;", "\"l\"(p{i})", "mul.lo.u64", {"IMAD"}, 1, std::nullopt));
  v.back().step =
      "{ unsigned long long t = a{i}; asm volatile(\"mul.lo.u64 %0, %0, %1;\" : \"+l\"(a{i}) : "
      "\"l\"(p{i})); p{i} = t; }";
  cl(v.back(), "ulong", std::string(kU64cl) + " | 1ul, p{i} = ((ulong)uc ^ {i}u) | 1ul",
     "{ ulong t = a{i}; a{i} *= p{i}; p{i} = t; }");
  // Special functions (MUFU). Each chain keeps its value finite: 1/x oscillates, rsqrt and
  // sqrt go to 1, 2^-x to 0.64, sin to 0, cos to 0.74; log2|x| wanders but is finite for
  // most seeds (a NaN or inf changes no MUFU timing).
  auto sfu = [&](const char* n, const char* l, const char* ptx, const char* expect,
                 const char* sass, const char* clstep) {
    ComputeOp& o = add(chain(n, "sfu", l, "float", "f", kF, ptx, "", expect, {sass}, 1, 16));
    if (clstep) cl(o, "float", "fs + 0.0625f * {i}", clstep);
    // (CUDA's PTX is .ftz. NVIDIA's OpenCL emits the plain .f32 form whatever the build
    // options (-cl-denorms-are-zero, -cl-fast-relaxed-math), and ptxas wraps that MUFU in
    // denormal scaling: FSETP, two FMUL: the OpenCL chains carry it, results/NOTES-compute.md.)
  };
  // rcp(rcp(x)) = x is folded by ptxas: 1/(x + c) (one FADD beside) is not.
  sfu("sfu.rcp", "rcp.approx (+FADD)",
      "{.reg .f32 t; add.f32 t, %0, 0f3A83126F; rcp.approx.ftz.f32 %0, t;}", "rcp.approx",
      "MUFU.RCP", "a{i} = native_recip(a{i});");
  sfu("sfu.rsqrt", "rsqrt.approx", "rsqrt.approx.ftz.f32 %0, %0;", "rsqrt.approx", "MUFU.RSQ",
      "a{i} = native_rsqrt(a{i});");
  sfu("sfu.sqrt", "sqrt.approx", "sqrt.approx.ftz.f32 %0, %0;", "sqrt.approx", "MUFU.SQRT",
      "a{i} = native_sqrt(a{i});");
  sfu("sfu.ex2", "ex2.approx", "{.reg .f32 t; neg.f32 t, %0; ex2.approx.ftz.f32 %0, t;}",
      "ex2.approx", "MUFU.EX2", "a{i} = native_exp2(-a{i});");
  sfu("sfu.lg2", "lg2.approx", "{.reg .f32 t; abs.f32 t, %0; lg2.approx.ftz.f32 %0, t;}",
      "lg2.approx", "MUFU.LG2", "a{i} = native_log2(fabs(a{i}) + 1.0f);");
  sfu("sfu.sin", "sin.approx", "sin.approx.ftz.f32 %0, %0;", "sin.approx", "MUFU.SIN",
      "a{i} = native_sin(a{i});");
  sfu("sfu.cos", "cos.approx", "cos.approx.ftz.f32 %0, %0;", "cos.approx", "MUFU.COS",
      "a{i} = native_cos(a{i});");
  // What ordinary code gets: IEEE division and sqrt, full-range sinf (several instructions
  // each; the figure is per call).
  // OpenCL C 1.2 bounds single-precision x / y to 2.5 ulp and sqrt to 3 ulp unless the
  // program is built with -cl-fp32-correctly-rounded-divide-sqrt, which a device offers only
  // where it reports CL_FP_CORRECTLY_ROUNDED_DIVIDE_SQRT (elsewhere the IEEE figures are
  // unsupported); sin is full range within 4 ulp either way.
  auto precise = [&](const char* n, const char* l, const char* expr, const char* ptx,
                     const char* sass, const char* clstep, const char* cloptions) {
    ComputeOp o;
    o.name = n;
    o.klass = "precise";
    o.label = l;
    o.decl = std::string("float a{i} = ") + kF + ";";
    o.step = expr;
    o.fold = fold_for("float");
    o.ptx_expect = ptx;
    o.sass_expect = {sass};
    cl(o, "float", kFcl, clstep);
    o.cl_options = cloptions;
    add(std::move(o));
  };
  constexpr const char* kIeee = "-cl-fp32-correctly-rounded-divide-sqrt";
  precise("precise.div", "x / y (IEEE)", "a{i} = fb / a{i};", "div.rn.f32", "MUFU.RCP",
          "a{i} = fb / a{i};", kIeee);
  precise("precise.sqrt", "sqrtf (IEEE)", "a{i} = sqrtf(a{i});", "sqrt.rn.f32", "MUFU.RSQ",
          "a{i} = sqrt(a{i});", kIeee);
  // sinf is a polynomial after range reduction (no MUFU.SIN): FFMA is its instruction.
  precise("precise.sin", "sinf (full range)", "a{i} = sinf(a{i});", "fma.rn.f32", "FFMA",
          "a{i} = sin(a{i});", "");
  // Conversions, as round trips so the chain stays one type (two instructions per step).
  // OpenCL: a round trip is idempotent (its result converts back exactly) and compilers fold
  // a chain of them to one. The f32->i32 trip converts -a (a free F2I operand modifier:
  // folding would need -0 = +0); the trips through a narrower float flip the lowest bit of
  // the wide value first (one LOP3 in the chain), which the narrowing rounds away.
  cl(add(chain("conv.f32_i32", "conv", "f32->i32->f32", "float", "f", kF,
               "{.reg .s32 t; cvt.rzi.s32.f32 t, %0; cvt.rn.f32.s32 %0, t;}", "", "cvt.rzi.s32.f32",
               {"F2I", "I2F", "I2FP", "FRND"}, 1, 16, 2)),
     "float", kFcl, "a{i} = convert_float(convert_int_rtz(-a{i}));");
  // f16 through OpenCL C 1.2's own vstore_half_rte / vload_half (no cl_khr_fp16 needed): the
  // half lives in a private word that the compiler keeps in a register.
  cl(add(chain("conv.f32_f16", "conv", "f32->f16->f32", "float", "f", kF,
               "{.reg .b16 t; cvt.rn.f16.f32 t, %0; cvt.f32.f16 %0, t;}", "", "cvt.rn.f16.f32",
               {"F2F", "F2FP", "HADD2.F32"}, 1, std::nullopt, 2)),
     "float", kFcl,
     "vstore_half_rte(as_float(as_uint(a{i}) ^ 1u), 0, (half*)&h{i}); a{i} = vload_half(0, "
     "(const half*)&h{i});");
  v.back().cl_decl += " ushort h{i};";
  cl(add(chain("conv.f64_f32", "conv", "f64->f32->f64", "double", "d", kD,
               "{.reg .f32 t; cvt.rn.f32.f64 t, %0; cvt.f64.f32 %0, t;}", "", "cvt.rn.f32.f64",
               {"F2F"}, 1, 16, 2)),
     "double", kDcl, "a{i} = as_double(as_ulong((double)(float)a{i}) ^ 1ul);", "cl_khr_fp64");
  // Warp operations: the value moves through the lanes, one dependent step each.
  // The source lane is the value's own low bits: it differs per lane and per step, so ptxas
  // cannot prove two shuffles equal (a fixed source lane makes the value warp-uniform after
  // one step, and ptxas kept 8 SHFL.IDX of 512).
  cl(add(chain("warp.shfl_idx", "warp", "shfl.sync.idx", "unsigned", "r", kU,
               "shfl.sync.idx.b32 %0, %0, %0, 31, -1;", "", "shfl.sync.idx", {"SHFL.IDX"}, 1, 32)),
     "uint", "ub + 7u * {i} + 0x01000193u * get_sub_group_local_id()",
     "a{i} = sub_group_shuffle(a{i}, a{i} & gd_sgm);", "cl_khr_subgroup_shuffle");
  // OpenCL leaves the value undefined where the source lane is outside the sub-group (CUDA
  // keeps the lane's own): implementations read some fixed lane there, and the host check
  // catches one whose work-groups disagree.
  cl(add(chain("warp.shfl_up", "warp", "shfl.sync.up", "unsigned", "r", kU,
               "shfl.sync.up.b32 %0, %0, 1, 0, -1;", "", "shfl.sync.up", {"SHFL.UP"}, 1, 32)),
     "uint", kSgcl, "a{i} = sub_group_shuffle_up(a{i}, 1u);", "cl_khr_subgroup_shuffle_relative");
  cl(add(chain("warp.shfl_down", "warp", "shfl.sync.down", "unsigned", "r", kU,
               "shfl.sync.down.b32 %0, %0, 1, 31, -1;", "", "shfl.sync.down", {"SHFL.DOWN"}, 1,
               32)),
     "uint", kSgcl, "a{i} = sub_group_shuffle_down(a{i}, 1u);", "cl_khr_subgroup_shuffle_relative");
  cl(add(chain("warp.shfl_xor", "warp", "shfl.sync.bfly", "unsigned", "r", kU,
               "shfl.sync.bfly.b32 %0, %0, 1, 31, -1;", "", "shfl.sync.bfly", {"SHFL.BFLY"}, 1,
               32)),
     "uint", "ub + 7u * {i} + 0x01000193u * get_sub_group_local_id()",
     "a{i} = sub_group_shuffle_xor(a{i}, 1u);", "cl_khr_subgroup_shuffle");
  // The first 32 lanes' bits (.x): a sub-group of 32 gets CUDA's mask.
  cl(add(chain("warp.ballot", "warp", "vote.sync.ballot", "unsigned", "r", kU,
               "{.reg .pred p; setp.ne.u32 p, %0, 0; vote.sync.ballot.b32 %0, p, -1;}", "",
               "vote.sync.ballot", {"VOTE"}, 1, std::nullopt)),
     "uint", kSgcl, "a{i} = sub_group_ballot(a{i} != 0u).x;", "cl_khr_subgroup_ballot");
  add(chain("warp.match", "warp", "match.any.sync", "unsigned", "r", kU,
            "match.any.sync.b32 %0, %0, -1;", "", "match.any.sync", {"MATCH"}, 1, std::nullopt));
  cl(add(chain("warp.redux", "warp", "redux.sync.add", "unsigned", "r", kU,
               "redux.sync.add.u32 %0, %0, -1;", "", "redux.sync.add", {"REDUX", "CREDUX"}, 1,
               std::nullopt)),
     "uint", "ub + 7u * {i} + 0x01000193u * get_sub_group_local_id()",
     "a{i} = sub_group_reduce_add(a{i}) ^ a{i};", "cl_khr_subgroups");
  {
    ComputeOp o;
    o.name = "warp.syncwarp";
    o.klass = "warp";
    o.label = "__syncwarp";
    // A literal full mask lets ptxas prove the warp converged and emit NOP; a mask it cannot
    // see (all ones at run time: uc >> 8 is 0) keeps the WARPSYNC.
    o.prologue = "const unsigned gd_mask = ~(uc >> 8);";
    o.decl = "unsigned a{i} = ub;";
    o.step = "asm volatile(\"bar.warp.sync %0;\" :: \"r\"(gd_mask) : \"memory\");";
    o.fold = fold_for("unsigned");
    o.ptx_expect = "bar.warp.sync";
    o.sass_expect = {"WARPSYNC"};
    // ptxas 13.0, sm_90: a warp-uniform mask in converged code becomes NOP. A per-lane mask
    // gets a convergence check (MATCH.ANY, REDUX.OR, VOTEU.ANY, BRA.DIV) and WARPSYNC.COLLECTIVE
    // only on the out-of-line path a diverged warp takes (results/NOTES-compute.md).
    o.elided_to = "NOP";
    o.elided_why = "compiled to NOP (no WARPSYNC in converged code): costs one issue slot";
    add(std::move(o));
  }
  {
    // __syncthreads: its cost against block size is measured with one block of each size.
    ComputeOp o;
    o.name = "sync.bar";
    o.klass = "sync";
    o.label = "__syncthreads";
    o.decl = "unsigned a{i} = ub;";
    o.step = "asm volatile(\"bar.sync 0;\" ::: \"memory\");";
    o.fold = fold_for("unsigned");
    cl(o, "uint", "ub", "barrier(CLK_LOCAL_MEM_FENCE);");
    o.ptx_expect = "bar.sync";
    o.sass_expect = {"BAR.SYNC", "BAR"};
    o.steps_per_iter = 64;
    add(std::move(o));
  }
  {
    // Shared-memory load chasing its own address: for the mixed FFMA + LDS pair.
    ComputeOp o;
    o.name = "lds.chase";
    o.klass = "memory";
    o.label = "shared load (LDS)";
    o.prologue =
        "__shared__ unsigned gd_lds[1024];\n"
        "  for (int j = threadIdx.x; j < 1024; j += blockDim.x)\n"
        "    gd_lds[j] = (unsigned)__cvta_generic_to_shared(&gd_lds[j]);\n"
        "  __syncthreads();";
    o.decl =
        "unsigned a{i} = (unsigned)__cvta_generic_to_shared(&gd_lds[(lane + 32 * {i}) & 1023]);";
    o.step = "asm volatile(\"ld.shared.u32 %0, [%0];\" : \"+r\"(a{i}) :: \"memory\");";
    o.fold = "acc ^= a{i} - (unsigned)__cvta_generic_to_shared(&gd_lds[(lane + 32 * {i}) & 1023]);";
    o.ptx_expect = "ld.shared.u32";
    o.sass_expect = {"LDS"};
    // OpenCL: byte offsets into a __local array, so the address is the offset plus the
    // array's base (LDS [R+UR] on NVIDIA) with no scaling instruction in the chain.
    cl(o, "uint", "(((uint)get_local_id(0) & 31u) + 32u * {i}) % 1024u * 4u",
       "a{i} = *(__local const uint*)((__local const uchar*)gd_lds + a{i});");
    o.cl_prologue =
        "__local uint gd_lds[1024];\n"
        "  for (uint j = get_local_id(0); j < 1024u; j += get_local_size(0)) gd_lds[j] = 4u * j;\n"
        "  barrier(CLK_LOCAL_MEM_FENCE);";
    o.peak_per_clk_sm = 32;  // 128 B/clk/SM of shared bandwidth = 32 words
    o.peak_source = kGuide;
    add(std::move(o));
  }
  append_tensor_ops(v);
  return v;
}
}  // namespace

const std::vector<ComputeOp>& compute_ops() {
  static const std::vector<ComputeOp> ops = build_ops();
  return ops;
}

namespace {
// Ops a backend adds beyond the catalogue (register_compute_op): a deque, so that references
// handed out stay valid as more are added.
struct Registered {
  std::mutex mu;
  std::deque<ComputeOp> ops;
};
Registered& registered() {
  static Registered r;
  return r;
}
}  // namespace

const ComputeOp* find_compute_op(const std::string& name) {
  for (const auto& o : compute_ops())
    if (o.name == name) return &o;
  Registered& r = registered();
  std::lock_guard<std::mutex> lock(r.mu);
  for (const auto& o : r.ops)
    if (o.name == name) return &o;
  return nullptr;
}

const ComputeOp& register_compute_op(ComputeOp op) {
  for (const auto& o : compute_ops())
    if (o.name == op.name) return o;
  Registered& r = registered();
  std::lock_guard<std::mutex> lock(r.mu);
  for (const auto& o : r.ops)
    if (o.name == op.name) return o;
  return r.ops.emplace_back(std::move(op));
}

}  // namespace gd
