// The atomics probe's kernels beyond 32-bit integer add and CAS through the real Vulkan
// backend (Mesa's lavapipe on the CPU in CI): atomicMin / atomicMax, 64-bit integer add, float
// and double add, the add at workgroup scope. Each runs for real and its memory is checked
// exactly by the host (gd::throughput_check); what the device lacks names the feature.
#include <gtest/gtest.h>

#include <cstdlib>
#include <memory>
#include <string>

#include "atomics/atomics.hpp"
#include "vulkan_backend.hpp"
#include "vulkan_first_device.hpp"

namespace {

using gd::AtomicOp;
using gd::AtomicScope;
using gd::AtomicSpace;
using gd::AtomicType;
using gd::Contention;
using gd::ThroughputRequest;

#define GD_ATOMICS_KERNELS(k)                                                    \
  GD_REQUIRE_DEVICE(dev_)                                                        \
  const bool lavapipe = dev_->info().name.find("llvmpipe") != std::string::npos; \
  auto* k = dev_->kernels<gd::AtomicsKernels>();                                 \
  ASSERT_NE(k, nullptr);                                                         \
  if (!k->supports(ThroughputRequest{}).ok)                                      \
    GTEST_SKIP() << "no atomics here: " << k->supports(ThroughputRequest{}).reason;

ThroughputRequest req(AtomicSpace s, AtomicOp o, AtomicType t, Contention c,
                      AtomicScope scope = AtomicScope::gpu) {
  ThroughputRequest r;
  r.space = s;
  r.op = o;
  r.type = t;
  r.contention = c;
  r.scope = scope;
  r.iterations = 64;
  r.repeats = 1;
  return r;
}

void expect_checked(gd::AtomicsKernels& k, const ThroughputRequest& r) {
  const std::string key = r.key();
  ASSERT_TRUE(k.supports(r).ok) << key << ": " << k.supports(r).reason;
  const gd::ThroughputTiming t = k.throughput(r);
  EXPECT_EQ(t.check_error, "") << key;
  EXPECT_EQ(t.layout.iterations, 64u) << key;
  ASSERT_EQ(t.seconds.size(), 1u) << key;
  EXPECT_GT(t.seconds[0], 0) << key;
  const auto instr = k.instruction(key);
  ASSERT_TRUE(instr) << key;
  EXPECT_EQ(instr->rfind("SPIR-V OpAtomic", 0), 0u) << *instr;
}

// Signed atomicMin / atomicMax need nothing beyond Vulkan 1.0: every pattern checked.
TEST(VulkanAtomicsTypes, MinMaxAreChecked) {
  GD_ATOMICS_KERNELS(k);
  for (AtomicOp op : {AtomicOp::min, AtomicOp::max})
    for (Contention c : {Contention::distinct, Contention::same_per_warp, Contention::same_gpu})
      expect_checked(*k, req(AtomicSpace::global, op, AtomicType::i32, c));
  EXPECT_EQ(*k->instruction("global.min_i32.distinct"), "SPIR-V OpAtomicSMin (StorageBuffer)");
  EXPECT_EQ(*k->instruction("global.max_i32.same_per_warp"), "SPIR-V OpAtomicSMax (StorageBuffer)");
}

// 64-bit integer add, float add on a buffer and on workgroup memory, double add: checked
// where offered (lavapipe offers all but double), else the reason names the feature.
TEST(VulkanAtomicsTypes, Int64AndFloatAddsAreCheckedOrNameTheirFeature) {
  GD_ATOMICS_KERNELS(k);
  struct Case {
    ThroughputRequest r;
    const char* feature;
    bool on_lavapipe;
  };
  const Case cases[] = {
      {req(AtomicSpace::global, AtomicOp::add, AtomicType::u64, Contention::distinct),
       "shaderBufferInt64Atomics", true},
      {req(AtomicSpace::global, AtomicOp::add, AtomicType::u64, Contention::same_per_block),
       "shaderBufferInt64Atomics", true},
      {req(AtomicSpace::global, AtomicOp::add, AtomicType::f32, Contention::distinct),
       "shaderBufferFloat32AtomicAdd", true},
      {req(AtomicSpace::global, AtomicOp::add, AtomicType::f32, Contention::same_per_warp),
       "shaderBufferFloat32AtomicAdd", true},
      {req(AtomicSpace::shared, AtomicOp::add, AtomicType::f32, Contention::distinct),
       "shaderSharedFloat32AtomicAdd", true},
      {req(AtomicSpace::shared, AtomicOp::add, AtomicType::f32, Contention::same_per_block),
       "shaderSharedFloat32AtomicAdd", true},
      {req(AtomicSpace::global, AtomicOp::add, AtomicType::f64, Contention::distinct),
       "shaderBufferFloat64AtomicAdd", false},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.r.key());
    const gd::Support s = k->supports(c.r);
    if (lavapipe && c.on_lavapipe) EXPECT_TRUE(s.ok) << s.reason;
    if (s.ok)
      expect_checked(*k, c.r);
    else
      EXPECT_NE(s.reason.find(c.feature), std::string::npos) << s.reason;
  }
  EXPECT_EQ(*k->instruction("global.add_f32.distinct"), "SPIR-V OpAtomicFAddEXT (StorageBuffer)");
  EXPECT_EQ(*k->instruction("shared.add_f32.distinct"), "SPIR-V OpAtomicFAddEXT (Workgroup)");
  const gd::Support half =
      k->supports(req(AtomicSpace::global, AtomicOp::add, AtomicType::f16x2, Contention::distinct));
  EXPECT_FALSE(half.ok);
  EXPECT_NE(half.reason.find("packed"), std::string::npos) << half.reason;
}

