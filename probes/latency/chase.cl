// Pointer-chase kernels of the OpenCL backend. One work-item walks the chain: every load
// depends on the one before it, so the time per hop is the latency of the memory path.
//
// Each chain holds what its load consumes, as CUDA's chase does, so that a hop is the load
// alone and no index arithmetic sits in the dependency chain:
// - global, l2: the first 8 bytes of line i hold the device address of the next line
//   (chain_to_addresses converts the host's index chain in place), and a hop is p = *p;
// - constant, local: the first uint of line i holds the byte offset of the next line, and
//   a hop loads from base + offset (a register offset, no shift);
// - image, and global/l2 where a line is too small or unaligned for an address: the uint
//   element index of the next line (next_line * stride / 4), a hop is idx = buf[idx].
// Each kernel starts at `start` (an address, byte offset or index as its chain holds), makes
// `hops` hops and writes what it reached to out (a ulong address or a uint), so the loads
// cannot be optimised away and the host can go on from there with the next launch.
//
// Built with -DGD_IMAGES=1 only where the device can run the image path (OpenCL C 1.2,
// image support, CL_R / CL_UNSIGNED_INT32 for 1D image buffers); elsewhere the image
// kernel is left out so that the program still builds.
//
// Built with -DGD_NV_CLOCK=1 on NVIDIA's platform, whose compiler takes inline PTX: the
// chasing work-item also writes the loop's %clock64 cycles and %globaltimer ns as ulongs 1
// and 2 of `out` (bytes 8 and 16), for latencies in cycles and the clock they ran at. The
// PTX serves the measurement only; the loads are portable OpenCL C. The counters are
// nv_clock.cl's, which the host puts before this file.
//
// Built with -DGD_AMD_CLOCK=1 on AMD's ROCm platform (clang for amdgcn): the same two words
// from s_memtime (cycles) and s_memrealtime (100 MHz, in ns), as the compute probe's AMD
// kernels read them (probes/compute/model_clvendor.cpp says why those). A target without
// them (gfx11 and later) fails to build here, and the chase runs in ns only. Compiled for
// amdgcn in CI; not validated on AMD hardware by this project.

#if defined(GD_NV_CLOCK) && GD_NV_CLOCK
#define GD_CLOCK_START \
  ulong gd_c0, gd_t0;  \
  GD_GLOBALTIMER(gd_t0); \
  GD_CLOCK64(gd_c0);
#define GD_CLOCK_END(out)                      \
  {                                            \
    ulong gd_c1, gd_t1;                        \
    GD_CLOCK64(gd_c1);                         \
    GD_GLOBALTIMER(gd_t1);                     \
    ((__global ulong*)(out))[1] = gd_c1 - gd_c0; \
    ((__global ulong*)(out))[2] = gd_t1 - gd_t0; \
  }
#elif defined(GD_AMD_CLOCK) && GD_AMD_CLOCK
#if !defined(__AMDGCN__) || !defined(__has_builtin)
#error "GD_AMD_CLOCK needs clang's amdgcn target"
#elif !__has_builtin(__builtin_amdgcn_s_memtime) || !__has_builtin(__builtin_amdgcn_s_memrealtime)
#error "GD_AMD_CLOCK: this amdgcn target has no s_memtime or s_memrealtime"
#endif
#define GD_CLOCK_START                                                      \
  ulong gd_c0, gd_t0;                                                       \
  gd_t0 = __builtin_amdgcn_s_memrealtime();                                 \
  gd_c0 = __builtin_amdgcn_s_memtime();
#define GD_CLOCK_END(out)                                                   \
  {                                                                         \
    const ulong gd_c1 = __builtin_amdgcn_s_memtime();                       \
    const ulong gd_t1 = __builtin_amdgcn_s_memrealtime();                   \
    ((__global ulong*)(out))[1] = gd_c1 - gd_c0;                            \
    ((__global ulong*)(out))[2] = (gd_t1 - gd_t0) * 10UL;                   \
  }
#else
#define GD_CLOCK_START
#define GD_CLOCK_END(out)
#endif

__kernel void chase_global(__global const uint* buf, uint start, ulong hops, __global uint* out) {
  uint idx = start;
  GD_CLOCK_START
  for (ulong h = 0; h < hops; ++h) idx = buf[idx];
  out[0] = idx;
  GD_CLOCK_END(out)
}

// The L2 path: the same chase through a volatile pointer. NVIDIA's compiler makes a volatile
// __global load ld.volatile.global, a relaxed load at system scope, which the SM's L1 (not
// coherent at that scope) does not serve: every hop goes to L2, as CUDA's ld.global.cg (the
// memory probe's cg walk rests on the same fact). Portable OpenCL C: a device whose volatile
// loads do hit its L1 (a CPU through PoCL) shows that L1 here, and the probe numbers the
// levels from what the curve shows, not from the path's name.
__kernel void chase_l2(__global const volatile uint* buf, uint start, ulong hops,
                       __global uint* out) {
  uint idx = start;
  GD_CLOCK_START
  for (ulong h = 0; h < hops; ++h) idx = buf[idx];
  out[0] = idx;
  GD_CLOCK_END(out)
}

