#version 450
// CAS ping-pong (the OpenCL backend's, probes/atomics/atomics.cl): player `me` (0 = A,
// 1 = B) turns 2k + me into 2k + me + 1, `rounds` times. GD_SHARED: two invocations 64 apart
// of one workgroup of 128, on a workgroup-memory flag; else two workgroups of one invocation,
// on a storage-buffer flag. Every wait is bounded (a partner that never answers ends the game
// with a timeout, never a hang): `spin_limit` attempts per hand-over and `budget` loop
// iterations in all, which keeps the shader under llvmpipe's limit of 65535 (the host sets
// it; 0xffffffff elsewhere). res: [me] hand-overs made, [2 + me] timeouts, [4] the final
// flag (shared).
layout(local_size_x_id = 0) in;

layout(push_constant) uniform Push {
  uint rounds;
  uint spin_limit;
  uint budget;
} pc;

// flag[0] the flag, flag[32] (its own 128-byte line) the abort word; both start at 0.
layout(std430, set = 0, binding = 0) coherent volatile buffer Flag { int flag[]; };
layout(std430, set = 0, binding = 1) buffer Res { uint res[]; };

#ifdef GD_SHARED
shared int cell[2];
#define FLAG cell[0]
#define ABORT cell[1]
#else
#define FLAG flag[0]
#define ABORT flag[32]
#endif

void play(const uint me) {
  uint done = 0u, timed_out = 0u, spent = 0u;
  for (uint k = 0u; k < pc.rounds && timed_out == 0u; ++k) {
    const int want = int(2u * k + me);
    uint spins = 0u;
    ++spent;
    while (atomicCompSwap(FLAG, want, want + 1) != want) {
      if (++spins > pc.spin_limit || ++spent > pc.budget || atomicAdd(ABORT, 0) != 0) {
        timed_out = 1u;
        atomicExchange(ABORT, 1);
        break;
      }
    }
    if (timed_out == 0u) ++done;
  }
  res[me] = done;
  res[2u + me] = timed_out;
}

void main() {
#ifdef GD_SHARED
  const uint t = gl_LocalInvocationID.x;
  if (t == 0u) {
    cell[0] = 0;
    cell[1] = 0;
  }
  barrier();
  if (t == 0u || t == 64u) play(t / 64u);
  barrier();
  if (t == 0u) res[4] = uint(cell[0]);
#else
  if (gl_LocalInvocationID.x == 0u) play(gl_WorkGroupID.x);
#endif
}
