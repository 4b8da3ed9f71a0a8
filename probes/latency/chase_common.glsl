// What every chase shader shares: the push constants, the result block and the clock.
#ifdef GD_CLOCK
#extension GL_ARB_shader_clock : require
#endif

layout(push_constant) uniform Params {
  uint start;  // element index the walk starts at
  uint hops;
} params;

// end: the element reached. clock_before/clock_after: the shader clock around the loop
// (both zero when built without GD_CLOCK); the host takes the 64-bit difference.
layout(std430, set = 0, binding = 1) writeonly buffer Result {
  uint end;
  uint pad;
  uvec2 clock_before;
  uvec2 clock_after;
} result;

uvec2 gd_clock() {
#ifdef GD_CLOCK
  return clock2x32ARB();
#else
  return uvec2(0);
#endif
}

// Walks `hops` hops with idx = LOAD(idx), 32 hops per loop iteration. llvmpipe (lavapipe)
// ends a shader's loops after 65535 iterations in all, to guard against endless ones (a
// plain loop walked too few hops there; the end-line check caught it), so the host gives a
// dispatch at most 2^20 hops: 32768 iterations.
#define GD_HOP4(idx, LOAD) idx = LOAD; idx = LOAD; idx = LOAD; idx = LOAD;
#define GD_HOP32(idx, LOAD)                                               \
  GD_HOP4(idx, LOAD) GD_HOP4(idx, LOAD) GD_HOP4(idx, LOAD) GD_HOP4(idx, LOAD) \
  GD_HOP4(idx, LOAD) GD_HOP4(idx, LOAD) GD_HOP4(idx, LOAD) GD_HOP4(idx, LOAD)
#define GD_WALK(idx, LOAD)                                                  \
  {                                                                         \
    for (uint h = 0; h < params.hops / 32u; ++h) { GD_HOP32(idx, LOAD) }    \
    for (uint h = 0; h < params.hops % 32u; ++h) idx = LOAD;                \
  }

// The clock is read after `idx` is known, so the second reading cannot move above the loop.
void gd_store_result(uint idx, uvec2 before) {
  result.end = idx;
  const uvec2 after = gd_clock();
  result.clock_before = before;
  result.clock_after = after;
}
