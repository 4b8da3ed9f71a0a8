// The memory probe's OpenCL kernels: a chase by the first work-item of each warp (sub-group)
// of one work-group, each warp on its own chain, as CUDA's probes/memory/cuda.cu does. The
// host puts probes/latency/nv_clock.cl before this file: on NVIDIA (-DGD_NV_CLOCK=1) each
// timed segment reads %clock64 and %globaltimer; elsewhere both are 0 and the host times
// whole launches by their events.
//
// The loads, all OpenCL C:
// - ca: a plain __global load (NVIDIA: ld.global, cached in L1). The chain holds addresses,
//   so a hop is one load whose address is the last load's value, as CUDA's pointer chase.
// - cg: a volatile __global load. NVIDIA's compiler emits ld.volatile.global, which PTX
//   treats as a relaxed load at system scope: the SM's L1 is not coherent at that scope, so
//   the load is served by L2 (SASS LDG.E.*.STRONG.SYS) and never hits L1: OpenCL C's way to
//   the L2-only walk of CUDA's ld.global.cg. The host checks the PTX for it.
// - nc: through a `const __global ... restrict` kernel argument, offsets from it, so that the
//   compiler may take the read-only path (NVIDIA: ld.global.nc); the host checks the PTX.
// - constant: byte offsets in a __constant buffer.
// - texture: 32-bit element indices through an image1d_buffer_t (with -DGD_IMAGES=1 only).
//
// Arguments after the chain: per warp its start (an address, an offset or an index) in
// `starts`; `out` gets per warp 2 * repeats ulongs (cycles, ns of each timed segment) and
// then where the walk ended; `width` work-items per warp; the first `pf_bytes` of `pf` are
// read through L2 only (one load per 32-byte sector, warp 0) before the walk.

#define GD_X4(s) s s s s
#define GD_X16(s) GD_X4(GD_X4(s))

// shape: one body for every load; OpenCL C 1.2 has no templates
#define GD_MEM_CHASE(HOP)                                                                    \
  const uint lid = (uint)get_local_id(0);                                                    \
  const uint w = lid / width;                                                                \
  const int walker = (lid % width) == 0;                                                     \
  ulong p = starts[w];                                                                       \
  __global ulong* o = out + (ulong)w * (2ul * (ulong)repeats + 1ul);                        \
  if (pf_bytes != 0 && w == 0) {                                                             \
    /* volatile: each sector read, none dropped */                                           \
    for (ulong off = (ulong)(lid % width) * 32ul; off < pf_bytes; off += 32ul * width)       \
      (void)*(volatile __global const ulong*)((__global const char*)pf + off);              \
  }                                                                                          \
  barrier(CLK_GLOBAL_MEM_FENCE);                                                             \
  if (walker)                                                                                \
    for (ulong i = 0; i < warmup; ++i) p = HOP(p);                                           \
  /* The warps start every timed segment together (see cuda.cu). */                         \
  barrier(CLK_GLOBAL_MEM_FENCE);                                                             \
  for (int r = 0; r < repeats; ++r) {                                                        \
    if (walker) {                                                                            \
      ulong t0, c0, c1, t1;                                                                  \
      GD_GLOBALTIMER(t0);                                                                    \
      GD_CLOCK64(c0);                                                                        \
      ulong i = 0;                                                                           \
      for (; i + 16ul <= hops; i += 16ul) {                                                  \
        GD_X16(p = HOP(p);)                                                                  \
      }                                                                                      \
      for (; i < hops; ++i) p = HOP(p);                                                      \
      GD_CLOCK64(c1);                                                                        \
      GD_GLOBALTIMER(t1);                                                                    \
      o[2 * r] = c1 - c0;                                                                    \
      o[2 * r + 1] = t1 - t0;                                                                \
    }                                                                                        \
    barrier(CLK_GLOBAL_MEM_FENCE);                                                           \
  }                                                                                          \
  if (walker) o[2ul * (ulong)repeats] = p;

#define GD_MEM_ARGS                                                                    \
  __global const ulong *starts, __global ulong *out, ulong warmup, ulong hops, int repeats, \
      uint width, __global const ulong *pf, ulong pf_bytes

#define GD_HOP_CA(p) (*(__global const ulong*)(p))
#define GD_HOP_CG(p) (*(volatile __global const ulong*)(p))
#define GD_HOP_NC(p) (*(__global const ulong*)((__global const char*)buf + (p)))
#define GD_HOP_CONST(p) ((ulong)(*(__constant const uint*)((__constant const char*)cbuf + (p))))
#define GD_HOP_TEX(p) ((ulong)read_imageui(img, (int)(p)).x)

__kernel void mem_chase_ca(GD_MEM_ARGS) { GD_MEM_CHASE(GD_HOP_CA) }

__kernel void mem_chase_cg(GD_MEM_ARGS) { GD_MEM_CHASE(GD_HOP_CG) }

__kernel void mem_chase_nc(__global const ulong* restrict buf, GD_MEM_ARGS) {
  GD_MEM_CHASE(GD_HOP_NC)
}

__kernel void mem_chase_const(__constant uint* cbuf, GD_MEM_ARGS) { GD_MEM_CHASE(GD_HOP_CONST) }

#if defined(GD_IMAGES) && GD_IMAGES
__kernel void mem_chase_tex(__read_only image1d_buffer_t img, GD_MEM_ARGS) {
  GD_MEM_CHASE(GD_HOP_TEX)
}
#endif

// The chain, written on the device (a TLB sweep's buffer is GiB): line i at byte i * stride
// holds the next line's address (absolute != 0: ca, cg) or byte offset (nc) as a ulong, or,
// with index != 0 (texture), its first uint element's index as a uint. Work-item 0 also
// writes the buffer's address to base[0], from which the host computes the starts.
__kernel void mem_fill(__global ulong* buf, __global const uint* next, uint lines, ulong stride,
                       int absolute, int index, __global ulong* base) {
  const ulong i = get_global_id(0);
  if (i == 0) base[0] = (ulong)buf;
  if (i >= lines) return;
  if (index)
    ((__global uint*)buf)[i * (stride / 4)] = (uint)(next[i] * (stride / 4));
  else
    buf[i * (stride / 8)] = (absolute ? (ulong)buf : 0ul) + (ulong)next[i] * stride;
}
