#version 450
// Reads every element of the layout `passes` times and sums the words, so no load can be
// dropped; the host checks the sum against gd::stream_read_checksum.
#extension GL_GOOGLE_include_directive : require
#include "stream_common.glsl"

layout(std430, set = 0, binding = 0) readonly buffer Source { uvec4 source[]; };
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
