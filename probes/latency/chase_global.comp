#version 450
// Pointer chase through a storage buffer (the global path). One invocation walks the chain:
// every load depends on the one before it, so the time per hop is the load-to-use latency.
//
// Layout (written by the host): line i lies at byte offset i * stride. Built with GD_ADDRESS
// (VK_KHR_buffer_device_address), the line's first 8 bytes hold the device address of the
// next line, and a hop is one 64-bit load and nothing else (CUDA's LDG.E.64 [R]): the chain
// is a buffer_reference block whose member is the next block. Without it (a device without
// bufferDeviceAddress, or a stride below 8 bytes) the line's first uint holds the uint index
// of the next line, and a hop is idx = words[idx], an index scaled into an address per hop.
// The shader starts at `start` (or start_address), makes `hops` hops and stores what it
// reached, so the loads cannot be optimised away and the host checks where the walk ended.
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
#define GD_MEMORY coherent readonly
#else
#define GD_MEMORY readonly
#endif

#ifdef GD_ADDRESS
#extension GL_EXT_buffer_reference : require
#extension GL_EXT_buffer_reference_uvec2 : require
layout(buffer_reference) buffer Line;
layout(buffer_reference, std430, buffer_reference_align = 8) GD_MEMORY buffer Line {
  Line next;
};
// The chain's buffer is bound too (unused), so the pipelines of both chains share one layout.
layout(std430, set = 0, binding = 0) readonly buffer Chain { uint words[]; } chain;

void main() {
  Line p = Line(params.start_address);
  const uvec2 before = gd_clock();
  GD_WALK(p, p.next);
  const uvec2 reached = uvec2(p);
  result.pad = reached.y;
  gd_store_result(reached.x, before);
}
#else
layout(std430, set = 0, binding = 0) GD_MEMORY buffer Chain { uint words[]; } chain;

void main() {
  uint idx = params.start;
  const uvec2 before = gd_clock();
  GD_WALK(idx, chain.words[idx]);
  gd_store_result(idx, before);
}
#endif
