// The rest of the compute table's ops that GLSL can state, included by compute.comp for every
// GD_OP_* it does not define itself; the same contract (GD_DECL, GD_STEP, GD_FOLD and the
// optional GD_PROLOGUE, GD_BEFORE_LOOP). Seeds depend on the invocation's index in its
// workgroup (GD_LANE), as the CUDA table's do on the lane: with workgroup-uniform values a
// compiler may move an integer chain to a scalar datapath (ptxas: UIMAD) or fold a shuffle of
// a uniform value. Every workgroup still folds the same words, which the host checks, and
// invocation 0's seeds are the host replay's.
#define GD_LANE gl_LocalInvocationID.x
#define GD_FSEED(i) (pc.fs + 0.0625 * float(i) + 0.0078125 * float(GD_LANE & 7u))
#define GD_USEED(i) (pc.ub + 7u * uint(i) + 0x01000193u * GD_LANE)

#if defined(GD_OP_fp32_max)
// max(-a, b): a plain max(a, b) chain is folded (max(max(a, b), b) is max(a, b)); negating
// an operand is a source modifier of the max instruction on GPUs. Not `precise`: a max has
// nothing to contract, and NoContraction on the negation may keep a driver from folding it
// into the max (a second instruction in the dependent chain).
#define GD_DECL(i) float a##i = GD_FSEED(i);
#define GD_STEP(i, j) a##i = max(-a##i, pc.fb);
#define GD_FOLD(i) acc ^= floatBitsToUint(a##i);

