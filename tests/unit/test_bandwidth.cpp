// The bandwidth probe's GPU-free parts: byte accounting, checksums, plateau detection on
// synthetic curves, the JSON mapping and option parsing.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <optional>
#include <sstream>
#include <vector>

#include "bandwidth/bandwidth.hpp"
#include "bandwidth/run.hpp"
#include "bandwidth/run_internal.hpp"
#include "gpudissect/result.hpp"
#include "registry.hpp"
#include "sections.hpp"

namespace gd {
namespace {

TEST(BandwidthBytes, SharedChunksWhenFewerChunksThanBlocks) {
  const StreamLayout l = stream_layout(3 * 16384, 8, 16384);
  EXPECT_EQ(l.chunks, 3u);
  EXPECT_EQ(l.chunks_per_block, 1u);
  EXPECT_EQ(stream_chunk(l, 7, 0), 1u);  // 7 mod 3
  // Every block moves its chunk: 8 blocks x 16 KiB per pass, not the 48 KiB buffer.
  const Traffic t = stream_traffic(BwOp::read, l, 10);
  EXPECT_EQ(t.read_bytes, 8u * 16384 * 10);
  EXPECT_EQ(t.write_bytes, 0u);
}

TEST(BandwidthBytes, InterleavedAndRoundedAboveBlocks) {
  const StreamLayout l = stream_layout(100 * 1024, 4, 1024);
  EXPECT_EQ(l.chunks, 100u);  // already a multiple of 4
  EXPECT_EQ(l.chunks_per_block, 25u);
  EXPECT_EQ(stream_chunk(l, 1, 2), 9u);  // j * blocks + b
  const StreamLayout r = stream_layout(103 * 1024, 4, 1024);
  EXPECT_EQ(r.chunks, 100u);  // rounded down to whole rounds
  EXPECT_EQ(r.buffer_bytes(), 100u * 1024);
}

TEST(BandwidthBytes, PerDirection) {
  const StreamLayout l = stream_layout(1 << 20, 4, 4096);
  EXPECT_EQ(stream_traffic(BwOp::write, l, 2).write_bytes, 2u << 20);
  EXPECT_EQ(stream_traffic(BwOp::write, l, 2).read_bytes, 0u);
  const Traffic c = stream_traffic(BwOp::copy, l, 3);
  EXPECT_EQ(c.read_bytes, 3u << 20);
  EXPECT_EQ(c.write_bytes, 3u << 20);
  EXPECT_EQ(c.total(), 6u << 20);
  EXPECT_EQ(stream_footprint(BwOp::copy, l), 2u << 20);
  EXPECT_EQ(stream_footprint(BwOp::read, l), 1u << 20);
}

// The checksums against a brute-force walk of the same layout.
TEST(BandwidthBytes, ChecksumsMatchBruteForce) {
  for (uint64_t chunks : {2ull, 5ull, 12ull}) {
    const StreamLayout l = stream_layout(chunks * 64, 4, 64);
    uint32_t want = 0;
    for (uint64_t b = 0; b < l.blocks; ++b)
      for (uint64_t j = 0; j < l.chunks_per_block; ++j)
        for (uint64_t w = 0; w < 16; ++w) want += uint32_t(stream_chunk(l, b, j) * 16 + w);
    EXPECT_EQ(stream_read_checksum(l, 3), uint32_t(want * 3)) << chunks;
    uint32_t written = 0;
    for (uint64_t i = 0; i < l.buffer_bytes() / 4; ++i) written += uint32_t(i + 2);
    EXPECT_EQ(stream_written_checksum(l, 3), written);
  }
}

TEST(BandwidthBytes, SharedLayout) {
  SharedLayout l;
  l.blocks = 2;
  l.threads = 64;
  l.width_bytes = 16;
  l.stride = 3;
  l.elements = 2048;
  l.loads_per_iteration = 8;
  l.iterations = 5;
  EXPECT_EQ(shared_bytes(l), 2u * 64 * 5 * 8 * 16);
  EXPECT_EQ(shared_element(l, 1, 0, 0), 3u);
  EXPECT_EQ(shared_element(l, 1, 0, 1), 3u ^ 1024u);
  uint32_t want = 0;
  for (uint64_t it = 0; it < l.iterations; ++it)
    for (uint64_t t = 0; t < l.threads; ++t)
      for (uint32_t k = 0; k < 8; ++k)
        for (uint32_t w = 0; w < 4; ++w) want += shared_word(shared_element(l, t, k, it) * 4 + w);
  EXPECT_EQ(shared_checksum(l), uint32_t(want * 2));
}

TEST(BandwidthBytes, ApiPeak) {
  DeviceInfo d;
  EXPECT_FALSE(api_memory_peak_gbps(d));
  d.memory_bus_width_bits = 6016;
  d.memory_clock_mhz = 3201;
  EXPECT_NEAR(*api_memory_peak_gbps(d), 4814.3, 0.1);
}

BandwidthCurve synthetic(const std::vector<std::pair<double, double>>& plateaus, double top) {
  // plateaus: (end footprint, GB/s); points at 2 per doubling from 16 KiB to `top`.
  BandwidthCurve c;
  c.x_unit = "footprint_bytes";
  int i = 0;
  for (double x = 16384; x <= top; x *= std::sqrt(2.0), ++i) {
    double g = plateaus.back().second;
    for (const auto& [end, gbps] : plateaus)
      if (x <= end) {
        g = gbps;
        break;
      }
    g *= 1.0 + 0.01 * ((i % 3) - 1);  // a little noise
    BandwidthPoint p;
    p.x = std::round(x);
    p.gbps = Summary{g, g * 0.995, g * 1.005, g * 0.99, g * 1.01, 5};
    p.bytes_per_clk_sm = Summary{g / 261.0, 0, 0, 0, 0, 5};
    c.points.push_back(p);
  }
  return c;
}

TEST(BandwidthLevels, L1L2Memory) {
  const double l2 = 60.0 * (1 << 20);
  BandwidthCurve c = synthetic({{20e6, 31000}, {55e6, 11000}, {1e30, 4550}}, 512.0 * (1 << 20));
  assign_bandwidth_levels(c, 1, uint64_t(l2));
  ASSERT_EQ(c.levels.size(), 3u);
  EXPECT_EQ(c.levels[0].name, "L1");
  EXPECT_EQ(c.levels[1].name, "L2");
  EXPECT_EQ(c.levels[2].name, "device memory");
  EXPECT_NEAR(c.levels[0].gbps, 31000, 400);
  EXPECT_NEAR(c.levels[2].gbps, 4550, 100);
  ASSERT_TRUE(c.levels[0].capacity_lo_bytes);
  EXPECT_LE(double(*c.levels[0].capacity_lo_bytes), 20e6);
  EXPECT_GT(double(*c.levels[0].capacity_hi_bytes), 20e6);
}

TEST(BandwidthLevels, L2PartsNamedLikeLatency) {
  const double l2 = 60.0 * (1 << 20);
  BandwidthCurve c = synthetic({{28e6, 12000}, {58e6, 8800}, {1e30, 4550}}, 512.0 * (1 << 20));
  assign_bandwidth_levels(c, 2, uint64_t(l2));
  // The far part is a small step next to the one to memory, so detect_levels may merge it
  // (its sublevel rule); when it keeps it, the two parts are named as in the latency probe.
  ASSERT_GE(c.levels.size(), 2u);
  EXPECT_EQ(c.levels.back().name, "device memory");
  if (c.levels.size() == 3) {
    EXPECT_EQ(c.levels[0].name, "L2 near");
    EXPECT_EQ(c.levels[1].name, "L2 far");
  } else {
    EXPECT_EQ(c.levels[0].name, "L2");
  }
}

TEST(BandwidthLevels, FlatCurveIsOneLevel) {
  BandwidthCurve c = synthetic({{1e30, 5000}}, 8.0 * (1 << 20));
  assign_bandwidth_levels(c, 1, 60u << 20);
  ASSERT_EQ(c.levels.size(), 1u);
  EXPECT_EQ(c.levels[0].name, "L1");  // never reaches 2x the L2: not called memory
}

TEST(BandwidthJson, RoundTrip) {
  RunResult r;
  r.device.backend = "cuda";
  BandwidthProbeResult b;
  b.status = {StatusCode::interrupted, "stopped"};
  b.wall_seconds = 12.5;
  b.clock_mhz_measured = 1980;
  b.peak_gbps_api = 4814.3;
  BandwidthCurve c = synthetic({{20e6, 31000}, {1e30, 4550}}, 256.0 * (1 << 20));
  c.timed_instruction = "LDG.E.128";
  c.note = "n";
  c.points[1].status = {StatusCode::skipped, "too big"};
  c.points[1].gbps.reset();
  c.points[2].read_bytes = 123;
  c.points[2].clock_mhz = 1977;
  c.points[2].sms = 132;
  assign_bandwidth_levels(c, 1, 60u << 20);
  b.footprint["read"] = c;
  b.scaling["l2"].x_unit = "active_sms";
  b.host["h2d_pinned"].status = {StatusCode::unsupported, "why"};
  BandwidthFigure f;
  f.name = "L1 read";
  f.gbps = Summary{31000, 30900, 31100, 30000, 32000, 5};
  f.bytes_per_clk_sm = Summary{118.6, 118, 119, 117, 120, 5};
  f.clock_mhz = 1980;
  f.timed_instruction = "LDG.E.128";
  f.where = "read at 1 MiB";
  b.figures.push_back(f);
  b.host_latency_us = Summary{7, 6, 8, 5, 9, 10};
  r.put(b);
  const nlohmann::json j = to_json(r, gd::probe_registry());
  ASSERT_TRUE(j["probes"].contains("bandwidth"));
  const RunResult back = run_result_from_json(j, gd::probe_registry());
  ASSERT_TRUE(back.get<BandwidthProbeResult>());
  EXPECT_EQ(to_json(back, gd::probe_registry()), j);
  EXPECT_EQ(back.get<BandwidthProbeResult>()->footprint.at("read").points[1].status.code,
            StatusCode::skipped);
  EXPECT_EQ(back.get<BandwidthProbeResult>()->figures[0].timed_instruction, "LDG.E.128");
}

TEST(BandwidthHostSizes, QuickReachesThePinnedPlateauFullEvery4x) {
  using V = std::vector<uint64_t>;
  EXPECT_EQ(host_transfer_sizes(true, 1ull << 30),
            (V{4096, 256 << 10, 4 << 20, 16 << 20, 64 << 20, 256 << 20}));
  EXPECT_EQ(host_transfer_sizes(true, 32ull << 20), (V{4096, 256 << 10, 4 << 20, 16 << 20}));
  const V full = host_transfer_sizes(false, 1ull << 30);
  ASSERT_EQ(full.size(), 10u);  // 4 KiB, 16 KiB, ..., 1 GiB
  EXPECT_EQ(full.front(), 4096u);
  EXPECT_EQ(full.back(), 1ull << 30);
}

TEST(BandwidthOptionsTest, Parse) {
  const BandwidthOptions d = parse_bandwidth_options({});
  EXPECT_FALSE(d.quick);
  EXPECT_EQ(d.large_bytes, 4ull << 30);
  const BandwidthOptions o = parse_bandwidth_options(
      {{"quick", "1"}, {"max_footprint", "64M"}, {"repeats", "7"}, {"parts", "footprint,host"}});
  EXPECT_TRUE(o.quick);
  EXPECT_EQ(*o.max_footprint, 64ull << 20);
  EXPECT_EQ(o.repeats, 7);
  EXPECT_EQ(o.large_bytes, 0u);  // quick drops the large point unless asked
  EXPECT_EQ(o.parts.size(), 2u);
  EXPECT_THROW(parse_bandwidth_options({{"bogus", "1"}}), std::invalid_argument);
  EXPECT_THROW(parse_bandwidth_options({{"repeats", "x"}}), std::invalid_argument);
  EXPECT_THROW(parse_bandwidth_options({{"max_footprint", "lots"}}), std::invalid_argument);
  // 0 turns the large point off (a size, not a malformed one).
  EXPECT_EQ(parse_bandwidth_options({{"large", "0"}}).large_bytes, 0u);
  EXPECT_THROW(parse_bandwidth_options({{"large", "-1"}}), std::invalid_argument);
  EXPECT_THROW(parse_bandwidth_options({{"parts", "footprint,nope"}}), std::invalid_argument);
}

}  // namespace
}  // namespace gd

