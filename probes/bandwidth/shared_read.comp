#version 450
// Workgroup (shared) memory read at a stride, as gd::shared_element lays it out: invocation
// t's k-th load of an iteration is element (t * stride + k * 33) mod elements, with the top
// element bit flipped on odd iterations. `zero` (0 at run time) is folded into every index
// through the running sum, so a compiler cannot merge re-reads of the unchanged array.
// GD_WIDTH picks the element: 4, 8 or 16 bytes (uint, uvec2, uvec4).
#extension GL_GOOGLE_include_directive : require
#include "stream_common.glsl"

#if GD_WIDTH == 4
#define ELEMENT uint
#define ELEMENT_SUM(v) (v)
#elif GD_WIDTH == 8
#define ELEMENT uvec2
#define ELEMENT_SUM(v) ((v).x + (v).y)
#else
#define ELEMENT uvec4
#define ELEMENT_SUM(v) ((v).x + (v).y + (v).z + (v).w)
#endif
#define GD_SHARED_BYTES 16384
#define WORDS_PER_ELEMENT (GD_WIDTH / 4)

layout(std430, set = 0, binding = 0) buffer Sum { uint sum; };

shared ELEMENT elements_[GD_SHARED_BYTES / GD_WIDTH];

// gd::shared_word, the array's fill.
uint shared_word(uint i) {
  uint x = i * 0x9E3779B1u + 0x7F4A7C15u;
  x ^= x >> 16;
  x *= 0x85EBCA6Bu;
  x ^= x >> 13;
  return x;
}

void main() {
  // Reuses the stream push constants: chunks = elements, groups = stride,
  // chunks_per_group = iterations, first_pass = zero.
  const uint elements = layout_.chunks, stride = layout_.groups;
  const uint iterations = layout_.chunks_per_group, zero = layout_.first_pass;
  const uint t = gl_LocalInvocationID.x;
  for (uint e = t; e < elements; e += GD_WG) {
    ELEMENT v;
#if GD_WIDTH == 4
    v = shared_word(e);
#elif GD_WIDTH == 8
    v = uvec2(shared_word(e * 2), shared_word(e * 2 + 1));
#else
    v = uvec4(shared_word(e * 4), shared_word(e * 4 + 1), shared_word(e * 4 + 2),
              shared_word(e * 4 + 3));
#endif
    elements_[e] = v;
  }
  barrier();
  uint index[8];
  for (uint k = 0; k < 8; ++k) index[k] = (t * stride + k * 33u) & (elements - 1);
  uint acc = 0, dz = 0;
  for (uint it = 0; it < iterations; ++it) {
    const uint flip = (it & 1u) != 0 ? elements / 2 : 0;
    for (uint k = 0; k < 8; ++k) acc += ELEMENT_SUM(elements_[(index[k] ^ flip) + dz]);
    dz = acc & zero;
  }
  GD_ADD_TO_SUM(sum, acc);
}
