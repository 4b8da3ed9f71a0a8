// probes/bandwidth/bandwidth.cl itself (build with -I probes/bandwidth), then the variants
// measured against it.
#include "bandwidth.cl"

// --- evidence variants (results/NOTES.md, issue 11): CPU layout only ---
#ifdef GD_CPU_LANES
// The CPU bw_read with a uniform inner loop bound (0 .. n): PoCL adds implicit barriers.
kernel __attribute__((reqd_work_group_size(GD_WG, 1, 1))) void bw_read_uni(
    global const uint4* restrict buf, ulong chunks, ulong groups, ulong cpb, ulong passes,
    global uint* sum) {
#ifdef GD_CPU_LANES
  const ulong first = cpu_first(chunks, groups, cpb), end = first + cpb * GD_UNROLL;
  uint4 acc = 0;
  for (ulong p = 0; p < passes; ++p) {
    for (ulong i = 0; i < cpb * GD_UNROLL; ++i) acc += buf[first + i];
    barrier(CLK_GLOBAL_MEM_FENCE);
  }
  atomic_add(sum, acc.x + acc.y + acc.z + acc.w);  // one per item: no reduction (above)
#else
  local uint scratch[GD_WG];
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
  add_sum(sum, acc, scratch);
#endif
}
// The CPU bw_read with the local-memory reduction instead of per-item atomics.
kernel __attribute__((reqd_work_group_size(GD_WG, 1, 1))) void bw_read_red(
    global const uint4* restrict buf, ulong chunks, ulong groups, ulong cpb, ulong passes,
    global uint* sum) {
#ifdef GD_CPU_LANES
  const ulong first = cpu_first(chunks, groups, cpb), end = first + cpb * GD_UNROLL;
  uint4 acc = 0;
  for (ulong p = 0; p < passes; ++p) {
    for (ulong i = first; i < end; ++i) acc += buf[i];
    barrier(CLK_GLOBAL_MEM_FENCE);
  }
  local uint scratch[GD_WG];
  add_sum(sum, acc.x + acc.y + acc.z + acc.w, scratch);
#else
  local uint scratch[GD_WG];
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
  add_sum(sum, acc, scratch);
#endif
}
// Copy with non-temporal stores (clang builtin; PoCL only).
kernel __attribute__((reqd_work_group_size(GD_WG, 1, 1))) void c_copy_nt(
    global const uint4* restrict src, global uint4* restrict dst, ulong chunks, ulong groups,
    ulong cpb, ulong passes) {
  const ulong first = cpu_first(chunks, groups, cpb), n = cpb * GD_UNROLL;
  for (ulong p = 0; p < passes; ++p) {
    const uint pp = (uint)p;
    for (ulong i = 0; i < n; ++i) __builtin_nontemporal_store(src[first + i] + (uint4)(pp), &dst[first + i]);
  }
}
// Minimal standalone read: work-item g sums its contiguous 1/global of the buffer as uint16.
kernel void s_read(global const uint16* restrict src, global uint* dst, ulong bytes, global uint* sum) {
  const ulong n = bytes / 64 / get_global_size(0), first = get_global_id(0) * n;
  uint16 acc = 0;
  for (ulong i = 0; i < n; ++i) acc += src[first + i];
  uint8 a8 = acc.lo + acc.hi; uint4 a4 = a8.lo + a8.hi;
  atomic_add(sum, a4.x + a4.y + a4.z + a4.w);
}
#endif
