#version 450
// Atomic throughput (the OpenCL backend's set, probes/atomics/atomics.cl): every invocation
// makes `iterations` atomicAdd (GD_CAS: atomicCompSwap loops; GD_MIN / GD_MAX: atomicMin /
// atomicMax of gd::minmax_operand) on one word of a storage buffer, or (GD_SHARED) of the
// workgroup's shared array, which is then copied out. Word addresses follow gd::target_word
// (probes/atomics/model.cpp) exactly, so the host knows what every word must hold afterwards
// (gd::throughput_check). The word's type: uint (default), int (min/max), GD_U64 uint64_t
// (GL_EXT_shader_atomic_int64), GD_F32 float and GD_F64 double (GL_EXT_shader_atomic_float).
// GD_SCOPE_WORKGROUP: the add is made at workgroup scope (GL_KHR_memory_scope_semantics).
// The launch's shape is CUDA's (probes/atomics/cuda_throughput.cuh): adds and min / max eight
// to a loop trip, a CAS loop one attempt a trip. A storage-buffer target sits at its
// placement: `base` words into the buffer, its per-invocation results after those of the
// placements before it (`place`).
// Built in the variants probes/atomics/vulkan.cmake lists.
#if defined(GD_U64)
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require
#extension GL_EXT_shader_atomic_int64 : require
#define WORD_T uint64_t
#elif defined(GD_F32) || defined(GD_F64)
#extension GL_EXT_shader_atomic_float : require
#ifdef GD_F64
#define WORD_T double
#else
#define WORD_T float
#endif
#elif defined(GD_MIN) || defined(GD_MAX)
#define WORD_T int
#else
#define WORD_T uint
#endif
#ifdef GD_SCOPE_WORKGROUP
#extension GL_KHR_memory_scope_semantics : require
#endif

// Contention codes, as gd::Contention.
#define C_DISTINCT 0u
#define C_BANK_CONFLICT 1u
#define C_SAME_PER_WARP 2u
#define C_SAME_PER_BLOCK 3u
#define C_SAME_GPU 4u

layout(local_size_x_id = 0) in;
// Shared: the workgroup's array, gd::shared_words_per_block words (a multiple of 32).
layout(constant_id = 1) const uint kSharedWords = 256;

layout(push_constant) uniform Push {
  uint contention;
  uint ways;
  uint iterations;
  uint base;   // the placement's first word (storage buffer)
  uint place;  // the placement's index: where its per-invocation results go
  uint zero;   // 0: makes the operand differ per invocation as far as the compiler knows
} pc;

// Global: the target words; shared: every workgroup's array copied out, one after another.
// The host sets every word to gd::initial_word before the launch.
layout(std430, set = 0, binding = 0) coherent buffer Target { WORD_T target[]; };
// Per invocation: the sum of the values the atomics returned (so each result is live), or
// for CAS the swaps it won.
layout(std430, set = 0, binding = 1) writeonly buffer Aux { uint aux[]; };

#ifdef GD_SHARED
shared WORD_T arr[kSharedWords];

// gd::target_word, shared space: each warp (32 invocations) owns 32 x ways words.
uint local_word(uint t) {
  const uint warp = t / 32u, lane = t % 32u;
  if (pc.contention == C_DISTINCT) return warp * 32u + lane;
  if (pc.contention == C_BANK_CONFLICT) {
    const uint banks = 32u / pc.ways;
    return warp * 32u * pc.ways + lane % banks + (lane / banks) * 32u;
  }
  if (pc.contention == C_SAME_PER_WARP) return warp * 32u;
  return 0u;
}
#define WORD arr[w]
#else
// gd::target_word, global space.
uint global_word(uint g) {
  if (pc.contention == C_SAME_PER_WARP) return (g / 32u) * 32u;
  if (pc.contention == C_SAME_PER_BLOCK) return gl_WorkGroupID.x * 32u;
  if (pc.contention == C_SAME_GPU) return 0u;
  return g;
}
#define WORD target[w]
#endif

void main() {
  const uint g = gl_GlobalInvocationID.x, t = gl_LocalInvocationID.x;
  const uint n = gl_WorkGroupSize.x;
#ifdef GD_SHARED
  for (uint i = t; i < kSharedWords; i += n) arr[i] = WORD_T(0);
  barrier();
  const uint w = local_word(t);
#else
  const uint w = pc.base + global_word(g);
#endif
  uint acc = 0u;
#if !defined(GD_CAS) && !defined(GD_MIN) && !defined(GD_MAX)
  // The add's operand is 1, but not one the compiler can prove the same in every invocation.
  // NVIDIA's Vulkan compiler turns adds of a uniform operand into one atomic per group of
  // invocations that hit one word (found out at run time, at a cost on every add): the
  // figures were then that combining's, not the atomic unit's that CUDA's `atom` measures.
  const WORD_T one = WORD_T(1u + (t & pc.zero));
#endif
#if defined(GD_CAS)
  // Each attempt swaps guess -> guess + 1; a failure learns the current value.
  uint guess = 0u;
  for (uint k = 0u; k < pc.iterations; ++k) {
    const uint old = atomicCompSwap(WORD, guess, guess + 1u);
    if (old == guess) {
      ++acc;
      guess = old + 1u;
    } else {
      guess = old;
    }
  }
#else
#if defined(GD_MIN) || defined(GD_MAX)
  // gd::minmax_operand: (g mod 977) * 2048 + (k mod 2048), negated for min.
  const int from = int(g % 977u) * 2048;
#ifdef GD_MIN
#define STEP(k) acc += uint(atomicMin(WORD, -(from + int((k) % 2048u))));
#else
#define STEP(k) acc += uint(atomicMax(WORD, from + int((k) % 2048u)));
#endif
#elif defined(GD_SCOPE_WORKGROUP)
  // A relaxed add whose coherence reaches the workgroup only (CUDA's atom.relaxed.cta).
#define STEP(k) \
  acc += atomicAdd(WORD, one, gl_ScopeWorkgroup, gl_StorageSemanticsBuffer, gl_SemanticsRelaxed);
#else
#define STEP(k) acc += uint(atomicAdd(WORD, one));
#endif
  // Eight to a loop trip, so the loop's own instructions stay out of the way.
  uint k = 0u;
  for (; k + 8u <= pc.iterations; k += 8u) {
    STEP(k) STEP(k + 1u) STEP(k + 2u) STEP(k + 3u) STEP(k + 4u) STEP(k + 5u) STEP(k + 6u)
    STEP(k + 7u)
  }
  for (; k < pc.iterations; ++k) STEP(k)
#endif
#ifdef GD_SHARED
  barrier();
  for (uint i = t; i < kSharedWords; i += n) target[gl_WorkGroupID.x * kSharedWords + i] = arr[i];
  aux[g] = acc;
#else
  aux[pc.place * gl_NumWorkGroups.x * gl_WorkGroupSize.x + g] = acc;
#endif
}
