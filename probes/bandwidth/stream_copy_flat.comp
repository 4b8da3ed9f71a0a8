#version 450
// A non-persistent ("flat") grid, gd::stream_layout_flat, as CUDA's bw_copy_flat_kernel with
// one vector per thread: workgroup i copies chunk i mod chunks (a 4 KiB chunk, one uvec4 per
// invocation) once and exits; the destination ends equal to the source (word i = i).
#extension GL_GOOGLE_include_directive : require
#include "stream_common.glsl"

layout(std430, set = 0, binding = 0) restrict readonly buffer Source { uvec4 source[]; };
layout(std430, set = 0, binding = 1) restrict writeonly buffer Destination { uvec4 destination[]; };

void main() {
  const uint element = (gl_WorkGroupID.x % layout_.chunks) * GD_WG + gl_LocalInvocationID.x;
  destination[element] = source[element];
}
