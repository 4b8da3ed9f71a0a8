// What the stream shaders share: the layout of gd::stream_layout (gpudissect/bandwidth.hpp)
// and the workgroup's sum. A workgroup ("block") of GD_WG invocations moves GD_UNROLL uvec4s
// each per step: vector u of invocation l is element l + u * GD_WG, so one step's loads are
// contiguous (coalesced on a GPU; on lavapipe the invocations of a subgroup are SIMD lanes,
// which want the same layout).
#define GD_WG 256
#define GD_UNROLL 4
#define GD_CHUNK (GD_WG * GD_UNROLL)

layout(local_size_x = GD_WG) in;

layout(push_constant) uniform Layout {
  uint chunks;
  uint groups;
  uint chunks_per_group;
  uint first_pass;
  uint pass_count;
} layout_;

// With fewer chunks than groups each group re-reads chunk g mod chunks, else group g moves
// chunks g, g + groups, ...
uint first_element() {
  const uint g = gl_WorkGroupID.x;
  const uint chunk = layout_.chunks <= layout_.groups ? g % layout_.chunks : g;
  return chunk * GD_CHUNK + gl_LocalInvocationID.x;
}

// The passes first_pass .. first_pass + pass_count - 1. The host splits a launch into several
// dispatches only on llvmpipe (lavapipe), which ends a shader's loops after 65535 iterations
// in all; elsewhere one dispatch makes every pass.
#define GD_FOR_EACH_PASS(p) \
  for (uint p = layout_.first_pass; p < layout_.first_pass + layout_.pass_count; ++p)

shared uint partial_sums[GD_WG];

// One atomic per workgroup: the invocations' sums are reduced in shared memory first.
#define GD_ADD_TO_SUM(sum_word, value)                             \
  {                                                                \
    const uint l = gl_LocalInvocationID.x;                         \
    partial_sums[l] = (value);                                     \
    barrier();                                                     \
    for (uint s = GD_WG / 2; s > 0; s >>= 1) {                     \
      if (l < s) partial_sums[l] += partial_sums[l + s];           \
      barrier();                                                   \
    }                                                              \
    if (l == 0) atomicAdd(sum_word, partial_sums[0]);              \
  }
