// Pointer-chase kernels of the OpenCL backend. One work-item walks the chain: every load
// depends on the one before it, so the time per hop is the latency of the memory path.
//
// Layout (written by the host): line i lies at byte offset i * stride; the first uint of
// line i holds the uint index of the next line (next_line * stride / 4), so a hop is
// idx = buf[idx]. Each kernel starts at element `start`, makes `hops` hops and writes the
// element reached to out[0], so the loads cannot be optimised away and the host can go on
// from there with the next launch.
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

__kernel void chase_constant(__constant uint* cbuf, uint start, ulong hops, __global uint* out) {
  uint idx = start;
  GD_CLOCK_START
  for (ulong h = 0; h < hops; ++h) idx = cbuf[idx];
  out[0] = idx;
  GD_CLOCK_END(out)
}

// The work-group copies the chain image (n_words uints) into local memory, then work-item
// 0 chases there. The copy is inside the timed kernel; the host cancels it by taking the
// difference of two launches with N and 2N hops.
__kernel void chase_local(__global const uint* src, uint n_words, __local uint* lbuf, uint start,
                          ulong hops, __global uint* out) {
  const uint lid = (uint)get_local_id(0);
  const uint lsz = (uint)get_local_size(0);
  for (uint i = lid; i < n_words; i += lsz) lbuf[i] = src[i];
  barrier(CLK_LOCAL_MEM_FENCE);
  if (lid == 0) {
    uint idx = start;
    GD_CLOCK_START
    for (ulong h = 0; h < hops; ++h) idx = lbuf[idx];
    out[0] = idx;
    GD_CLOCK_END(out)
  }
}

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
