#version 450
// Pointer chase through a uniform texel buffer (R32_UINT), the image path: the loads go
// through the texture units where the device has them (see chase_global.comp for the
// chain's layout).
#extension GL_GOOGLE_include_directive : require
#include "chase_common.glsl"

layout(local_size_x = 1) in;
layout(set = 0, binding = 0) uniform usamplerBuffer chain;

void main() {
  uint idx = params.start;
  const uvec2 before = gd_clock();
  GD_WALK(idx, texelFetch(chain, int(idx)).x);
  gd_store_result(idx, before);
}