// Converts the index chain of `lines` lines (the first uint of each line: the next line's
// element index) in place into addresses: each line's first 8 bytes become the address of
// the next line. One work-item per line; a line's own bytes only, so no two items touch the
// same word (the host runs this only where stride is a multiple of 8). Item 0 also writes
// the buffer's address as ulong 3 of `out`, for the host to turn addresses into elements.
__kernel void chain_to_addresses(__global uint* buf, uint words_per_line, uint lines,
                                 __global ulong* out) {
  const uint i = (uint)get_global_id(0);
  if (i == 0) out[3] = (ulong)(uintptr_t)buf;
  if (i >= lines) return;
  __global uint* line = buf + (size_t)i * words_per_line;
  const uint next = line[0];
  *(__global ulong*)line = (ulong)(uintptr_t)(buf + next);
}

// The address chases. `buf` is the chain's buffer, passed so that the runtime makes it
// resident; OpenCL 1.2 does not promise a buffer the same address in every launch, so the
// kernel does not walk when `buf` is not at `base`, the address chain_to_addresses saw, and
// writes the address it has as ulong 3 for the host to see why.
#define GD_ADDRESS_CHASE(T)                                \
  T p = (T)(uintptr_t)start;                               \
  const bool moved = (ulong)(uintptr_t)buf != base;        \
  if (moved) hops = 0;                                     \
  GD_CLOCK_START                                           \
  for (ulong h = 0; h < hops; ++h) p = (T)(uintptr_t)(*p); \
  out[0] = (ulong)(uintptr_t)p;                            \
  GD_CLOCK_END(out)                                        \
  if (moved) out[3] = (ulong)(uintptr_t)buf;

__kernel void chase_global_addr(__global const ulong* buf, ulong base, ulong start, ulong hops,
                                __global ulong* out) {
  GD_ADDRESS_CHASE(__global const ulong*)
}

// The l2 path's address chase: volatile loads, as chase_l2 says.
__kernel void chase_l2_addr(__global const volatile ulong* buf, ulong base, ulong start,
                            ulong hops, __global ulong* out) {
  GD_ADDRESS_CHASE(__global const volatile ulong*)
}

// The constant chase by byte offsets: base + offset is the load's register-offset address.
__kernel void chase_constant(__constant uint* cbuf, uint start, ulong hops, __global uint* out) {
  uint off = start;
  GD_CLOCK_START
  for (ulong h = 0; h < hops; ++h) off = *(__constant const uint*)((__constant const uchar*)cbuf + off);
  out[0] = off;
  GD_CLOCK_END(out)
}

// The local chase's body, for an array passed in (chase_local) or declared in the kernel
// (chase_local_static): the work-group copies the chain, then work-item 0 walks it.
#define GD_LOCAL_CHASE(lbuf)                                                 \
  const uint lid = (uint)get_local_id(0);                                    \
  const uint lsz = (uint)get_local_size(0);                                  \
  for (uint i = lid; i < n_words; i += lsz) (lbuf)[i] = src[i];              \
  barrier(CLK_LOCAL_MEM_FENCE);                                              \
  if (lid != 0) return;                                                      \
  uint off = start;                                                          \
  GD_CLOCK_START                                                             \
  for (ulong h = 0; h < hops; ++h)                                           \
    off = *(__local const uint*)((__local const uchar*)(lbuf) + off);        \
  out[0] = off;                                                              \
  GD_CLOCK_END(out)

// The work-group copies the chain (byte offsets of the next line) into local memory, then
// work-item 0 chases there: a hop is one load at local base + offset, which a GPU's local
// load takes as a register plus the base (CUDA's shared chase holds shared-window addresses
// and loads at the register alone). Not local pointers: converting an integer back into a
// __local pointer is not defined by OpenCL C 1.2, and on NVIDIA's OpenCL that round trip
// faulted the kernel (the context then failed every later call). `words_per_line` is the
// host's, kept for the launch's shape. The copy is inside the timed kernel; the host cancels
// it by taking the difference of two launches with N and 2N hops.
__kernel void chase_local(__global const uint* src, uint n_words, __local uint* lbuf, uint start,
                          ulong hops, __global uint* out, uint words_per_line) {
  (void)words_per_line;
  GD_LOCAL_CHASE(lbuf)
}

#ifdef GD_LOCAL_WORDS
// chase_local with the work-group's array declared in the kernel, GD_LOCAL_WORDS words (the
// build's option): its local address is then a constant of the program, which the load takes
// as its immediate offset, so a hop is the load alone, as in CUDA's shared chase (with the
// array an argument, its base is added to the offset in each hop: 28 cycles a hop against
// CUDA's 23 on an H200). The host uses it for every chain that fits.
__kernel void chase_local_static(__global const uint* src, uint n_words, uint start, ulong hops,
                                 __global uint* out) {
  __local uint lbuf[GD_LOCAL_WORDS];
  GD_LOCAL_CHASE(lbuf)
}
#endif

#if defined(GD_IMAGES) && GD_IMAGES
__kernel void chase_image(__read_only image1d_buffer_t img, uint start, ulong hops,
                          __global uint* out) {
  uint idx = start;
  GD_CLOCK_START
  for (ulong h = 0; h < hops; ++h) idx = read_imageui(img, (int)idx).x;
  out[0] = idx;
  GD_CLOCK_END(out)
}
#endif
