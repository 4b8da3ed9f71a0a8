// The frontend probe without a GPU: the instruction-cache code generator (sizes, the loop
// body is what was asked), the SASS loop reader, level detection on synthetic IPC curves,
// resident blocks from block intervals, clock sync, dispatch statistics, the register
// prediction, options, the JSON round trip, and the probe on fake devices (unsupported,
// a failing backend, a backend that works).
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "fake_device.hpp"
#include "figure_ids_check.hpp"
#include "frontend/frontend.hpp"
#include "frontend/run.hpp"
#include "gpudissect/compare.hpp"
#include "gpudissect/json_read.hpp"
#include "gpudissect/progress.hpp"
#include "gpudissect/result.hpp"
#include "gpudissect/sass.hpp"
#include "registry.hpp"
#include "report.hpp"

namespace gd {
namespace {

int count(const std::string& s, const std::string& what) {
  int n = 0;
  for (std::size_t p = s.find(what); p != std::string::npos; p = s.find(what, p + what.size())) ++n;
  return n;
}

TEST(FrontendGenerator, BodyRoundsToChains) {
  EXPECT_EQ(icache_body_instructions(1), kIcacheChains);
  EXPECT_EQ(icache_body_instructions(1024), 1024);
  EXPECT_EQ(icache_body_instructions(1025), 1032);
}

TEST(FrontendGenerator, CudaBodyHoldsExactlyTheInstructionsAsked) {
  const std::string one = generate_icache_cuda({1000, 1});
  EXPECT_EQ(count(one, "fma.rn.f32"), 1000);
  EXPECT_NE(one.find("extern \"C\" __global__"), std::string::npos);
  EXPECT_NE(one.find(icache_kernel_name()), std::string::npos);
  EXPECT_EQ(count(one, "#pragma unroll 1"), 1);
  // Emitted in asm blocks of kIcacheAsmBlock instructions (NVVM time grows per statement).
  EXPECT_EQ(count(one, "asm volatile(\n"), (1000 + kIcacheAsmBlock - 1) / kIcacheAsmBlock);
  // Every chain is used, each instruction rotates through them.
  for (int k = 0; k < kIcacheChains; ++k)
    EXPECT_NE(one.find("\"fma.rn.f32 %" + std::to_string(k) + ", %" + std::to_string(k)),
              std::string::npos);

  const std::string four = generate_icache_cuda({256, 4});
  EXPECT_EQ(count(four, "fma.rn.f32"), 4 * 256);
  EXPECT_EQ(count(four, "#pragma unroll 1"), 4);
  // Regions differ in their immediates, so no compiler can merge them.
  char imm[16];
  for (int r = 0; r < 4; ++r) {
    float m = icache_multiplier(r);
    uint32_t u;
    std::memcpy(&u, &m, 4);
    std::snprintf(imm, sizeof imm, "0f%08X", u);
    EXPECT_EQ(count(four, imm), 256) << "region " << r;
  }
}

TEST(FrontendGenerator, OpenCLBodyHoldsExactlyTheInstructionsAsked) {
  const std::string s = generate_icache_opencl({200, 2});
  EXPECT_EQ(count(s, "= fma(a"), 2 * 200);
  EXPECT_NE(s.find("__kernel void gd_icache"), std::string::npos);
  EXPECT_NE(s.find("switch (region)"), std::string::npos);
}

TEST(FrontendGenerator, ReferenceDependsOnRegionAndPasses) {
  const IcacheKernelSpec spec{64, 4};
  EXPECT_EQ(icache_reference(spec, 0, 3), icache_reference(spec, 0, 3));
  EXPECT_NE(icache_reference(spec, 0, 1), icache_reference(spec, 1, 1));
  EXPECT_NE(icache_reference(spec, 0, 1), icache_reference(spec, 0, 2));
}

TEST(FrontendGenerator, SweepSizes) {
  const auto v = icache_sizes(1024, 131072, 2);
  ASSERT_GE(v.size(), 14u);
  EXPECT_EQ(v.front(), 1024);
  EXPECT_EQ(v.back(), 131072);
  for (std::size_t i = 1; i < v.size(); ++i) {
    EXPECT_GT(v[i], v[i - 1]);
    EXPECT_EQ(v[i] % kIcacheChains, 0);
  }
  EXPECT_EQ(icache_sizes(100, 100, 2), std::vector<int>{104});
}

TEST(FrontendGenerator, EdgeRefinement) {
  // Bracket 2048..2896 instructions (32 KiB..~45 KiB): three sizes inside, none measured.
  const auto v = icache_refinement({2048, 2896}, 2048 * 16, 2896 * 16, 32768, 3);
  ASSERT_EQ(v.size(), 3u);
  for (int n : v) {
    EXPECT_GT(n, 2048);
    EXPECT_LT(n, 2896);
    EXPECT_EQ(n % kIcacheChains, 0);
  }
  EXPECT_TRUE(icache_refinement({}, 65536.0 * 16, 92688.0 * 16, 32768, 3).empty());  // too big
  EXPECT_TRUE(icache_refinement({}, 4096, 4096, 32768, 3).empty());
}

TEST(FrontendSass, LoopsAndTheirBytes) {
  const std::string sass = R"(
	code for sm_90
		Function : gd_icache
        /*0000*/                   LDC R1, c[0x0][0x28] ;
        /*0010*/                   S2R R0, SR_TID.X ;
        /*0100*/                   FFMA R2, R2, 0.99900001287460327148, R9 ;
        /*0110*/                   FFMA R3, R3, 0.99900001287460327148, R9 ;
        /*0120*/                   FFMA R4, R4, 0.99900001287460327148, R9 ;
        /*0130*/                   IADD3 R5, R5, 0x1, RZ ;
        /*0140*/                   ISETP.GE.AND P0, PT, R5, c[0x0][0x210], PT ;
        /*0150*/              @!P0 BRA 0x100 ;
        /*0160*/                   FFMA R2, R2, 0.99890002608299255371, R9 ;
        /*0170*/              @!P1 BRA 0x160 ;
        /*0180*/                   EXIT ;
)";
  const auto all = parse_sass_all_loops(sass);
  ASSERT_EQ(all.count("gd_icache"), 1u);
  const auto& loops = all.at("gd_icache");
  ASSERT_EQ(loops.size(), 2u);
  EXPECT_EQ(loops[0].begin, 0x100u);
  EXPECT_EQ(loops[0].instructions, 6);
  EXPECT_EQ(loops[0].bytes(), 6u * 16);
  EXPECT_EQ(loops[0].opcodes.at("FFMA"), 3);
  EXPECT_EQ(loops[1].instructions, 2);
  const auto big = region_loops(loops, 1);
  ASSERT_EQ(big.size(), 1u);
  EXPECT_EQ(big[0].begin, 0x100u);
  EXPECT_EQ(region_loops(loops, 4).size(), 2u);
  EXPECT_TRUE(parse_sass_all_loops("").empty());
}

// A synthetic Hopper-like curve: 1 inst/clk while the loop fits a 32 KiB L0i, 0.5 up to a
// 128 KiB L1i, 0.12 from L2, sampled at half doublings with a little noise.
std::vector<IcachePoint> synthetic_curve() {
  std::vector<IcachePoint> c;
  int i = 0;
  for (double b = 4096; b <= 4.0 * 1024 * 1024; b *= std::sqrt(2.0), ++i) {
    const double ipc = b <= 32768 ? 1.0 : b <= 131072 ? 0.5 : 0.12;
    const double noise = 1.0 + 0.004 * ((i % 3) - 1);
    c.push_back({b, ipc * noise, 0.005});
  }
  return c;
}

TEST(FrontendLevels, FindsL0iL1iAndL2) {
  const auto levels = detect_icache_levels(synthetic_curve());
  ASSERT_EQ(levels.size(), 3u);
  EXPECT_NEAR(levels[0].latency, 1.0, 0.02);
  EXPECT_NEAR(levels[1].latency, 0.5, 0.02);
  EXPECT_NEAR(levels[2].latency, 0.12, 0.01);
  ASSERT_TRUE(levels[0].capacity_lo && levels[0].capacity_hi);
  EXPECT_LE(*levels[0].capacity_lo, 32768);
  EXPECT_GT(*levels[0].capacity_hi, 32768);
  EXPECT_LE(*levels[1].capacity_lo, 131072);
  EXPECT_GT(*levels[1].capacity_hi, 131072);
  EXPECT_FALSE(levels[2].capacity_lo);
  const auto names = icache_level_names(levels);
  ASSERT_EQ(names.size(), 3u);
  EXPECT_EQ(names[0], "L0i");
  EXPECT_EQ(names[1], "L1i");
  EXPECT_EQ(names[2], "L2");
  // Named by where they end: a curve whose only step is at 128 KiB has an L1i, no L0i.
  std::vector<DetectedLevel> two(2), odd(3);
  two[0].capacity_lo = 131072;
  EXPECT_EQ(icache_level_names(two), (std::vector<std::string>{"L1i", "L2"}));
  odd[0].capacity_lo = 16384;
  odd[1].capacity_lo = 32768;
  EXPECT_EQ(icache_level_names(odd), (std::vector<std::string>{"L0i", "L0i (2)", "L2"}));
  // A sweep that ends inside the L1i (OpenCL's stops at 4096 instructions, 64 KiB of SASS):
  // the level past the L0i's edge is the L1i, not the L2.
  std::vector<DetectedLevel> short_sweep(2);
  short_sweep[0].capacity_lo = 30208;
  short_sweep[0].capacity_hi = 32768;
  EXPECT_EQ(icache_level_names(short_sweep), (std::vector<std::string>{"L0i", "L1i"}));
}

TEST(FrontendLevels, FlatCurveIsOneLevel) {
  std::vector<IcachePoint> c;
  for (double b = 4096; b <= 1 << 20; b *= 2) c.push_back({b, 0.9, 0.01});
  EXPECT_EQ(detect_icache_levels(c).size(), 1u);
  EXPECT_EQ(icache_level_names(detect_icache_levels(c)), std::vector<std::string>{"all sizes"});
  EXPECT_TRUE(detect_icache_levels({}).empty());
}

TEST(FrontendOccupancy, OverlapPerSm) {
  // SM 0: three blocks overlap, then a fourth starts exactly when one ends (no overlap).
  std::vector<BlockRecord> b = {{0, 0, 100, 200}, {0, 1, 110, 210}, {0, 2, 120, 220},
                                {0, 3, 200, 300}, {1, 0, 100, 200}, {1, 1, 200, 300}};
  const auto per = max_resident_blocks(b);
  EXPECT_EQ(per.at(0), 3);
  EXPECT_EQ(per.at(1), 1);
  // Two SMs: the upper median.
  EXPECT_EQ(resident_blocks(b), 3);
  b.push_back({2, 0, 100, 200});
  EXPECT_EQ(resident_blocks(b), 1);
  EXPECT_EQ(resident_blocks({}), 0);
}

TEST(FrontendOccupancy, RegisterPrediction) {
  EXPECT_EQ(predicted_warps_by_registers(32, 128), 64);
  EXPECT_EQ(predicted_warps_by_registers(40, 128), 48);
  EXPECT_EQ(predicted_warps_by_registers(64, 128), 32);
}

// The staircase an H200 shows (128-thread blocks of a kernel with 8 B of its own
// __shared__): 228 KiB per SM, 1 KiB reserved per block.
TEST(FrontendOccupancy, SharedMemoryPrediction) {
  const uint64_t sm = 228 * 1024;
  auto warps = [&](uint64_t kib) { return predicted_warps_by_shared(kib * 1024 + 8, 128, sm); };
  EXPECT_EQ(warps(0), 64);   // the warp limit: 16 blocks of 4 warps
  EXPECT_EQ(warps(8), 64);   // 9 KiB x 16 = 144 KiB still fits
  EXPECT_EQ(warps(16), 52);  // 13 blocks
  EXPECT_EQ(warps(24), 36);  // 9
  EXPECT_EQ(warps(32), 24);  // 6
  EXPECT_EQ(warps(48), 16);  // 4
  EXPECT_EQ(warps(64), 12);  // 3
  EXPECT_EQ(warps(100), 8);  // 2
  EXPECT_EQ(warps(116), 4);  // 2 x 117 KiB > 228 KiB
  EXPECT_EQ(predicted_warps_by_shared(227 * 1024, 128, sm), 4);
  EXPECT_EQ(predicted_warps_by_shared(228 * 1024, 128, sm),
            0);                                         // does not fit with the reservation
  EXPECT_EQ(predicted_warps_by_shared(0, 32, sm), 32);  // the block limit
  EXPECT_EQ(predicted_warps_by_registers(128, 128), 16);
  EXPECT_EQ(predicted_warps_by_registers(255, 128), 8);
  EXPECT_EQ(predicted_warps_by_registers(16, 32), 32);  // 32 blocks per SM at most
  EXPECT_EQ(predicted_warps_by_registers(32, 1024), 64);
}

TEST(FrontendClock, SyncTakesTheShortestRoundTrip) {
  const auto s = sync_clocks({{1000, 6000, 1400}, {2000, 6810, 2020}, {3000, 8000, 3100}});
  ASSERT_TRUE(s);
  EXPECT_DOUBLE_EQ(s->offset_ns, 6810 - 2010);
  EXPECT_DOUBLE_EQ(s->uncertainty_ns, 10);
  EXPECT_FALSE(sync_clocks({}));
}

TEST(FrontendDispatch, RateAndSkew) {
  std::vector<BlockRecord> b;
  for (uint32_t i = 0; i < 100; ++i) b.push_back({i % 10, 0, 1000 + 100 * i, 1000 + 100 * i + 50});
  const auto d = dispatch_stats(b);
  ASSERT_TRUE(d);
  EXPECT_NEAR(d->blocks_per_us, 99 / 9.9, 1e-9);
  EXPECT_EQ(d->sms_seen, 10);
  EXPECT_NEAR(d->sm_skew_max_us, 0.9, 1e-9);
  EXPECT_NEAR(d->first_wave_us, 0.9, 1e-9);
  EXPECT_FALSE(dispatch_stats({{0, 0, 5, 6}}));
}

TEST(FrontendDispatch, TimerStepIsTheSmallestGapBetweenStarts) {
  // Starts on a 32 ns timer, some blocks sharing a stamp: the step is 32, not 0 or 64.
  std::vector<BlockRecord> b;
  for (uint64_t t : {1024, 1024, 1088, 1120, 1120, 1248}) b.push_back({0, 0, t, t + 10});
  const auto step = timer_step_ns(b);
  ASSERT_TRUE(step);
  EXPECT_DOUBLE_EQ(*step, 32);
  EXPECT_FALSE(timer_step_ns({{0, 0, 5, 6}, {1, 0, 5, 7}}));
  EXPECT_FALSE(timer_step_ns({}));
}

TEST(SassOpcodes, MostFrequentFirstTiesByName) {
  const std::map<std::string, int> counts = {
      {"BRA", 1}, {"FFMA", 512}, {"ISETP.LE.AND", 1}, {"IADD3", 1}, {"HFMA2", 256}};
  EXPECT_EQ(top_opcodes(counts, 4),
            (std::vector<std::string>{"FFMA x512", "HFMA2 x256", "BRA x1", "IADD3 x1"}));
  EXPECT_EQ(top_opcodes(counts, 9).size(), 5u);
  EXPECT_TRUE(top_opcodes({}, 4).empty());
}

TEST(FrontendOptions, QuickStopsTheCudaIcacheSweepAt32K) {
  const auto specs = probe_registry().find("frontend")->options();
  // ... and leaves the partition test out unless asked for.
  EXPECT_TRUE(parse_frontend_options({}, specs).partitions);
  EXPECT_FALSE(parse_frontend_options({{"quick", "1"}}, specs).partitions);
  EXPECT_TRUE(parse_frontend_options({{"quick", "1"}, {"partitions", "1"}}, specs).partitions);
  EXPECT_EQ(icache_max_instructions(parse_frontend_options({}, specs), "cuda"), 131072);
  EXPECT_EQ(icache_max_instructions(parse_frontend_options({{"quick", "1"}}, specs), "cuda"),
            32768);
  EXPECT_EQ(icache_max_instructions(parse_frontend_options({{"quick", "1"}}, specs), "opencl"),
            4096);
  EXPECT_EQ(
      icache_max_instructions(
          parse_frontend_options({{"quick", "1"}, {"max_instructions", "65536"}}, specs), "cuda"),
      65536);
}

// Refill: each later start on an SM is matched with the end that freed its slot (the
// (k - R)-th end for the k-th start, R resident), whatever order the blocks ended in.
TEST(FrontendRefill, MatchesEachStartWithTheFreedSlot) {
  // SM 5, two slots: A [0,100) and B [10,300) first; C takes A's slot 30 ns after A ended,
  // D takes B's 20 ns after B ended (C ends after B: the slots are matched by time, not id).
  const std::vector<BlockRecord> b = {
      {5, 0, 0, 100}, {5, 2, 10, 300}, {5, 0, 130, 400}, {5, 2, 320, 500}};
  const auto st = refill_stats(b);
  ASSERT_TRUE(st);
  ASSERT_EQ(st->per_sm.size(), 1u);
  EXPECT_EQ(st->per_sm[0].sm, 5u);
  EXPECT_EQ(st->per_sm[0].resident, 2);
  EXPECT_EQ(st->per_sm[0].refills, 2);
  EXPECT_NEAR(st->per_sm[0].latency_mean_us, 0.025, 1e-12);
  EXPECT_NEAR(st->latency_mean_us, 0.025, 1e-12);
  // Two refills from the first wave resident (10 ns) to the last start (320 ns).
  EXPECT_NEAR(st->per_sm[0].blocks_per_us, 2 / 0.31, 1e-9);
  EXPECT_NEAR(st->block_us_median, (180 + 270) / 2.0 / 1000, 1e-12);  // of 100, 290, 270, 180
}

TEST(FrontendRefill, WavesOnTwoSms) {
  // Four slots per SM, blocks of 1000 ns, 6 waves; SM 0 refills a slot 50 ns after it frees,
  // SM 1 150 ns after. Slots start 10 ns apart within a wave.
  std::vector<BlockRecord> b;
  for (uint32_t sm = 0; sm < 2; ++sm) {
    const uint64_t gap = sm == 0 ? 50 : 150;
    for (uint64_t slot = 0; slot < 4; ++slot)
      for (uint64_t w = 0; w < 6; ++w) {
        const uint64_t start = 10 * slot + w * (1000 + gap);
        b.push_back({sm, static_cast<uint32_t>(slot), start, start + 1000});
      }
  }
  // A record that ends before it starts is dropped, not counted as a block.
  b.push_back({0, 0, 5000, 10});
  const auto st = refill_stats(b);
  ASSERT_TRUE(st);
  ASSERT_EQ(st->per_sm.size(), 2u);
  EXPECT_EQ(st->resident_median, 4);
  EXPECT_EQ(st->refills, 2 * 20);
  EXPECT_NEAR(st->per_sm[0].latency_mean_us, 0.05, 1e-12);
  EXPECT_NEAR(st->per_sm[1].latency_mean_us, 0.15, 1e-12);
  EXPECT_NEAR(st->latency_p10_us, 0.05, 1e-12);
  EXPECT_NEAR(st->latency_p90_us, 0.15, 1e-12);
  // 20 refills from the 4th start (30 ns) to the last (30 + 5 periods).
  EXPECT_NEAR(st->per_sm[0].blocks_per_us, 20 / (5 * 1.05), 1e-9);
  EXPECT_NEAR(st->per_sm[1].blocks_per_us, 20 / (5 * 1.15), 1e-9);
  EXPECT_NEAR(st->sm_rate_min, 20 / (5 * 1.15), 1e-9);
  EXPECT_NEAR(st->sm_rate_max, 20 / (5 * 1.05), 1e-9);
  EXPECT_NEAR(st->blocks_per_us, 20 / 5.25 + 20 / 5.75, 1e-9);
  EXPECT_NEAR(st->block_us_median, 1.0, 1e-12);
}

TEST(FrontendRefill, OneWaveHasNoRefill) {
  EXPECT_FALSE(refill_stats({}));
  EXPECT_FALSE(refill_stats({{0, 0, 0, 100}, {0, 1, 5, 100}, {1, 0, 0, 100}}));
  // Back-to-back blocks on one slot: R = 1, each start 0 ns after the end before it.
  const auto st = refill_stats({{0, 0, 0, 100}, {0, 0, 100, 200}, {0, 0, 200, 300}});
  ASSERT_TRUE(st);
  EXPECT_EQ(st->resident_median, 1);
  EXPECT_DOUBLE_EQ(st->latency_mean_us, 0);
  EXPECT_NEAR(st->sm_rate_median, 2 / 0.2, 1e-9);
}

TEST(FrontendOptions, ParseAndReject) {
  const Probe* p = probe_registry().find("frontend");
  ASSERT_TRUE(p);
  const auto specs = p->options();
  const auto o = parse_frontend_options({{"max_instructions", "8192"}, {"dispatch", "0"}}, specs);
  EXPECT_EQ(o.max_instructions, 8192);
  EXPECT_FALSE(o.dispatch);
  EXPECT_THROW(parse_frontend_options({{"nope", "1"}}, specs), std::invalid_argument);
  EXPECT_THROW(parse_frontend_options({{"repeats", "x"}}, specs), std::invalid_argument);
  EXPECT_THROW(
      parse_frontend_options({{"min_instructions", "4096"}, {"max_instructions", "1024"}}, specs),
      std::invalid_argument);
  EXPECT_NO_THROW(p->parse_options({{"quick", "1"}}));
  const auto r = parse_frontend_options(
      {{"refill", "0"}, {"refill_waves", "16"}, {"refill_spin_us", "20"}}, specs);
  EXPECT_FALSE(r.refill);
  EXPECT_EQ(r.refill_waves, 16);
  EXPECT_EQ(r.refill_spin_us, 20);
  EXPECT_TRUE(parse_frontend_options({}, specs).refill);
  EXPECT_THROW(parse_frontend_options({{"refill_waves", "1"}}, specs), std::invalid_argument);
  EXPECT_THROW(parse_frontend_options({{"refill_spin_us", "0"}}, specs), std::invalid_argument);
}

FrontendProbeResult populated() {
  FrontendProbeResult r;
  r.language = "cuda";
  r.sms = 132;
  r.clock_mhz = 1980;
  r.clock_source = "measured";
  r.timed_instruction = "FFMA";
  r.code_bytes_source = "sass";
  IcacheCurvePoint p;
  p.instructions = 1024;
  p.loop_instructions = 1027;
  p.code_bytes = 1027 * 16;
  p.ipc = summarize({0.98, 0.99, 1.0});
  p.first_pass_ipc = 0.2;
  r.icache.push_back(p);
  r.icache_levels.push_back({"L0i", 32768, 32768, 36864, 0.99, 0.9});
  r.icache_levels.push_back({"L2", std::nullopt, std::nullopt, std::nullopt, 0.1, 0.8});
  r.partitions.push_back({2, true, summarize({0.25, 0.26}), {}});
  r.partition_halving = 0.5;
  r.launch_api = "cudaLaunchKernel";
  r.launch_start_us = summarize({4.0, 4.5});
  r.launch_round_trip_us = summarize({8.0, 8.7});
  r.launch_round_trip_samples_us = {8.0, 8.7};
  r.launch_wait = "wait: polling the event; with clFinish instead: median 17.90 us (50 samples)";
  r.rate_status["plain"] = {};
  r.rate_status["graph"] = {StatusCode::unsupported, "no"};
  r.rate_kernels_per_s["plain"] = summarize({400000.0});
  r.rate_gpu_kernels_per_s["plain"] = 450000;
  r.dispatch_blocks = 4;
  r.dispatch_blocks_per_us = summarize({2.0});
  r.dispatch_first_wave_us = 1.5;
  r.dispatch_trace = {{0, 0, 10, 20}, {1, 4, 12, 22}};
  FrontendOccupancyPoint o;
  o.kind = "regs";
  o.block_threads = 128;
  o.regs_per_thread = 40;
  o.blocks_per_sm = 12;
  o.warps_per_sm = 48;
  o.predicted_warps_per_sm = 48;
  r.occupancy.push_back(o);
  o.regs_per_thread = 32;
  o.blocks_per_sm = 16;
  o.warps_per_sm = 64;
  r.occupancy.push_back(o);
  o.kind = "block";
  o.regs_per_thread = 16;
  o.blocks_per_sm = 16;
  o.warps_per_sm = 64;
  r.occupancy.push_back(o);
  r.max_warps_per_sm = 64;
  r.max_blocks_per_sm = 16;
  r.refill_blocks = 33792;
  r.refill_block_threads = 64;
  r.refill_waves = 8;
  r.refill_spin_us = 5;
  r.refill_resident_per_sm = 32;
  r.refill_latency_us = summarize({0.3, 0.32, 0.31});
  r.refill_latency_p10_us = 0.2;
  r.refill_latency_p90_us = 0.5;
  r.refill_sm_rate = summarize({6.0, 6.1});
  r.refill_blocks_per_us = 800;
  r.refill_block_us = 5.05;
  r.refill_per_sm = {{0, 32, 224, 0.31, 6.05}, {2, 32, 224, 0.29, 6.1}};
  return r;
}

TEST(FrontendJson, RoundTrip) {
  const FrontendProbeResult r = populated();
  const nlohmann::json j = r;
  const auto back = j.get<FrontendProbeResult>();
  EXPECT_EQ(nlohmann::json(back), j);
  EXPECT_EQ(back.icache.at(0).code_bytes, 1027u * 16);
  EXPECT_EQ(back.rate_status.at("graph").name(), "unsupported");
  EXPECT_EQ(back.dispatch_trace.at(1).warp_slot, 4u);
  EXPECT_FALSE(j["icache"]["levels"][1].contains("capacity_bytes"));  // absent, never null
  ASSERT_EQ(back.refill_per_sm.size(), 2u);
  EXPECT_EQ(back.refill_per_sm[1].sm, 2u);
  EXPECT_DOUBLE_EQ(back.refill_latency_us->median, 0.31);
  EXPECT_EQ(back.launch_wait, r.launch_wait);
  // A result without the part (an older file) writes no "refill" object.
  FrontendProbeResult old;
  EXPECT_FALSE(nlohmann::json(old).contains("refill"));
  old.refill_status = {StatusCode::skipped, "frontend.refill=0"};
  const auto skipped = nlohmann::json(old).get<FrontendProbeResult>();
  EXPECT_EQ(skipped.refill_status.name(), "skipped");
}

// A point's status is its code and reason in the file, as a part's is; a word that names no
// code is refused at its key, not carried along.
TEST(FrontendJson, PointStatusesKeepTheirWordAndReason) {
  FrontendProbeResult r = populated();
  r.occupancy.at(0).status = {StatusCode::unsupported, "no register cap here"};
  r.partitions.at(0).status = {StatusCode::error, "no positive timing"};
  const nlohmann::json j = r;
  EXPECT_EQ(j["occupancy"]["points"][0]["status"], "unsupported");
  EXPECT_EQ(j["occupancy"]["points"][0]["reason"], "no register cap here");
  EXPECT_EQ(j["occupancy"]["points"][1]["status"], "ok");
  EXPECT_FALSE(j["occupancy"]["points"][1].contains("reason"));
  const auto back = j.get<FrontendProbeResult>();
  EXPECT_EQ(back.occupancy.at(0).status.code, StatusCode::unsupported);
  EXPECT_EQ(back.occupancy.at(0).status.reason, "no register cap here");
  EXPECT_EQ(back.partitions.at(0).status.code, StatusCode::error);
  EXPECT_TRUE(back.icache.at(0).status.ok());
  nlohmann::json bad = j;
  bad["icache"]["points"][0]["status"] = "fine";
  try {
    (void)bad.get<FrontendProbeResult>();
    ADD_FAILURE() << "an unknown status word was read";
  } catch (const JsonReadError& e) {
    EXPECT_NE(std::string(e.what()).find("not a status: \"fine\""), std::string::npos) << e.what();
  }
}

TEST(FrontendFigures, IdsFromAResult) {
  RunResult rr;
  rr.put(populated());
  const auto figs = probe_registry().find("frontend")->figures(rr);
  std::set<std::string> ids;
  for (const auto& f : figs) ids.insert(f.id);
  for (const char* id :
       {"frontend.icache.L0i.capacity", "frontend.icache.L0i.ipc", "frontend.icache.L2.ipc",
        "frontend.icache.partition_ratio", "frontend.launch.latency", "frontend.launch.round_trip",
        "frontend.launch.rate.plain", "frontend.dispatch.blocks_per_us",
        "frontend.dispatch.first_wave", "frontend.occupancy.warps_per_sm",
        "frontend.occupancy.blocks_per_sm", "frontend.occupancy.warps_per_partition",
        "frontend.occupancy.max_regs_full", "frontend.refill.latency",
        "frontend.refill.sm_blocks_per_us", "frontend.refill.blocks_per_us"})
    EXPECT_TRUE(ids.count(id)) << id;
  EXPECT_FALSE(ids.count("frontend.icache.L2.capacity"));
  for (const auto& f : figs)
    if (f.id == "frontend.occupancy.max_regs_full") EXPECT_EQ(f.value->median, 32);
  EXPECT_FALSE(ids.count("frontend.launch.rate.graph"));
}

// A backend that polls for the launch's end names how, and what the API's blocking wait took
// instead; the round trip's `where` carries it.
TEST(FrontendFigures, RoundTripNamesHowTheHostWaited) {
  EXPECT_EQ(gd::blocking_wait_note("polling the fence", "vkWaitForFences", {48e3, 47e3, 60e3}),
            "wait: polling the fence; with vkWaitForFences instead: median 48.00 us (3 samples)");
  EXPECT_EQ(gd::blocking_wait_note("polling the fence", "vkWaitForFences", {}),
            "wait: polling the fence");
  RunResult rr;
  rr.put(populated());
  bool found = false;
  for (const auto& f : probe_registry().find("frontend")->figures(rr))
    if (f.id == "frontend.launch.round_trip") {
      found = true;
      EXPECT_NE(f.where.find("with clFinish instead: median 17.90 us"), std::string::npos)
          << f.where;
    }
  EXPECT_TRUE(found);
}

// The refill latency is a gap between two timer stamps: two timer steps over its median is
// its resolution, so a quick run one step off the full one is not a regression.
TEST(FrontendFigures, RefillLatencyCarriesTwoTimerSteps) {
  FrontendProbeResult p = populated();
  p.timer_resolution_ns = 32;
  p.refill_latency_us = summarize({1.089});
  RunResult rr;
  rr.put(p);
  const auto figs = probe_registry().find("frontend")->figures(rr);
  const auto it = std::find_if(figs.begin(), figs.end(),
                               [](const Figure& f) { return f.id == "frontend.refill.latency"; });
  ASSERT_NE(it, figs.end());
  ASSERT_TRUE(it->resolution);
  EXPECT_NEAR(*it->resolution, 0.064 / 1.089, 1e-12);
  CompareInput base, now;
  base.figures = {*it};
  now.figures = {*it};
  now.figures[0].value->median = 1.125;  // +3.3 %: inside 5.9 %
  now.figures[0].resolution.reset();
  EXPECT_EQ(compare_baseline(base, now, 0.03).regressions(), 0);
  now.figures[0].value->median = 1.2;  // +10 %
  EXPECT_EQ(compare_baseline(base, now, 0.03).regressions(), 1);
}

TEST(FrontendReport, RefillLineAndCsvOnlyWhereItRan) {
  RunResult rr;
  rr.put(populated());
  std::ostringstream os;
  report::print_summary(os, rr, probe_registry());
  EXPECT_NE(os.str().find("Refill (ok): 33792 blocks of 64 threads (8 waves), each 5 us on its "
                          "SM: a freed slot took the next block after 0.310"),
            std::string::npos)
      << os.str();
  EXPECT_NE(os.str().find("with 32 resident per SM and blocks of 5.05 us"), std::string::npos);
  const auto dir =
      std::filesystem::temp_directory_path() /
      ("gd-refill-csv-" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  bool found = false;
  for (const auto& f : report::write_csv(dir, rr, probe_registry()))
    if (f.filename() == "frontend_refill.csv") {
      std::ifstream in(f);
      std::string header, row;
      std::getline(in, header);
      std::getline(in, row);
      EXPECT_EQ(header, "sm,resident,refills,latency_mean_us,blocks_per_us");
      EXPECT_EQ(row, "0,32,224,0.3100,6.0500");
      found = true;
    }
  std::filesystem::remove_all(dir);
  EXPECT_TRUE(found);
  // A result from before the part (no refill in its JSON) prints no refill line.
  FrontendProbeResult old = populated();
  old.refill_blocks = 0;
  old.refill_status = {};
  RunResult r2;
  r2.put(old);
  std::ostringstream os2;
  report::print_summary(os2, r2, probe_registry());
  EXPECT_EQ(os2.str().find("Refill"), std::string::npos);
}

// ---- fake devices ----

DeviceInfo fake_info() {
  DeviceInfo info;
  info.backend = "fake";
  info.id = "fake:0";
  info.name = "fake";
  info.compute_units = 2;
  info.clock_mhz_reported = 1000;
  return info;
}

class FakeDevice final : public fakes::OneKernelSetDevice<FrontendKernels> {
 public:
  explicit FakeDevice(FrontendKernels* k) : OneKernelSetDevice(k, fake_info()) {}
};

// A backend whose instruction cache is 4 KiB (IPC 1, then 0.25), launches take 5 us, and
// whose SMs hold 2 blocks; `fail` makes the instruction-cache kernel throw.
class FakeKernels : public FrontendKernels {
 public:
  bool fail = false;
  bool nothing = false;
  bool no_regs = false;  // no register cap, as OpenCL and Vulkan
  bool beside = false;   // compiles_beside_measurements
  std::vector<std::vector<std::pair<int, int>>> icache_prepared;  // (instructions, regions)
  std::vector<std::vector<int>> occupancy_prepared;
  bool compiles_beside_measurements() const override { return beside; }
  void prepare_icache(const std::vector<IcacheKernelSpec>& specs,
                      const std::atomic<bool>*) override {
    std::vector<std::pair<int, int>> v;
    for (const auto& s : specs) v.emplace_back(s.body_instructions, s.regions);
    icache_prepared.push_back(v);
  }
  void prepare_occupancy(const std::vector<int>& regs, const std::atomic<bool>*) override {
    occupancy_prepared.push_back(regs);
  }
  std::string language() const override { return "fake"; }
  Support supports(const std::string& part) override {
    if (nothing) return Support::no("fake backend lacks " + part);
    if (part == "rate.graph") return Support::no("no graphs here");
    if (part == "occupancy.regs" && no_regs) return Support::no("no register cap here");
    return Support::yes();
  }
  IcacheTiming icache(const IcacheRun& run) override {
    if (fail) throw BackendError("fake kernel crashed");
    const int n = icache_body_instructions(run.spec.body_instructions);
    const double bytes = n * 16.0;
    const double ipc = bytes <= 4096 ? 1.0 : 0.25;
    IcacheTiming t;
    for (int w = 0; w < run.warps; ++w)
      t.cycles_per_warp.push_back(static_cast<double>(run.iters) * n / ipc + 300);
    t.clock_mhz = 1500;
    t.ns = t.cycles_per_warp[0] / 1.5;
    t.loop_instructions = n;
    t.code_bytes = static_cast<uint64_t>(bytes);
    t.code_bytes_source = "sass";
    t.opcodes = {"FFMA x" + std::to_string(n)};
    return t;
  }
  LaunchTiming launch_latency(int launches) override {
    LaunchTiming t;
    for (int i = 0; i < launches; ++i) t.samples.push_back({2000, 5000.0 + i % 3, 9000, 100});
    return t;
  }
  RateTiming launch_rate(const std::string&, int kernels, int) override {
    return {kernels, kernels * 2500.0, kernels * 2000.0};
  }
  std::vector<BlockRecord> dispatch(int blocks, int) override {
    std::vector<BlockRecord> v;
    for (int b = 0; b < blocks; ++b)
      v.push_back({static_cast<uint32_t>(b % 2), 0, 1000 + 10ull * b, 1100 + 10ull * b});
    return v;
  }
  OccupancyTrace occupancy(const OccupancyRequest& r) override {
    OccupancyTrace t;
    t.regs_per_thread = r.regs ? r.regs : 16;
    t.dynamic_shared_bytes = r.shared_bytes;
    if (r.waves > 0) {  // refill: two slots per SM, blocks of 100 ns, each slot refilled 10 ns on
      for (uint32_t sm = 0; sm < 2; ++sm)
        for (uint64_t i = 0; i < 2ull * r.waves; ++i) {
          const uint64_t start = (i / 2) * 110 + (i % 2) * 5;
          t.blocks.push_back({sm, static_cast<uint32_t>(i % 2), start, start + 100});
        }
      return t;
    }
    for (int b = 0; b < 8; ++b)  // two blocks at a time on each of two SMs
      t.blocks.push_back(
          {static_cast<uint32_t>(b % 2), 0, 100ull * (b / 4), 100ull * (b / 4) + 100});
    return t;
  }
};

FrontendOptions small() {
  FrontendOptions o = parse_frontend_options({{"min_instructions", "64"},
                                              {"max_instructions", "1024"},
                                              {"repeats", "2"},
                                              {"launches", "20"},
                                              {"rate_kernels", "10"},
                                              {"region_instructions", "64"}},
                                             probe_registry().find("frontend")->options());
  return o;
}

TEST(FrontendProbe, NoKernelsIsUnsupported) {
  FakeDevice dev(nullptr);
  NullProgress pr;
  std::atomic<bool> stop{false};
  FrontendProbeResult out;
  run_frontend(dev, small(), pr, stop, out);
  EXPECT_EQ(out.status.name(), "unsupported");
  EXPECT_NE(out.status.reason.find("fake"), std::string::npos);
}

TEST(FrontendProbe, EveryPartUnsupportedIsNotAnError) {
  FakeKernels k;
  k.nothing = true;
  FakeDevice dev(&k);
  NullProgress pr;
  std::atomic<bool> stop{false};
  FrontendProbeResult out;
  EXPECT_NO_THROW(run_frontend(dev, small(), pr, stop, out));
  EXPECT_TRUE(out.status.ok());
  for (const Status* s : {&out.icache_status, &out.partitions_status, &out.launch_status,
                          &out.dispatch_status, &out.refill_status, &out.occupancy_status})
    EXPECT_EQ(s->name(), "unsupported");
  EXPECT_NE(out.refill_status.reason.find("lacks occupancy"), std::string::npos);
  EXPECT_EQ(out.rate_status.at("graph").name(), "unsupported");
}

TEST(FrontendProbe, FailingKernelFailsLoudly) {
  FakeKernels k;
  k.fail = true;
  FakeDevice dev(&k);
  NullProgress pr;
  std::atomic<bool> stop{false};
  FrontendProbeResult out;
  EXPECT_THROW(run_frontend(dev, small(), pr, stop, out), BackendError);
  EXPECT_EQ(out.status.name(), "error");
  EXPECT_NE(out.status.reason.find("fake kernel crashed"), std::string::npos);
  // What did run is kept.
  EXPECT_TRUE(out.launch_round_trip_us);
}

TEST(FrontendProbe, WorkingBackend) {
  FakeKernels k;
  FakeDevice dev(&k);
  NullProgress pr;
  std::atomic<bool> stop{false};
  FrontendProbeResult out;
  run_frontend(dev, small(), pr, stop, out);
  ASSERT_TRUE(out.status.ok()) << out.status.reason;
  ASSERT_EQ(out.icache_levels.size(), 2u);
  EXPECT_NEAR(out.icache_levels[0].ipc, 1.0, 0.01);
  EXPECT_NEAR(out.icache_levels[1].ipc, 0.25, 0.01);
  ASSERT_TRUE(out.icache_levels[0].capacity_bytes);
  EXPECT_LE(*out.icache_levels[0].capacity_bytes, 4096u);
  EXPECT_EQ(out.icache_levels[0].name, "L0i");
  // The edge was refined: sizes inside the first bracket of 181..256 instructions.
  EXPECT_GT(out.icache.size(), icache_sizes(64, 1024, 2).size());
  EXPECT_GT(*out.icache_levels[0].capacity_lo_bytes, 181u * 16);
  EXPECT_TRUE(
      std::is_sorted(out.icache.begin(), out.icache.end(),
                     [](const auto& a, const auto& b) { return a.instructions < b.instructions; }));
  // The sweep ends past the L0i's edge only: the level beyond it is the next one, the L1i.
  EXPECT_EQ(out.icache_levels[1].name, "L1i");
  EXPECT_GT(*out.icache_levels[0].capacity_hi_bytes, 4096u);
  EXPECT_EQ(out.timed_instruction, "FFMA");
  ASSERT_TRUE(out.launch_start_us);
  EXPECT_NEAR(out.launch_start_us->median, 5.0, 0.01);
  ASSERT_TRUE(out.launch_completion_us);  // 9000 - 5000 - 100 ns
  EXPECT_NEAR(out.launch_completion_us->median, 3.9, 0.01);
  EXPECT_TRUE(out.rate_kernels_per_s.count("plain"));
  EXPECT_EQ(out.rate_status.at("graph").name(), "unsupported");
  ASSERT_TRUE(out.dispatch_blocks_per_us);
  EXPECT_NEAR(out.dispatch_blocks_per_us->median, 100.0, 1e-6);  // one block per 10 ns
  ASSERT_TRUE(out.max_blocks_per_sm);
  EXPECT_EQ(*out.max_blocks_per_sm, 2);
  ASSERT_TRUE(out.refill_latency_us) << out.refill_status.reason;
  EXPECT_NEAR(out.refill_latency_us->median, 0.01, 1e-9);
  EXPECT_EQ(out.refill_resident_per_sm, 2);
  EXPECT_EQ(out.refill_blocks, 2 * 2 * 8);
  EXPECT_NEAR(out.refill_sm_rate->median, 2 / 0.11, 1e-6);
  EXPECT_NEAR(*out.refill_blocks_per_us, 4 / 0.11, 1e-6);
  ASSERT_TRUE(out.clock_mhz);
  EXPECT_EQ(out.clock_source, "measured");
  EXPECT_EQ(out.partitions.size(), 7u);
  RunResult rr;
  rr.put(out);
  EXPECT_GT(expect_figure_ids_declared(rr), 0);
}

// A backend without a register cap (OpenCL, Vulkan): its register points say why, the block
// size and shared-memory points are measured, and the part is ok without them.
TEST(FrontendProbe, OccupancyKindsABackendLacksSayWhy) {
  FakeKernels k;
  k.no_regs = true;
  FakeDevice dev(&k);
  NullProgress pr;
  std::atomic<bool> stop{false};
  FrontendProbeResult out;
  run_frontend(dev, small(), pr, stop, out);
  EXPECT_EQ(out.occupancy_status.name(), "ok") << out.occupancy_status.reason;
  int regs = 0, measured = 0;
  for (const auto& p : out.occupancy) {
    if (p.kind == "regs") {
      ++regs;
      EXPECT_EQ(p.status.code, StatusCode::unsupported);
      EXPECT_EQ(p.status.reason, "no register cap here");
      EXPECT_FALSE(p.warps_per_sm);
    } else {
      EXPECT_TRUE(p.status.ok()) << p.kind << ": " << p.status.reason;
      EXPECT_TRUE(p.warps_per_sm) << p.kind;
      ++measured;
    }
  }
  EXPECT_GT(regs, 0);
  EXPECT_GT(measured, 0);
  ASSERT_TRUE(out.max_blocks_per_sm);
  EXPECT_EQ(*out.max_blocks_per_sm, 2);
  RunResult rr;
  rr.put(out);
  std::set<std::string> ids;
  for (const auto& f : probe_registry().find("frontend")->figures(rr)) ids.insert(f.id);
  EXPECT_TRUE(ids.count("frontend.occupancy.warps_per_sm"));
  EXPECT_FALSE(ids.count("frontend.occupancy.max_regs_full"));  // no register point measured
}

TEST(FrontendProbe, StopInterrupts) {
  FakeKernels k;
  FakeDevice dev(&k);
  NullProgress pr;
  std::atomic<bool> stop{true};
  FrontendProbeResult out;
  run_frontend(dev, small(), pr, stop, out);
  EXPECT_EQ(out.status.name(), "interrupted");
}

// The head start (Probe::ahead) compiles exactly what the probe's own turn then asks for, and
// only where the backend says its compiles may run beside other probes' measurements.
TEST(FrontendProbe, AheadCompilesWhatTheRunAsksFor) {
  const Probe* probe = probe_registry().find("frontend");
  const std::any opt = small();
  FakeKernels k;
  FakeDevice dev(&k);
  EXPECT_FALSE(probe->ahead(dev, opt)) << "no head start where compiles must not overlap";
  k.beside = true;
  const AheadWork work = probe->ahead(dev, opt);
  ASSERT_TRUE(work);
  std::atomic<bool> cancel{false};
  work(cancel);
  ASSERT_EQ(k.icache_prepared.size(), 1u);
  ASSERT_EQ(k.occupancy_prepared.size(), 1u);
  EXPECT_EQ(k.occupancy_prepared[0], occupancy_register_caps(small()));
  NullProgress pr;
  std::atomic<bool> stop{false};
  FrontendProbeResult out;
  run_frontend(dev, small(), pr, stop, out);
  ASSERT_GE(k.icache_prepared.size(), 2u);
  EXPECT_EQ(k.icache_prepared[1], k.icache_prepared[0]);  // the run's first compile
  ASSERT_EQ(k.occupancy_prepared.size(), 2u);
  EXPECT_EQ(k.occupancy_prepared[1], k.occupancy_prepared[0]);
  // The sweep's sizes and the partition test's 4-region kernel.
  EXPECT_EQ(k.icache_prepared[0].back(), std::make_pair(64, 4));
  EXPECT_EQ(k.icache_prepared[0].size(), icache_sweep_sizes(small(), "fake").size() + 1);
}

TEST(FrontendProbe, NoAheadWithoutKernels) {
  FakeDevice dev(nullptr);
  EXPECT_FALSE(probe_registry().find("frontend")->ahead(dev, std::any(small())));
}

}  // namespace
}  // namespace gd
