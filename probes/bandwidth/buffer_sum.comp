#version 450
// The sum of a buffer's words (mod 2^32), read by the host to check what a write or copy
// left there. Trusted: it is not timed, and reads every element once.
#extension GL_GOOGLE_include_directive : require
#include "stream_common.glsl"

layout(std430, set = 0, binding = 0) readonly buffer Words { uvec4 vecs[]; };
layout(std430, set = 0, binding = 1) buffer Sum { uint sum; };

void main() {
  // layout_.chunks holds the number of uvec4s here.
  uint acc = 0;
  const uint stride = gl_NumWorkGroups.x * GD_WG;
  for (uint i = gl_GlobalInvocationID.x; i < layout_.chunks; i += stride) {
    const uvec4 v = vecs[i];
    acc += v.x + v.y + v.z + v.w;
  }
  GD_ADD_TO_SUM(sum, acc);
}
