// The matrix units through VK_KHR_cooperative_matrix: which entry of the driver's list a
// table op means, the types this project writes, and the value the timed kernel leaves
// (model_coopmat_spirv.cpp writes the kernel).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "compute/compute.hpp"

namespace gd {

namespace {

constexpr uint32_t kSubgroupScope = 3;  // VkScopeKHR / SPIR-V Scope Subgroup

bool is_32_or_less_int(CoopType t) {
  return t == CoopType::s8 || t == CoopType::s16 || t == CoopType::s32 || t == CoopType::u8 ||
         t == CoopType::u16 || t == CoopType::u32;
}

}  // namespace

bool coop_type_is_float(CoopType t) {
  return t == CoopType::f16 || t == CoopType::f32 || t == CoopType::f64 || t == CoopType::bf16 ||
         t == CoopType::e4m3 || t == CoopType::e5m2;
}

bool coop_type_is_signed_int(CoopType t) {
  return t == CoopType::s8 || t == CoopType::s16 || t == CoopType::s32;
}

CoopType coop_type_from_vk(uint32_t t) {
  switch (t) {
    case 0:
      return CoopType::f16;
    case 1:
      return CoopType::f32;
    case 2:
      return CoopType::f64;
    case 3:
      return CoopType::s8;
    case 4:
      return CoopType::s16;
    case 5:
      return CoopType::s32;
    case 6:
      return CoopType::s64;
    case 7:
      return CoopType::u8;
    case 8:
      return CoopType::u16;
    case 9:
      return CoopType::u32;
    case 10:
      return CoopType::u64;
    case 1000141000:
      return CoopType::bf16;
    case 1000491002:
      return CoopType::e4m3;
    case 1000491003:
      return CoopType::e5m2;
    default:
      return CoopType::other;
  }
}

std::string coop_type_name(CoopType t) {
  static const char* const names[] = {"f16", "f32", "f64", "s8",   "s16",  "s32",  "s64",  "u8",
                                      "u16", "u32", "u64", "bf16", "e4m3", "e5m2", "other"};
  return names[static_cast<int>(t)];
}

std::string CoopMatShape::name() const {
  std::string s = std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k) + " " +
                  coop_type_name(a) + "*" + coop_type_name(b) + "+" + coop_type_name(c);
  if (result != c) s += "->" + coop_type_name(result);
  if (saturating) s += " saturating";
  if (scope != kSubgroupScope) s += " scope " + std::to_string(scope);
  return s;
}

std::string coop_matrix_op_name(const CoopMatShape& s) {
  const std::string in =
      s.a == s.b ? coop_type_name(s.a) : coop_type_name(s.a) + "_" + coop_type_name(s.b);
  return "coopmat." + in + "_" + coop_type_name(s.c) + "_" + std::to_string(s.m) + "x" +
         std::to_string(s.n) + "x" + std::to_string(s.k);
}

ComputeOp coop_matrix_op(const CoopMatShape& s, uint32_t subgroup_size) {
  ComputeOp o;
  o.name = coop_matrix_op_name(s);
  o.klass = "tensor";
  o.label = "coopmat " + s.name();
  o.flops_per_op = 2.0 * s.m * s.n * s.k / std::max<uint32_t>(1, subgroup_size);
  // NVIDIA's names for its matrix instructions; other vendors' machine code is not read.
  const bool fp8 = s.a == CoopType::e4m3 || s.a == CoopType::e5m2;
  o.sass_expect = {s.a == CoopType::f64      ? "DMMA"
                   : fp8                     ? "QMMA"
                   : coop_type_is_float(s.a) ? "HMMA"
                                             : "IMMA"};
  return o;
}