namespace gd {
namespace {

// The bug class of the first shared-memory kernel: bytes counted for loads that did not
// run. A host walk of the kernel's loop (pairs of even/odd iterations, then an odd one)
// must make exactly shared_loads_per_thread loads, and sum exactly shared_checksum.
TEST(BandwidthShared, BytesAndChecksumMatchAWalkOfTheKernelLoop) {
  for (uint32_t width : {4u, 8u, 16u})
    for (uint64_t iterations : {1ull, 4ull, 7ull}) {
      SharedLayout l;
      l.blocks = 3;
      l.threads = 64;
      l.width_bytes = width;
      l.stride = 5;
      l.elements = 4096 / width;
      l.loads_per_iteration = 8;
      l.iterations = iterations;
      uint64_t loads = 0;
      uint32_t sum = 0;
      for (uint64_t t = 0; t < l.threads; ++t) {
        auto load = [&](uint64_t it) {
          for (uint32_t k = 0; k < 8; ++k) {
            const uint32_t e = shared_element(l, t, k, it);
            for (uint32_t w = 0; w < width / 4; ++w) sum += shared_word(e * (width / 4) + w);
            ++loads;
          }
        };
        for (uint64_t p = 0; p < l.iterations / 2; ++p) {
          load(0);
          load(1);
        }
        if (l.iterations & 1) load(0);
      }
      EXPECT_EQ(loads, l.threads * shared_loads_per_thread(l)) << width << " " << iterations;
      EXPECT_EQ(shared_bytes(l), l.blocks * loads * width);
      EXPECT_EQ(shared_checksum(l), uint32_t(sum * uint32_t(l.blocks)));
    }
}

// A kernel that made 40 of every 64 loads (what ptxas did to the first version) must not
// match: the hashed fill leaves no power-of-two factor to hide the missing iterations.
TEST(BandwidthShared, ChecksumCatchesMissingIterations) {
  SharedLayout l;
  l.blocks = 264;
  l.threads = 1024;
  l.width_bytes = 16;
  l.stride = 1;
  l.elements = 2048;
  l.iterations = 4096;
  const uint32_t full = shared_checksum(l);
  for (uint64_t fewer : {4095ull, 4094ull, 2560ull, 2048ull, 1024ull}) {
    SharedLayout s = l;
    s.iterations = fewer;
    EXPECT_NE(shared_checksum(s), full) << fewer;
  }
}

// And the figure it produced (190 B/clk/SM) is refused; the real range is accepted.
TEST(BandwidthShared, AboveTheBankLimitIsAnError) {
  EXPECT_FALSE(shared_plausibility(189.7).empty());
  EXPECT_FALSE(shared_plausibility(131.0).empty());
  EXPECT_TRUE(shared_plausibility(127.9).empty());
  EXPECT_TRUE(shared_plausibility(120.0).empty());
  EXPECT_TRUE(shared_plausibility(8.0).empty());
  EXPECT_FALSE(shared_plausibility(0.0).empty());
}

TEST(BandwidthBytes, FlatGridCountsEveryBlockOnce) {
  const StreamLayout l = stream_layout_flat(4096ull * 1000 + 100, 4096);
  EXPECT_EQ(l.chunks, 1000u);
  EXPECT_EQ(l.blocks, 1000u);
  EXPECT_EQ(l.chunks_per_block, 1u);
  EXPECT_EQ(stream_traffic(BwOp::copy, l, 3).read_bytes, 3u * 4096 * 1000);
  EXPECT_EQ(stream_traffic(BwOp::copy, l, 3).write_bytes, 3u * 4096 * 1000);
  EXPECT_EQ(stream_footprint(BwOp::copy, l), 2u * 4096 * 1000);
}

// The rotating and bulk read kernels flatten (pass, step) into passes x chunks_per_block
// loads per thread, 4 at a time plus a remainder, resetting the pointer after the last
// chunk (bw_read_rot_kernel / bw_read_bulk_kernel): a walk of exactly that loop must load
// what stream_chunk_flattened names, and in all the bytes and sum stream_traffic and
// stream_read_checksum count, for one or many chunks per block and any pass count.
TEST(BandwidthBytes, FlattenedKernelLoopMatchesTheAccounting) {
  const uint64_t words_per_chunk = 16;  // a 64-byte chunk
  for (uint64_t chunks : {3ull, 8ull, 20ull, 36ull})
    for (uint64_t passes : {1ull, 2ull, 3ull, 7ull}) {
      const StreamLayout l = stream_layout(chunks * 64, 4, 64);
      uint64_t bytes = 0;
      uint32_t sum = 0;
      for (uint64_t b = 0; b < l.blocks; ++b) {
        const uint64_t first = l.chunks <= l.blocks ? b % l.chunks : b;
        const uint64_t total = passes * l.chunks_per_block;
        uint64_t chunk = first, j = 0, k = 0;
        auto load = [&] {
          EXPECT_EQ(chunk, stream_chunk_flattened(l, b, k)) << chunks << " " << passes;
          for (uint64_t w = 0; w < words_per_chunk; ++w)
            sum += uint32_t(chunk * words_per_chunk + w);
          bytes += l.chunk_bytes;
          chunk += l.blocks;
          if (++j == l.chunks_per_block) {
            j = 0;
            chunk = first;
          }
        };
        for (; k + 4 <= total; k += 4) {
          const uint64_t k0 = k;
          for (int u = 0; u < 4; ++u, ++k) load();
          k = k0;
        }
        for (; k < total; ++k) load();
      }
      EXPECT_EQ(bytes, stream_traffic(BwOp::read, l, passes).read_bytes) << chunks;
      EXPECT_EQ(sum, stream_read_checksum(l, passes)) << chunks << " " << passes;
    }
}

// bw_copy_bulk_kernel, walked exactly: kStages loads issued up front, then per chunk k a
// wait on stage k mod kStages, a store of it to the chunk the store cursor names, and (from
// k = 1) a refill of the previous stage with the load cursor's next chunk while loads
// remain. Every store must write the chunk its stage was loaded from (dst = src, so the
// GPU's word-by-word check can pass), stages must never be refilled before their store,
// every chunk of the buffer must be written, and the bytes read and written must be what
// stream_traffic counts for a copy: read + write, each the moved bytes.
TEST(BandwidthBytes, BulkCopyKernelLoopMatchesTheAccounting) {
  constexpr uint64_t kStages = 3;
  for (uint64_t chunks : {2ull, 4ull, 8ull, 20ull, 36ull})
    for (uint64_t passes : {1ull, 2ull, 3ull, 7ull}) {
      const StreamLayout l = stream_layout(chunks * 64, 4, 64);
      uint64_t read = 0, written = 0;
      std::vector<int> dst_written(l.chunks, 0);
      for (uint64_t b = 0; b < l.blocks; ++b) {
        const uint64_t first = l.chunks <= l.blocks ? b % l.chunks : b;
        const uint64_t total = passes * l.chunks_per_block;
        uint64_t ld = first, ld_j = 0, st = first, st_j = 0, loads = 0;
        std::vector<int64_t> stage(kStages, -1);  // the chunk each stage holds
        auto load = [&](uint64_t s) {
          EXPECT_EQ(ld, stream_chunk_flattened(l, b, loads));
          ++loads;
          stage[s] = int64_t(ld);
          read += l.chunk_bytes;
          ld += l.blocks;
          if (++ld_j == l.chunks_per_block) {
            ld_j = 0;
            ld = first;
          }
        };
        for (uint64_t k = 0; k < kStages && k < total; ++k) load(k);
        uint64_t s = 0, prev = kStages - 1;
        for (uint64_t k = 0; k < total; ++k) {
          ASSERT_EQ(stage[s], int64_t(st)) << "store of a chunk from another chunk's stage";
          ++dst_written[st];
          written += l.chunk_bytes;
          stage[s] = -2;  // being stored: may be refilled only after the store read it
          st += l.blocks;
          if (++st_j == l.chunks_per_block) {
            st_j = 0;
            st = first;
          }
          if (k >= 1 && k - 1 + kStages < total) {
            ASSERT_EQ(stage[prev], -2);
            load(prev);
          }
          prev = s;
          if (++s == kStages) s = 0;
        }
        EXPECT_EQ(loads, total);
      }
      for (uint64_t c = 0; c < l.chunks; ++c) EXPECT_GT(dst_written[c], 0) << c;
      const Traffic t = stream_traffic(BwOp::copy, l, passes);
      EXPECT_EQ(read, t.read_bytes) << chunks << " " << passes;
      EXPECT_EQ(written, t.write_bytes) << chunks << " " << passes;
      EXPECT_EQ(t.total(), read + written);
    }
}

}  // namespace
}  // namespace gd

