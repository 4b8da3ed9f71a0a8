#version 450
// A non-persistent ("flat") grid, gd::stream_layout_flat, as CUDA's bw_write_flat_kernel with
// one vector per thread: workgroup i stores chunk i mod chunks (a 4 KiB chunk, one uvec4 per
// invocation) once and exits. The value does not depend on the pass (workgroups of different
// passes write the same chunk in no set order): word i = i (gd::stream_written_checksum of
// one pass).
#extension GL_GOOGLE_include_directive : require
#include "stream_common.glsl"

layout(std430, set = 0, binding = 0) restrict writeonly buffer Destination { uvec4 destination[]; };

void main() {
  const uint element = (gl_WorkGroupID.x % layout_.chunks) * GD_WG + gl_LocalInvocationID.x;
  const uint w = element * 4;
  destination[element] = uvec4(w, w + 1, w + 2, w + 3);
}
