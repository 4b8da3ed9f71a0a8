// The walk and the clock every chase shader shares (the latency probe's chase_common.glsl and
// the memory probe's mem_chase.comp): a dependent load per hop, timed by the shader clock.
#ifdef GD_CLOCK
#extension GL_ARB_shader_clock : require
#endif

uvec2 gd_clock() {
#ifdef GD_CLOCK
  return clock2x32ARB();
#else
  return uvec2(0);
#endif
}

// Walks `n` hops with idx = LOAD(idx), 32 hops per loop iteration. llvmpipe (lavapipe)
// ends a shader's loops after 65535 iterations in all, to guard against endless ones (a
// plain loop walked too few hops there; the end-line check caught it), so the host gives a
// dispatch at most 2^20 hops there: 32768 iterations.
#define GD_HOP4(idx, LOAD) idx = LOAD; idx = LOAD; idx = LOAD; idx = LOAD;
#define GD_HOP32(idx, LOAD)                                               \
  GD_HOP4(idx, LOAD) GD_HOP4(idx, LOAD) GD_HOP4(idx, LOAD) GD_HOP4(idx, LOAD) \
  GD_HOP4(idx, LOAD) GD_HOP4(idx, LOAD) GD_HOP4(idx, LOAD) GD_HOP4(idx, LOAD)
#define GD_WALK_N(idx, LOAD, n)                                  \
  {                                                              \
    for (uint h = 0; h < (n) / 32u; ++h) { GD_HOP32(idx, LOAD) } \
    for (uint h = 0; h < (n) % 32u; ++h) idx = LOAD;             \
  }
