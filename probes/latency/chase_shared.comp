#version 450
// Pointer chase through workgroup (shared) memory. The workgroup copies the chain (kWords
// uints, a specialization constant, so the array has the chain's size) from a storage
// buffer into shared memory, then invocation 0 walks it. The copy is inside the timed
// dispatch; the host cancels it by taking the difference of two dispatches of N and 2N hops.
//
// The chain holds element indices, so a hop scales the index to a byte address before the
// load, where CUDA's chase loads from the address it holds (LDS [R]). GLSL cannot say
// otherwise: workgroup memory is reached only through arrays indexed by element (no pointer
// to it, no byte offset; buffer references are for device memory), so the scaling stays in
// the SPIR-V, and whether it costs an instruction per hop is the driver's compiler's choice.
#extension GL_GOOGLE_include_directive : require
#include "chase_common.glsl"

layout(local_size_x = 64) in;
layout(constant_id = 0) const uint kWords = 1;
layout(std430, set = 0, binding = 0) readonly buffer Chain { uint words[]; } chain;

shared uint chain_copy[kWords];

void main() {
  for (uint i = gl_LocalInvocationID.x; i < kWords; i += gl_WorkGroupSize.x)
    chain_copy[i] = chain.words[i];
  barrier();
  if (gl_LocalInvocationID.x != 0) return;
  uint idx = params.start;
  const uvec2 before = gd_clock();
  GD_WALK(idx, chain_copy[idx]);
  gd_store_result(idx, before);
}