// Scopes: workgroup scope (CUDA's cta) runs and is checked; Vulkan has no system scope.
TEST(VulkanAtomicsTypes, WorkgroupScopeIsCheckedAndSystemScopeHasAReason) {
  GD_ATOMICS_KERNELS(k);
  for (Contention c : {Contention::distinct, Contention::same_per_block})
    expect_checked(*k,
                   req(AtomicSpace::global, AtomicOp::add, AtomicType::i32, c, AtomicScope::cta));
  EXPECT_EQ(*k->instruction("global.add_i32.distinct.cta"),
            "SPIR-V OpAtomicIAdd (StorageBuffer, Workgroup scope)");
  const gd::Support sys = k->supports(req(AtomicSpace::global, AtomicOp::add, AtomicType::i32,
                                          Contention::distinct, AtomicScope::sys));
  EXPECT_FALSE(sys.ok);
  EXPECT_NE(sys.reason.find("system scope"), std::string::npos) << sys.reason;
  const gd::Support none =
      k->supports(req(AtomicSpace::shared, AtomicOp::min, AtomicType::i32, Contention::distinct));
  EXPECT_NE(none.reason.find("not part of the plan"), std::string::npos) << none.reason;
}

// Global targets at CUDA's placements (gd::placement_stride apart in one buffer, the shader
// told its first word and its results' slot): every repeat visits every placement and each
// placement's memory (and CAS successes) is checked exactly. With placements at most 3
// repeats (the launches a figure costs); workgroup memory has one placement.
TEST(VulkanAtomicsTypes, GlobalTargetsAtEveryPlacementAreChecked) {
  GD_ATOMICS_KERNELS(k);
  (void)lavapipe;
  for (AtomicOp op : {AtomicOp::add, AtomicOp::cas, AtomicOp::min}) {
    ThroughputRequest r = req(AtomicSpace::global, op, AtomicType::i32, Contention::distinct);
    r.repeats = 5;
    r.placements = 4;
    const std::string key = r.key();
    const gd::ThroughputTiming t = k->throughput(r);
    EXPECT_EQ(t.check_error, "") << key;
    EXPECT_EQ(t.seconds.size(), 12u) << key;
    ASSERT_EQ(t.seconds_by_placement.size(), 4u) << key;
    for (const auto& p : t.seconds_by_placement) EXPECT_EQ(p.size(), 3u) << key;
  }
  ThroughputRequest u64 =
      req(AtomicSpace::global, AtomicOp::add, AtomicType::u64, Contention::same_per_block);
  u64.placements = 3;
  if (k->supports(u64).ok) {
    const gd::ThroughputTiming t = k->throughput(u64);
    EXPECT_EQ(t.check_error, "");
    EXPECT_EQ(t.seconds_by_placement.size(), 3u);
  }
  ThroughputRequest shared =
      req(AtomicSpace::shared, AtomicOp::add, AtomicType::i32, Contention::distinct);
  shared.repeats = 2;
  shared.placements = 4;
  const gd::ThroughputTiming t = k->throughput(shared);
  EXPECT_EQ(t.check_error, "");
  EXPECT_TRUE(t.seconds_by_placement.empty());
  EXPECT_EQ(t.seconds.size(), 2u);
  ThroughputRequest bad =
      req(AtomicSpace::global, AtomicOp::add, AtomicType::i32, Contention::distinct);
  bad.placements = gd::kMaxPlacements + 1;
  EXPECT_THROW(k->throughput(bad), gd::BackendError);
}

}  // namespace
