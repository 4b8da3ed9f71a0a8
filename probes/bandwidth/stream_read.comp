#version 450
// Reads every element of the layout `passes` times and sums the words, so no load can be
// dropped; the host checks the sum against gd::stream_read_checksum.
#extension GL_GOOGLE_include_directive : require
#include "stream_common.glsl"

// Built twice: plain, and with GD_COHERENT as the L2 read (CUDA's ld.global.cg curve,
// read_l2). A coherent buffer promises device-scope coherence between workgroups, which an
// SM-private L1 cannot keep, so a GPU driver serves its loads from L2 (the latency probe's l2
// path rests on the same fact). A CPU's caches serve them at every level: the probe does not
// sweep that build there.
#ifdef GD_COHERENT
layout(std430, set = 0, binding = 0) coherent readonly buffer Source { uvec4 source[]; };
#else
layout(std430, set = 0, binding = 0) readonly buffer Source { uvec4 source[]; };
#endif
layout(std430, set = 0, binding = 1) buffer Sum { uint sum; };

void main() {
  uint acc = 0;
  const uint start = first_element();
  const uint step = layout_.groups * GD_CHUNK;
  GD_FOR_EACH_PASS(p) {
    uint e = start;
    for (uint j = 0; j < layout_.chunks_per_group; ++j, e += step) {
      uvec4 v[GD_UNROLL];
      for (int u = 0; u < GD_UNROLL; ++u) v[u] = source[e + u * GD_WG];
      for (int u = 0; u < GD_UNROLL; ++u) acc += v[u].x + v[u].y + v[u].z + v[u].w;
    }
  }
  GD_ADD_TO_SUM(sum, acc);
}
