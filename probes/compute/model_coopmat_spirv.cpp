// The SPIR-V module that times one cooperative-matrix entry (coop_matrix_spirv, compute.hpp).
// It is written here word by word because glslang 12 (Debian 12's) has no
// GL_KHR_cooperative_matrix and SPIRV-Tools 2023.1 no SPV_KHR_cooperative_matrix; the encoding
// follows the SPIR-V specification (instruction = word count << 16 | opcode) and the
// extensions' opcodes (4456-4459), capabilities (6022, 5116/5118, 4212/4213) and operand
// enums. A newer spirv-val accepts the modules (results/NOTES-backends.md).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "compute/compute.hpp"

namespace gd {

// Named rather than anonymous: a unity build joins this file with other model files.
namespace coopmat_spirv {

// SPIR-V opcodes, capabilities and enums used below (SPIR-V 1.3 unified specification;
// SPV_KHR_cooperative_matrix, SPV_KHR_bfloat16, SPV_EXT_float8).
enum Op : uint32_t {
  kExtension = 10,
  kMemoryModel = 14,
  kEntryPoint = 15,
  kExecutionMode = 16,
  kCapability = 17,
  kTypeVoid = 19,
  kTypeBool = 20,
  kTypeInt = 21,
  kTypeFloat = 22,
  kTypeVector = 23,
  kTypeRuntimeArray = 29,
  kTypeStruct = 30,
  kTypePointer = 32,
  kTypeFunction = 33,
  kConstant = 43,
  kFunction = 54,
  kFunctionEnd = 56,
  kVariable = 59,
  kLoad = 61,
  kStore = 62,
  kAccessChain = 65,
  kDecorate = 71,
  kMemberDecorate = 72,
  kCompositeConstruct = 80,
  kCompositeExtract = 81,
  kConvertUToF = 112,
  kUConvert = 113,
  kSConvert = 114,
  kFConvert = 115,
  kBitcast = 124,
  kFNegate = 127,
  kIAdd = 128,
  kFMul = 133,
  kIMul = 132,
  kULessThan = 176,
  kSelectionMerge = 247,
  kLoopMerge = 246,
  kLabel = 248,
  kBranch = 249,
  kBranchConditional = 250,
  kReturn = 253,
  kReadClockKHR = 5056,
  kTypeCooperativeMatrixKHR = 4456,
  kCooperativeMatrixStoreKHR = 4458,
  kCooperativeMatrixMulAddKHR = 4459,
};
enum Cap : uint32_t {
  kCapShader = 1,
  kCapFloat16 = 9,
  kCapFloat64 = 10,
  kCapInt16 = 22,
  kCapInt8 = 39,
  kCapGroupNonUniform = 61,
  kCapFloat8 = 4212,
  kCapFloat8CooperativeMatrix = 4213,
  kCapShaderClock = 5055,
  kCapBFloat16Type = 5116,
  kCapBFloat16CooperativeMatrix = 5118,
  kCapVulkanMemoryModel = 5345,
  kCapCooperativeMatrix = 6022,
};
constexpr uint32_t kStorageInput = 1, kStoragePushConstant = 9, kStorageFunction = 7,
                   kStorageBuffer = 12;
constexpr uint32_t kDecoBlock = 2, kDecoArrayStride = 6, kDecoBuiltIn = 11, kDecoBinding = 33,
                   kDecoDescriptorSet = 34, kDecoOffset = 35;
constexpr uint32_t kBuiltInWorkgroupId = 26, kBuiltInNumSubgroups = 38, kBuiltInSubgroupId = 40;
constexpr uint32_t kScopeDevice = 1, kScopeSubgroup = 3;
constexpr uint32_t kUseA = 0, kUseB = 1, kUseAccumulator = 2, kLayoutRowMajor = 0;
constexpr uint32_t kEncodingBFloat16 = 0, kEncodingE4M3 = 4214, kEncodingE5M2 = 4215;
// CooperativeMatrixOperands: which matrices hold signed integers.
constexpr uint32_t kASigned = 0x1, kBSigned = 0x2, kCSigned = 0x4, kResultSigned = 0x8;

bool is_float(CoopType t) { return coop_type_is_float(t); }
bool is_signed_int(CoopType t) { return coop_type_is_signed_int(t); }
uint32_t bits_of(CoopType t) {
  switch (t) {
    case CoopType::s8:
    case CoopType::u8:
    case CoopType::e4m3:
    case CoopType::e5m2:
      return 8;
    case CoopType::f16:
    case CoopType::bf16:
    case CoopType::s16:
    case CoopType::u16:
      return 16;
    case CoopType::f64:
    case CoopType::s64:
    case CoopType::u64:
      return 64;
    default:
      return 32;
  }
}

// A module under construction: its sections in the order SPIR-V requires, and ids.
class Module {
 public:
  uint32_t id() { return next_++; }
  static void emit(std::vector<uint32_t>& to, uint32_t op, const std::vector<uint32_t>& operands) {
    to.push_back(static_cast<uint32_t>(operands.size() + 1) << 16 | op);
    to.insert(to.end(), operands.begin(), operands.end());
  }
  // A literal string's words: UTF-8, NUL-terminated, padded to a word.
  static std::vector<uint32_t> string_words(const std::string& s) {
    std::vector<uint32_t> w(s.size() / 4 + 1, 0);
    std::memcpy(w.data(), s.data(), s.size());
    return w;
  }
  void capability(uint32_t c) {
    if (std::find(caps_.begin(), caps_.end(), c) == caps_.end()) caps_.push_back(c);
  }
  void extension(const std::string& e) {
    if (std::find(exts_.begin(), exts_.end(), e) == exts_.end()) exts_.push_back(e);
  }
  // Types and constants: one id per distinct declaration (SPIR-V forbids duplicate types).
  uint32_t type(uint32_t op, const std::vector<uint32_t>& operands) {
    const auto key = std::make_pair(op, operands);
    if (const auto it = types_.find(key); it != types_.end()) return it->second;
    const uint32_t r = id();
    std::vector<uint32_t> w{r};
    w.insert(w.end(), operands.begin(), operands.end());
    emit(globals_, op, w);
    return types_[key] = r;
  }
  // An aggregate type of its own even where an equal one exists (SPIR-V allows that for
  // arrays and structs): two blocks of one element type must not share their decorations.
  uint32_t own_type(uint32_t op, const std::vector<uint32_t>& operands) {
    const uint32_t r = id();
    std::vector<uint32_t> w{r};
    w.insert(w.end(), operands.begin(), operands.end());
    emit(globals_, op, w);
    return r;
  }
  // OpConstant takes its type before its id, so it is keyed and emitted apart from types.
  uint32_t constant(uint32_t type_id, uint32_t value) {
    const auto key = std::make_pair(uint32_t{kConstant}, std::vector<uint32_t>{type_id, value});
    if (const auto it = types_.find(key); it != types_.end()) return it->second;
    const uint32_t r = id();
    emit(globals_, kConstant, {type_id, r, value});
    return types_[key] = r;
  }
  std::vector<uint32_t> words(uint32_t main_id, const std::vector<uint32_t>& interface,
                              uint32_t local) const {
    std::vector<uint32_t> out{0x07230203u, 0x00010300u, 0, next_, 0};
    for (uint32_t c : caps_) emit(out, kCapability, {c});
    for (const std::string& e : exts_) emit(out, kExtension, string_words(e));
    emit(out, kMemoryModel, {0, 3});       // Logical, Vulkan
    std::vector<uint32_t> ep{5, main_id};  // GLCompute
    const auto name = string_words("main");
    ep.insert(ep.end(), name.begin(), name.end());
    ep.insert(ep.end(), interface.begin(), interface.end());
    emit(out, kEntryPoint, ep);
    emit(out, kExecutionMode, {main_id, 17, local, 1, 1});  // LocalSize
    out.insert(out.end(), decorations.begin(), decorations.end());
    out.insert(out.end(), globals_.begin(), globals_.end());
    out.insert(out.end(), variables.begin(), variables.end());
    out.insert(out.end(), code.begin(), code.end());
    return out;
  }
  std::vector<uint32_t> decorations, variables, code;

