// What the Vulkan backend measures beyond its first set, through the real backend (Mesa's
// lavapipe on the CPU in CI): the l2 path (a coherent storage buffer) and the exchange and
// release/acquire ping-pongs. Each kernel runs for real; its result is checked by the host.
#include <gtest/gtest.h>

#include <atomic>
#include <string>

#include "../unit/figure_ids_check.hpp"
#include "atomics/atomics.hpp"
#include "gpudissect/device.hpp"
#include "latency/run.hpp"
#include "latency_sweep.hpp"
#include "registry.hpp"
#include "vulkan_backend.hpp"
#include "vulkan_context.hpp"
#include "vulkan_first_device.hpp"
#include "vulkan_probes.hpp"

namespace {

using gd::MemPath;

bool is_cpu(const gd::Device& dev) { return dev.info().extra.at("device_type") == "CPU"; }

// The global and l2 paths over a short sweep: every l2 point walks its chain to the right
// end (the sweep's end-line check), the path's levels are found and named for what they are
// (on lavapipe a coherent load hits the host's L1: numbered from L1, and the note says so;
// on a GPU from L2), and each level gives its figures, ok, within the global path's range.
TEST(VulkanDepth, L2PathIsMeasuredAndNamedForWhatItSees) {
  GD_REQUIRE_DEVICE(dev);
  ASSERT_TRUE(dev->supports(MemPath::l2).ok) << dev->supports(MemPath::l2).reason;
  // A coherent load, through the chain's buffer or its device address (chase_global.comp).
  const std::string inst = dev->timed_instruction(MemPath::l2).value_or("");
  ASSERT_EQ(inst.rfind("SPIR-V OpLoad (", 0), 0u) << inst;
  ASSERT_NE(inst.find("Coherent"), std::string::npos) << inst;
  const gd::LatencyOptions opt =
      gd::test::short_sweep({MemPath::global, MemPath::l2}, 1ull << 20, 2, 3);
  gd::LatencyProbeResult out;
  // A short sweep on a CPU that other tests load at the same time can wander without a flat
  // plateau ("no flat plateau found"); that is the host's noise, not the path's: up to three
  // sweeps, the first with levels counts.
  for (int attempt = 0; attempt < 3; ++attempt) {
    out = gd::test::run_sweep(*dev, opt);
    if (out.paths.count("l2") && !out.paths.at("l2").levels.empty()) break;
  }
  ASSERT_TRUE(out.paths.count("l2"));
  const gd::CurveResult& l2 = out.paths.at("l2");
  ASSERT_TRUE(l2.status.ok()) << l2.status.reason;
  ASSERT_FALSE(l2.points.empty());
  for (const auto& pt : l2.points)
    EXPECT_TRUE(pt.status.ok()) << pt.footprint_bytes << pt.status.reason;
  ASSERT_FALSE(l2.levels.empty()) << l2.note;
  const bool hits_l1 = l2.note.find("do not skip L1") != std::string::npos;
  if (is_cpu(*dev)) EXPECT_TRUE(hits_l1) << l2.note;
  EXPECT_EQ(l2.levels.front().name.rfind(hits_l1 ? "L1" : "L2", 0), 0u) << l2.levels.front().name;

  gd::RunResult run;
  run.put(out);
  gd::expect_figure_ids_declared(run);
  const std::string first =
      "latency.l2." + std::string(hits_l1 ? "L1" : l2.levels.front().name.substr(0, 2));
  // The listing names the chain the path's last point walked (an earlier test in the same
  // process may have left another kind), so it is read again after the sweep.
  const std::string swept = dev->timed_instruction(MemPath::l2).value_or("");
  EXPECT_NE(swept.find("Coherent"), std::string::npos) << swept;
  int l2_figures = 0;
  for (const gd::Figure& f : gd::collect_figures(run, gd::probe_registry())) {
    if (f.id.rfind("latency.l2.", 0) != 0) continue;
    ++l2_figures;
    EXPECT_EQ(f.status.name(), "ok") << f.id;
    EXPECT_EQ(f.instruction, swept) << f.id;
    if (f.unit == "ns") {
      ASSERT_TRUE(f.value) << f.id;
      EXPECT_GT(f.value->median, 0.1) << f.id;
      EXPECT_LT(f.value->median, 10000.0) << f.id;
    }
  }
  EXPECT_GE(l2_figures, 1);
  bool has_first = false;
  for (const gd::Figure& f : gd::collect_figures(run, gd::probe_registry()))
    if (f.id.rfind(first, 0) == 0) has_first = true;
  EXPECT_TRUE(has_first) << first;
}

// The exchange and release/acquire ping-pongs, and CAS, each played by one invocation
// taking both turns (lavapipe cannot run two waiting players: see supports()): the flag ends
// at twice the round trips, each side counted its hand-overs, no exchange lost and no
// payload stale behind an acquire. 16 rounds: llvmpipe ended a workgroup of one invocation's
// game after 19 of 200 rounds, every run, with no timeout (its loop limit, which is why the
// real game is refused there).
TEST(VulkanDepth, EveryPingPongModeRunsAndIsChecked) {
  GD_REQUIRE_DEVICE(dev);
  const auto instance = gd::vulkan::Instance::create();
  const auto devices = instance->physical_devices();
  ASSERT_FALSE(devices.empty());
  const gd::vulkan::Facts facts = gd::vulkan::query_facts(devices[0], 0);
  gd::vulkan::Context ctx(instance, devices[0], facts);
  for (gd::PingPong kind :
       {gd::PingPong::global_cas, gd::PingPong::global_exch, gd::PingPong::global_release_acquire,
        gd::PingPong::shared_cas, gd::PingPong::shared_exch}) {
    SCOPED_TRACE(gd::to_string(kind));
    const gd::PingPongOutcome o = gd::vulkan::play_pingpong_solo(ctx, kind, 16);
    EXPECT_EQ(gd::pingpong_check(o, 16), "");
    EXPECT_EQ(o.final_value, 32u);
  }
  EXPECT_THROW(gd::vulkan::play_pingpong_solo(ctx, gd::PingPong::host, 8), gd::BackendError);
  // At another flag location (gd::kLocationStride apart, the shader told its first word): the
  // host reads the flag there, so a game played elsewhere would end at 0.
  for (gd::PingPong kind : {gd::PingPong::global_cas, gd::PingPong::global_exch,
                            gd::PingPong::global_release_acquire}) {
    SCOPED_TRACE(gd::to_string(kind));
    const gd::PingPongOutcome o = gd::vulkan::play_pingpong_solo(ctx, kind, 16, 5);
    EXPECT_EQ(gd::pingpong_check(o, 16), "");
    EXPECT_EQ(o.final_value, 32u);
  }
  EXPECT_THROW(gd::vulkan::play_pingpong_solo(ctx, gd::PingPong::global_cas, 8, gd::kMaxLocations),
               gd::BackendError);
}

// What the probe says of each ping-pong: on lavapipe every kind is refused for its loop
// limit; the host game names Vulkan's missing system scope everywhere else; and every kind
// has its SPIR-V.
TEST(VulkanDepth, PingPongKindsSayWhatTheyTimeOrWhyNot) {
  GD_REQUIRE_DEVICE(dev);
  auto* k = dev->kernels<gd::AtomicsKernels>();
  ASSERT_NE(k, nullptr);
  const bool lavapipe = dev->info().name.find("llvmpipe") != std::string::npos;
  for (gd::PingPong kind : gd::all_ping_pongs()) {
    SCOPED_TRACE(gd::to_string(kind));
    const gd::Support s = k->supports(kind);
    if (lavapipe) {
      EXPECT_FALSE(s.ok);
      EXPECT_NE(s.reason.find("llvmpipe"), std::string::npos) << s.reason;
    } else if (kind == gd::PingPong::host) {
      EXPECT_FALSE(s.ok);
      EXPECT_NE(s.reason.find("system scope"), std::string::npos) << s.reason;
    }
    EXPECT_EQ(s.reason.find("yet"), std::string::npos) << s.reason;
  }
  EXPECT_EQ(*k->instruction("pingpong.global.release_acquire_pingpong"),
            "SPIR-V OpAtomicLoad Acquire + OpAtomicStore Release (StorageBuffer, Device scope)");
  EXPECT_EQ(*k->instruction("pingpong.shared.exch_pingpong"),
            "SPIR-V OpAtomicLoad + OpAtomicExchange (Workgroup)");
  EXPECT_EQ(*k->instruction("pingpong.global.cas_pingpong"),
            "SPIR-V OpAtomicCompareExchange (StorageBuffer)");
}

}  // namespace
