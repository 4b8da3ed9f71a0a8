#version 450
// The memory probe's chase (probes/memory/vulkan.cpp): one invocation of each subgroup-sized
// slice of the workgroup (a "warp") walks its own chain; the others only take part in the
// barriers, which start every timed repeat with all chains live (memory.hpp's MemChaseRequest).
//
// Chain layout (written by the host): line i lies at element i * stride / 4; its first uint
// holds the element index of the next line, so a hop is idx = LOAD(idx). The walk starts at
// state.pos[w] and leaves the element reached there, which the host checks against its own
// walk of the chain.
//
// One module per load (GD_LOAD_*), each built with the shader clock (GD_CLOCK) and without:
//   CA       a plain storage-buffer load (the L1 path where the device caches global loads)
//   CG       a `coherent` storage-buffer load: device-scope coherence between workgroups, which
//            a cache private to an SM / CU cannot give (NVIDIA's L1 and AMD's L0/L1 are not
//            kept coherent), so the driver serves it from L2, as CUDA's ld.global.cg
//   UNIFORM  a uniform buffer (constant caches), std140: uvec4s, the component picked; with
//            GD_FLAT (uniformBufferStandardLayout), std430: a plain uint array
//   TEXEL    a uniform texel buffer of R32_UINT (the texture path)
#extension GL_GOOGLE_include_directive : require
#include "../latency/chase_walk.glsl"

// Invocations per walker: the device's subgroup size (a smaller real subgroup still puts
// each walker in a subgroup of its own).
layout(constant_id = 0) const uint kSubgroup = 32;
layout(local_size_x_id = 1) in;

layout(push_constant) uniform Params {
  uint warmup;          // hops before the timed repeats
  uint hops;            // per timed repeat
  uint repeats;
  uint prefetch_words;  // > 0: walker 0's subgroup first reads every 8th word below it (L2)
} params;

#if defined(GD_LOAD_CA)
layout(std430, set = 0, binding = 0) readonly buffer Chain { uint words[]; } chain;
#define GD_LOAD(i) chain.words[i]
#elif defined(GD_LOAD_CG)
layout(std430, set = 0, binding = 0) coherent readonly buffer Chain { uint words[]; } chain;
#define GD_LOAD(i) chain.words[i]
#elif defined(GD_LOAD_UNIFORM) && defined(GD_FLAT)
// Where the device has uniformBufferStandardLayout: a plain uint array (std430; the GLSL
// extension only admits the layout), no component select per hop. 16384 x 4 bytes = 64 KiB.
#extension GL_EXT_scalar_block_layout : require
layout(std430, set = 0, binding = 0) uniform Chain { uint words[16384]; } chain;
#define GD_LOAD(i) chain.words[i]
#elif defined(GD_LOAD_UNIFORM)
// 4096 x 16 bytes = 64 KiB; the host binds at most maxUniformBufferRange and never reads
// past the chain.
layout(std140, set = 0, binding = 0) uniform Chain { uvec4 vecs[4096]; } chain;
#define GD_LOAD(i) chain.vecs[(i) >> 2][(i) & 3u]
#elif defined(GD_LOAD_TEXEL)
layout(set = 0, binding = 0) uniform usamplerBuffer chain;
#define GD_LOAD(i) texelFetch(chain, int(i)).x
#else
#error "one GD_LOAD_* must be defined"
#endif

// pos[w]: where walker w starts, then where it ended; pos[walkers + lane]: the prefetch's
// sum over each invocation's loads.
layout(std430, set = 0, binding = 1) buffer State { uint pos[]; } state;
// Per walker: [0] its whole run's first and last clock, then one (before, after) per repeat.
layout(std430, set = 0, binding = 2) writeonly buffer Clocks { uvec4 t[]; } clocks;
// The chain's buffer again, read through L2 only (a coherent load) by the prefetch.
layout(std430, set = 0, binding = 3) coherent readonly buffer Whole { uint words[]; } whole;

void main() {
  const uint lane = gl_LocalInvocationID.x % kSubgroup;
  const uint w = gl_LocalInvocationID.x / kSubgroup;
  const uint walkers = gl_WorkGroupSize.x / kSubgroup;
  const bool walker = lane == 0u;
  const uvec2 start = gd_clock();
  if (params.prefetch_words > 0u && w == 0u) {
    // One load per 32-byte sector, the subgroup's invocations side by side; each one's sum
    // is stored and the host checks their total, so no load is dropped. No atomic: the state
    // may live in host memory, where a device atomic is not a given.
    uint sum = 0u;
    for (uint i = lane * 8u; i < params.prefetch_words; i += kSubgroup * 8u) sum += whole.words[i];
    state.pos[walkers + lane] = sum;
  }
  barrier();
  uint idx = 0u;
  if (walker) {
    idx = state.pos[w];
    GD_WALK_N(idx, GD_LOAD(idx), params.warmup);
  }
  barrier();
  for (uint r = 0u; r < params.repeats; ++r) {
    if (walker) {
      const uvec2 before = gd_clock();
      GD_WALK_N(idx, GD_LOAD(idx), params.hops);
      // The clock is read after `idx` is stored, so the reading cannot move above the loop.
      state.pos[w] = idx;
      const uvec2 after = gd_clock();
      clocks.t[w * (params.repeats + 1u) + 1u + r] = uvec4(before, after);
    }
    barrier();
  }
  if (walker) {
    state.pos[w] = idx;
    clocks.t[w * (params.repeats + 1u)] = uvec4(start, gd_clock());
  }
}
