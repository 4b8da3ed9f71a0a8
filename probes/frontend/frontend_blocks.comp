#version 450
// The front end's block records (dispatch and occupancy), as CUDA's kernels write them: per
// workgroup {SM id, warp slot}, its start and end on the device clock and a magic word, as
// pairs of 32-bit words (little-endian 64-bit values on the host). Every invocation spins
// until spin_ticks of the device clock have passed since its workgroup's start (0: none).
// Needs VK_NV_shader_sm_builtins and VK_KHR_shader_clock's shaderDeviceClock.
#extension GL_NV_shader_sm_builtins : require
#extension GL_EXT_shader_realtime_clock : require

layout(local_size_x_id = 0) in;
// Workgroup memory the launch asks for, in words: it limits residency whether touched or not,
// as CUDA's dynamic shared memory does; touched only when spin_ticks is ~0u (never), so that
// no compiler drops it.
layout(constant_id = 1) const uint kSharedWords = 1;
layout(std430, set = 0, binding = 0) buffer Records { uvec2 rec[]; };
layout(push_constant) uniform Push { uint spin_ticks; } pc;

shared uvec2 start_at;
shared uint scratch[kSharedWords];

void main() {
  const uint g = gl_WorkGroupID.x;
  if (gl_LocalInvocationIndex == 0) {
    const uvec2 t = clockRealtime2x32EXT();
    start_at = t;
    rec[4 * g] = uvec2(gl_SMIDNV, gl_WarpIDNV);
    rec[4 * g + 1] = t;
  }
  barrier();
  // The low words' difference wraps correctly for spins under 2^32 ticks.
  const uint s = start_at.x;
  uint now = s;
  while (now - s < pc.spin_ticks) now = clockRealtime2x32EXT().x;
  if (pc.spin_ticks == 0xFFFFFFFFu) scratch[gl_LocalInvocationIndex % kSharedWords] = now;
  barrier();
  if (gl_LocalInvocationIndex == 0) {
    rec[4 * g + 2] = clockRealtime2x32EXT();
    rec[4 * g + 3] = uvec2(0x600DB10Cu, 0u);  // kOccupancyMagic
  }
}
