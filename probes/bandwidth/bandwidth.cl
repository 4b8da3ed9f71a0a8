// Kernels of the bandwidth probe (OpenCL C 1.2). The layouts, byte counts and checksums
// are gpudissect/bandwidth.hpp's, as in the CUDA backend: block = work-group of GD_WG
// work-items, each moving GD_UNROLL 16-byte vectors per step.
#define GD_WG 256
#define GD_UNROLL 4
#define GD_CHUNK (GD_WG * GD_UNROLL)

// Which elements a work-item moves. On a GPU (the default), vector u of work-item l in a
// chunk is element l + u * GD_WG: a work-group's loads of one step are contiguous (coalesced),
// and group g moves chunks g, g + groups, ... (gd::stream_layout).
//
// GD_CPU_LANES (CPU devices such as PoCL) changes only the order, never the set of elements
// moved per pass, so the byte counts and checks (gpudissect/bandwidth.hpp) hold unchanged:
// group g moves the contiguous chunks g * cpb .. (g + 1) * cpb - 1 (every chunk still once per
// pass; chunk g mod chunks where chunks <= groups, as on a GPU), and work-item l moves the
// l-th contiguous 1/GD_WG of that range. A CPU runtime runs a work-group's items one after
// another on one thread (the host side launches one group per compute unit on a CPU), so
// each thread streams one contiguous range, as the host probe's threads do. Measured on PoCL
// 3.1 (results/NOTES.md, issue 11):
// * the old CPU layout (item l: one 64-byte line of each of its group's chunks) had every
//   item walk the group's range at a 128 KiB stride, a new page per line: 7 GB/s at 256 MiB
//   with or without the kernel's barrier, 30-35 GB/s with contiguous ranges.
// * the inner loops run from first to end, bounds that differ per item. With a bound the
//   same for all items (0 .. n) PoCL adds an implicit barrier to the loop, since the kernel
//   has barriers, and runs the work-item loop inside it: every 16-byte load then comes with
//   a work-item context save and restore (5x slower: 4-5 against 24-31 GB/s at 256 MiB).
// * the one barrier ends a pass, so every item of the group finishes pass p before any
//   starts pass p + 1: a pass sweeps the whole footprint before any byte is touched again
//   (without it each item re-read its own 1/GD_WG of the range, from L2, in every pass).
// * each item adds its sum atomically (256 atomics a group and launch); the local-memory
//   reduction measured the same here, and this keeps the kernel to the one barrier.
#ifdef GD_CPU_LANES
inline ulong cpu_first(ulong chunks, ulong groups, ulong cpb) {
  const ulong g = get_group_id(0);
  const ulong c = chunks <= groups ? g % chunks : g * cpb;
  return c * GD_CHUNK + get_local_id(0) * cpb * GD_UNROLL;
}
#else
#define GD_LANE(l) ((ulong)(l))
#define GD_VEC(u) ((u) * GD_WG)
#endif

// gd::stream_layout: with fewer chunks than groups each group re-reads chunk g mod chunks,
// else group g moves chunks g, g + groups, ...
inline ulong first_chunk(ulong chunks, ulong groups) {
  const ulong g = get_group_id(0);
  return chunks <= groups ? g % chunks : g;
}