 private:
  uint32_t next_ = 1;
  std::vector<uint32_t> caps_;
  std::vector<std::string> exts_;
  std::vector<uint32_t> globals_;
  std::map<std::pair<uint32_t, std::vector<uint32_t>>, uint32_t> types_;
};

uint32_t scalar_type(Module& m, CoopType t) {
  switch (t) {
    case CoopType::f16:
      m.capability(kCapFloat16);
      return m.type(kTypeFloat, {16});
    case CoopType::f32:
      return m.type(kTypeFloat, {32});
    case CoopType::f64:
      m.capability(kCapFloat64);
      return m.type(kTypeFloat, {64});
    case CoopType::bf16:
      m.capability(kCapBFloat16Type);
      m.capability(kCapBFloat16CooperativeMatrix);
      m.extension("SPV_KHR_bfloat16");
      return m.type(kTypeFloat, {16, kEncodingBFloat16});
    case CoopType::e4m3:
    case CoopType::e5m2:
      m.capability(kCapFloat8);
      m.capability(kCapFloat8CooperativeMatrix);
      m.extension("SPV_EXT_float8");
      return m.type(kTypeFloat, {8, t == CoopType::e4m3 ? kEncodingE4M3 : kEncodingE5M2});
    default:
      break;
  }
  const uint32_t bits = bits_of(t);
  if (bits == 8) m.capability(kCapInt8);
  if (bits == 16) m.capability(kCapInt16);
  return m.type(kTypeInt, {bits, is_signed_int(t) ? 1u : 0u});
}

// The scalar from_u32 x 2^scale_log2 (negated where asked; 1, 3 and the powers of two used are
// exact in every type) of type t, from the run-time u32 `one` (= 1) or `three` (= 3), so that
// no operand is a constant the compiler could fold.
uint32_t scalar_value(Module& m, CoopType t, uint32_t from_u32, bool negate, int scale_log2 = 0) {
  std::vector<uint32_t>& c = m.code;
  const uint32_t u32 = m.type(kTypeInt, {32, 0});
  const uint32_t tid = scalar_type(m, t);
  if (is_float(t)) {
    const uint32_t f32 = m.type(kTypeFloat, {32});
    uint32_t v = m.id();
    Module::emit(c, kConvertUToF, {f32, v, from_u32});
    if (scale_log2 != 0) {
      const float scale = std::ldexp(1.0f, scale_log2);
      uint32_t bits;
      std::memcpy(&bits, &scale, 4);
      const uint32_t scaled = m.id();
      Module::emit(c, kFMul, {f32, scaled, v, m.constant(f32, bits)});
      v = scaled;
    }
    if (negate) {
      const uint32_t n = m.id();
      Module::emit(c, kFNegate, {f32, n, v});
      v = n;
    }
    if (t == CoopType::f32) return v;
    const uint32_t r = m.id();
    Module::emit(c, kFConvert, {tid, r, v});
    return r;
  }
  if (tid == u32) return from_u32;
  uint32_t v = from_u32;
  if (is_signed_int(t)) {  // the same bits, read as signed, then narrowed
    const uint32_t s32 = m.type(kTypeInt, {32, 1});
    const uint32_t b = m.id();
    Module::emit(c, kBitcast, {s32, b, v});
    if (tid == s32) return b;
    v = b;
  }
  const uint32_t r = m.id();
  Module::emit(c, is_signed_int(t) ? kSConvert : kUConvert, {tid, r, v});
  return r;
}

}  // namespace coopmat_spirv

using namespace coopmat_spirv;

// shape: header, then the entry block (values, accumulators), the loop, the stores
std::vector<uint32_t> coop_matrix_spirv(const CoopMatKernel& kn) {
  const CoopMatShape& s = kn.shape;
  const int ilp = std::max(1, kn.ilp);
  const int steps = std::max(2, kn.steps_per_iter + kn.steps_per_iter % 2);
  Module m;
  m.capability(kCapShader);
  m.capability(kCapCooperativeMatrix);
  m.capability(kCapGroupNonUniform);  // SubgroupId, NumSubgroups
  // Vulkan's validation rules tie cooperative matrices in shaders to the Vulkan memory model.
  m.capability(kCapVulkanMemoryModel);
  m.extension("SPV_KHR_cooperative_matrix");
  m.extension("SPV_KHR_vulkan_memory_model");
  const uint32_t main_id = m.id();
  const uint32_t void_t = m.type(kTypeVoid, {});
  const uint32_t fn_t = m.type(kTypeFunction, {void_t});
  const uint32_t bool_t = m.type(kTypeBool, {});
  const uint32_t u32 = m.type(kTypeInt, {32, 0});
  const uint32_t v3u32 = m.type(kTypeVector, {u32, 3});
  auto uconst = [&](uint32_t v) { return m.constant(u32, v); };
  const bool flt = is_float(s.c);
  const CoopType store_t = !flt ? s.c : s.c == CoopType::f64 ? CoopType::f64 : CoopType::f32;
  const uint32_t a_t = scalar_type(m, s.a), b_t = scalar_type(m, s.b);
  const uint32_t c_t = scalar_type(m, s.c), st_t = scalar_type(m, store_t);
  const uint32_t scope = uconst(kScopeSubgroup);
  const uint32_t mat_a =
      m.type(kTypeCooperativeMatrixKHR, {a_t, scope, uconst(s.m), uconst(s.k), uconst(kUseA)});
  const uint32_t mat_b =
      m.type(kTypeCooperativeMatrixKHR, {b_t, scope, uconst(s.k), uconst(s.n), uconst(kUseB)});
  const uint32_t mat_c = m.type(kTypeCooperativeMatrixKHR,
                                {c_t, scope, uconst(s.m), uconst(s.n), uconst(kUseAccumulator)});
  const uint32_t mat_s = m.type(kTypeCooperativeMatrixKHR,
                                {st_t, scope, uconst(s.m), uconst(s.n), uconst(kUseAccumulator)});

  // Binding 0: { store_t data[]; }; push constants { uint iters; uint zero; }; builtins.
  const uint32_t rta = m.type(kTypeRuntimeArray, {st_t});
  const uint32_t out_struct = m.type(kTypeStruct, {rta});
  const uint32_t push_struct = m.type(kTypeStruct, {u32, u32, u32});
  auto& d = m.decorations;
  Module::emit(d, kDecorate, {rta, kDecoArrayStride, coop_matrix_store_bytes(s)});
  Module::emit(d, kDecorate, {out_struct, kDecoBlock});
  Module::emit(d, kMemberDecorate, {out_struct, 0, kDecoOffset, 0});
  Module::emit(d, kDecorate, {push_struct, kDecoBlock});
  Module::emit(d, kMemberDecorate, {push_struct, 0, kDecoOffset, 0});
  Module::emit(d, kMemberDecorate, {push_struct, 1, kDecoOffset, 4});
  Module::emit(d, kMemberDecorate, {push_struct, 2, kDecoOffset, 8});
  auto variable = [&](uint32_t pointee, uint32_t storage) {
    const uint32_t ptr = m.type(kTypePointer, {storage, pointee});
    const uint32_t v = m.id();
    Module::emit(m.variables, kVariable, {ptr, v, storage});
    return v;
  };
  const uint32_t out_var = variable(out_struct, kStorageBuffer);
  // Binding 1: { uint rec[]; }, kCoopMatClockWords per subgroup.
  const uint32_t rec_rta = m.own_type(kTypeRuntimeArray, {u32});
  const uint32_t rec_struct = m.own_type(kTypeStruct, {rec_rta});
  Module::emit(d, kDecorate, {rec_rta, kDecoArrayStride, 4});
  Module::emit(d, kDecorate, {rec_struct, kDecoBlock});
  Module::emit(d, kMemberDecorate, {rec_struct, 0, kDecoOffset, 0});
  const uint32_t rec_var = variable(rec_struct, kStorageBuffer);
  Module::emit(d, kDecorate, {rec_var, kDecoDescriptorSet, 0});
  Module::emit(d, kDecorate, {rec_var, kDecoBinding, 1});
  const uint32_t push_var = variable(push_struct, kStoragePushConstant);
  const uint32_t wg_var = variable(v3u32, kStorageInput);
  const uint32_t sg_var = variable(u32, kStorageInput);
  const uint32_t nsg_var = variable(u32, kStorageInput);
  Module::emit(d, kDecorate, {out_var, kDecoDescriptorSet, 0});
  Module::emit(d, kDecorate, {out_var, kDecoBinding, 0});
  Module::emit(d, kDecorate, {wg_var, kDecoBuiltIn, kBuiltInWorkgroupId});
  Module::emit(d, kDecorate, {sg_var, kDecoBuiltIn, kBuiltInSubgroupId});
  Module::emit(d, kDecorate, {nsg_var, kDecoBuiltIn, kBuiltInNumSubgroups});

  const uint32_t p_push_u32 = m.type(kTypePointer, {kStoragePushConstant, u32});
  const uint32_t p_out_elem = m.type(kTypePointer, {kStorageBuffer, st_t});
  const uint32_t p_rec_elem = m.type(kTypePointer, {kStorageBuffer, u32});
  const uint32_t v2u32 = m.type(kTypeVector, {u32, 2});
  if (kn.subgroup_clock || kn.device_clock) {
    m.capability(kCapShaderClock);
    m.extension("SPV_KHR_shader_clock");
  }
  const uint32_t scope_device = uconst(kScopeDevice);
  std::vector<uint32_t> rec_index;
  for (uint32_t j = 0; j < kCoopMatClockWords; ++j) rec_index.push_back(uconst(j));
  const uint32_t c_rec = uconst(kCoopMatClockWords);
  const uint32_t p_fn_u32 = m.type(kTypePointer, {kStorageFunction, u32});
  const uint32_t p_fn_c = m.type(kTypePointer, {kStorageFunction, mat_c});
  // Constants the code below names, declared before it is written (they go to the globals).
  const uint32_t c0 = uconst(0), c1 = uconst(1), c2 = uconst(2), c3 = uconst(3);
  const uint32_t c_ilp = uconst(static_cast<uint32_t>(ilp)), c_mn = uconst(s.m * s.n);
  const uint32_t c_layout = uconst(kLayoutRowMajor), c_stride = uconst(s.n);
  std::vector<uint32_t> chain_index;
  for (int k = 0; k < ilp; ++k) chain_index.push_back(uconst(static_cast<uint32_t>(k)));

  std::vector<uint32_t>& c = m.code;
  auto op = [&](uint32_t opcode, uint32_t type, std::vector<uint32_t> args) {
    const uint32_t r = m.id();
    args.insert(args.begin(), {type, r});
    Module::emit(c, opcode, args);
    return r;
  };
  const uint32_t entry = m.id(), header = m.id(), check = m.id(), body = m.id(), cont = m.id(),
                 merge = m.id(), store = m.id(), stored = m.id();
  Module::emit(c, kFunction, {void_t, main_id, 0, fn_t});
  Module::emit(c, kLabel, {entry});
  const uint32_t i_var = m.id();
  Module::emit(c, kVariable, {p_fn_u32, i_var, kStorageFunction});
  std::vector<uint32_t> acc_var(ilp);
  for (uint32_t& v : acc_var) {
    v = m.id();
    Module::emit(c, kVariable, {p_fn_c, v, kStorageFunction});
  }
  const uint32_t iters = op(kLoad, u32, {op(kAccessChain, p_push_u32, {push_var, c0})});
  const uint32_t zero = op(kLoad, u32, {op(kAccessChain, p_push_u32, {push_var, c1})});
  const uint32_t one = op(kIAdd, u32, {zero, c1}), three = op(kIAdd, u32, {zero, c3});
  // Integers: A = B = 1, and C wraps exactly. Floats: A = B = 2^e with K x 2^2e below half an
  // ulp of 3 in the accumulator, so that C stays 3 whatever the rounding; FP8 has no such
  // small value, so there B alternates +1 and -1 and C returns to 3 every other step.
  // (B alternating on every type had NVIDIA's compiler move B's registers between the
  // products, 46 moves for 128 HMMA, costing 6 % of the rate.)
  const int e = coop_matrix_operand_log2(s);
  const uint32_t a = op(kCompositeConstruct, mat_a, {scalar_value(m, s.a, one, false, e)});
  const uint32_t b_plus = op(kCompositeConstruct, mat_b, {scalar_value(m, s.b, one, false, e)});
  const uint32_t b_minus = coop_matrix_alternates(s)
                               ? op(kCompositeConstruct, mat_b, {scalar_value(m, s.b, one, true)})
                               : b_plus;
  const uint32_t c_init = op(kCompositeConstruct, mat_c, {scalar_value(m, s.c, three, false)});
  for (uint32_t v : acc_var) Module::emit(c, kStore, {v, c_init});
  Module::emit(c, kStore, {i_var, c0});
  // The SM's clock, then the device's, just before the loop and just after it (read: a
  // uvec2, or none where the device lacks that clock).
  auto clock = [&](bool have, uint32_t scope_id) {
    return have ? op(kReadClockKHR, v2u32, {scope_id}) : 0u;
  };
  const uint32_t sm_before = clock(kn.subgroup_clock, scope);
  const uint32_t dev_before = clock(kn.device_clock, scope_device);
  Module::emit(c, kBranch, {header});

  Module::emit(c, kLabel, {header});
  Module::emit(c, kLoopMerge, {merge, cont, 0});
  Module::emit(c, kBranch, {check});
  Module::emit(c, kLabel, {check});
  const uint32_t i = op(kLoad, u32, {i_var});
  Module::emit(c, kBranchConditional, {op(kULessThan, bool_t, {i, iters}), body, merge});

  Module::emit(c, kLabel, {body});
  uint32_t operands = 0;
  if (is_signed_int(s.a)) operands |= kASigned;
  if (is_signed_int(s.b)) operands |= kBSigned;
  if (is_signed_int(s.c)) operands |= kCSigned | kResultSigned;
  std::vector<uint32_t> acc(ilp);
  for (int k = 0; k < ilp; ++k) acc[k] = op(kLoad, mat_c, {acc_var[k]});
  for (int step = 0; step < steps; ++step)
    for (int k = 0; k < ilp; ++k) {
      std::vector<uint32_t> args{a, step % 2 ? b_minus : b_plus, acc[k]};
      if (operands) args.push_back(operands);
      acc[k] = op(kCooperativeMatrixMulAddKHR, mat_c, args);
    }
  for (int k = 0; k < ilp; ++k) Module::emit(c, kStore, {acc_var[k], acc[k]});
  Module::emit(c, kBranch, {cont});

  Module::emit(c, kLabel, {cont});
  Module::emit(c, kStore, {i_var, op(kIAdd, u32, {i, c1})});
  Module::emit(c, kBranch, {header});

  // The accumulators of the first `kept` subgroups, row-major, one after the other: a
  // condition known at run time only, so every subgroup's products stay live.
  Module::emit(c, kLabel, {merge});
  const uint32_t dev_after = clock(kn.device_clock, scope_device);
  const uint32_t sm_after = clock(kn.subgroup_clock, scope);
  const uint32_t wg_x = op(kCompositeExtract, u32, {op(kLoad, v3u32, {wg_var}), 0});
  const uint32_t subgroup =
      op(kIAdd, u32, {op(kIMul, u32, {wg_x, op(kLoad, u32, {nsg_var})}), op(kLoad, u32, {sg_var})});
  const uint32_t kept = op(kLoad, u32, {op(kAccessChain, p_push_u32, {push_var, c2})});
  const uint32_t keep = op(kULessThan, bool_t, {subgroup, kept});
  Module::emit(c, kSelectionMerge, {stored, 0});
  Module::emit(c, kBranchConditional, {keep, store, stored});
  Module::emit(c, kLabel, {store});
  for (int k = 0; k < ilp; ++k) {
    const uint32_t slot = op(kIAdd, u32, {op(kIMul, u32, {subgroup, c_ilp}), chain_index[k]});
    const uint32_t ptr = op(kAccessChain, p_out_elem, {out_var, c0, op(kIMul, u32, {slot, c_mn})});
    uint32_t value = op(kLoad, mat_c, {acc_var[k]});
    if (mat_s != mat_c) value = op(kFConvert, mat_s, {value});
    Module::emit(c, kCooperativeMatrixStoreKHR, {ptr, value, c_layout, c_stride});
  }
  Module::emit(c, kBranch, {stored});
  Module::emit(c, kLabel, {stored});
  // The subgroup's record: {SM clock before, after, device clock before, after}, each as
  // low and high words; zeros for a clock not read.
  const uint32_t rec_base = op(kIMul, u32, {subgroup, c_rec});
  const uint32_t clocks[] = {sm_before, sm_after, dev_before, dev_after};
  for (uint32_t j = 0; j < kCoopMatClockWords; ++j) {
    const uint32_t ptr =
        op(kAccessChain, p_rec_elem, {rec_var, c0, op(kIAdd, u32, {rec_base, rec_index[j]})});
    const uint32_t from = clocks[j / 2];
    Module::emit(c, kStore, {ptr, from ? op(kCompositeExtract, u32, {from, j % 2}) : c0});
  }
  Module::emit(c, kReturn, {});
  Module::emit(c, kFunctionEnd, {});
  return m.words(main_id, {wg_var, sg_var, nsg_var}, kn.local);
}

}  // namespace gd