#elif defined(GD_OP_fp64_fma_rrr) || defined(GD_OP_fp64_fma_2reg) || defined(GD_OP_fp64_fma_acc)
// The FP64 fma forms of the CUDA table (needs shaderFloat64): a*b + c, a*b + b, and the
// accumulating form a = n*k + a, n the next chain (a itself at ILP 1), k = c * 1e-9 (a slow
// climb: finite however long the chain). With a loop-invariant product (b*c + a) the chain
// is a + m + m ..., which llvmpipe folded to one multiply-add (a + n m) despite `precise`.
#define GD_PROLOGUE const double db = double(pc.fb), dc = double(pc.fc), dk = dc * 1e-9LF;
#define GD_DECL(i) precise double a##i = double(pc.fs) + 0.0625LF * double(i);
#define GD_FOLD(i)                          \
  {                                         \
    const uvec2 w = unpackDouble2x32(a##i); \
    acc ^= w.x ^ w.y;                       \
  }
#if defined(GD_OP_fp64_fma_rrr)
#define GD_STEP(i, j) a##i = fma(a##i, db, dc);
#elif defined(GD_OP_fp64_fma_2reg)
#define GD_STEP(i, j) a##i = fma(a##i, db, db);
#else
#define GD_STEP(i, j) a##i = fma(a##j, dk, a##i);
#endif

#elif defined(GD_OP_fp16_fma)
// Scalar FP16 (needs shaderFloat16); folded through packFloat2x16, which needs no 16-bit
// integer type.
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#define GD_PROLOGUE const float16_t hb = float16_t(pc.fb), hc = float16_t(pc.fc);
#define GD_DECL(i) precise float16_t a##i = float16_t(GD_FSEED(i));
#define GD_STEP(i, j) a##i = fma(a##i, hb, hc);
#define GD_FOLD(i) acc ^= packFloat2x16(f16vec2(a##i, float16_t(0.0)));

#elif defined(GD_OP_int32_mulhi)
#define GD_DECL(i) uint a##i = GD_USEED(i);
#define GD_STEP(i, j)                      \
  {                                        \
    uint hi;                               \
    uint lo;                               \
    umulExtended(a##i, pc.ub, hi, lo);     \
    a##i = hi;                             \
  }
#define GD_FOLD(i) acc ^= a##i;

#elif defined(GD_OP_int32_lop3)
// (a & p) ^ k, p the chain's value one step before: one three-input logic op (LOP3 on
// NVIDIA, whose rate does not depend on its truth table). A chain of xors only is linear,
// and llvmpipe folded one (a ^ q ^ k, q two steps back) to a third of its steps.
#define GD_DECL(i) uint a##i = GD_USEED(i), p##i = pc.uc ^ uint(i);
#define GD_STEP(i, j)        \
  {                          \
    const uint t = a##i;     \
    a##i = (a##i & p##i) ^ pc.ub; \
    p##i = t;                \
  }
#define GD_FOLD(i) acc ^= a##i;

#elif defined(GD_OP_int32_shl) || defined(GD_OP_int32_rot)
// Shift counts from the push constants (5 at run time), unknown to the compiler; the rotate
// is GLSL's idiom for a funnel shift (SHF.L.W on NVIDIA, a rotate on x86).
#define GD_PROLOGUE const uint sl = (pc.uc & 31u) | 1u, sr = 32u - sl;
#define GD_DECL(i) uint a##i = GD_USEED(i);
#if defined(GD_OP_int32_shl)
#define GD_STEP(i, j) a##i = a##i << sl;
#else
#define GD_STEP(i, j) a##i = (a##i << sl) | (a##i >> sr);
#endif
#define GD_FOLD(i) acc ^= a##i;

#elif defined(GD_OP_int32_dp4a)
// Needs shaderIntegerDotProduct (VK_KHR_shader_integer_dot_product): SPIR-V's OpUDot on four
// packed unsigned bytes, which glslang 12 states only through GL_EXT_spirv_intrinsics. The
// chain's own value is a dot operand: with CUDA's loop-invariant operands the compiler would
// take the dot out of the loop. The step is the dot alone (a dp4a with a zero accumulator):
// an OpIAdd after it, for CUDA's accumulate, was not folded into the dot by NVIDIA's driver
// (10.3 cycles a step and 56/clk/SM on an H200, against one IDP.4A's 4 and 64).
#extension GL_EXT_spirv_intrinsics : require
spirv_instruction(extensions = ["SPV_KHR_integer_dot_product"], capabilities = [6019, 6018],
                  id = 4451)
uint gd_udot4x8(uint a, uint b, spirv_literal int packed_format);
#define GD_DECL(i) uint a##i = GD_USEED(i);
#define GD_STEP(i, j) a##i = gd_udot4x8(a##i, pc.ub, 0);
#define GD_FOLD(i) acc ^= a##i;

#elif defined(GD_OP_int32_popc) || defined(GD_OP_int32_brev) || defined(GD_OP_int32_clz)
#define GD_DECL(i) uint a##i = GD_USEED(i);
#if defined(GD_OP_int32_popc)
#define GD_STEP(i, j) a##i = uint(bitCount(a##i));
#elif defined(GD_OP_int32_brev)
// brev(brev(a)) is a: an add between steps keeps the chain from folding in pairs.
#define GD_STEP(i, j) a##i = bitfieldReverse(a##i) + pc.uc;
#else
// clz as 31 - findMSB (32 for 0, whose findMSB is -1): CUDA's clz.b32 and OpenCL's clz()
// compile to FLO and the subtraction (FLO.U32 + IADD3 on NVIDIA); findMSB alone timed one
// FLO, 17 cycles a step on an H200 against their 23.
#define GD_STEP(i, j) a##i = 31u - uint(findMSB(a##i));
#endif
#define GD_FOLD(i) acc ^= a##i;

#elif defined(GD_OP_int64_add) || defined(GD_OP_int64_mul)
// Needs shaderInt64. The add is the INT32 one's Fibonacci step (a loop-invariant addend
// would become one multiply); the multiply is its product form (the OpenCL one): odd seeds
// keep every product odd, so no `| 1` sits in the dependent chain beside the multiply.
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require
#if defined(GD_OP_int64_add)
#define GD_ODD 0ul
#else
#define GD_ODD 1ul
#endif
#define GD_DECL(i)                                                                    \
  uint64_t a##i = ((uint64_t(pc.ub) << 32 | uint64_t(pc.uc)) + uint64_t(i) +         \
                   0x01000193ul * uint64_t(GD_LANE)) | GD_ODD,                       \
           p##i = uint64_t(pc.uc ^ uint(i)) | GD_ODD;
#if defined(GD_OP_int64_add)
#define GD_STEP(i, j)        \
  {                          \
    const uint64_t t = a##i; \
    a##i += p##i;            \
    p##i = t;                \
  }
#else
#define GD_STEP(i, j)        \
  {                          \
    const uint64_t t = a##i; \
    a##i *= p##i;            \
    p##i = t;                \
  }
#endif
#define GD_FOLD(i) acc ^= uint(a##i) ^ uint(a##i >> 32);

#elif defined(GD_OP_sfu_rcp) || defined(GD_OP_sfu_rsqrt) || defined(GD_OP_sfu_sqrt) || \
    defined(GD_OP_sfu_ex2) || defined(GD_OP_sfu_lg2) || defined(GD_OP_sfu_sin) ||     \
    defined(GD_OP_sfu_cos)
// GLSL's builtins, whose Vulkan precision is the special-function units' (the compiler
// picks the instruction). Each chain stays finite: 1/(x + c) oscillates near 1, rsqrt and
// sqrt go to 1, 2^-x to 0.64, log2(|x| + 1) to 1, sin to 0, cos to 0.74.
// ex2's chain is not `precise`, as fp32.max's: its negation is a source modifier of the
// special-function instruction, and an exponential has nothing to contract.
#if defined(GD_OP_sfu_ex2)
#define GD_DECL(i) float a##i = GD_FSEED(i);
#else
#define GD_DECL(i) precise float a##i = GD_FSEED(i);
#endif
#define GD_FOLD(i) acc ^= floatBitsToUint(a##i);
#if defined(GD_OP_sfu_rcp)
// rcp(rcp(x)) is x: the add keeps pairs from folding, as in the CUDA table.
#define GD_STEP(i, j) a##i = 1.0 / (a##i + pc.fc);
#elif defined(GD_OP_sfu_rsqrt)
#define GD_STEP(i, j) a##i = inversesqrt(a##i);
#elif defined(GD_OP_sfu_sqrt)
#define GD_STEP(i, j) a##i = sqrt(a##i);
#elif defined(GD_OP_sfu_ex2)
#define GD_STEP(i, j) a##i = exp2(-a##i);
#elif defined(GD_OP_sfu_lg2)
#define GD_STEP(i, j) a##i = log2(abs(a##i) + 1.0);
#elif defined(GD_OP_sfu_sin)
#define GD_STEP(i, j) a##i = sin(a##i);
#else
#define GD_STEP(i, j) a##i = cos(a##i);
#endif

#elif defined(GD_OP_conv_f32_i32) || defined(GD_OP_conv_f32_f16)
// Round trips, so the chain stays one type, each with an op between round trips: f32(i32(x))
// is trunc(x) and f16(f32(h)) is h to a compiler, which then keeps one conversion pair of the
// whole chain (llvmpipe did: 0.2 ns a step). The op is an xor of the integer in the middle
// with a run-time 0 (uc >> 8): a float op after the trip let NVIDIA's driver turn the i32 pair
// into one full-rate round-to-integer (191% of the conversions' peak on an H200), and drop the
// f16 pair altogether (a multiply after it timed 4.4 cycles a step, one FMUL's). An integer in
// the middle rules both out. f32->f16->f32 goes through packHalf2x16 (no FP16 feature needed).
#define GD_PROLOGUE const int zero = int(pc.uc >> 8);
#define GD_DECL(i) precise float a##i = GD_FSEED(i) * 8.0;
#define GD_FOLD(i) acc ^= floatBitsToUint(a##i);
#if defined(GD_OP_conv_f32_i32)
#define GD_STEP(i, j) a##i = float(int(a##i) ^ zero);
#else
#define GD_STEP(i, j) a##i = unpackHalf2x16(packHalf2x16(vec2(a##i, 0.0)) ^ uint(zero)).x;
#endif

#elif defined(GD_OP_conv_f64_f32)
// Needs shaderFloat64. f64(f32(x)) with its low word xored with a run-time 0 (uc >> 8), for
// the reason the f32 trips xor: one integer op in the chain, as OpenCL's (F2F, F2F, LOP3 on
// NVIDIA). A multiply by 0.999 there put a DMUL in the chain (52 cycles a step on an H200
// against CUDA's 36 for the two F2F).
#define GD_PROLOGUE const uint zero = pc.uc >> 8;
#define GD_DECL(i) precise double a##i = double(pc.fs) + 0.0625LF * double(i);
#define GD_STEP(i, j) \
  a##i = packDouble2x32(unpackDouble2x32(double(float(a##i))) ^ uvec2(zero, 0u));
#define GD_FOLD(i)                          \
  {                                         \
    const uvec2 w = unpackDouble2x32(a##i); \
    acc ^= w.x ^ w.y;                       \
  }

#elif defined(GD_OP_warp_shfl_up) || defined(GD_OP_warp_shfl_down)
// Needs VK_SUBGROUP_FEATURE_SHUFFLE_RELATIVE_BIT. The delta is 1 at run time, unknown to the
// compiler. Vulkan leaves the result undefined where the source is outside the subgroup:
// those invocations keep their value, as CUDA's shfl.sync.up/down give it (a select).
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_shuffle_relative : require
#define GD_DECL(i) uint a##i = pc.ub + 7u * uint(i) + 0x01000193u * gl_SubgroupInvocationID;
#define GD_FOLD(i) acc ^= a##i;
#if defined(GD_OP_warp_shfl_up)
#define GD_PROLOGUE \
  const uint dl = (pc.uc >> 8) | 1u; \
  const bool keep = gl_SubgroupInvocationID < dl;
#define GD_STEP(i, j)                                   \
  {                                                     \
    const uint s = subgroupShuffleUp(a##i, dl);         \
    a##i = keep ? a##i : s;                             \
  }
#else
#define GD_PROLOGUE \
  const uint dl = (pc.uc >> 8) | 1u; \
  const bool keep = gl_SubgroupInvocationID + dl >= gl_SubgroupSize;
#define GD_STEP(i, j)                                   \
  {                                                     \
    const uint s = subgroupShuffleDown(a##i, dl);       \
    a##i = keep ? a##i : s;                             \
  }
#endif

#elif defined(GD_OP_lds_chase)
// A shared-memory load chasing its own index: every slot holds its own index, which no
// compiler can know across the barrier between the stores and the chase. Chain i of
// invocation x uses slot x + 256 i: neighbours read neighbouring words (no bank conflict),
// and each invocation reads only what it stored (workgroups up to 256 invocations).
shared uint gd_lds[2048];
#define GD_SLOT(i) ((GD_LANE + 256u * uint(i)) & 2047u)
#define GD_DECL(i)       \
  uint a##i = GD_SLOT(i); \
  gd_lds[a##i] = a##i;
#define GD_BEFORE_LOOP barrier();
#define GD_STEP(i, j) a##i = gd_lds[a##i];
#define GD_FOLD(i) acc ^= a##i - GD_SLOT(i);

#else
#error "compute.comp: no GD_OP_* defined"
#endif
