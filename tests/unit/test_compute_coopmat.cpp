// The mma rows through VK_KHR_cooperative_matrix (model_coopmat.cpp): which entry of a driver's
// list each op takes, and the SPIR-V module written for it, read back word by word. GPU-free:
// neither Debian 12's SPIRV-Tools nor lavapipe knows SPV_KHR_cooperative_matrix, so these
// tests walk the module's instructions themselves. The list below is the one NVIDIA's driver
// 580.159.04 gave on an H200.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "compute/compute.hpp"
#include "compute/run.hpp"
#include "fake_device.hpp"
#include "gpudissect/progress.hpp"

namespace {

using gd::CoopMatShape;
using gd::CoopType;

CoopMatShape shape(uint32_t m, uint32_t n, uint32_t k, CoopType in, CoopType acc) {
  CoopMatShape s;
  s.m = m;
  s.n = n;
  s.k = k;
  s.a = s.b = in;
  s.c = s.result = acc;
  return s;
}

std::vector<CoopMatShape> h200_list() {
  using T = CoopType;
  return {shape(16, 16, 16, T::f16, T::f16), shape(16, 8, 16, T::f16, T::f16),
          shape(16, 8, 8, T::f16, T::f16),   shape(16, 16, 16, T::f16, T::f32),
          shape(16, 8, 16, T::f16, T::f32),  shape(16, 8, 8, T::f16, T::f32),
          shape(16, 16, 32, T::u8, T::u32),  shape(16, 16, 32, T::s8, T::s32),
          shape(16, 8, 32, T::u8, T::u32),   shape(16, 8, 32, T::s8, T::s32),
          shape(16, 16, 16, T::bf16, T::f32)};
}

// One instruction of a module: its opcode and operands.
struct Inst {
  uint32_t op;
  std::vector<uint32_t> operands;
};

// Walks the module: every instruction's word count must land exactly on the next one.
std::vector<Inst> walk(const std::vector<uint32_t>& w) {
  std::vector<Inst> out;
  EXPECT_GE(w.size(), 5u);
  std::size_t i = 5;
  while (i < w.size()) {
    const uint32_t count = w[i] >> 16;
    EXPECT_GT(count, 0u) << "at word " << i;
    if (count == 0 || i + count > w.size()) {
      ADD_FAILURE() << "instruction at word " << i << " runs past the end";
      break;
    }
    out.push_back({w[i] & 0xffff, std::vector<uint32_t>(w.begin() + i + 1, w.begin() + i + count)});
    i += count;
  }
  return out;
}

std::size_t count_op(const std::vector<Inst>& insts, uint32_t op) {
  std::size_t n = 0;
  for (const Inst& i : insts) n += i.op == op;
  return n;
}

bool has(const std::vector<Inst>& insts, uint32_t op, const std::vector<uint32_t>& operands) {
  for (const Inst& i : insts)
    if (i.op == op && i.operands == operands) return true;
  return false;
}

std::string literal(const std::vector<uint32_t>& words) {
  std::string s(words.size() * 4, '\0');
  std::memcpy(s.data(), words.data(), s.size());
  return s.c_str();
}

constexpr uint32_t kCapability = 17, kExtension = 10, kTypeFloat = 22, kMulAdd = 4459,
                   kTypeCoopMat = 4456, kStore = 4458, kReadClock = 5056, kEntryPoint = 15;

TEST(CoopMat, EachOpTakesTheEntryOfItsTypesAndCudasShape) {
  const auto list = h200_list();
  const auto f16 = gd::coop_matrix_for("mma.f16", list);
  ASSERT_TRUE(f16.shape);
  EXPECT_EQ(f16.shape->name(), "16x8x16 f16*f16+f32");
  EXPECT_TRUE(f16.note.empty());
  EXPECT_EQ(gd::coop_matrix_for("mma.f16acc", list).shape->name(), "16x8x16 f16*f16+f16");
  EXPECT_EQ(gd::coop_matrix_for("mma.s8", list).shape->name(), "16x8x32 s8*s8+s32");
  // CUDA's m16n8k8 rows take the 16x8x8 entries (HMMA.1688 on both sides).
  EXPECT_EQ(gd::coop_matrix_for("mma.f16_m16n8k8", list).shape->name(), "16x8x8 f16*f16+f32");
  EXPECT_EQ(gd::coop_matrix_for("mma.f16acc_m16n8k8", list).shape->name(), "16x8x8 f16*f16+f16");
  for (const char* k8 : {"mma.f16_m16n8k8", "mma.f16acc_m16n8k8"}) {
    const gd::ComputeOp* o = gd::find_compute_op(k8);
    ASSERT_NE(o, nullptr) << k8;
    EXPECT_DOUBLE_EQ(o->flops_per_op, 2.0 * 16 * 8 * 8 / 32);
    EXPECT_DOUBLE_EQ(*o->peak_per_clk_sm * o->flops_per_op, 4096);
    EXPECT_NE(o->ptx_expect.find("m16n8k8"), std::string::npos);
  }
  // bf16 only in 16x16x16: twice CUDA's m16n8k16 with its K, said in the note.
  const auto bf16 = gd::coop_matrix_for("mma.bf16", list);
  ASSERT_TRUE(bf16.shape);
  EXPECT_EQ(bf16.shape->name(), "16x16x16 bf16*bf16+f32");
  EXPECT_NE(bf16.note.find("counts as 2 of CUDA's operations"), std::string::npos) << bf16.note;
  // What no entry states: the reason names the limit, never "yet".
  for (const char* op : {"mma.tf32", "mma.e4m3", "mma.f64", "mma.sp_f16", "wgmma.f16"}) {
    const auto c = gd::coop_matrix_for(op, list);
    EXPECT_FALSE(c.shape) << op;
    EXPECT_FALSE(c.why.empty()) << op;
    EXPECT_EQ(c.why.find("yet"), std::string::npos) << c.why;
  }
  EXPECT_NE(gd::coop_matrix_for("mma.tf32", list).why.find("TF32"), std::string::npos);
  // What the API has no form of is told apart from what this device does not list.
  EXPECT_TRUE(gd::coop_matrix_for("mma.tf32", {}).no_form);
  EXPECT_TRUE(gd::coop_matrix_for("mma.sp_f16", {}).no_form);
  EXPECT_FALSE(gd::coop_matrix_for("mma.f16", {}).no_form);
  EXPECT_FALSE(gd::coop_matrix_for("mma.e4m3", list).no_form);
  EXPECT_NE(gd::coop_matrix_for("mma.sp_s8", list).why.find("sparse"), std::string::npos);
}

TEST(CoopMat, SkipsSaturatingWiderScopeAndForeignShapes) {
  auto sat = shape(16, 8, 32, CoopType::s8, CoopType::s32);
  sat.saturating = true;
  auto workgroup = shape(16, 8, 32, CoopType::s8, CoopType::s32);
  workgroup.scope = 2;
  // K differs from CUDA's 32: no stand-in, and the reason lists what there is.
  const auto other_k = shape(16, 8, 16, CoopType::s8, CoopType::s32);
  const auto c = gd::coop_matrix_for("mma.s8", {sat, workgroup, other_k});
  EXPECT_FALSE(c.shape);
  EXPECT_NE(c.why.find("16x8x16"), std::string::npos) << c.why;
  EXPECT_FALSE(gd::coop_matrix_writable(sat).ok);
  EXPECT_FALSE(gd::coop_matrix_writable(workgroup).ok);
  EXPECT_FALSE(gd::coop_matrix_writable(shape(16, 8, 32, CoopType::s8, CoopType::s64)).ok);
  EXPECT_TRUE(gd::coop_matrix_writable(other_k).ok);
}

TEST(CoopMat, ExpectedValueIsExactForEveryType) {
  const auto f32 = shape(16, 8, 16, CoopType::f16, CoopType::f32);
  const float three = 3.0f;
  uint32_t bits;
  std::memcpy(&bits, &three, 4);
  // Products of 2^-14 x 2^-14, 16 of them, are below half an ulp of 3: C stays 3.
  EXPECT_EQ(gd::coop_matrix_operand_log2(f32), -14);
  EXPECT_LT(16.0 * std::ldexp(1.0, 2 * -14), std::ldexp(1.0, -23));
  EXPECT_EQ(gd::coop_matrix_expected(f32, 1000001), bits);
  // FP8 alternates B: 3 + K after an odd step.
  const auto fp8 = shape(16, 8, 32, CoopType::e4m3, CoopType::f32);
  EXPECT_TRUE(gd::coop_matrix_alternates(fp8));
  const float odd = 35.0f;
  std::memcpy(&bits, &odd, 4);
  EXPECT_EQ(gd::coop_matrix_expected(fp8, 7), bits);
  // Integers wrap at 32 bits as the GPU's adds do.
  const auto s8 = shape(16, 8, 32, CoopType::s8, CoopType::s32);
  EXPECT_EQ(gd::coop_matrix_expected(s8, 10), 3u + 320u);
  EXPECT_EQ(gd::coop_matrix_expected(s8, uint64_t{1} << 28), 3u);  // 2^28 x 32 = 2^33
  const auto f64 = shape(8, 8, 4, CoopType::f64, CoopType::f64);
  const double d3 = 3.0;
  uint64_t d;
  std::memcpy(&d, &d3, 8);
  EXPECT_EQ(gd::coop_matrix_expected(f64, 5), d);
  EXPECT_EQ(gd::coop_matrix_store_bytes(f64), 8u);
}

TEST(CoopMat, ModuleHoldsEveryMulAddAndDeclaresWhatItUses) {
  gd::CoopMatKernel k;
  k.shape = shape(16, 8, 16, CoopType::f16, CoopType::f32);
  k.ilp = 8;
  k.steps_per_iter = 2;
  k.local = 256;
  k.subgroup_clock = k.device_clock = true;
  const std::vector<uint32_t> w = gd::coop_matrix_spirv(k);
  ASSERT_GE(w.size(), 5u);
  EXPECT_EQ(w[0], 0x07230203u);
  EXPECT_EQ(w[1], 0x00010300u);  // SPIR-V 1.3: what a Vulkan 1.1 instance takes
  const auto insts = walk(w);
  std::map<uint32_t, int> caps;
  std::vector<std::string> exts;
  for (const Inst& i : insts) {
    if (i.op == kCapability) ++caps[i.operands.at(0)];
    if (i.op == kExtension) exts.push_back(literal(i.operands));
  }
  for (uint32_t cap : {1u, 9u, 61u, 5055u, 5345u, 6022u}) EXPECT_EQ(caps[cap], 1) << cap;
  EXPECT_EQ(caps.count(39), 0u);  // no Int8 without 8-bit operands
  for (const char* e :
       {"SPV_KHR_cooperative_matrix", "SPV_KHR_vulkan_memory_model", "SPV_KHR_shader_clock"})
    EXPECT_NE(std::find(exts.begin(), exts.end(), e), exts.end()) << e;
  // ILP chains x steps MulAdds in the loop, no signedness operand for floats.
  EXPECT_EQ(count_op(insts, kMulAdd), 16u);
  for (const Inst& i : insts)
    if (i.op == kMulAdd) EXPECT_EQ(i.operands.size(), 5u);
  // A (use 0) 16x16, B (use 1) 16x8, C (use 2) 16x8; one store per chain; four clock reads.
  EXPECT_EQ(count_op(insts, kTypeCoopMat), 3u);
  EXPECT_EQ(count_op(insts, kStore), 8u);
  EXPECT_EQ(count_op(insts, kReadClock), 4u);
  ASSERT_EQ(count_op(insts, kEntryPoint), 1u);
  for (const Inst& i : insts)
    if (i.op == kEntryPoint)
      EXPECT_EQ(literal({i.operands.begin() + 2, i.operands.begin() + 4}), "main");
}

TEST(CoopMat, ModuleMarksSignedIntegersAndNewFloatTypes) {
  gd::CoopMatKernel k;
  k.shape = shape(16, 8, 32, CoopType::s8, CoopType::s32);
  k.ilp = 2;
  k.steps_per_iter = 3;  // rounded up to even
  auto insts = walk(gd::coop_matrix_spirv(k));
  EXPECT_EQ(count_op(insts, kMulAdd), 8u);
  for (const Inst& i : insts)
    if (i.op == kMulAdd) {
      ASSERT_EQ(i.operands.size(), 6u);
      EXPECT_EQ(i.operands[5], 0xFu);  // A, B, C and the result signed
    }
  EXPECT_TRUE(has(insts, kCapability, {39}));  // Int8
  EXPECT_EQ(count_op(insts, kReadClock), 0u);  // no clocks asked
  k.shape = shape(16, 16, 16, CoopType::bf16, CoopType::f32);
  insts = walk(gd::coop_matrix_spirv(k));
  EXPECT_TRUE(has(insts, kCapability, {5116}));  // BFloat16TypeKHR
  EXPECT_TRUE(has(insts, kCapability, {5118}));  // BFloat16CooperativeMatrixKHR
  bool bf16_type = false;
  for (const Inst& i : insts)
    bf16_type |= i.op == kTypeFloat && i.operands.size() == 3 && i.operands[1] == 16 &&
                 i.operands[2] == 0;  // FPEncoding BFloat16KHR
  EXPECT_TRUE(bf16_type);
  k.shape = shape(16, 8, 32, CoopType::e5m2, CoopType::f32);
  insts = walk(gd::coop_matrix_spirv(k));
  EXPECT_TRUE(has(insts, kCapability, {4213}));  // Float8CooperativeMatrixEXT
}

// SPIR-V forbids decorating one id twice alike (spirv-val refused a u32-accumulator module
// whose output array shared its type, and so its ArrayStride and Block, with the clocks').
TEST(CoopMat, NoIdIsDecoratedTwiceAlike) {
  constexpr uint32_t kDecorate = 71, kMemberDecorate = 72;
  for (const auto& s : h200_list()) {
    gd::CoopMatKernel k;
    k.shape = s;
    k.subgroup_clock = k.device_clock = true;
    std::map<std::vector<uint32_t>, int> seen;
    for (const Inst& i : walk(gd::coop_matrix_spirv(k))) {
      if (i.op == kDecorate) ++seen[{i.operands.at(0), i.operands.at(1)}];
      if (i.op == kMemberDecorate)
        ++seen[{i.operands.at(0), i.operands.at(1), i.operands.at(2), 1000}];
    }
    for (const auto& [key, n] : seen) EXPECT_EQ(n, 1) << s.name() << ": id " << key[0];
  }
}

// A backend that offers one listed shape beyond the catalogue, as Vulkan does, with a clock in
// the loop (cycles_per_block) and a note on what it timed.
class ExtraRowCompute final : public gd::ComputeKernels {
 public:
  explicit ExtraRowCompute(std::string extra) : extra_(std::move(extra)) {}
  std::string language() const override { return "glsl"; }
  gd::Support supports(const gd::ComputeOp& op) override {
    return op.name == extra_ ? gd::Support::yes() : gd::Support::no("not this fake's");
  }
  std::vector<std::string> extra_ops() const override { return {extra_}; }
  gd::ComputeTiming run(const gd::ComputeLaunch& l) override {
    gd::ComputeTiming t;
    t.ops_per_thread = l.iters * 16;
    t.sms = l.latency ? 1 : 132;
    t.threads = l.latency ? 32 : 132 * 1024;
    t.warps_per_sm = l.latency ? 1 : 32;
    t.clock_mhz = 1800;
    // 20 ops/clk/SM, 24 cycles a step.
    const double cycles = l.latency ? 24.0 * double(t.ops_per_thread)
                                    : double(t.ops_per_thread) * double(t.threads) / 20 / 132;
    t.cycles_per_block = l.latency ? cycles : 0;
    t.span_ns = cycles / 1800 * 1e3;
    t.note = "the shape the fake timed";
    return t;
  }

