// The compute probe's Vulkan op table and host replays (vulkan_ops.hpp).
#include "vulkan_ops.hpp"

#include <cmath>
#include <cstring>
#include <vector>

namespace gd::vulkan {

namespace {

using Need = VkOp::Need;
constexpr auto kNoSubgroup = VkSubgroupFeatureFlagBits(0);

// The ops with a module (GD_VK_COMPUTE_OPS in vulkan.cmake) and the SPIR-V each step is.
const VkOp kOps[] = {
    {"fp32.fma", "OpExtInst GLSL.std.450 Fma (f32)", Need::none, kNoSubgroup},
    {"fp32.add", "OpFAdd (f32)", Need::none, kNoSubgroup},
    {"fp32.mul", "OpFMul (f32)", Need::none, kNoSubgroup},
    {"fp32.max", "OpExtInst GLSL.std.450 FMax (f32) of OpFNegate", Need::none, kNoSubgroup},
    {"fp64.fma", "OpExtInst GLSL.std.450 Fma (f64)", Need::float64, kNoSubgroup},
    {"fp64.fma_rrr", "OpExtInst GLSL.std.450 Fma (f64)", Need::float64, kNoSubgroup},
    {"fp64.fma_2reg", "OpExtInst GLSL.std.450 Fma (f64)", Need::float64, kNoSubgroup},
    {"fp64.fma_acc", "OpExtInst GLSL.std.450 Fma (f64, a = n * k + a)", Need::float64, kNoSubgroup},
    {"fp64.add", "OpFAdd (f64)", Need::float64, kNoSubgroup},
    {"fp64.mul", "OpFMul (f64)", Need::float64, kNoSubgroup},
    {"fp16x2.fma", "OpExtInst GLSL.std.450 Fma (f16vec2)", Need::float16, kNoSubgroup},
    {"fp16x2.add", "OpFAdd (f16vec2)", Need::float16, kNoSubgroup},
    {"fp16x2.mul", "OpFMul (f16vec2)", Need::float16, kNoSubgroup},
    {"fp16.fma", "OpExtInst GLSL.std.450 Fma (f16)", Need::float16, kNoSubgroup},
    {"int32.add", "OpIAdd (u32)", Need::none, kNoSubgroup},
    {"int32.mul", "OpIMul (u32)", Need::none, kNoSubgroup},
    {"int32.mulhi", "OpUMulExtended (u32, high word)", Need::none, kNoSubgroup},
    {"int32.mad", "OpIMul + OpIAdd (u32)", Need::none, kNoSubgroup},
    {"int32.lop3", "OpBitwiseAnd + OpBitwiseXor (u32, (a & b) ^ c)", Need::none, kNoSubgroup},
    {"int32.shl", "OpShiftLeftLogical (u32)", Need::none, kNoSubgroup},
    {"int32.rot", "OpShiftLeftLogical + OpShiftRightLogical + OpBitwiseOr (u32 rotate)", Need::none,
     kNoSubgroup},
    {"int32.popc", "OpBitCount (u32)", Need::none, kNoSubgroup},
    {"int32.brev", "OpBitReverse + OpIAdd (u32)", Need::none, kNoSubgroup},
    {"int32.dp4a", "OpUDot (4x8-bit packed, u32)", Need::int_dot, kNoSubgroup},
    {"int32.clz", "OpExtInst GLSL.std.450 FindUMsb + OpISub (u32, 31 - msb)", Need::none,
     kNoSubgroup},
    {"int64.add", "OpIAdd (u64)", Need::int64, kNoSubgroup},
    {"int64.mul", "OpIMul (u64)", Need::int64, kNoSubgroup},
    {"sfu.rcp", "OpFDiv 1/x + OpFAdd (f32)", Need::none, kNoSubgroup},
    {"sfu.rsqrt", "OpExtInst GLSL.std.450 InverseSqrt (f32)", Need::none, kNoSubgroup},
    {"sfu.sqrt", "OpExtInst GLSL.std.450 Sqrt (f32)", Need::none, kNoSubgroup},
    {"sfu.ex2", "OpExtInst GLSL.std.450 Exp2 (f32) of OpFNegate", Need::none, kNoSubgroup},
    {"sfu.lg2", "OpExtInst GLSL.std.450 Log2 (f32) of FAbs + OpFAdd", Need::none, kNoSubgroup},
    {"sfu.sin", "OpExtInst GLSL.std.450 Sin (f32)", Need::none, kNoSubgroup},
    {"sfu.cos", "OpExtInst GLSL.std.450 Cos (f32)", Need::none, kNoSubgroup},
    {"conv.f32_i32", "OpConvertFToS + OpBitwiseXor + OpConvertSToF (f32, i32)", Need::none,
     kNoSubgroup},
    {"conv.f32_f16",
     "OpExtInst GLSL.std.450 PackHalf2x16 + OpBitwiseXor + UnpackHalf2x16 (f32, f16)", Need::none,
     kNoSubgroup},
    {"conv.f64_f32", "OpFConvert f64->f32 + OpFConvert f32->f64 + OpBitwiseXor (low word)",
     Need::float64, kNoSubgroup},
    {"warp.shfl_idx", "OpGroupNonUniformShuffle", Need::none, VK_SUBGROUP_FEATURE_SHUFFLE_BIT},
    {"warp.shfl_up", "OpGroupNonUniformShuffleUp + OpSelect", Need::none,
     VK_SUBGROUP_FEATURE_SHUFFLE_RELATIVE_BIT},
    {"warp.shfl_down", "OpGroupNonUniformShuffleDown + OpSelect", Need::none,
     VK_SUBGROUP_FEATURE_SHUFFLE_RELATIVE_BIT},
    {"warp.shfl_xor", "OpGroupNonUniformShuffleXor", Need::none, VK_SUBGROUP_FEATURE_SHUFFLE_BIT},
    {"warp.ballot", "OpGroupNonUniformBallot", Need::none, VK_SUBGROUP_FEATURE_BALLOT_BIT},
    {"warp.redux", "OpGroupNonUniformIAdd Reduce", Need::none, VK_SUBGROUP_FEATURE_ARITHMETIC_BIT,
     kReduxStepsPerIteration},
    {"lds.chase", "OpLoad (Workgroup u32)", Need::none, kNoSubgroup},
};

uint32_t bits(float f) {
  uint32_t w;
  std::memcpy(&w, &f, 4);
  return w;
}
uint32_t bits(double d) {
  uint64_t w;
  std::memcpy(&w, &d, 8);
  return static_cast<uint32_t>(w) ^ static_cast<uint32_t>(w >> 32);
}

// One FP32 step of `op` (the chains of compute.comp and compute_more.glsl).
float fp32_step(const std::string& op, float a, const ComputeSeeds& z, bool fused) {
  if (op == "fp32.add") return a + z.fc;
  if (op == "fp32.mul") return a * z.fb;
  if (op == "fp32.max") return std::fmax(-a, z.fb);
  if (op == "conv.f32_i32")  // xor with uc >> 8, 0 at run time (compute_more.glsl)
    return static_cast<float>(static_cast<int32_t>(a) ^ static_cast<int32_t>(z.uc >> 8));
  if (fused) return std::fma(a, z.fb, z.fc);
  volatile float m = a * z.fb;  // volatile: no contraction into an FMA here
  return m + z.fc;
}

// One FP64 step of chain i; `next` is chain i + 1's value (the accumulating form's
// multiplicand), k the fma_acc form's c * 1e-9.
double fp64_step(const std::string& op, double a, double next, const ComputeSeeds& z, bool fused) {
  const double db = z.fb, dc = z.fc, k = 0.9990234375, dk = dc * 1e-9;
  if (op == "fp64.add") return a + dc;
  if (op == "fp64.mul") return a * db;
  double x = a, y = k, c = dc;  // fp64.fma: a * K + c
  if (op == "fp64.fma_rrr") {
    y = db;
  } else if (op == "fp64.fma_2reg") {
    y = db;
    c = db;
  } else if (op == "fp64.fma_acc") {
    x = next;
    y = dk;
    c = a;
  }
  if (fused) return std::fma(x, y, c);
  volatile double m = x * y;
  return m + c;
}

uint32_t bit_reverse(uint32_t v) {
  uint32_t r = 0;
  for (int b = 0; b < 32; ++b) r |= ((v >> b) & 1u) << (31 - b);
  return r;
}

// One INT32 step of chain i but the add's; p holds the chain's value one step before where
// the op keeps it.
uint32_t int32_step(const std::string& op, std::vector<uint32_t>& a, std::vector<uint32_t>& p,
                    int i, const ComputeSeeds& z) {
  const int ilp = static_cast<int>(a.size());
  const uint32_t v = a[i], sl = (z.uc & 31u) | 1u;
  if (op == "int32.mul") return v * a[(i + 1) % ilp];
  if (op == "int32.mad") return v * z.ub + z.uc;
  if (op == "int32.mulhi") return static_cast<uint32_t>((uint64_t(v) * z.ub) >> 32);
  if (op == "int32.lop3") {
    const uint32_t next = (v & p[i]) ^ z.ub;
    p[i] = v;
    return next;
  }
  if (op == "int32.shl") return v << sl;
  if (op == "int32.rot") return (v << sl) | (v >> (32u - sl));
  if (op == "int32.popc") {
    uint32_t n = 0;
    for (uint32_t w = v; w; w &= w - 1) ++n;
    return n;
  }
  if (op == "int32.brev") return bit_reverse(v) + z.uc;
  if (op == "int32.dp4a") {  // the four unsigned byte products of v and ub, summed
    uint32_t dot = 0;
    for (int b = 0; b < 32; b += 8) dot += ((v >> b) & 0xFFu) * ((z.ub >> b) & 0xFFu);
    return dot;
  }
  // int32.clz: 31 - findMSB, 32 for 0
  if (v == 0) return 32u;
  int msb = 31;
  while (!((v >> msb) & 1u)) --msb;
  return static_cast<uint32_t>(31 - msb);
}

std::optional<uint32_t> int32_checksum(const std::string& op, int ilp, uint64_t steps,
                                       const ComputeSeeds& z) {
  std::vector<uint32_t> a(ilp), p(ilp);
  for (int i = 0; i < ilp; ++i) {
    const uint32_t u = static_cast<uint32_t>(i);
    a[i] = z.ub + 7u * u;
    if (op == "int32.mul") a[i] |= 1u;  // odd seeds: the step is the multiply alone
    p[i] = z.uc ^ u;
  }
  for (uint64_t n = 0; n < steps; ++n)
    for (int i = 0; i < ilp; ++i) {  // the shader's order: chain 0 first, each step
      if (op == "int32.add") {       // a Fibonacci step
        const uint32_t t = a[i];
        a[i] += p[i];
        p[i] = t;
      } else {
        a[i] = int32_step(op, a, p, i, z);
      }
    }
  uint32_t acc = 0;
  for (int i = 0; i < ilp; ++i) acc ^= a[i];
  return acc;
}

std::optional<uint32_t> int64_checksum(const std::string& op, int ilp, uint64_t steps,
                                       const ComputeSeeds& z) {
  std::vector<uint64_t> a(ilp), p(ilp);
  const uint64_t odd = op == "int64.add" ? 0u : 1u;  // the product's seeds are odd
  for (int i = 0; i < ilp; ++i) {
    a[i] = (((uint64_t(z.ub) << 32) | z.uc) + uint64_t(i)) | odd;
    p[i] = (z.uc ^ static_cast<uint32_t>(i)) | odd;
  }
  for (uint64_t n = 0; n < steps; ++n)
    for (int i = 0; i < ilp; ++i) {  // a Fibonacci step, or its product form
      const uint64_t t = a[i];
      a[i] = op == "int64.add" ? a[i] + p[i] : a[i] * p[i];
      p[i] = t;
    }
  uint32_t acc = 0;
  for (int i = 0; i < ilp; ++i)
    acc ^= static_cast<uint32_t>(a[i]) ^ static_cast<uint32_t>(a[i] >> 32);
  return acc;
}

bool starts(const std::string& s, const char* prefix) { return s.rfind(prefix, 0) == 0; }

}  // namespace

const VkOp* find_vk_op(const std::string& name) {
  for (const auto& o : kOps)
    if (name == o.name) return &o;
  return nullptr;
}

const char* subgroup_feature_name(VkSubgroupFeatureFlagBits bit) {
  switch (bit) {
    case VK_SUBGROUP_FEATURE_SHUFFLE_BIT:
      return "VK_SUBGROUP_FEATURE_SHUFFLE_BIT";
    case VK_SUBGROUP_FEATURE_SHUFFLE_RELATIVE_BIT:
      return "VK_SUBGROUP_FEATURE_SHUFFLE_RELATIVE_BIT";
    case VK_SUBGROUP_FEATURE_BALLOT_BIT:
      return "VK_SUBGROUP_FEATURE_BALLOT_BIT";
    case VK_SUBGROUP_FEATURE_ARITHMETIC_BIT:
      return "VK_SUBGROUP_FEATURE_ARITHMETIC_BIT";
    default:
      return "a VK_SUBGROUP_FEATURE bit";
  }
}

std::string no_module_reason(const ComputeOp& op) {
  const std::string& n = op.name;
  if (starts(n, "bf16"))
    return "GLSL has no bfloat16 arithmetic in glslang 12 (GL_EXT_bfloat16, for "
           "VK_KHR_shader_bfloat16, is not in it)";
  if (n == "int32.dp2a")
    return "SPIR-V's integer dot products (VK_KHR_shader_integer_dot_product) take four packed "
           "8-bit or equal-width vectors: GLSL cannot state dp2a's 16-bit by 8-bit pairs";
  if (n == "precise.div")
    return "GLSL division is Vulkan's OpFDiv, 2.5 ULP: no correctly rounded (IEEE) division "
           "to time";
  if (n == "precise.sqrt")
    return "GLSL's sqrt() has Vulkan's precision (that of 1/inversesqrt), not a correctly "
           "rounded sqrtf; it is timed as sfu.sqrt";
  if (n == "precise.sin")
    return "GLSL's sin() is Vulkan's absolute-error sine on [-pi, pi], not a full-range sinf; "
           "it is timed as sfu.sin";
  if (n == "warp.match")
    return "match.any has no portable GLSL form (only NVIDIA's "
           "GL_NV_shader_subgroup_partitioned, VK_NV_shader_subgroup_partitioned)";
  if (n == "warp.syncwarp")
    return "GLSL has no masked warp barrier (bar.warp.sync); subgroupBarrier() is a control "
           "barrier of other semantics";
  if (n == "sync.bar")
    return "the barrier cost against block size is a CUDA sweep; GLSL's barrier() is not "
           "timed as this figure";
  if (starts(n, "wgmma."))
    return "wgmma is sm_90a PTX: GLSL has no warpgroup matrix op, and Vulkan's matrix units "
           "(VK_KHR_cooperative_matrix) are per subgroup";
  if (op.klass == "tensor")
    return "the matrix units have no core GLSL form (and glslang 12 no "
           "GL_KHR_cooperative_matrix): the mma rows run through VK_KHR_cooperative_matrix in "
           "SPIR-V written at run time (vulkan_coopmat.hpp), not a compute.comp module";
  return "no GLSL form of this op in the Vulkan backend's modules (compute.comp)";
}

std::optional<uint32_t> host_checksum(const std::string& op, int ilp, uint64_t steps,
                                      const ComputeSeeds& z, bool fused, bool ftz) {
  // A fused fma chain is the core's own reference (the same seeds, start values and fold).
  if (!ftz && fused && (op == "fp32.fma" || op == "fp64.fma" || op == "fp64.fma_rrr"))
    if (const ComputeOp* c = find_compute_op(op); c && !c->ref.empty())
      return reference_checksum(*c, ilp, steps, z);
  uint32_t acc = 0;
  if (starts(op, "fp32.") || op == "conv.f32_i32") {
    const float scale = op == "conv.f32_i32" ? 8.0f : 1.0f;
    for (int i = 0; i < ilp; ++i) {
      float a = (z.fs + 0.0625f * static_cast<float>(i)) * scale;
      for (uint64_t n = 0; n < steps; ++n) {
        a = fp32_step(op, a, z, fused);
        if (ftz && std::fpclassify(a) == FP_SUBNORMAL) a = std::copysign(0.0f, a);
      }
      acc ^= bits(a);
    }
    return acc;
  }
  if (starts(op, "fp64.")) {
    std::vector<double> a(ilp);
    for (int i = 0; i < ilp; ++i) a[i] = static_cast<double>(z.fs) + 0.0625 * i;
    for (uint64_t n = 0; n < steps; ++n)
      for (int i = 0; i < ilp; ++i)  // the shader's order: chain 0 first, each step
        a[i] = fp64_step(op, a[i], a[(i + 1) % ilp], z, fused);
    for (double v : a) acc ^= bits(v);
    return acc;
  }
  if (starts(op, "int32.")) return int32_checksum(op, ilp, steps, z);
  if (starts(op, "int64.")) return int64_checksum(op, ilp, steps, z);
  if (op == "lds.chase") return 0u;  // every slot holds its own index
  return std::nullopt;
}

std::vector<uint32_t> shuffle_checksums(const std::string& op, int ilp, uint64_t steps,
                                        const ComputeSeeds& z, uint32_t subgroup) {
  const bool up = op == "warp.shfl_up";
  if ((!up && op != "warp.shfl_down") || subgroup < 2) return {};
  // a[i][lane], seeded as compute_more.glsl seeds them; delta 1 (uc >> 8 is 0).
  std::vector<std::vector<uint32_t>> a(ilp, std::vector<uint32_t>(subgroup));
  for (int i = 0; i < ilp; ++i)
    for (uint32_t s = 0; s < subgroup; ++s)
      a[i][s] = z.ub + 7u * static_cast<uint32_t>(i) + 0x01000193u * s;
  std::vector<uint32_t> next(subgroup);
  for (uint64_t n = 0; n < steps; ++n)
    for (auto& chain : a) {
      for (uint32_t s = 0; s < subgroup; ++s) {
        const bool keep = up ? s < 1 : s + 1 >= subgroup;
        next[s] = keep ? chain[s] : chain[up ? s - 1 : s + 1];
      }
      chain = next;
    }
  std::vector<uint32_t> acc(subgroup, 0);
  for (const auto& chain : a)
    for (uint32_t s = 0; s < subgroup; ++s) acc[s] ^= chain[s];
  return acc;
}

}  // namespace gd::vulkan
