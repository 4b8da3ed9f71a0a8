#version 450
// Writes the memory probe's chain on the device (a chain of many GiB has no host image):
// line i's first word, at element i * words_per_line, gets the element of line next[i].
layout(local_size_x = 256) in;
layout(push_constant) uniform Params {
  uint lines;
  uint words_per_line;
} params;
layout(std430, set = 0, binding = 0) readonly buffer Next { uint next[]; };
layout(std430, set = 0, binding = 1) writeonly buffer Chain { uint words[]; };

void main() {
  const uint stride = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
  for (uint i = gl_GlobalInvocationID.x; i < params.lines; i += stride)
    words[i * params.words_per_line] = next[i] * params.words_per_line;
}
