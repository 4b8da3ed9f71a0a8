#version 450
// Pointer chase through a uniform buffer: the constant path (see chase_global.comp for the
// chain's layout). std140 gives arrays a 16-byte element stride, so the chain is read as
// uvec4s and the element's component picked from it: a dynamic component select in every
// hop. Built with GD_FLAT, for devices with uniformBufferStandardLayout or scalarBlockLayout,
// the block has std430 layout and the chain is a plain uint array, so a hop is one load at
// the index scaled to bytes. (GLSL indexes arrays by element: a byte offset cannot be the
// load's operand, so the scaling stays; the driver may fold it into the load's address.)
#extension GL_GOOGLE_include_directive : require
#include "chase_common.glsl"

layout(local_size_x = 1) in;
// 64 KiB, the largest maxUniformBufferRange seen on desktop drivers; the host binds at most
// the device's maxUniformBufferRange and never reads past the chain.
#ifdef GD_FLAT
// The GLSL extension only admits std430 on a uniform block; the module needs no feature
// beyond the uniform buffer layout the host checks (a uint array's std430 and scalar
// layouts are the same).
#extension GL_EXT_scalar_block_layout : require
layout(std430, set = 0, binding = 0) uniform Chain { uint words[16384]; } chain;
#define GD_LOAD(idx) chain.words[idx]
#else
layout(std140, set = 0, binding = 0) uniform Chain { uvec4 vecs[4096]; } chain;
#define GD_LOAD(idx) chain.vecs[idx >> 2][idx & 3u]
#endif

void main() {
  uint idx = params.start;
  const uvec2 before = gd_clock();
  GD_WALK(idx, GD_LOAD(idx));
  gd_store_result(idx, before);
}
