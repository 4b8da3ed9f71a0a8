// The memory probe's OpenCL helpers, GPU-free: which load a chase kernel's PTX and SASS time,
// a chase's end position back to its line, and figures of a curve timed in ns (no cycle
// counter) saying so.
#include <gtest/gtest.h>

#include <string>

#include "memory/listing.hpp"
#include "memory/memory.hpp"

namespace gd {
namespace {

const char* kPtx = R"(
.visible .entry mem_chase_ca(
	.param .u64 mem_chase_ca_param_0
)
{
	ld.param.u64 	%rd1, [mem_chase_ca_param_0];
	ld.volatile.global.u64 	%rd9, [%rd8];
	ld.global.u64 	%rd2, [%rd1];
	ld.global.u64 	%rd3, [%rd2];
	@%p3 ld.global.u64 	%rd4, [%rd3];
}
.visible .entry mem_chase_cg(
	.param .u64 mem_chase_cg_param_0
)
{
	ld.param.u64 	%rd1, [mem_chase_cg_param_0];
	ld.volatile.global.u64 	%rd2, [%rd1];
	ld.volatile.global.u64 	%rd3, [%rd2];
}
.visible .entry mem_chase_tex(
	.param .u64 mem_chase_tex_param_0
)
{
	ld.volatile.global.u64 	%rd9, [%rd8];
	tex.1d.v4.u32.s32 	{%r5, %r6, %r7, %r8}, [%rd1, {%r4}];
	tex.1d.v4.u32.s32 	{%r9, %r10, %r11, %r12}, [%rd1, {%r5}];
}
.visible .entry mem_chase_const(
	.param .u64 mem_chase_const_param_0
)
{
	ld.param.u64 	%rd1, [mem_chase_const_param_0];
	ld.param.u64 	%rd2, [mem_chase_const_param_1];
	ld.const.u32 	%r2, [%rd1];
}
)";

TEST(MemoryListing, PtxEntryLoadIsTheMostFrequentNonParameterLoadOfThatEntry) {
  EXPECT_EQ(ptx_entry_load(kPtx, "mem_chase_ca"), "ld.global.u64");
  EXPECT_EQ(ptx_entry_load(kPtx, "mem_chase_cg"), "ld.volatile.global.u64");
  EXPECT_EQ(ptx_entry_load(kPtx, "mem_chase_const"), "ld.const.u32");
  EXPECT_EQ(ptx_entry_load(kPtx, "mem_chase_tex"), "tex.1d.v4.u32.s32");
  // "mem_chase_c" is a prefix of others, not an entry.
  EXPECT_EQ(ptx_entry_load(kPtx, "mem_chase_c"), "");
  EXPECT_EQ(ptx_entry_load(kPtx, "mem_chase_nc"), "");
  EXPECT_EQ(ptx_entry_load("", "mem_chase_ca"), "");
}

const char* kSass = R"(
	code for sm_90
		Function : mem_chase_const
	.headerflags	@"EF_CUDA_TEXMODE_UNIFIED"
        /*0000*/                   LDC R1, c[0x0][0x28] ;
        /*0010*/                   LDC.64 R2, c[0x0][0x210] ;
        /*0020*/                   LDC R5, c[0x3][R4] ;
        /*0030*/                   LDC R7, c[0x3][R5] ;
		Function : mem_chase_cg
        /*0000*/                   LDC R1, c[0x0][0x28] ;
        /*0010*/                   LDG.E.64.STRONG.SYS R4, desc[UR4][R2.64] ;
        /*0020*/                   LDG.E.64.STRONG.SYS R6, desc[UR4][R4.64] ;
        /*0030*/                   LDG.E.64 R8, desc[UR4][R6.64] ;
)";

TEST(MemoryListing, SassFunctionLoadSkipsKernelParameterReads) {
  EXPECT_EQ(sass_function_load(kSass, "mem_chase_const"), "LDC");
  EXPECT_EQ(sass_function_load(kSass, "mem_chase_cg"), "LDG.E.64.STRONG.SYS");
  EXPECT_EQ(sass_function_load(kSass, "mem_chase_ca"), "");
}

TEST(MemoryListing, ChaseEndLineMapsAddressesOffsetsAndIndices) {
  // Addresses from a base, 128-byte lines.
  EXPECT_EQ(chase_end_line(0x1000 + 5 * 128, 0x1000, 128, 1, 10), 5u);
  EXPECT_EQ(chase_end_line(0x1000 + 5 * 128 + 8, 0x1000, 128, 1, 10), kNotALine);
  EXPECT_EQ(chase_end_line(0x1000 + 10 * 128, 0x1000, 128, 1, 10), kNotALine);  // past the end
  EXPECT_EQ(chase_end_line(0xfff, 0x1000, 128, 1, 10), kNotALine);              // below the base
  // Byte offsets, and 32-bit element indices (64-byte lines: 16 elements each).
  EXPECT_EQ(chase_end_line(3 * 64, 0, 64, 1, 4), 3u);
  EXPECT_EQ(chase_end_line(3 * 16, 0, 64, 4, 4), 3u);
  EXPECT_EQ(chase_end_line(3 * 16 + 1, 0, 64, 4, 4), kNotALine);
  EXPECT_EQ(chase_end_line(0, 0, 6, 4, 4), kNotALine);  // a stride no whole number of elements
}

MemPoint at(uint64_t f, double c) {
  MemPoint p;
  p.footprint_bytes = f;
  p.cycles = single_value(c);
  return p;
}

TEST(MemoryListing, ACurveTimedInNsGivesNsFiguresAndNoMissCycles) {
  MemoryProbeResult m;
  m.constant_bank_bytes = 64 * 1024;
  MemCurve c;
  c.key = "constant";
  c.load = MemLoad::constant;
  c.unit = "ns";
  for (uint64_t f : {1024, 1536, 2048, 3072, 4096, 6144, 8192, 16384, 32768, 65536})
    c.points.push_back(at(f, f <= 2048 ? 10 : 40));
  c.capacity = estimate_capacity(c.points);
  m.constant = c;
  TlbResult t;
  t.mapping = "chunks";
  t.curve.unit = "ns";
  t.levels = {{100, 64ull << 20, 96ull << 20, std::nullopt},
              {200, std::nullopt, std::nullopt, 100}};
  m.tlb.push_back(t);
  DeviceInfo d;
  d.backend = "opencl";
  bool latency = false;
  for (const Figure& f : memory_figures(m, d)) {
    EXPECT_NE(f.unit, "cycles") << f.id;
    EXPECT_EQ(f.id.find("miss_cycles"), std::string::npos) << f.id;
    if (f.id == "memory.constant.L1_5.latency") {
      latency = true;
      EXPECT_EQ(f.unit, "ns");
      EXPECT_NE(f.where.find("64 KiB"), std::string::npos) << f.where;
      EXPECT_EQ(f.where.find("kernel parameters"), std::string::npos) << f.where;
    }
  }
  EXPECT_TRUE(latency);
  // The unit survives the JSON; cycles (CUDA's) writes no key.
  nlohmann::json j = c;
  EXPECT_EQ(j.at("unit"), "ns");
  EXPECT_EQ(j.get<MemCurve>().unit, "ns");
  c.unit = "cycles";
  j = c;
  EXPECT_FALSE(j.contains("unit"));
  EXPECT_EQ(j.get<MemCurve>().unit, "cycles");
}

}  // namespace
}  // namespace gd
