#version 450
// Ping-pong, as CUDA's (probes/atomics/cuda_pingpong.cuh): player `me` (0 = A, 1 = B) waits
// for the flag to hold 2k + me and makes it 2k + me + 1, `rounds` times. GD_MODE picks how:
//   0 CAS   the atomicCompSwap that turns want into want + 1 is both the wait and the hand-over
//   1 EXCH  wait by a relaxed atomicLoad, hand over by atomicExchange (which must return want)
//   2 RA    (storage buffer only) wait by an acquire atomicLoad, check the payload the partner
//           wrote before its release, write the next payload, hand over by a release
//           atomicStore (GL_KHR_memory_scope_semantics, Device scope)
// GD_SHARED: two invocations 64 apart of one workgroup of 128, on a workgroup-memory flag;
// else two workgroups of one invocation, on a storage-buffer flag. Every wait is bounded (a
// partner that never answers ends the game with a timeout, never a hang): `spin_limit`
// attempts per hand-over and `budget` loop iterations in all, which keeps the shader under
// llvmpipe's limit of 65535 (the host sets it; 0xffffffff elsewhere). `solo`: one invocation
// plays both sides in turn (no wait ever spins), so a CPU driver that cannot run two waiting
// players still runs every mode's code and the host checks what it left.
// res: [me] hand-overs made, [2 + me] timeouts, [4] the final flag (shared), [5] stale
// payloads (RA), [6..7] player A's shader clock ticks over its game (GD_CLOCK: the host
// takes the difference of a game of N and one of 2N round trips).
#extension GL_KHR_memory_scope_semantics : require
#ifdef GD_CLOCK
#extension GL_ARB_shader_clock : require
#endif
layout(local_size_x_id = 0) in;

#ifndef GD_MODE
#define GD_MODE 0
#endif

layout(push_constant) uniform Push {
  uint rounds;
  uint spin_limit;
  uint budget;
  uint solo;
  uint base;  // the flag location's first word (gd::kLocationStride apart, as CUDA's)
} pc;

// At the flag location (`base` words in): the flag, 32 words on the abort word, 64 on the
// payload (RA), each on its own 128-byte line; all start at 0.
layout(std430, set = 0, binding = 0) coherent volatile buffer Flag { int flag[]; };
layout(std430, set = 0, binding = 1) buffer Res { uint res[]; };

#ifdef GD_SHARED
shared int cell[2];
#define FLAG cell[0]
#define ABORT cell[1]
#define SCOPE gl_ScopeWorkgroup
#define STORAGE gl_StorageSemanticsShared
#else
#define FLAG flag[pc.base]
#define ABORT flag[pc.base + 32u]
#define SCOPE gl_ScopeDevice
#define STORAGE gl_StorageSemanticsBuffer
#endif
#define PAYLOAD flag[pc.base + 64u]

#if GD_MODE == 2
#define WAIT_LOAD() atomicLoad(FLAG, SCOPE, STORAGE, gl_SemanticsAcquire)
#else
#define WAIT_LOAD() atomicLoad(FLAG, SCOPE, STORAGE, gl_SemanticsRelaxed)
#endif

uvec2 gd_clock() {
#ifdef GD_CLOCK
  return clock2x32ARB();
#else
  return uvec2(0u);
#endif
}

// Waits for `want` and hands over to want + 1; false on a timeout (`spent` counts the loop
// iterations of the whole game, against the budget).
bool hand_over(const int want, inout uint spent, inout uint stale, inout uint lost) {
  uint spins = 0u;
  ++spent;
#if GD_MODE == 0
  while (atomicCompSwap(FLAG, want, want + 1) != want) {
#else
  while (WAIT_LOAD() != want) {
#endif
    if (++spins > pc.spin_limit || ++spent > pc.budget || atomicAdd(ABORT, 0) != 0) {
      atomicExchange(ABORT, 1);
      return false;
    }
  }
#if GD_MODE == 1
  if (atomicExchange(FLAG, want + 1) != want) ++lost;
#elif GD_MODE == 2
  if (PAYLOAD != want) ++stale;
  PAYLOAD = want + 1;
  atomicStore(FLAG, want + 1, SCOPE, STORAGE, gl_SemanticsRelease);
#endif
  return true;
}

// Player `me`'s game; with `solo`, this invocation makes both players' hand-overs in turn.
void play(const uint me) {
  uint done[2] = uint[2](0u, 0u), timed_out = 0u, spent = 0u, stale = 0u, lost = 0u;
  const uvec2 before = gd_clock();
  for (uint k = 0u; k < pc.rounds && timed_out == 0u; ++k)
    for (uint p = 0u; p < 2u && timed_out == 0u; ++p) {
      const uint who = pc.solo != 0u ? p : me;
      if (pc.solo == 0u && p != 0u) break;
      if (hand_over(int(2u * k + who), spent, stale, lost))
        ++done[who];
      else
        timed_out = 1u;
    }
  const uvec2 after = gd_clock();
  if (me == 0u) {
    // 64-bit difference from the two 32-bit halves.
    const uint lo = after.x - before.x;
    const uint hi = after.y - before.y - (after.x < before.x ? 1u : 0u);
    res[6] = lo;
    res[7] = hi;
  }
  // A lost exchange is a hand-over not made: the host's count check catches it.
  if (pc.solo != 0u) {
    res[0] = done[0] - min(done[0], lost);
    res[1] = done[1];
  } else {
    res[me] = done[me] - min(done[me], lost);
  }
  res[2u + me] = timed_out;
  if (stale != 0u) atomicAdd(res[5], stale);
}

void main() {
#ifdef GD_SHARED
  const uint t = gl_LocalInvocationID.x;
  if (t == 0u) {
    cell[0] = 0;
    cell[1] = 0;
  }
  barrier();
  if (t == 0u || (t == 64u && pc.solo == 0u)) play(t / 64u);
  barrier();
  if (t == 0u) res[4] = uint(cell[0]);
#else
  if (gl_LocalInvocationID.x == 0u && (gl_WorkGroupID.x == 0u || pc.solo == 0u))
    play(gl_WorkGroupID.x);
#endif
}
