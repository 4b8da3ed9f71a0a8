// The front end's block records through OpenCL and Vulkan (frontend/blocks.hpp): the NVIDIA
// OpenCL kernel's text, the records read back, the device clock's calibration and the launch
// size, GPU-free. The kernel is compiled to PTX by clang where clang is installed (PoCL cannot
// compile inline PTX).
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "compute/ptx_sass.hpp"
#include "frontend/blocks.hpp"
#include "gpudissect/device.hpp"

namespace gd {
namespace {

std::size_t count(const std::string& s, const std::string& what) {
  std::size_t n = 0;
  for (std::size_t at = s.find(what); at != std::string::npos; at = s.find(what, at + 1)) ++n;
  return n;
}

TEST(FrontendBlocks, PtxSpecialRegisterReads) {
  EXPECT_EQ(nv_cl_read_sreg("globaltimer", "t"),
            "__asm__ volatile(\"mov.u64 %0, %%globaltimer;\" : \"=l\"(t));");
  EXPECT_EQ(nv_cl_read_sreg("clock64", "c"),
            "__asm__ volatile(\"mov.u64 %0, %%clock64;\" : \"=l\"(c));");
  EXPECT_EQ(nv_cl_read_sreg("smid", "s"), "__asm__ volatile(\"mov.u32 %0, %%smid;\" : \"=r\"(s));");
  EXPECT_EQ(nv_cl_read_sreg("warpid", "w"),
            "__asm__ volatile(\"mov.u32 %0, %%warpid;\" : \"=r\"(w));");
}

// CUDA's record per block (fe_dispatch, fe_spin): {smid | warpid << 32, start, end, magic},
// the start read before the SM id, the spin on the same timer, the end after the spin.
TEST(FrontendBlocks, OpenCLKernelWritesCudasRecord) {
  const std::string src = generate_blocks_opencl();
  EXPECT_NE(src.find(std::string("__kernel void ") + kBlocksKernel +
                     "(__global ulong* rec, ulong spin_ns, __local uint* scratch)"),
            std::string::npos);
  EXPECT_EQ(count(src, "%%smid;"), 1u);
  EXPECT_EQ(count(src, "%%warpid;"), 1u);
  EXPECT_EQ(count(src, "%%globaltimer;"), 3u);  // start, spin, end
  EXPECT_EQ(count(src, "asm"), 5u);             // the measurement's reads, nothing else
  for (const char* w : {"rec[4 * gd_g] = (ulong)gd_sm | ((ulong)gd_warp << 32);",
                        "rec[4 * gd_g + 1] = gd_t;", "rec[4 * gd_g + 2] = gd_t;",
                        "while (gd_now - gd_s < spin_ns) {", "barrier(CLK_LOCAL_MEM_FENCE);"})
    EXPECT_GE(count(src, w), 1u) << w;
  EXPECT_NE(src.find("rec[4 * gd_g + 3] = " + std::to_string(kOccupancyMagic) + "UL;"),
            std::string::npos);
  EXPECT_NE(src.find("scratch[0]"), std::string::npos);  // the local argument stays
  EXPECT_EQ(count(src, "{"), count(src, "}"));
  EXPECT_LT(src.find("%%globaltimer;"), src.find("%%smid;"));
  EXPECT_LT(src.find("while (gd_now"), src.find("rec[4 * gd_g + 2]"));
}

// Where clang is installed, the kernel compiles as OpenCL C for NVIDIA's PTX target and its
// PTX reads the special registers (what NVIDIA's own OpenCL compiler does with it).
TEST(FrontendBlocks, OpenCLKernelCompilesToPtx) {
  const std::string clang = find_tool("clang", cuda_tool_dirs(std::getenv("PATH"), nullptr));
  if (clang.empty()) GTEST_SKIP() << "no clang on PATH";
  const auto dir = std::filesystem::temp_directory_path() /
                   ("gd_fe_blocks_" + std::to_string(static_cast<long>(::getpid())));
  std::filesystem::create_directories(dir);
  const auto cl = dir / "blocks.cl";
  std::ofstream(cl) << generate_blocks_opencl();
  const ToolRun r = run_tool({clang, "-x", "cl", "-cl-std=CL1.2", "-target", "nvptx64-nvidia-nvcl",
                              "-S", "-o", "-", cl.string()});
  std::filesystem::remove_all(dir);
  if (r.rc != 0 && r.out.find("nvptx") != std::string::npos &&
      r.out.find("target") != std::string::npos)
    GTEST_SKIP() << "this clang has no NVPTX target: " << first_line(r.out);
  ASSERT_EQ(r.rc, 0) << r.out.substr(0, 2000);
  EXPECT_NE(r.out.find(".entry gd_fe_blocks"), std::string::npos);
  for (const char* reg : {"%globaltimer", "%smid", "%warpid"})
    EXPECT_NE(r.out.find(reg), std::string::npos) << reg;
}

std::vector<uint64_t> record(uint32_t sm, uint32_t warp, uint64_t start, uint64_t end) {
  return {sm | (uint64_t(warp) << 32), start, end, kOccupancyMagic};
}

TEST(FrontendBlocks, RecordsInNanosecondsAreKeptExactly) {
  std::vector<uint64_t> w = record(3, 8, 1700000000000000123ull, 1700000000000000200ull);
  const auto b = record(131, 0, 1700000000000000150ull, 1700000000000000149ull);
  w.insert(w.end(), b.begin(), b.end());
  const auto r = parse_block_records(w, 2, 1.0, "dispatch");
  ASSERT_EQ(r.size(), 2u);
  EXPECT_EQ(r[0].sm, 3u);
  EXPECT_EQ(r[0].warp_slot, 8u);
  EXPECT_EQ(r[0].start_ns, 1700000000000000123ull);  // no double on the way
  EXPECT_EQ(r[0].end_ns, 1700000000000000200ull);
  EXPECT_EQ(r[1].sm, 131u);
  EXPECT_EQ(r[1].end_ns, r[1].start_ns);  // an end before its start is no interval
}

TEST(FrontendBlocks, TicksAreScaledFromTheEarliestStart) {
  std::vector<uint64_t> w = record(0, 0, 5000000000000ull + 400, 5000000000000ull + 1000);
  const auto b = record(1, 0, 5000000000000ull + 200, 5000000000000ull + 300);
  w.insert(w.end(), b.begin(), b.end());
  const auto r = parse_block_records(w, 2, 0.5, "occupancy");
  ASSERT_EQ(r.size(), 2u);
  EXPECT_EQ(r[0].start_ns, 100u);
  EXPECT_EQ(r[0].end_ns, 400u);
  EXPECT_EQ(r[1].start_ns, 0u);
  EXPECT_EQ(r[1].end_ns, 50u);
  // The model sees the same overlaps in either unit.
  EXPECT_EQ(max_resident_blocks(r).size(), 2u);
}

TEST(FrontendBlocks, AMissingRecordIsAnError) {
  std::vector<uint64_t> w = record(0, 0, 10, 20);
  w.insert(w.end(), {0, 0, 0, 0});
  try {
    parse_block_records(w, 2, 1.0, "dispatch");
    FAIL() << "no throw";
  } catch (const BackendError& e) {
    EXPECT_STREQ(e.what(), "dispatch: 1 of 2 blocks left no record");
  }
  EXPECT_THROW(parse_block_records(w, 3, 1.0, "dispatch"), BackendError);  // too few words
  EXPECT_TRUE(parse_block_records({}, 0, 1.0, "dispatch").empty());
}

TEST(FrontendBlocks, ClockCalibrationCancelsTheDispatchCost) {
  // A nanosecond timer behind a dispatch costing 7 us: 2^17 and 2^20 ticks.
  const auto k = ns_per_tick(131072, 131072 + 7000, 1048576, 1048576 + 7000);
  ASSERT_TRUE(k);
  EXPECT_DOUBLE_EQ(*k, 1.0);
  // A 19.2 MHz counter: 52.08 ns per tick.
  const auto slow = ns_per_tick(1000, 1000 * 52.083 + 5000, 9000, 9000 * 52.083 + 5000);
  ASSERT_TRUE(slow);
  EXPECT_NEAR(*slow, 52.083, 1e-6);
  EXPECT_FALSE(ns_per_tick(1000, 5000, 1000, 9000));  // the clock did not move
  EXPECT_FALSE(ns_per_tick(1000, 9000, 2000, 5000));  // the long spin took less time
}

TEST(FrontendBlocks, OccupancyLaunchKeepsEverySmFull) {
  EXPECT_EQ(occupancy_blocks_per_sm(32), 66);   // the 32-block limit
  EXPECT_EQ(occupancy_blocks_per_sm(128), 34);  // 64 warps / 4
  EXPECT_EQ(occupancy_blocks_per_sm(1024), 6);  // 64 / 32
  EXPECT_EQ(occupancy_blocks_per_sm(100), 34);  // 4 warps, the last one partial
  EXPECT_EQ(occupancy_blocks_per_sm(0), 66);
  EXPECT_EQ(occupancy_blocks_per_sm(2048), 4);          // larger than an SM holds: one at a time
  EXPECT_EQ(occupancy_blocks_per_sm(128, 48, 16), 26);  // sm_86: 48 warps, 16 blocks
}

// The refill grid: `waves` times the resident limit, as CUDA sizes it from the occupancy API
// (8 waves of 64-thread blocks on sm_90: 8 x 32 per SM); an explicit grid wins.
TEST(FrontendBlocks, RefillGridIsWavesTimesTheResidentLimit) {
  EXPECT_EQ(occupancy_grid_per_sm(0, 8, 64), 256);
  EXPECT_EQ(occupancy_grid_per_sm(0, 8, 256), 64);  // 64 warps / 8
  EXPECT_EQ(occupancy_grid_per_sm(0, 2, 128, 48, 16), 24);
  EXPECT_EQ(occupancy_grid_per_sm(5, 8, 64), 5);
  EXPECT_EQ(occupancy_grid_per_sm(0, 0, 64), occupancy_blocks_per_sm(64));
}

}  // namespace
}  // namespace gd
