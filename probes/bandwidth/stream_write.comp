#version 450
// Pass p stores word i = i + p (gd::stream_written_checksum), so the host can tell a lost
// store from a made one by summing the buffer afterwards.
#extension GL_GOOGLE_include_directive : require
#include "stream_common.glsl"

layout(std430, set = 0, binding = 0) restrict writeonly buffer Destination { uvec4 destination[]; };

void main() {
  const uint start = first_element();
  const uint step = layout_.groups * GD_CHUNK;
  GD_FOR_EACH_PASS(p) {
    uint e = start;
    for (uint j = 0; j < layout_.chunks_per_group; ++j, e += step)
      for (int u = 0; u < GD_UNROLL; ++u) {
        const uint element = e + u * GD_WG;
        const uint w = element * 4 + p;
        destination[element] = uvec4(w, w + 1, w + 2, w + 3);
      }
  }
}
