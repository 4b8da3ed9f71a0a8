// The SASS reader: functions and their instructions out of cuobjdump's listing format, and
// the memory instructions each kernel executes (what the CUDA probes name as timed).
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <string>

#include "gpudissect/sass.hpp"

namespace {

// The SASS reader every CUDA probe uses, on an excerpt in cuobjdump's format: parameter
// reads (c[0x0]) are not the timed load, a load into RZ (a texture fetch) is, and stores
// and copy-engine instructions are listed per kernel.
TEST(SassMemoryOps, MemoryOpsPerKernel) {
  const std::string sass = R"(
	code for sm_90
		Function : _ZN2gd4cuda20chase_texture_kernelEy
        /*0000*/                   LDC R1, c[0x0][0x28] ;
        /*01b0*/                   TLD.LZ RZ, R0, R0, UR4, 0x0, 1D, 0x1 ;
        /*01c0*/                   TLD.LZ RZ, R6, R0, UR4, 0x0, 1D, 0x1 ;
        /*01d0*/                   LDG.E R2, desc[UR6][R2.64] ;
		Function : _ZN2gd4cuda2bw19bw_copy_bulk_kernelEv
        /*0000*/                   LDC R1, c[0x0][0x28] ;
        /*0100*/                   UBLKCP.S.G [UR8], [UR4], UR10 ;
        /*0110*/                   UBLKCP.G.S [UR4], [UR8], UR10 ;
        /*0120*/                   UBLKCP.S.G [UR8], [UR4], UR10 ;
        /*0130*/                   STG.E.128 desc[UR6][R4.64], R8 ;
)";
  const auto ops = gd::kernel_memory_ops(sass);
  ASSERT_EQ(ops.size(), 2u);
  const auto& tex = ops.at("_ZN2gd4cuda20chase_texture_kernelEy");
  EXPECT_EQ(tex.load, "TLD.LZ");
  EXPECT_EQ(tex.store, "");
  const auto& bulk = ops.at("_ZN2gd4cuda2bw19bw_copy_bulk_kernelEv");
  EXPECT_EQ(bulk.load, "");
  EXPECT_EQ(bulk.store, "STG.E.128");
  EXPECT_EQ(bulk.bulk, "UBLKCP.S.G");
  EXPECT_EQ(bulk.bulk_all, "UBLKCP.S.G + UBLKCP.G.S");
  EXPECT_TRUE(gd::kernel_memory_ops("").empty());
}

// Atomics: every distinct atomic and warp-reduction opcode, in order of appearance, and
// none of them taken for a load or a store.
TEST(SassMemoryOps, AtomicOpsPerKernel) {
  const std::string sass = R"(
		Function : _ZN2gd4cuda2at16tp_global_kernelILi0ELi0ELb1ELi1EEEvNS1_6TpArgsE
        /*0000*/                   LDC R1, c[0x0][0x28] ;
        /*0100*/                   REDUX.SUM UR5, R0 ;
        /*0110*/                   ATOMG.E.ADD.STRONG.GPU PT, R3, desc[UR6][R2.64], R5 ;
        /*0120*/                   ATOMG.E.ADD.STRONG.GPU PT, R4, desc[UR6][R2.64], R5 ;
        /*0130*/                   REDG.E.ADD.STRONG.GPU desc[UR6][R2.64], R5 ;
        /*0138*/                   ATOMG.E.ADD.F16x2.RN.STRONG.GPU PT, R7, desc[UR6][R4.64], R19 ;
        /*0140*/                   STG.E desc[UR6][R6.64], R4 ;
		Function : _ZN2gd4cuda2at16pp_shared_kernelILi0EEEvjjjPNS1_7PingOutE
        /*0200*/                   ATOMS.CAS R3, [R2], R4, R5 ;
        /*0210*/                   LDS R6, [R2] ;
)";
  const auto ops = gd::kernel_memory_ops(sass);
  ASSERT_EQ(ops.size(), 2u);
  const auto& g = ops.at("_ZN2gd4cuda2at16tp_global_kernelILi0ELi0ELb1ELi1EEEvNS1_6TpArgsE");
  EXPECT_EQ(g.atomic_all,
            "REDUX.SUM + ATOMG.E.ADD.STRONG.GPU + REDG.E.ADD.STRONG.GPU + "
            "ATOMG.E.ADD.F16x2.RN.STRONG.GPU");
  EXPECT_EQ(g.store, "STG.E");
  EXPECT_EQ(g.load, "");
  const auto& s = ops.at("_ZN2gd4cuda2at16pp_shared_kernelILi0EEEvjjjPNS1_7PingOutE");
  EXPECT_EQ(s.atomic_all, "ATOMS.CAS");
  EXPECT_EQ(s.load, "LDS");
}