// One atomic per work-group: the group's sum goes through local memory first.
inline void add_sum(global uint* sum, uint acc, local uint* scratch) {
  const uint l = get_local_id(0);
  scratch[l] = acc;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (uint s = GD_WG / 2; s > 0; s >>= 1) {
    if (l < s) scratch[l] += scratch[l + s];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (l == 0) atomic_add(sum, scratch[0]);
}

// The read kernels' body over `buf`: bw_read's plain loads and bw_read_l2's volatile ones.
#ifdef GD_CPU_LANES
#define GD_READ_BODY(buf)                                                      \
  const ulong first = cpu_first(chunks, groups, cpb), end = first + cpb * GD_UNROLL; \
  uint4 acc = 0;                                                               \
  for (ulong p = 0; p < passes; ++p) {                                         \
    for (ulong i = first; i < end; ++i) acc += buf[i];                         \
    barrier(CLK_GLOBAL_MEM_FENCE);                                             \
  }                                                                            \
  atomic_add(sum, acc.x + acc.y + acc.z + acc.w); /* one per item (above) */
#else
// 32-bit element indices and counters, line for line the Vulkan shader (stream_read.comp),
// whose device-memory read matches CUDA's LDG.E.128; 64-bit ones were this kernel's only
// difference from it, and it read 13 % below both. The host keeps the buffer under 2^32
// vectors and the passes under 2^32.
#define GD_READ_BODY(buf)                                                               \
  local uint scratch[GD_WG];                                                            \
  uint acc = 0;                                                                         \
  const uint start = (uint)(first_chunk(chunks, groups) * GD_CHUNK) + (uint)get_local_id(0); \
  const uint step = (uint)(groups * GD_CHUNK), n = (uint)cpb, np = (uint)passes;        \
  for (uint p = 0; p < np; ++p) {                                                       \
    uint e = start;                                                                     \
    for (uint j = 0; j < n; ++j, e += step) {                                           \
      uint4 v[GD_UNROLL];                                                               \
      for (int u = 0; u < GD_UNROLL; ++u) v[u] = buf[e + u * GD_WG];                    \
      for (int u = 0; u < GD_UNROLL; ++u) acc += v[u].x + v[u].y + v[u].z + v[u].w;     \
    }                                                                                   \
  }                                                                                     \
  add_sum(sum, acc, scratch);
#endif

kernel __attribute__((reqd_work_group_size(GD_WG, 1, 1))) void bw_read(
    global const uint4* restrict buf, ulong chunks, ulong groups, ulong cpb, ulong passes,
    global uint* sum) {
  GD_READ_BODY(buf)
}

// The L2 read (CUDA's ld.global.cg curve, read_l2): the same loads through a volatile
// pointer. NVIDIA's compiler makes them ld.volatile.global, relaxed loads at system scope,
// which the SM's L1 does not serve (the latency probe's l2 path rests on the same fact), so
// every load goes to L2. A CPU's caches serve volatile loads at every level: the probe does
// not sweep this kernel there.
kernel __attribute__((reqd_work_group_size(GD_WG, 1, 1))) void bw_read_l2(
    global const volatile uint4* buf, ulong chunks, ulong groups, ulong cpb, ulong passes,
    global uint* sum) {
  GD_READ_BODY(buf)
}

// Pass p stores word i = i + p (gd::stream_written_checksum).
kernel __attribute__((reqd_work_group_size(GD_WG, 1, 1))) void bw_write(
    global uint4* restrict buf, ulong chunks, ulong groups, ulong cpb, ulong passes) {
#ifdef GD_CPU_LANES
  const ulong first = cpu_first(chunks, groups, cpb), end = first + cpb * GD_UNROLL;
  for (ulong p = 0; p < passes; ++p) {
    // The words (i * 4 + p) + 0..3 as a vector that steps by 4: built per store, the vector
    // cost PoCL's code 3 shuffles a store, and shuffles, not memory, bounded the writes.
    uint4 w = (uint4)((uint)(first * 4 + p)) + (uint4)(0, 1, 2, 3);
    for (ulong i = first; i < end; ++i, w += (uint4)(4)) buf[i] = w;
    barrier(CLK_GLOBAL_MEM_FENCE);
  }
#else
  const ulong start = first_chunk(chunks, groups) * GD_CHUNK + GD_LANE(get_local_id(0));
  const ulong step = groups * GD_CHUNK;
  for (ulong p = 0; p < passes; ++p) {
    ulong e = start;
    for (ulong j = 0; j < cpb; ++j, e += step)
      for (int u = 0; u < GD_UNROLL; ++u) {
        const uint w = (uint)((e + GD_VEC(u)) * 4 + p);
        buf[e + GD_VEC(u)] = (uint4)(w, w + 1, w + 2, w + 3);
      }
  }
#endif
}

#if defined(GD_CPU_LANES) && defined(GD_NT)
// Writes and copies with non-temporal stores (clang's __builtin_nontemporal_store, which
// PoCL compiles to x86 movntdq): a line is written without being read first, as glibc's
// memcpy does past its cache-sized threshold. With plain stores a copy moves 3 lines for
// the 2 counted (the destination is read for ownership): 24 GB/s against the host probe's
// memcpy 47 on a 2-vCPU VM. Same elements, order and values as bw_write/bw_copy.
kernel __attribute__((reqd_work_group_size(GD_WG, 1, 1))) void bw_write_nt(
    global uint4* restrict buf, ulong chunks, ulong groups, ulong cpb, ulong passes) {
  const ulong first = cpu_first(chunks, groups, cpb), end = first + cpb * GD_UNROLL;
  for (ulong p = 0; p < passes; ++p) {
    uint4 w = (uint4)((uint)(first * 4 + p)) + (uint4)(0, 1, 2, 3);
    for (ulong i = first; i < end; ++i, w += (uint4)(4)) __builtin_nontemporal_store(w, &buf[i]);
    barrier(CLK_GLOBAL_MEM_FENCE);
  }
}

kernel __attribute__((reqd_work_group_size(GD_WG, 1, 1))) void bw_copy_nt(
    global const uint4* restrict src, global uint4* restrict dst, ulong chunks, ulong groups,
    ulong cpb, ulong passes) {
  const ulong first = cpu_first(chunks, groups, cpb), end = first + cpb * GD_UNROLL;
  for (ulong p = 0; p < passes; ++p) {
    const uint pp = (uint)p;
    for (ulong i = first; i < end; ++i) __builtin_nontemporal_store(src[i] + (uint4)(pp), &dst[i]);
    barrier(CLK_GLOBAL_MEM_FENCE);
  }
}
#endif

kernel __attribute__((reqd_work_group_size(GD_WG, 1, 1))) void bw_copy(
    global const uint4* restrict src, global uint4* restrict dst, ulong chunks, ulong groups,
    ulong cpb, ulong passes) {
#ifdef GD_CPU_LANES
  const ulong first = cpu_first(chunks, groups, cpb), end = first + cpb * GD_UNROLL;
  for (ulong p = 0; p < passes; ++p) {
    const uint pp = (uint)p;
    for (ulong i = first; i < end; ++i) dst[i] = src[i] + (uint4)(pp);
    barrier(CLK_GLOBAL_MEM_FENCE);
  }
#else
  const ulong start = first_chunk(chunks, groups) * GD_CHUNK + GD_LANE(get_local_id(0));
  const ulong step = groups * GD_CHUNK;
  for (ulong p = 0; p < passes; ++p) {
    ulong e = start;
    const uint pp = (uint)p;
    for (ulong j = 0; j < cpb; ++j, e += step) {
      uint4 v[GD_UNROLL];
      for (int u = 0; u < GD_UNROLL; ++u) v[u] = src[e + GD_VEC(u)];
      for (int u = 0; u < GD_UNROLL; ++u) dst[e + GD_VEC(u)] = v[u] + (uint4)(pp);
    }
  }
#endif
}

// Non-persistent ("flat") grids, gd::stream_layout_flat, as CUDA's bw_write_flat_kernel and
// bw_copy_flat_kernel with one vector per thread: group i moves chunk i mod chunks (a 4 KiB
// chunk, one uint4 per work-item) in pass i / chunks, once, and exits. The value stored does
// not depend on the pass: groups of different passes write the same chunk in no set order.
// The host keeps chunks x passes groups and the buffer's vectors under 2^32.
kernel __attribute__((reqd_work_group_size(GD_WG, 1, 1))) void bw_write_flat(
    global uint4* restrict buf, uint chunks) {
  const uint e = ((uint)get_group_id(0) % chunks) * GD_WG + (uint)get_local_id(0);
  const uint w = e * 4;
  buf[e] = (uint4)(w, w + 1, w + 2, w + 3);
}

kernel __attribute__((reqd_work_group_size(GD_WG, 1, 1))) void bw_copy_flat(
    global const uint4* restrict src, global uint4* restrict dst, uint chunks) {
  const uint e = ((uint)get_group_id(0) % chunks) * GD_WG + (uint)get_local_id(0);
  dst[e] = src[e];
}

kernel void bw_fill(global uint* buf, ulong words) {
  for (ulong i = get_global_id(0); i < words; i += get_global_size(0)) buf[i] = (uint)i;
}

kernel __attribute__((reqd_work_group_size(GD_WG, 1, 1))) void bw_sum(global const uint4* buf,
                                                                       ulong vecs,
                                                                       global uint* sum) {
  local uint scratch[GD_WG];
  uint acc = 0;
  for (ulong i = get_global_id(0); i < vecs; i += get_global_size(0)) {
    const uint4 v = buf[i];
    acc += v.x + v.y + v.z + v.w;
  }
  add_sum(sum, acc, scratch);
}

// gd::shared_word: the local array's fill.
inline uint shared_word(uint i) {
  uint x = i * 0x9E3779B1u + 0x7F4A7C15u;
  x ^= x >> 16;
  x *= 0x85EBCA6Bu;
  x ^= x >> 13;
  return x;
}

// Local memory at a stride (gd::shared_element): element (t*stride + k*33) mod elements,
// the top element bit flipped on odd iterations. `zero` is 0 at run time; adding
// (acc & zero) to every index keeps a compiler from merging re-reads of the unchanged
// array across iterations (see the CUDA kernel for what ptxas did without it).
#define GD_LOCAL_BYTES 16384
#define LOCAL_KERNEL(NAME, T, WORDS, SUMV)                                                     \
  kernel __attribute__((reqd_work_group_size(GD_WG, 1, 1))) void NAME(                        \
      uint elements, uint stride, uint iterations, uint zero, global uint* sum) {             \
    local T arr[GD_LOCAL_BYTES / sizeof(T)];                                                  \
    local uint scratch[GD_WG];                                                                \
    local uint* words = (local uint*)arr;                                                     \
    for (uint w = get_local_id(0); w < elements * WORDS; w += GD_WG) words[w] = shared_word(w); \
    barrier(CLK_LOCAL_MEM_FENCE);                                                             \
    const uint t = get_local_id(0);                                                           \
    uint idx[8];                                                                              \
    for (int k = 0; k < 8; ++k) idx[k] = (t * stride + k * 33u) & (elements - 1);             \
    uint acc = 0, dz = 0;                                                                     \
    for (uint it = 0; it < iterations; ++it) {                                                \
      const uint flip = (it & 1) ? elements / 2 : 0;                                          \
      for (int k = 0; k < 8; ++k) {                                                           \
        const T v = arr[(idx[k] ^ flip) + dz];                                                \
        acc += SUMV;                                                                          \
      }                                                                                       \
      dz = acc & zero;                                                                        \
    }                                                                                         \
    add_sum(sum, acc, scratch);                                                               \
  }
LOCAL_KERNEL(bw_local4, uint, 1, v)
LOCAL_KERNEL(bw_local8, uint2, 2, v.x + v.y)
LOCAL_KERNEL(bw_local16, uint4, 4, v.x + v.y + v.z + v.w)

#ifdef GD_IMAGES
// The texture path: an image1d_buffer over the source buffer, texels of 4 x uint32.
kernel __attribute__((reqd_work_group_size(GD_WG, 1, 1))) void bw_image_read(
    read_only image1d_buffer_t img, ulong chunks, ulong groups, ulong cpb, ulong passes,
    global uint* sum) {
#ifdef GD_CPU_LANES
  const ulong first = cpu_first(chunks, groups, cpb), end = first + cpb * GD_UNROLL;
  uint4 acc = 0;
  for (ulong p = 0; p < passes; ++p) {
    for (ulong i = first; i < end; ++i) acc += read_imageui(img, (int)i);
    barrier(CLK_GLOBAL_MEM_FENCE);
  }
  atomic_add(sum, acc.x + acc.y + acc.z + acc.w);
#else
  local uint scratch[GD_WG];
  uint acc = 0;
  const ulong start = first_chunk(chunks, groups) * GD_CHUNK + GD_LANE(get_local_id(0));
  const ulong step = groups * GD_CHUNK;
  for (ulong p = 0; p < passes; ++p) {
    ulong e = start;
    for (ulong j = 0; j < cpb; ++j, e += step)
      for (int u = 0; u < GD_UNROLL; ++u) {
        const uint4 v = read_imageui(img, (int)(e + GD_VEC(u)));
        acc += v.x + v.y + v.z + v.w;
      }
  }
  add_sum(sum, acc, scratch);
#endif
}
#endif