// The host link check both backends use: right data passes, a wrong device sum or a wrong
// sampled host word is named, and each direction checks only what it moved.
TEST(BandwidthHostLink, TransferCheck) {
  using namespace gd;
  const uint64_t bytes = 64 * 1024;
  std::vector<uint32_t> host(bytes / 4);
  for (uint32_t i = 0; i < host.size(); ++i) host[i] = i;
  const uint32_t right = stream_written_checksum(stream_layout(bytes, 1, bytes), 1);
  EXPECT_EQ(host_transfer_error(HostDir::both, right, host.data(), bytes), "");
  EXPECT_NE(host_transfer_error(HostDir::to_device, right + 1, nullptr, bytes), "");
  EXPECT_EQ(host_transfer_error(HostDir::to_host, std::nullopt, host.data(), bytes), "");
  host[1021 * 3] = 7;
  EXPECT_EQ(host_transfer_error(HostDir::to_host, std::nullopt, host.data(), bytes),
            "device->host data arrived wrong at word 3063");
  EXPECT_EQ(host_transfer_error(HostDir::to_device, right, host.data(), bytes), "");
}

// Each headline figure is compared with its own level's peak: L1 and shared with 128 B/clk/SM
// x SMs x the clock seen, device memory with the API peak, the rest with none (the summary
// divided everything by the DRAM peak: "L1 read 670 %").
TEST(BandwidthPeak, EachLevelItsOwnPeak) {
  gd::DeviceInfo info;
  info.backend = "cuda";
  info.vendor = "NVIDIA";
  info.compute_units = 132;
  auto fig = [](const std::string& name, double gbps, std::optional<double> mhz) {
    gd::BandwidthFigure f;
    f.name = name;
    f.gbps.median = gbps;
    f.clock_mhz = mhz;
    return f;
  };
  const std::optional<double> api = 4814.0;
  auto l1 = gd::figure_peak(fig("L1 read", 32265, 1979), info, api);
  ASSERT_TRUE(l1);
  EXPECT_NEAR(l1->gbps, 128.0 * 132 * 1979e6 / 1e9, 1e-6);
  EXPECT_NEAR(100 * 32265 / l1->gbps, 96.5, 0.1);
  auto sh = gd::figure_peak(fig("shared 128-bit", 32943, 1965), info, api);
  ASSERT_TRUE(sh);
  EXPECT_LT(32943 / sh->gbps, 1.0);
  auto dram = gd::figure_peak(fig("device memory read", 4603, 1979), info, api);
  ASSERT_TRUE(dram);
  EXPECT_DOUBLE_EQ(dram->gbps, 4814.0);
  for (const char* none : {"L2 read", "L2 read, best footprint", "constant broadcast",
                           "host->device pinned", "both ways pinned"})
    EXPECT_FALSE(gd::figure_peak(fig(none, 1000, 1979), info, api)) << none;
  // No clock seen, no API peak, or a CPU through PoCL: no peak rather than a wrong one.
  EXPECT_FALSE(gd::figure_peak(fig("L1 read", 32265, std::nullopt), info, api));
  EXPECT_FALSE(gd::figure_peak(fig("device memory read", 4603, 1979), info, std::nullopt));
  gd::DeviceInfo cpu;
  cpu.backend = "opencl";
  cpu.vendor = "GenuineIntel";
  cpu.name = "pthread-Intel(R) Xeon(R)";
  cpu.compute_units = 2;
  EXPECT_FALSE(gd::figure_peak(fig("L1 read", 300, 2500), cpu, std::nullopt));
  EXPECT_FALSE(gd::figure_peak(fig("shared 128-bit", 300, 2500), cpu, std::nullopt));
}

