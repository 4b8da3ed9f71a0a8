// The atomics probe's CUDA device code, part 1 of 3 (cuda.cu includes it once): limits,
// placements and the atomics, one PTX instruction each.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>

#include "device_clock.cuh"

namespace gd::cuda::at {
// A spin gives up after this many polls (a few seconds at most): a partner that never
// answers is reported as a timeout, never a hang.
constexpr unsigned kSpinLimit = 1u << 22;
constexpr int kThreads = 256;
constexpr int kMaxRepeats = 64;
constexpr int kMaxPlacements = 16;  // throughput target placements
constexpr int kMaxLocations = 64;   // ping-pong flag locations
// Placements and locations sit in different 2 MiB regions (different large pages, so the
// physical address, and with it the L2 slice, changes) and at different offsets inside them.
constexpr size_t kRegion = size_t(2) << 20;
constexpr size_t kLocationStride = kRegion + 4096 + 128;  // a multiple of a 128-byte line
constexpr size_t kLocationBytes = 4096;                   // flag, payload, abort (own lines)

__device__ __forceinline__ int smid() {
  int s;
  asm volatile("mov.u32 %0, %%smid;" : "=r"(s));
  return s;
}

__device__ __forceinline__ unsigned shared_addr(const void* p) {
  return static_cast<unsigned>(__cvta_generic_to_shared(p));
}

// ---- the atomics, one PTX instruction each ----

__device__ __forceinline__ unsigned cas_shared(unsigned a, unsigned cmp, unsigned val) {
  unsigned old;
  asm volatile("atom.shared.cas.b32 %0, [%1], %2, %3;"
               : "=r"(old)
               : "r"(a), "r"(cmp), "r"(val)
               : "memory");
  return old;
}
__device__ __forceinline__ unsigned exch_shared(unsigned a, unsigned val) {
  unsigned old;
  asm volatile("atom.shared.exch.b32 %0, [%1], %2;" : "=r"(old) : "r"(a), "r"(val) : "memory");
  return old;
}
__device__ __forceinline__ unsigned ld_volatile_shared(unsigned a) {
  unsigned v;
  asm volatile("ld.volatile.shared.u32 %0, [%1];" : "=r"(v) : "r"(a) : "memory");
  return v;
}
__device__ __forceinline__ unsigned cas_global(unsigned* p, unsigned cmp, unsigned val) {
  unsigned old;
  asm volatile("atom.relaxed.gpu.global.cas.b32 %0, [%1], %2, %3;"
               : "=r"(old)
               : "l"(p), "r"(cmp), "r"(val)
               : "memory");
  return old;
}
__device__ __forceinline__ unsigned exch_global(unsigned* p, unsigned val) {
  unsigned old;
  asm volatile("atom.relaxed.gpu.global.exch.b32 %0, [%1], %2;"
               : "=r"(old)
               : "l"(p), "r"(val)
               : "memory");
  return old;
}
__device__ __forceinline__ unsigned ld_relaxed_gpu(const unsigned* p) {
  unsigned v;
  asm volatile("ld.relaxed.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
  return v;
}
__device__ __forceinline__ unsigned ld_acquire_gpu(const unsigned* p) {
  unsigned v;
  asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
  return v;
}
__device__ __forceinline__ void st_release_gpu(unsigned* p, unsigned v) {
  asm volatile("st.release.gpu.global.u32 [%0], %1;" ::"l"(p), "r"(v) : "memory");
}
__device__ __forceinline__ unsigned ld_acquire_sys(const unsigned* p) {
  unsigned v;
  asm volatile("ld.acquire.sys.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
  return v;
}
__device__ __forceinline__ void st_release_sys(unsigned* p, unsigned v) {
  asm volatile("st.release.sys.global.u32 [%0], %1;" ::"l"(p), "r"(v) : "memory");
}
__device__ __forceinline__ unsigned ld_relaxed_sys(const unsigned* p) {
  unsigned v;
  asm volatile("ld.relaxed.sys.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
  return v;
}
__device__ __forceinline__ void st_relaxed_sys(unsigned* p, unsigned v) {
  asm volatile("st.relaxed.sys.global.u32 [%0], %1;" ::"l"(p), "r"(v) : "memory");
}
// The payload behind the flag: plain (weak) accesses, ordered only by the flag's
// release/acquire, which is the point of the test.
__device__ __forceinline__ unsigned ld_weak(const unsigned* p) {
  unsigned v;
  asm volatile("ld.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
  return v;
}
__device__ __forceinline__ void st_weak(unsigned* p, unsigned v) {
  asm volatile("st.global.u32 [%0], %1;" ::"l"(p), "r"(v) : "memory");
}
}  // namespace gd::cuda::at
