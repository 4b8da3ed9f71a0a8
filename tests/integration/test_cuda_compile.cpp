// Every generated CUDA compute kernel compiles with NVRTC (no GPU needed) and its PTX holds
// the instruction it is meant to time.
#include <gtest/gtest.h>

#include <future>
#include <vector>

#include "cuda_probes.hpp"
#include "cuda_util.hpp"
#include "compute/compute.hpp"

namespace {

std::string arch(const gd::ComputeOp& op) { return op.sm90a ? "compute_90a" : "compute_90"; }

void expect_compiles(const gd::ComputeOp& op, const gd::ComputeOp* mix) {
  const std::vector<int> ilps = op.warpgroup ? std::vector<int>{1} : std::vector<int>{1, 2, 4, 8};
  const std::string src = gd::generate_cuda_source(op, ilps, mix);
  std::string ptx;
  ASSERT_NO_THROW(ptx = gd::cuda::compile_to_ptx(src, arch(op))) << op.name << "\n" << src;
  EXPECT_NE(ptx.find(op.ptx_expect), std::string::npos) << op.name << " lacks " << op.ptx_expect;
  if (mix) EXPECT_NE(ptx.find(mix->ptx_expect), std::string::npos) << mix->ptx_expect;
  for (int ilp : ilps)
    EXPECT_NE(ptx.find(gd::compute_kernel_name(ilp)), std::string::npos) << op.name;
}

}  // namespace

TEST(CudaCompile, EveryGeneratedKernelHoldsItsInstruction) {
  // NVRTC compiles concurrently, as the probe does on the GPU machine.
  std::vector<std::future<void>> fs;
  for (const auto& op : gd::compute_ops())
    fs.push_back(std::async(std::launch::async, [&op] { expect_compiles(op, nullptr); }));
  for (auto& f : fs) f.get();
}

TEST(CudaCompile, MixedPairs) {
  const char* pairs[][2] = {{"fp32.fma", "int32.mad"},
                            {"fp32.fma", "sfu.ex2"},
                            {"fp32.fma", "fp16x2.fma"},
                            {"fp32.fma", "lds.chase"},
                            {"fp32.fma", "fp64.fma"}};
  for (auto& p : pairs) expect_compiles(*gd::find_compute_op(p[0]), gd::find_compute_op(p[1]));
}

TEST(CudaCompile, BadSourceThrowsWithLog) {
  EXPECT_THROW(gd::cuda::compile_to_ptx("extern \"C\" __global__ void k() { nope; }", "compute_90"),
               gd::BackendError);
}

// The SASS reader every CUDA probe uses, on an excerpt in cuobjdump's format: parameter
// reads (c[0x0]) are not the timed load, a load into RZ (a texture fetch) is, and stores
// and copy-engine instructions are listed per kernel.
TEST(CudaSass, MemoryOpsPerKernel) {
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
  const auto ops = gd::cuda::kernel_memory_ops(sass);
  ASSERT_EQ(ops.size(), 2u);
  const auto& tex = ops.at("_ZN2gd4cuda20chase_texture_kernelEy");
  EXPECT_EQ(tex.load, "TLD.LZ");
  EXPECT_EQ(tex.store, "");
  const auto& bulk = ops.at("_ZN2gd4cuda2bw19bw_copy_bulk_kernelEv");
  EXPECT_EQ(bulk.load, "");
  EXPECT_EQ(bulk.store, "STG.E.128");
  EXPECT_EQ(bulk.bulk, "UBLKCP.S.G");
  EXPECT_EQ(bulk.bulk_all, "UBLKCP.S.G + UBLKCP.G.S");
  EXPECT_TRUE(gd::cuda::kernel_memory_ops("").empty());
}

// Atomics: every distinct atomic and warp-reduction opcode, in order of appearance, and
// none of them taken for a load or a store.
TEST(CudaSass, AtomicOpsPerKernel) {
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
  const auto ops = gd::cuda::kernel_memory_ops(sass);
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