// The H200 fixture (a trimmed run) re-rendered: no figure above 100% of its level's peak.
TEST(BandwidthPeak, H200SummaryHasNoLevelAboveItsPeak) {
  std::ifstream in(std::string(GD_FIXTURES) + "/h200_run.json");
  ASSERT_TRUE(in) << "H200 fixture missing";
  const gd::RunResult r = gd::run_result_from_json(nlohmann::json::parse(in), gd::probe_registry());
  ASSERT_TRUE(r.get<gd::BandwidthProbeResult>());
  int with_peak = 0;
  for (const gd::BandwidthFigure& f : r.get<gd::BandwidthProbeResult>()->figures)
    if (auto p = gd::figure_peak(f, r.device, r.get<gd::BandwidthProbeResult>()->peak_gbps_api)) {
      ++with_peak;
      EXPECT_LE(f.gbps.median / p->gbps, 1.0) << f.name;
      EXPECT_GT(f.gbps.median / p->gbps, 0.5) << f.name;
    }
  EXPECT_GE(with_peak, 5);  // L1, device memory x3, shared
}

namespace gd {
namespace {

// A GPU's API reports one L2: without a latency result the default names never say "L3" or
// "L4", however many plateaus the curve shows.
TEST(BandwidthLevels, DefaultNamesNeverL3) {
  const double l2 = 60.0 * (1 << 20);
  BandwidthCurve c =
      synthetic({{2e6, 14000}, {8e6, 11000}, {40e6, 8400}, {1e30, 4550}}, 512.0 * (1 << 20));
  assign_bandwidth_levels(c, 2, uint64_t(l2));
  ASSERT_GE(c.levels.size(), 3u);
  for (const BandwidthLevel& l : c.levels) {
    EXPECT_EQ(l.name.find("L3"), std::string::npos) << l.name;
    EXPECT_EQ(l.name.find("L4"), std::string::npos) << l.name;
    EXPECT_EQ(l.name.rfind("L1", 0), std::string::npos) << l.name;  // these loads skip L1
  }
  EXPECT_EQ(c.levels.back().name, "device memory");
}

namespace {

// The latency probe's global path on an H200 (the committed run's capacities).
LatencyProbeResult h200_latency() {
  LatencyProbeResult lat;
  CurveResult& g = lat.paths["global"];
  auto level = [&](const char* n, std::optional<uint64_t> lo, std::optional<uint64_t> hi) {
    Level l;
    l.name = n;
    l.capacity_bytes = lo;
    l.capacity_lo_bytes = lo;
    l.capacity_hi_bytes = hi;
    g.levels.push_back(l);
  };
  level("L1", 220416, 230144);
  level("L2 near", 28180480, 30736384);
  level("L2 far", 61538304, 64225280);
  level("device memory", std::nullopt, std::nullopt);
  return lat;
}

BandwidthLevel plateau(const char* name, std::optional<double> end) {
  BandwidthLevel l;
  l.name = name;
  if (end) {
    l.capacity_lo_bytes = uint64_t(*end);
    l.capacity_hi_bytes = uint64_t(*end * 1.2);
  }
  return l;
}

BandwidthCurve points_to(double first, double last, int sms = 132) {
  BandwidthCurve c;
  for (double x = first; x <= last; x *= 2) {
    BandwidthPoint p;
    p.x = x;
    p.gbps = Summary{1000, 1000, 1000, 1000, 1000, 3};
    p.sms = sms;
    c.points.push_back(p);
  }
  return c;
}

}  // namespace

TEST(BandwidthLevelsFromLatency, Synthetic) {
  const double MiB = 1 << 20;
  BandwidthProbeResult bw;
  // Reads through L1: the first plateau ends at 8 MiB, within 132 SMs x 225 KiB.
  BandwidthCurve& read = bw.footprint["read"] = points_to(16384, 4096 * MiB);
  read.levels = {plateau("L1", 8 * MiB), plateau("L2", 40 * MiB), plateau("x", std::nullopt)};
  // Loads that skip L1: a 64 KiB step is not L1; two steps inside the near part.
  BandwidthCurve& bulk = bw.footprint["read_bulk"] = points_to(16384, 4096 * MiB);
  bulk.levels = {plateau("L1", 0.0625 * MiB), plateau("L2 near", 2 * MiB),
                 plateau("L2 far", 41 * MiB), plateau("device memory", std::nullopt)};
  // Writes: one plateau from 16 KiB to 4 GiB (stores do not allocate in L1).
  BandwidthCurve& write = bw.footprint["write"] = points_to(16384, 4096 * MiB);
  write.levels = {plateau("L1", std::nullopt)};
  // A copy whose first plateau ends at 57.8 MiB: L2 far, not L1.
  BandwidthCurve& copy = bw.footprint["copy"] = points_to(16384, 4096 * MiB);
  copy.levels = {plateau("L1", 57.8 * MiB), plateau("device memory", std::nullopt)};
  // A sweep that stays inside the L2: its last plateau is not device memory.
  BandwidthCurve& small = bw.footprint["read_l2"] = points_to(16384, 16 * MiB);
  small.levels = {plateau("L2", 1 * MiB), plateau("L3", std::nullopt)};
  BandwidthFigure l1;
  l1.name = "L1 read";
  bw.figures.push_back(l1);

  name_levels_from_latency(bw, h200_latency());

  auto names = [](const BandwidthCurve& c) {
    std::vector<std::string> v;
    for (const auto& l : c.levels) v.push_back(l.name);
    return v;
  };
  using V = std::vector<std::string>;
  EXPECT_EQ(names(read), (V{"L1", "L2 far", "device memory"}));
  EXPECT_EQ(names(bulk), (V{"L2 near", "L2 near (2)", "L2 far", "device memory"}));
  EXPECT_EQ(names(write), (V{"L2 near to device memory (no step)"}));
  EXPECT_EQ(names(copy), (V{"L2 far", "device memory"}));
  EXPECT_EQ(names(small), (V{"L2 near", "L2 near (2)"}));
  EXPECT_EQ(bw.figures[0].name, "L1 read");  // the read curve kept its L1

  // A read curve without an L1 plateau loses the "L1 read" headline name.
  read.levels = {plateau("L1", 40 * MiB), plateau("x", std::nullopt)};
  name_levels_from_latency(bw, h200_latency());
  EXPECT_EQ(names(read), (V{"L2 far", "device memory"}));
  EXPECT_EQ(bw.figures[0].name, "read, best footprint (no L1 plateau found)");

  // No latency levels: nothing changes.
  BandwidthProbeResult keep = bw;
  name_levels_from_latency(keep, LatencyProbeResult{});
  EXPECT_EQ(names(keep.footprint["read"]), names(bw.footprint["read"]));
}

// The H200 fixture (a trimmed run): its bandwidth curves named from its own latency levels.
TEST(BandwidthLevelsFromLatency, H200CommittedRun) {
  std::ifstream in(std::string(GD_FIXTURES) + "/h200_run.json");
  ASSERT_TRUE(in) << "H200 fixture missing";
  RunResult r = run_result_from_json(nlohmann::json::parse(in), gd::probe_registry());
  ASSERT_TRUE(r.get<BandwidthProbeResult>() && r.get<LatencyProbeResult>());
  BandwidthProbeResult& bw = *r.get<gd::BandwidthProbeResult>();
  name_levels_from_latency(bw, *r.get<gd::LatencyProbeResult>());
  for (const auto& [name, c] : bw.footprint)
    for (const BandwidthLevel& l : c.levels) {
      EXPECT_EQ(l.name.find("L3"), std::string::npos) << name << ": " << l.name;
      EXPECT_EQ(l.name.find("L4"), std::string::npos) << name << ": " << l.name;
      // Stores and loads that skip L1 are never L1.
      if (name.rfind("write", 0) == 0 || name.rfind("copy", 0) == 0 ||
          name.find("_l2") != std::string::npos || name.find("bulk") != std::string::npos)
        EXPECT_EQ(l.name.rfind("L1", 0), std::string::npos) << name << ": " << l.name;
    }
  EXPECT_EQ(bw.footprint.at("read").levels.front().name, "L1");
  EXPECT_EQ(bw.footprint.at("read").levels.back().name, "device memory");
  EXPECT_EQ(bw.footprint.at("read_l2").levels.front().name, "L2 near");
  EXPECT_EQ(bw.footprint.at("read_l2").levels[1].name, "L2 far");
  EXPECT_EQ(bw.footprint.at("write").levels.front().name.rfind("L2 near", 0), 0u);
  EXPECT_EQ(bw.footprint.at("copy_flat").levels.front().name, "device memory");
  bool l1_read = false;
  for (const BandwidthFigure& f : bw.figures) l1_read = l1_read || f.name == "L1 read";
  EXPECT_TRUE(l1_read);
}

}  // namespace
}  // namespace gd

