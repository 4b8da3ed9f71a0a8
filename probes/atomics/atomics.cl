// Kernels of the atomics probe (OpenCL C 1.2): atomic_add / atomic_cmpxchg throughput on
// global and local memory, atomic_min / atomic_max on global memory, 64-bit atom_add where
// the device has cl_khr_int64_base_atomics, and CAS ping-pong between two work-items.
// Built again with GD_CL2_ATOMICS (OpenCL C 3.0 or 2.0) where the device takes it: then only
// the kernels that need OpenCL C 2.0 atomics are built, the add at work-group scope and the
// float adds that cl_ext_float_atomics's feature macros allow.
// Addresses follow gd::target_word (probes/atomics/model.cpp) exactly, so the host knows
// what every word must hold afterwards. Every spin is bounded: a partner that never answers
// makes the kernel report a timeout, never hang.

// Contention codes, as gd::Contention.
#define C_DISTINCT 0
#define C_BANK_CONFLICT 1
#define C_SAME_PER_WARP 2
#define C_SAME_PER_BLOCK 3
#define C_SAME_GPU 4

// The word of the global target work-item g hits (gd::target_word, global space).
ulong global_word(uint contention, ulong g, ulong group, ulong group_size) {
  if (contention == C_SAME_PER_WARP) return (g / 32) * 32;
  if (contention == C_SAME_PER_BLOCK) return group * 32;
  if (contention == C_SAME_GPU) return 0;
  return g;
}

// The word of the group's local array work-item t hits (gd::target_word, shared space).
uint local_word(uint contention, uint ways, uint t) {
  const uint warp = t / 32, lane = t % 32;
  if (contention == C_DISTINCT) return warp * 32 + lane;
  if (contention == C_BANK_CONFLICT) {
    const uint banks = 32 / ways;
    return warp * 32 * ways + lane % banks + (lane / banks) * 32;
  }
  if (contention == C_SAME_PER_WARP) return warp * 32;
  return 0;
}

// STEP(k) for k = 0 .. iterations - 1, eight to a loop trip (as CUDA's kernels), so the loop's
// own instructions stay out of the way of the atomics.
#define UNROLLED_8(iterations, STEP)                                                  \
  ulong k = 0;                                                                        \
  for (; k + 8 <= (iterations); k += 8) {                                             \
    STEP(k) STEP(k + 1) STEP(k + 2) STEP(k + 3) STEP(k + 4) STEP(k + 5) STEP(k + 6) \
    STEP(k + 7)                                                                       \
  }                                                                                   \
  for (; k < (iterations); ++k) STEP(k)

// Global kernels take their placement: the target starts `base` words into the buffer, and
// the per-work-item results of placement `place` follow those of the placements before it.
#define SINK_INDEX(g) ((ulong)place * get_global_size(0) + (g))

#ifndef GD_CL2_ATOMICS

// Every work-item adds 1 to its word `iterations` times, using the returned value (summed
// into `sink`, so the atomic's result is live).
__kernel void at_global_add(__global volatile uint* target, ulong base, uint contention,
                            ulong iterations, __global uint* sink, uint place) {
  const ulong g = get_global_id(0);
  __global volatile uint* p =
      target + base + global_word(contention, g, get_group_id(0), get_local_size(0));
  uint acc = 0;
#define ADD_STEP(k) acc += atomic_add(p, 1u);
  UNROLLED_8(iterations, ADD_STEP)
  sink[SINK_INDEX(g)] = acc;
}

