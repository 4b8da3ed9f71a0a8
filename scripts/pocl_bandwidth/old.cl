// The bandwidth.cl before the change (commit 352fb17; build with -I on the folder holding it,
// see README.md), then bw_read_nobar: the same read without the work-group reduction.
#include "old_bandwidth.cl"

kernel __attribute__((reqd_work_group_size(GD_WG, 1, 1))) void bw_read_nobar(
    global const uint4* restrict buf, ulong chunks, ulong groups, ulong cpb, ulong passes,
    global uint* sum) {
  uint acc = 0;
  const ulong start = first_chunk(chunks, groups) * GD_CHUNK + GD_LANE(get_local_id(0));
  const ulong step = groups * GD_CHUNK;
  for (ulong p = 0; p < passes; ++p) {
    ulong e = start;
    for (ulong j = 0; j < cpb; ++j, e += step) {
      uint4 v[GD_UNROLL];
      for (int u = 0; u < GD_UNROLL; ++u) v[u] = buf[e + GD_VEC(u)];
      for (int u = 0; u < GD_UNROLL; ++u) acc += v[u].x + v[u].y + v[u].z + v[u].w;
    }
  }
  atomic_add(sum, acc);
}

