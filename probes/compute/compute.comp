#version 450
// The compute probe's kernels: GD_ILP independent dependent chains of one op (GD_OP_*), each
// stepped GD_STEPS / GD_ILP times per loop iteration, so every variant's loop holds GD_STEPS
// steps (256, gd::vulkan::kComputeStepsPerIteration, but for warp.redux). A dependent chain
// waits on the loop's own control at each iteration's end: with 64 steps NVIDIA's Vulkan
// driver added ~28 cycles per iteration to a 4-cycle chain (FP32 latencies 4.44 cycles against
// CUDA's 4.03 from 512 steps), which 256 steps cut to ~0.1 cycle a step. Built once per
// (op, ILP) by cmake/vulkan.cmake with -DGD_OP_<name> -DGD_ILP=<n>; the statements are pasted by the
// preprocessor rather than looped, since llvmpipe counts every loop iteration against its
// limit of 65535 and another compiler might not unroll. Each invocation folds its chains into
// one word, which the host checks (probes/compute/vulkan.cpp).
//
// Chains are `precise` (NoContraction): no driver may fuse a mul and an add of two steps,
// nor reassociate a chain of adds, so a step is the one SPIR-V op it names.
#extension GL_GOOGLE_include_directive : require

// ---- the op under test: GD_DECL(i) declares chain i, GD_STEP(i, j) steps it (j: the next
// chain, for ops whose operand must vary), GD_FOLD(i) folds it into `acc` ----
#if defined(GD_OP_fp32_fma) || defined(GD_OP_fp32_add) || defined(GD_OP_fp32_mul)
#define GD_DECL(i) precise float a##i = pc.fs + 0.0625 * float(i);
#define GD_FOLD(i) acc ^= floatBitsToUint(a##i);
#if defined(GD_OP_fp32_fma)
#define GD_STEP(i, j) a##i = fma(a##i, pc.fb, pc.fc);
#elif defined(GD_OP_fp32_add)
#define GD_STEP(i, j) a##i = a##i + pc.fc;
#else
#define GD_STEP(i, j) a##i = a##i * pc.fb;
#endif

