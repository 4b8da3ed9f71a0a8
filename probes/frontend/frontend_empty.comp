#version 450
// The front end's empty dispatch: one invocation counts the dispatch, so that it does some
// work (no driver can drop it) and the host can tell that every dispatch it sent ran.
layout(local_size_x = 1) in;
layout(std430, set = 0, binding = 0) buffer Count { uint dispatches; };

void main() {
  if (gl_GlobalInvocationID.x == 0) atomicAdd(dispatches, 1u);
}