// Predicates are dropped, modifiers may hold lower case (F16x2), the encoding lines and
// anything without an address comment are no instruction, and the operands run to the ';'.
TEST(SassFunctions, InstructionLines) {
  const std::string sass = R"(
	code for sm_90
		Function : k1
        /*0000*/                   MOV R1, c[0x0][0x28] ;                      /* 0x00000a0000017a02 */
                                                                                 /* 0x000fe40000000f00 */
        /*0010*/              @!P0 BRA 0x40 ;
        /*0020*/               @UP1 ATOMG.E.ADD.F16x2.RN.STRONG.GPU PT, R7, desc[UR6][R4.64], R19 ;
        /*0030*/                   EXIT ;
        /*0040*/                   BRA 0x10;
        // not an instruction: FFMA R1, R2, R3, R4 ;
        /*0050*/                   NOP
		Function : k2
        /*0000*/                   FFMA R1, R2, R3, R4 ;
)";
  const auto fns = gd::sass_functions(sass);
  ASSERT_EQ(fns.size(), 2u);
  const auto& k1 = fns.at("k1");
  ASSERT_EQ(k1.size(), 5u);
  EXPECT_EQ(k1[0].opcode, "MOV");
  EXPECT_EQ(k1[0].operands, "R1, c[0x0][0x28] ");
  EXPECT_EQ(k1[1].opcode, "BRA");
  EXPECT_EQ(k1[1].addr, 0x10u);
  EXPECT_FALSE(k1[1].backward_target());
  EXPECT_EQ(k1[2].opcode, "ATOMG.E.ADD.F16x2.RN.STRONG.GPU");
  EXPECT_EQ(k1[2].operands, "PT, R7, desc[UR6][R4.64], R19 ");
  EXPECT_EQ(k1[3].opcode, "EXIT");
  EXPECT_EQ(k1[4].operands, "0x10");
  ASSERT_TRUE(k1[4].backward_target());
  EXPECT_EQ(*k1[4].backward_target(), 0x10u);
  EXPECT_EQ(fns.at("k2").size(), 1u);
  EXPECT_TRUE(gd::sass_functions("").empty());
  EXPECT_TRUE(gd::sass_functions("/*0000*/ FFMA R1, R2, R3, R4 ;").empty());  // no function
}

// A listing the size of gpudissect's own (about 40,000 lines) is read in well under a
// second: every CUDA probe waits for it before its first point.
TEST(SassFunctions, LargeListingIsQuick) {
  std::string sass;
  for (int f = 0; f < 200; ++f) {
    sass += "\t\tFunction : kernel_" + std::to_string(f) + "\n";
    for (int i = 0; i < 100; ++i) {
      char line[160];
      std::snprintf(line, sizeof line,
                    "        /*%04x*/                   LDG.E R%d, desc[UR6][R2.64] ;"
                    "                 /* 0x000fe20000000f00 */\n"
                    "                                                          "
                    "                       /* 0x000fc40000000f00 */\n",
                    i * 16, i % 32);
      sass += line;
    }
  }
  const auto t0 = std::chrono::steady_clock::now();
  const auto ops = gd::kernel_memory_ops(sass);
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  ASSERT_EQ(ops.size(), 200u);
  EXPECT_EQ(ops.at("kernel_7").load, "LDG.E");
  EXPECT_LT(s, 1.0) << "40,000 lines took " << s << " s";
}

}  // namespace