#elif defined(GD_OP_fp64_fma) || defined(GD_OP_fp64_add) || defined(GD_OP_fp64_mul)
// Needs shaderFloat64: the module declares the Float64 capability.
#define GD_PROLOGUE const double db = double(pc.fb), dc = double(pc.fc);
#define GD_DECL(i) precise double a##i = double(pc.fs) + 0.0625LF * double(i);
#define GD_FOLD(i) \
  {                \
    const uvec2 w = unpackDouble2x32(a##i); \
    acc ^= w.x ^ w.y; \
  }
#if defined(GD_OP_fp64_fma)
// a * K + c with K = 1 - 2^-10, the CUDA and OpenCL form (gd::reference_checksum "f64fma_imm").
#define GD_STEP(i, j) a##i = fma(a##i, 0.9990234375LF, dc);
#elif defined(GD_OP_fp64_add)
#define GD_STEP(i, j) a##i = a##i + dc;
#else
#define GD_STEP(i, j) a##i = a##i * db;
#endif

#elif defined(GD_OP_fp16x2_fma) || defined(GD_OP_fp16x2_add) || defined(GD_OP_fp16x2_mul)
// Needs shaderFloat16 (VK_KHR_shader_float16_int8): arithmetic only, no 16-bit storage.
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#define GD_PROLOGUE const f16vec2 hb = f16vec2(float16_t(pc.fb)), hc = f16vec2(float16_t(pc.fc));
#define GD_DECL(i) \
  precise f16vec2 a##i = f16vec2(float16_t(pc.fs), float16_t(pc.fs + 0.0625 * float(i)));
#define GD_FOLD(i) acc ^= packFloat2x16(a##i);
#if defined(GD_OP_fp16x2_fma)
#define GD_STEP(i, j) a##i = fma(a##i, hb, hc);
#elif defined(GD_OP_fp16x2_add)
#define GD_STEP(i, j) a##i = a##i + hc;
#else
#define GD_STEP(i, j) a##i = a##i * hb;
#endif

#elif defined(GD_OP_int32_add)
// A Fibonacci step (the OpenCL form): one add whose inputs are the chain's two previous
// values. A loop-invariant addend would be turned into one multiply by the compiler.
#define GD_DECL(i) uint a##i = pc.ub + 7u * uint(i), p##i = pc.uc ^ uint(i);
#define GD_STEP(i, j) \
  {                   \
    const uint t = a##i; \
    a##i += p##i;     \
    p##i = t;         \
  }
#define GD_FOLD(i) acc ^= a##i;

#elif defined(GD_OP_int32_mul)
// Odd seeds keep every product odd (never 0), so the step is the multiply alone (the OpenCL
// form; at ILP 1 a square, as CUDA's): an `| 1u` in the step put a LOP3 before each IMAD in
// the dependent chain and doubled the latency.
#define GD_DECL(i) uint a##i = (pc.ub + 7u * uint(i)) | 1u;
#define GD_STEP(i, j) a##i = a##i * a##j;
#define GD_FOLD(i) acc ^= a##i;

#elif defined(GD_OP_int32_mad)
#define GD_DECL(i) uint a##i = pc.ub + 7u * uint(i);
#define GD_STEP(i, j) a##i = a##i * pc.ub + pc.uc;
#define GD_FOLD(i) acc ^= a##i;

#elif defined(GD_OP_warp_shfl_idx) || defined(GD_OP_warp_shfl_xor) || \
    defined(GD_OP_warp_ballot) || defined(GD_OP_warp_redux)
// Subgroup operations (Vulkan 1.1 core; the host checks VkPhysicalDeviceSubgroupProperties).
// Seeds differ per lane, so no compiler can treat the value as subgroup-uniform.
#extension GL_KHR_shader_subgroup_basic : require
#define GD_DECL(i) uint a##i = pc.ub + 7u * uint(i) + 0x01000193u * gl_SubgroupInvocationID;
#define GD_FOLD(i) acc ^= a##i;
#if defined(GD_OP_warp_shfl_idx)
#extension GL_KHR_shader_subgroup_shuffle : require
// The source lane is the value's own low bits: it differs per lane and per step.
#define GD_PROLOGUE const uint sgm = gl_SubgroupSize - 1u;
#define GD_STEP(i, j) a##i = subgroupShuffle(a##i, a##i & sgm);
#elif defined(GD_OP_warp_shfl_xor)
#extension GL_KHR_shader_subgroup_shuffle : require
// The mask is 1 at run time (uc = 5) but unknown to the compiler: with a literal 1, llvmpipe
// folded each pair of shuffles to nothing (0.06 ns a step on lavapipe).
#define GD_PROLOGUE const uint xm = (pc.uc >> 8) | 1u;
#define GD_STEP(i, j) a##i = subgroupShuffleXor(a##i, xm);
#elif defined(GD_OP_warp_ballot)
#extension GL_KHR_shader_subgroup_ballot : require
#define GD_STEP(i, j) a##i = subgroupBallot(a##i != 0u).x;
#else
#extension GL_KHR_shader_subgroup_arithmetic : require
#define GD_STEP(i, j) a##i = subgroupAdd(a##i) ^ a##i;
#endif

#else
#include "compute_more.glsl"
#endif

#ifndef GD_PROLOGUE
#define GD_PROLOGUE
#endif
#ifndef GD_BEFORE_LOOP
#define GD_BEFORE_LOOP
#endif

// ---- the chains: M(i, next chain) for each of GD_ILP, and GD_STEPS / GD_ILP steps of each ----
// GD_STEPS is 256 but where one step is a long sequence (gd::vulkan::VkOp::steps_per_iteration).
#if defined(GD_OP_warp_redux)
#define GD_STEPS 64
#else
#define GD_STEPS 256
#endif
#if GD_ILP == 1
#define GD_EACH(M) M(0, 0)
#elif GD_ILP == 2
#define GD_EACH(M) M(0, 1) M(1, 0)
#elif GD_ILP == 4
#define GD_EACH(M) M(0, 1) M(1, 2) M(2, 3) M(3, 0)
#elif GD_ILP == 8
#define GD_EACH(M) M(0, 1) M(1, 2) M(2, 3) M(3, 4) M(4, 5) M(5, 6) M(6, 7) M(7, 0)
#else
#error "compute.comp: GD_ILP must be 1, 2, 4 or 8"
#endif
#if GD_STEPS / GD_ILP == 256
#define GD_BODY(x) GD_R256(x)
#elif GD_STEPS / GD_ILP == 128
#define GD_BODY(x) GD_R128(x)
#elif GD_STEPS / GD_ILP == 64
#define GD_BODY(x) GD_R64(x)
#elif GD_STEPS / GD_ILP == 32
#define GD_BODY(x) GD_R32(x)
#elif GD_STEPS / GD_ILP == 16
#define GD_BODY(x) GD_R16(x)
#elif GD_STEPS / GD_ILP == 8
#define GD_BODY(x) GD_R8(x)
#else
#error "compute.comp: GD_STEPS / GD_ILP must be a power of two from 8 to 256"
#endif
#define GD_R2(x) x x
#define GD_R4(x) GD_R2(x) GD_R2(x)
#define GD_R8(x) GD_R4(x) GD_R4(x)
#define GD_R16(x) GD_R8(x) GD_R8(x)
#define GD_R32(x) GD_R16(x) GD_R16(x)
#define GD_R64(x) GD_R32(x) GD_R32(x)
#define GD_R128(x) GD_R64(x) GD_R64(x)
#define GD_R256(x) GD_R128(x) GD_R128(x)
#define GD_DECL2(i, j) GD_DECL(i)
#define GD_FOLD2(i, j) GD_FOLD(i)

// The workgroup size is the host's choice (specialization constant 0).
layout(local_size_x_id = 0) in;

// gd::ComputeSeeds and the loop count; the same arguments as the CUDA and OpenCL kernels.
layout(push_constant) uniform Push {
  uint iters;
  float fs, fb, fc;
  uint ub, uc;
} pc;

layout(std430, set = 0, binding = 0) writeonly buffer Out { uint out_[]; };

void main() {
  GD_PROLOGUE
  GD_EACH(GD_DECL2)
  GD_BEFORE_LOOP
  for (uint it = 0u; it < pc.iters; ++it) {
    GD_BODY(GD_EACH(GD_STEP))
  }
  uint acc = 0u;
  GD_EACH(GD_FOLD2)
  out_[gl_GlobalInvocationID.x] = acc;
}