CoopMatChoice coop_matrix_for(const std::string& op, const std::vector<CoopMatShape>& listed) {
  if (op.rfind("coopmat.", 0) == 0) {  // a listed entry's own row
    CoopMatChoice r;
    for (const CoopMatShape& s : listed)
      if (coop_matrix_op_name(s) == op && s.scope == kSubgroupScope && !s.saturating) r.shape = s;
    if (!r.shape) r.why = "the device lists no subgroup-scope entry " + op;
    return r;
  }
  struct Want {
    const char* op;
    CoopType in, acc;
    uint32_t m, n, k;
  };
  // CUDA's mma.sync forms of the table (model_tensor.cpp): one MulAdd of this shape is one
  // of CUDA's thread-instructions, so the figures mean the same on both.
  static const Want wants[] = {
      {"mma.f16", CoopType::f16, CoopType::f32, 16, 8, 16},
      {"mma.bf16", CoopType::bf16, CoopType::f32, 16, 8, 16},
      {"mma.f16acc", CoopType::f16, CoopType::f16, 16, 8, 16},
      {"mma.f16_m16n8k8", CoopType::f16, CoopType::f32, 16, 8, 8},
      {"mma.f16acc_m16n8k8", CoopType::f16, CoopType::f16, 16, 8, 8},
      {"mma.s8", CoopType::s8, CoopType::s32, 16, 8, 32},
      {"mma.e4m3", CoopType::e4m3, CoopType::f32, 16, 8, 32},
      {"mma.e5m2", CoopType::e5m2, CoopType::f32, 16, 8, 32},
      {"mma.f64", CoopType::f64, CoopType::f64, 8, 8, 4},
      {"mma.f64_m16n8k4", CoopType::f64, CoopType::f64, 16, 8, 4},
      {"mma.f64_m16n8k8", CoopType::f64, CoopType::f64, 16, 8, 8},
      {"mma.f64_m16n8k16", CoopType::f64, CoopType::f64, 16, 8, 16},
  };
  const Want* w = nullptr;
  for (const Want& x : wants)
    if (op == x.op) w = &x;
  CoopMatChoice r;
  if (!w) {
    r.no_form = true;
    r.why = op == "mma.tf32" ? "Vulkan's cooperative matrices have no TF32 component type "
                               "(VkComponentTypeKHR lists none)"
            : op.rfind("mma.sp", 0) == 0
                ? "VK_KHR_cooperative_matrix has no structured-sparse (2:4) multiply"
                : "no cooperative-matrix form of " + op;
    return r;
  }
  std::string same_types;
  const CoopMatShape* multiple = nullptr;  // same K, M x N a multiple of CUDA's: the smallest
  for (const CoopMatShape& s : listed) {
    if (s.a != w->in || s.b != w->in || s.c != w->acc || s.result != w->acc) continue;
    if (s.saturating || s.scope != kSubgroupScope) continue;
    if (s.m == w->m && s.n == w->n && s.k == w->k) {
      r.shape = s;
      return r;
    }
    if (s.k == w->k && (s.m * s.n) % (w->m * w->n) == 0 &&
        (!multiple || s.m * s.n < multiple->m * multiple->n))
      multiple = &s;
    same_types += (same_types.empty() ? "" : ", ") + std::to_string(s.m) + "x" +
                  std::to_string(s.n) + "x" + std::to_string(s.k);
  }
  const std::string shape =
      std::to_string(w->m) + "x" + std::to_string(w->n) + "x" + std::to_string(w->k);
  const std::string types =
      coop_type_name(w->in) + "*" + coop_type_name(w->in) + "+" + coop_type_name(w->acc);
  if (multiple) {
    const uint32_t times = multiple->m * multiple->n / (w->m * w->n);
    r.shape = *multiple;
    r.note = "the device lists " + types + " in " + same_types + ", not CUDA's " + shape +
             ": one " + std::to_string(multiple->m) + "x" + std::to_string(multiple->n) + "x" +
             std::to_string(multiple->k) + " MulAdd counts as " + std::to_string(times) +
             " of CUDA's operations in the rate, and the latency is one MulAdd's (its " +
             std::to_string(times) + " products side by side)";
    return r;
  }
  r.why = same_types.empty()
              ? "the device lists no subgroup-scope " + types +
                    " cooperative matrix (vkGetPhysicalDeviceCooperativeMatrixPropertiesKHR)"
              : "the device lists " + types + " in " + same_types + " only, neither CUDA's " +
                    shape + " nor a multiple of it with its K";
  return r;
}

Support coop_matrix_writable(const CoopMatShape& s) {
  for (CoopType t : {s.a, s.b, s.c, s.result})
    if (!coop_type_is_float(t) && !is_32_or_less_int(t))
      return Support::no("component type " + coop_type_name(t) +
                         ": the module stores 32-bit integers or floats only");
  if (s.c != s.result) return Support::no("C and result types differ");
  if (coop_type_is_float(s.a) != coop_type_is_float(s.c) ||
      coop_type_is_float(s.b) != coop_type_is_float(s.a))
    return Support::no("mixed float and integer operands");
  if (s.saturating) return Support::no("saturating accumulation");
  if (s.scope != kSubgroupScope) return Support::no("not subgroup scope");
  if (s.m == 0 || s.n == 0 || s.k == 0) return Support::no("an empty shape");
  return Support::yes();
}

uint32_t coop_matrix_store_bytes(const CoopMatShape& s) { return s.c == CoopType::f64 ? 8 : 4; }

bool coop_matrix_alternates(const CoopMatShape& s) {
  return s.a == CoopType::e4m3 || s.a == CoopType::e5m2 || s.b == CoopType::e4m3 ||
         s.b == CoopType::e5m2;
}

int coop_matrix_operand_log2(const CoopMatShape& s) {
  if (!coop_type_is_float(s.c) || coop_matrix_alternates(s)) return 0;
  // K x 2^2e < 2^-24 (half an ulp of 3 is 2^-23 in f32, 2^-10 in f16); 2^-14 is f16's
  // smallest normal. f64 accumulators (half an ulp of 3: 2^-52) take 2^-30.
  return s.c == CoopType::f64 ? -30 : -14;
}

uint64_t coop_matrix_expected(const CoopMatShape& s, uint64_t steps) {
  if (coop_type_is_float(s.c)) {
    // C starts at 3: products below half its ulp leave it there; with B alternating +1, -1
    // it is 3 + K after an odd step, 3 after an even one.
    const double v = 3.0 + (coop_matrix_alternates(s) && steps % 2 ? double(s.k) : 0.0);
    if (s.c == CoopType::f64) {
      uint64_t bits;
      std::memcpy(&bits, &v, 8);
      return bits;
    }
    const float f = static_cast<float>(v);
    uint32_t bits;
    std::memcpy(&bits, &f, 4);
    return bits;
  }
  return static_cast<uint32_t>(3 + steps * uint64_t(s.k));  // 32-bit wrap, as the GPU's
}

}  // namespace gd