// gd::minmax_operand: (g mod 977) * 2048 + (k mod 2048), negated for min. Every word starts
// at gd::initial_word (INT_MAX for min, INT_MIN for max).
#define MINMAX_KERNEL(name, fn)                                                           \
  __kernel void name(__global volatile int* target, ulong base, uint contention,          \
                     ulong iterations, __global uint* sink, uint place) {                 \
    const ulong g = get_global_id(0);                                                     \
    __global volatile int* p =                                                            \
        target + base + global_word(contention, g, get_group_id(0), get_local_size(0));   \
    const int from = (int)(g % 977) * 2048;                                               \
    uint acc = 0;                                                                         \
    UNROLLED_8(iterations, MINMAX_STEP_##fn)                                              \
    sink[SINK_INDEX(g)] = acc;                                                            \
  }
#define MINMAX_STEP_atomic_min(k) acc += (uint)atomic_min(p, -(from + (int)((k) % 2048)));
#define MINMAX_STEP_atomic_max(k) acc += (uint)atomic_max(p, from + (int)((k) % 2048));
MINMAX_KERNEL(at_global_min, atomic_min)
MINMAX_KERNEL(at_global_max, atomic_max)

#ifdef cl_khr_int64_base_atomics
#pragma OPENCL EXTENSION cl_khr_int64_base_atomics : enable
// 64-bit words: atom_add of 1, its result live.
__kernel void at_global_add_u64(__global volatile ulong* target, ulong base, uint contention,
                                ulong iterations, __global uint* sink, uint place) {
  const ulong g = get_global_id(0);
  __global volatile ulong* p =
      target + base + global_word(contention, g, get_group_id(0), get_local_size(0));
  ulong acc = 0;
#define ADD64_STEP(k) acc += atom_add(p, 1ul);
  UNROLLED_8(iterations, ADD64_STEP)
  sink[SINK_INDEX(g)] = (uint)acc;
}
#endif

// A CAS loop per work-item: each attempt swaps guess -> guess + 1; a failure learns the
// current value. Successes are counted per work-item so the host can check every word.
__kernel void at_global_cas(__global volatile uint* target, ulong base, uint contention,
                            ulong iterations, __global uint* successes, uint place) {
  const ulong g = get_global_id(0);
  __global volatile uint* p =
      target + base + global_word(contention, g, get_group_id(0), get_local_size(0));
  uint guess = 0, won = 0;
  for (ulong k = 0; k < iterations; ++k) {
    const uint old = atomic_cmpxchg(p, guess, guess + 1);
    if (old == guess) {
      ++won;
      guess = old + 1;
    } else {
      guess = old;
    }
  }
  successes[SINK_INDEX(g)] = won;
}

// Local memory: the group's array (words_per_group words) starts at 0, every work-item
// adds to its word, and the array is copied out to out[group * words_per_group ...].
__kernel void at_local_add(__global uint* out, uint contention, uint ways, ulong iterations,
                           uint words_per_group, __global uint* sink, __local volatile uint* arr) {
  const uint t = get_local_id(0), n = get_local_size(0);
  for (uint w = t; w < words_per_group; w += n) arr[w] = 0;
  barrier(CLK_LOCAL_MEM_FENCE);
  __local volatile uint* p = arr + local_word(contention, ways, t);
  uint acc = 0;
  UNROLLED_8(iterations, ADD_STEP)
  barrier(CLK_LOCAL_MEM_FENCE);
  for (uint w = t; w < words_per_group; w += n) out[get_group_id(0) * words_per_group + w] = arr[w];
  sink[get_global_id(0)] = acc;
}

__kernel void at_local_cas(__global uint* out, uint contention, uint ways, ulong iterations,
                           uint words_per_group, __global uint* successes,
                           __local volatile uint* arr) {
  const uint t = get_local_id(0), n = get_local_size(0);
  for (uint w = t; w < words_per_group; w += n) arr[w] = 0;
  barrier(CLK_LOCAL_MEM_FENCE);
  __local volatile uint* p = arr + local_word(contention, ways, t);
  uint guess = 0, won = 0;
  for (ulong k = 0; k < iterations; ++k) {
    const uint old = atomic_cmpxchg(p, guess, guess + 1);
    if (old == guess) {
      ++won;
      guess = old + 1;
    } else {
      guess = old;
    }
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  for (uint w = t; w < words_per_group; w += n) out[get_group_id(0) * words_per_group + w] = arr[w];
  successes[get_global_id(0)] = won;
}

// One player's part of a CAS ping-pong on `flag`: player `me` (0 = A, 1 = B) turns 2k + me
// into 2k + me + 1, `rounds` times. A spin that exceeds `spin_limit` attempts, or sees the
// partner give up (abort != 0), ends the game with a timeout. res: [me] hand-overs made,
// [2 + me] timeouts.
#define PLAY(flag, abort)                                          \
  uint done = 0, timed_out = 0;                                    \
  for (uint k = 0; k < rounds && !timed_out; ++k) {                \
    const int want = (int)(2 * k + me);                            \
    uint spins = 0;                                                \
    while (atomic_cmpxchg(flag, want, want + 1) != want) {         \
      if (++spins > spin_limit || *(abort) != 0) {                 \
        timed_out = 1;                                             \
        atomic_xchg(abort, 1);                                     \
        break;                                                     \
      }                                                            \
    }                                                              \
    if (!timed_out) ++done;                                        \
  }                                                                \
  res[me] = done;                                                  \
  res[2 + me] = timed_out;

// Two work-groups of one work-item each; they run on two compute units where the device
// has them free (OpenCL cannot place them). The flag location starts `base` words into the
// buffer: flag[0] is the flag, flag[32] (its own 128-byte line) the abort word; both start
// at 0.
__kernel void at_pingpong_global(__global volatile int* flags, ulong base, __global uint* res,
                                 uint rounds, uint spin_limit) {
  if (get_local_id(0) != 0) return;
  __global volatile int* flag = flags + base;
  const uint me = get_group_id(0);
  PLAY(flag, flag + 32)
}

// Two work-items of one work-group, 64 apart (different wavefronts / warps on every GPU);
// the flag lives in local memory and is copied to res[4] at the end.
__kernel void at_pingpong_local(__global uint* res, uint rounds, uint spin_limit) {
  __local volatile int cell[2];
  const uint t = get_local_id(0);
  if (t == 0) {
    cell[0] = 0;
    cell[1] = 0;
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  if (t == 0 || t == 64) {
    const uint me = t / 64;
    PLAY(cell, cell + 1)
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  if (t == 0) res[4] = (uint)cell[0];
}

#else  // GD_CL2_ATOMICS

// A relaxed add of 1 at work-group scope on a global int: coherent within the work-group only,
// as CUDA's atom.relaxed.cta.global (its figure's .cta); memory_scope_work_group is in every
// OpenCL C 2.0 and 3.0 compiler.
__kernel void at_global_add_cta(__global volatile atomic_int* target, ulong base,
                                uint contention, ulong iterations, __global uint* sink,
                                uint place) {
  const ulong g = get_global_id(0);
  __global volatile atomic_int* p =
      target + base + global_word(contention, g, get_group_id(0), get_local_size(0));
  uint acc = 0;
#define CTA_STEP(k) \
  acc += (uint)atomic_fetch_add_explicit(p, 1, memory_order_relaxed, memory_scope_work_group);
  UNROLLED_8(iterations, CTA_STEP)
  sink[SINK_INDEX(g)] = acc;
}

// cl_ext_float_atomics: relaxed device-scope adds of 1.0 (device scope is optional in 3.0).
#if __OPENCL_C_VERSION__ == 200 || defined(__opencl_c_atomic_scope_device)
#define GD_DEVICE_SCOPE 1
#endif

#define FADD_GLOBAL(name, T)                                                             \
  __kernel void name(__global volatile T* target, ulong base, uint contention,           \
                     ulong iterations, __global uint* sink, uint place) {                \
    const ulong g = get_global_id(0);                                                    \
    __global volatile T* p =                                                             \
        target + base + global_word(contention, g, get_group_id(0), get_local_size(0));  \
    uint acc = 0;                                                                        \
    UNROLLED_8(iterations, FADD_STEP_##T)                                                \
    sink[SINK_INDEX(g)] = acc;                                                           \
  }
#define FADD_STEP_atomic_float(k) \
  acc += (uint)atomic_fetch_add_explicit(p, 1.0f, memory_order_relaxed, memory_scope_device);
#define FADD_STEP_atomic_double(k) \
  acc += (uint)atomic_fetch_add_explicit(p, 1.0, memory_order_relaxed, memory_scope_device);

#if defined(__opencl_c_ext_fp32_global_atomic_add) && defined(GD_DEVICE_SCOPE)
FADD_GLOBAL(at_global_add_f32, atomic_float)
#endif
#if defined(__opencl_c_ext_fp64_global_atomic_add) && defined(cl_khr_fp64) && \
    defined(GD_DEVICE_SCOPE)
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
FADD_GLOBAL(at_global_add_f64, atomic_double)
#endif

#ifdef __opencl_c_ext_fp32_local_atomic_add
// Local memory, as at_local_add: the group's array from 0, copied out afterwards.
__kernel void at_local_add_f32(__global float* out, uint contention, uint ways,
                               ulong iterations, uint words_per_group, __global uint* sink,
                               __local volatile atomic_float* arr) {
  const uint t = get_local_id(0), n = get_local_size(0);
  __local float* plain = (__local float*)arr;
  for (uint w = t; w < words_per_group; w += n) plain[w] = 0.0f;
  barrier(CLK_LOCAL_MEM_FENCE);
  __local volatile atomic_float* p = arr + local_word(contention, ways, t);
  uint acc = 0;
#define LFADD_STEP(k) \
  acc += (uint)atomic_fetch_add_explicit(p, 1.0f, memory_order_relaxed, memory_scope_work_group);
  UNROLLED_8(iterations, LFADD_STEP)
  barrier(CLK_LOCAL_MEM_FENCE);
  for (uint w = t; w < words_per_group; w += n) out[get_group_id(0) * words_per_group + w] = plain[w];
  sink[get_global_id(0)] = acc;
}
#endif

#endif  // GD_CL2_ATOMICS