namespace gd {
namespace {

// A curve that falls smoothly end to end (PoCL's read after the contiguous CPU kernels: ~140
// GB/s in cache to ~40 at 128 MiB, no step) gets one level from the level finder; its line
// must not print that level's median as a plateau the table's device-memory figure (the last
// point) contradicts, but the slope itself.
TEST(BandwidthSummary, ASlopeIsNotAPlateau) {
  BandwidthProbeResult b;
  BandwidthCurve c;
  c.x_unit = "footprint_bytes";
  for (const auto& [x, g] : std::vector<std::pair<double, double>>{
           {16384, 141}, {1 << 20, 110}, {16 << 20, 70}, {128 << 20, 44}}) {
    BandwidthPoint p;
    p.x = x;
    p.gbps = Summary{g, g, g, g, g, 3};
    c.points.push_back(p);
  }
  BandwidthLevel l;
  l.name = "L1 to device memory (no step)";
  l.gbps = 107;
  c.levels.push_back(l);
  b.footprint["read"] = c;
  c.points.back().gbps = Summary{130, 130, 130, 130, 130, 3};  // flat: a plateau, printed as one
  c.levels[0].name = "L1";
  b.footprint["write"] = c;
  RunResult r;
  r.put(b);
  std::ostringstream os;
  gd::report::print_bandwidth_summary(os, r);
  const std::string s = os.str();
  EXPECT_NE(s.find("read plateaus: none, falling from 141 GB/s at 16 KiB to 44 GB/s at 128 MiB"),
            std::string::npos)
      << s;
  EXPECT_NE(s.find("write plateaus: L1 107 GB/s;"), std::string::npos) << s;
}

// The device-memory write and copy figures take the best variant's largest footprint past 4x
// the L2, flat grids included, on any backend: OpenCL's and Vulkan's write_flat and
// copy_flat curves enter the figures as CUDA's do.
TEST(BandwidthFigures, DeviceMemoryTakesTheBestOfPersistentAndFlatGrids) {
  DeviceInfo info;
  info.backend = "vulkan";
  info.l2_bytes = 60ull << 20;
  auto curve = [](double gbps) {
    BandwidthCurve c;
    for (double x : {256.0, 512.0}) {
      BandwidthPoint p;
      p.x = x * (1 << 20);
      p.gbps = Summary{gbps, gbps, gbps, gbps, gbps, 3};
      c.points.push_back(p);
    }
    return c;
  };
  auto figure = [](const BandwidthProbeResult& r, const std::string& name) {
    for (const BandwidthFigure& f : r.figures)
      if (f.name == name) return f;
    ADD_FAILURE() << "no figure " << name;
    return BandwidthFigure{};
  };
  BandwidthProbeResult out;
  out.footprint["write"] = curve(4000);
  out.footprint["write_flat"] = curve(4690);
  out.footprint["copy"] = curve(3930);
  out.footprint["copy_flat"] = curve(3800);
  bandwidth_run::make_figures(out, info, {});
  EXPECT_DOUBLE_EQ(figure(out, "device memory write").gbps.median, 4690);
  EXPECT_EQ(figure(out, "device memory write").where, "write_flat at 512 MiB");
  EXPECT_DOUBLE_EQ(figure(out, "device memory copy").gbps.median, 3930);
  EXPECT_EQ(figure(out, "device memory copy").where, "copy at 512 MiB");
}

}  // namespace
}  // namespace gd

