// What every chase shader shares: the push constants, the result block and the clock.
#include "chase_walk.glsl"

layout(push_constant) uniform Params {
  uint start;  // element index (or byte offset) the walk starts at
  uint hops;
  uvec2 start_address;  // the address chases' start (GD_ADDRESS): the line's device address
} params;

// end: the element reached (the address chases: the address reached, its low word in end and
// its high word in pad). clock_before/clock_after: the shader clock around the loop
// (both zero when built without GD_CLOCK); the host takes the 64-bit difference.
layout(std430, set = 0, binding = 1) writeonly buffer Result {
  uint end;
  uint pad;
  uvec2 clock_before;
  uvec2 clock_after;
} result;

#define GD_WALK(idx, LOAD) GD_WALK_N(idx, LOAD, params.hops)

// The clock is read after `idx` is known, so the second reading cannot move above the loop.
void gd_store_result(uint idx, uvec2 before) {
  result.end = idx;
  const uvec2 after = gd_clock();
  result.clock_before = before;
  result.clock_after = after;
}
