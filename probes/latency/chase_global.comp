#version 450
// Pointer chase through a storage buffer (the global path). One invocation walks the chain:
// every load depends on the one before it, so the time per hop is the load-to-use latency.
//
// Layout (written by the host): line i lies at byte offset i * stride; its first uint holds
// the uint index of the next line, so a hop is idx = words[idx]. The shader starts at
// `start`, makes `hops` hops and stores the element reached, so the loads cannot be
// optimised away and the host checks where the walk ended.
//
// Built twice: with GD_CLOCK (VK_KHR_shader_clock: the loop is also timed in shader clock
// ticks) and without, for devices that lack the extension. With GD_COHERENT it is the l2
// path: a `coherent` buffer promises device-scope coherence between workgroups, which an
// SM-private L1 cannot keep, so a GPU driver serves its loads from L2 (as CUDA's
// ld.global.cg). A CPU driver keeps that promise with the host's coherent caches, L1
// included: the probe checks the path's first plateau against the global path's L1.
#extension GL_GOOGLE_include_directive : require
#include "chase_common.glsl"

layout(local_size_x = 1) in;
#ifdef GD_COHERENT
layout(std430, set = 0, binding = 0) coherent readonly buffer Chain { uint words[]; } chain;
#else
layout(std430, set = 0, binding = 0) readonly buffer Chain { uint words[]; } chain;
#endif

void main() {
  uint idx = params.start;
  const uvec2 before = gd_clock();
  GD_WALK(idx, chain.words[idx]);
  gd_store_result(idx, before);
}