 private:
  std::string extra_;
};

class ExtraRowDevice final : public gd::fakes::FakeDevice {
 public:
  explicit ExtraRowDevice(const std::string& extra) : kernels(extra) {
    info_.backend = "vulkan";
    info_.name = "Fake GPU through Vulkan";
    info_.compute_units = 132;
    serve(gd::ComputeKernels::kProbe, &kernels);
  }
  ExtraRowCompute kernels;
};

TEST(CoopMat, EachListedShapeBeyondTheMmaRowsIsARowOfItsOwn) {
  const auto s = shape(16, 16, 16, CoopType::f16, CoopType::f32);
  EXPECT_EQ(gd::coop_matrix_op_name(s), "coopmat.f16_f32_16x16x16");
  auto mixed = shape(16, 8, 32, CoopType::u8, CoopType::s32);
  mixed.b = CoopType::s8;
  EXPECT_EQ(gd::coop_matrix_op_name(mixed), "coopmat.u8_s8_s32_16x8x32");
  const gd::ComputeOp op = gd::coop_matrix_op(s, 32);
  EXPECT_EQ(op.klass, "tensor");
  EXPECT_DOUBLE_EQ(op.flops_per_op, 2.0 * 16 * 16 * 16 / 32);
  EXPECT_EQ(op.sass_expect, std::vector<std::string>{"HMMA"});
  EXPECT_EQ(gd::coop_matrix_op(shape(16, 8, 32, CoopType::s8, CoopType::s32), 32).sass_expect,
            std::vector<std::string>{"IMMA"});
  // The row finds its own entry in the list, and only a subgroup-scope one.
  const auto list = h200_list();
  const auto c = gd::coop_matrix_for("coopmat.f16_f32_16x16x16", list);
  ASSERT_TRUE(c.shape);
  EXPECT_EQ(c.shape->name(), "16x16x16 f16*f16+f32");
  EXPECT_FALSE(gd::coop_matrix_for("coopmat.f16_f32_32x32x32", list).shape);

  // Registered, it is found by name, once, and runs after the catalogue's rows.
  const gd::ComputeOp& r = gd::register_compute_op(op);
  EXPECT_EQ(&gd::register_compute_op(op), &r);
  EXPECT_EQ(gd::find_compute_op("coopmat.f16_f32_16x16x16"), &r);
  EXPECT_EQ(&gd::register_compute_op(*gd::find_compute_op("fp32.fma")),
            gd::find_compute_op("fp32.fma"));
  ExtraRowCompute k(op.name);
  const auto all = gd::compute_table(gd::parse_compute_options({}), &k);
  ASSERT_FALSE(all.empty());
  EXPECT_EQ(all.back(), &r);
  EXPECT_EQ(
      gd::compute_table(gd::parse_compute_options({}), nullptr).back()->name.rfind("coopmat.", 0),
      std::string::npos);
  EXPECT_TRUE(gd::compute_table(gd::parse_compute_options({{"tensor", "0"}}), &k).back() != &r);
  const auto only = gd::compute_table(gd::parse_compute_options({{"ops", "coopmat"}}), &k);
  ASSERT_EQ(only.size(), 1u);
  EXPECT_EQ(only[0], &r);
  EXPECT_THROW(gd::parse_compute_options({{"ops", "coopmatx"}}), std::invalid_argument);

  // Measured, it is a figure like any row: its id, the loop's own clock, the backend's note.
  ExtraRowDevice dev(op.name);
  gd::NullProgress progress;
  std::atomic<bool> stop{false};
  gd::ComputeProbeResult out;
  gd::run_compute(dev,
                  gd::parse_compute_options({{"ops", "coopmat"}, {"repeats", "2"}, {"ms", "0.2"}}),
                  progress, stop, out);
  ASSERT_EQ(out.table.size(), 1u);
  const gd::ComputeFigure& f = out.table[0];
  ASSERT_TRUE(f.status.ok()) << f.status.reason;
  EXPECT_EQ(f.op, "coopmat.f16_f32_16x16x16");
  ASSERT_TRUE(f.ops_per_clk_sm);
  EXPECT_NEAR(f.ops_per_clk_sm->median, 20, 1e-6);
  ASSERT_TRUE(f.latency_cycles);
  EXPECT_NEAR(f.latency_cycles->median, 24, 1e-9);
  EXPECT_NE(f.note.find("the shape the fake timed"), std::string::npos) << f.note;
}

}  // namespace
