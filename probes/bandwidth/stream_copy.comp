#version 450
// Copies source to destination, adding the pass number so that every pass stores something
// new (destination word i = i + passes - 1 at the end: gd::stream_written_checksum).
#extension GL_GOOGLE_include_directive : require
#include "stream_common.glsl"

layout(std430, set = 0, binding = 0) restrict readonly buffer Source { uvec4 source[]; };
layout(std430, set = 0, binding = 1) restrict writeonly buffer Destination { uvec4 destination[]; };

void main() {
  const uint start = first_element();
  const uint step = layout_.groups * GD_CHUNK;
  GD_FOR_EACH_PASS(p) {
    uint e = start;
    for (uint j = 0; j < layout_.chunks_per_group; ++j, e += step) {
      uvec4 v[GD_UNROLL];
      for (int u = 0; u < GD_UNROLL; ++u) v[u] = source[e + u * GD_WG];
      for (int u = 0; u < GD_UNROLL; ++u) destination[e + u * GD_WG] = v[u] + uvec4(p);
    }
  }
}
