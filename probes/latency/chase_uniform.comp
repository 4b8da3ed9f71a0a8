#version 450
// Pointer chase through a uniform buffer: the constant path (see chase_global.comp for the
// chain's layout). std140 gives arrays a 16-byte element stride, so the chain is read as
// uvec4s and the element's component picked from it.
#extension GL_GOOGLE_include_directive : require
#include "chase_common.glsl"

layout(local_size_x = 1) in;
// 4096 x 16 bytes = 64 KiB, the largest maxUniformBufferRange seen on desktop drivers; the
// host binds at most the device's maxUniformBufferRange and never reads past the chain.
layout(std140, set = 0, binding = 0) uniform Chain { uvec4 vecs[4096]; } chain;

void main() {
  uint idx = params.start;
  const uvec2 before = gd_clock();
  GD_WALK(idx, chain.vecs[idx >> 2][idx & 3u]);
  gd_store_result(idx, before);
}