namespace {

gd::Level level(const char* name, std::optional<uint64_t> hi, double confidence) {
  gd::Level l;
  l.name = name;
  if (hi) l.capacity_bytes = l.capacity_lo_bytes = *hi * 9 / 10, l.capacity_hi_bytes = hi;
  l.confidence = confidence;
  return l;
}

}  // namespace

// The cache device memory is read past: the API's, unless the latency map of the same run
// reached device memory confidently below half of it.
TEST(BandwidthLastCache, ApiUnlessTheLatencyMapContradictsIt) {
  constexpr uint64_t MiB = 1ull << 20;
  // No map, or one that did not reach device memory: the API.
  EXPECT_EQ(gd::last_cache(480 * MiB, nullptr).bytes, 480 * MiB);
  EXPECT_EQ(gd::last_cache(480 * MiB, nullptr).source, "API");
  std::vector<gd::Level> cut = {level("L1", 48 << 10, 1), level("L2", 32 * MiB, 0.9)};
  EXPECT_EQ(gd::last_cache(480 * MiB, &cut).source, "API");
  // The H200: the map's far L2 ends at 61.5-64 MiB, the API says 60 MiB: the API stands.
  std::vector<gd::Level> h200 = {level("L1", 220 << 10, 0.8), level("L2 near", 30 * MiB, 1),
                                 level("L2 far", 64 * MiB, 0.87),
                                 level("device memory", std::nullopt, 0.99)};
  EXPECT_EQ(gd::last_cache(60 * MiB, &h200).bytes, 60 * MiB);
  // A VM's CPU through PoCL: /sys and PoCL say 480 MiB of L3, the map reached memory past
  // a 64 MiB edge, both sides confident: the map's edge.
  std::vector<gd::Level> vm = {level("L1", 48 << 10, 1), level("L5", 64 * MiB, 0.65),
                               level("L6", std::nullopt, 0.70)};
  const gd::LastCache c = gd::last_cache(480 * MiB, &vm);
  EXPECT_EQ(c.bytes, 64 * MiB);
  EXPECT_NE(c.source.find("L5"), std::string::npos) << c.source;
  EXPECT_NE(c.source.find("480 MiB"), std::string::npos) << c.source;
  // The same map with no API size at all: the map's.
  EXPECT_EQ(gd::last_cache(std::nullopt, &vm).bytes, 64 * MiB);
  // A doubtful map (the same VM's --quick map: conf 0.15 on both sides) leaves the API's.
  std::vector<gd::Level> doubtful = {level("L1", 48 << 10, 1), level("L2", 610 << 10, 0.15),
                                     level("L3", std::nullopt, 0.15)};
  EXPECT_EQ(gd::last_cache(480 * MiB, &doubtful).bytes, 480 * MiB);
  // Nor one whose edge is far below the API's (under 1/8 of it): the same VM's maps stepped
  // at 4.2 MiB (its TLB's reach) and 31-34 MiB, while reads ran at cache speed to 64 MiB.
  std::vector<gd::Level> tlb = {level("L1", 48 << 10, 1), level("L3", 4 * MiB + MiB / 5, 0.9),
                                level("L4", std::nullopt, 0.9)};
  EXPECT_EQ(gd::last_cache(480 * MiB, &tlb).bytes, 480 * MiB);
  std::vector<gd::Level> l5 = {level("L1", 48 << 10, 1), level("L5", 32 * MiB, 0.65),
                               level("L6", std::nullopt, 0.70)};
  EXPECT_EQ(gd::last_cache(480 * MiB, &l5).bytes, 480 * MiB);
  // Nor does a map with one level.
  std::vector<gd::Level> one = {level("L1", std::nullopt, 1)};
  EXPECT_EQ(gd::last_cache(480 * MiB, &one).bytes, 480 * MiB);
}
