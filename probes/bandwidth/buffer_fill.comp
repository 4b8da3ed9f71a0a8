#version 450
// Word i = i: the source of every stream (gd::stream_read_checksum assumes it).
layout(local_size_x = 256) in;
layout(std430, set = 0, binding = 0) writeonly buffer Words { uint words[]; };
layout(push_constant) uniform Params { uint count; } params;

void main() {
  const uint stride = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
  for (uint i = gl_GlobalInvocationID.x; i < params.count; i += stride) words[i] = i;
}
