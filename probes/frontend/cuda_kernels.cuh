// The front-end probe's nvcc-compiled kernels (cuda.cu includes this once): launch stamps,
// the host/GPU clock sync, the timer's step, dispatch records and the occupancy spin.
#pragma once

#include <cuda_runtime.h>

#include "cuda_probes.hpp"
#include "device_clock.cuh"

namespace gd::cuda {

namespace {
constexpr unsigned long long kMagic = kOccupancyMagic;

__device__ __forceinline__ unsigned smid() {
  unsigned s;
  asm volatile("mov.u32 %0, %%smid;" : "=r"(s));
  return s;
}
__device__ __forceinline__ unsigned warpid() {
  unsigned s;
  asm volatile("mov.u32 %0, %%warpid;" : "=r"(s));
  return s;
}

// Launch latency / rate: records its start and end on the GPU timer.
// Keeps the GPU busy for `ns` (one warp spinning on the timer): before a launch batch, so
// the batch starts at the clock a busy GPU runs at, not at one the idle gaps let fall.
__global__ void fe_busy(unsigned long long ns) {
  const unsigned long long end = globaltimer_ns() + ns;
  while (globaltimer_ns() < end) {
  }
}

// The launch round trip's kernel, as the peers time it: no arguments, no work.
__global__ void fe_empty() {}

__global__ void fe_stamp(unsigned long long* rec, int i) {
  if (threadIdx.x == 0 && blockIdx.x == 0) {
    const unsigned long long t = globaltimer_ns();
    rec[2 * i] = t;
    rec[2 * i + 1] = globaltimer_ns();
  }
}

// Host/GPU clock sync: answers each host request (flag == r + 1) with the GPU time, until
// the host writes ~0u or 5 s pass.
__global__ void fe_sync(volatile unsigned* flag, volatile unsigned long long* reply,
                        volatile unsigned* ack, int rounds) {
  const unsigned long long t0 = globaltimer_ns();
  for (int r = 0; r < rounds; ++r) {
    unsigned f;
    while ((f = *flag) != static_cast<unsigned>(r + 1)) {
      if (f == ~0u || globaltimer_ns() - t0 > 5000000000ull) return;
    }
    reply[r] = globaltimer_ns();
    __threadfence_system();
    *ack = static_cast<unsigned>(r + 1);
    __threadfence_system();
  }
}

// The smallest step of %globaltimer seen in a burst of reads.
__global__ void fe_timer_step(unsigned long long* out) {
  unsigned long long prev = globaltimer_ns(), best = ~0ull;
  int changes = 0;
  for (int i = 0; i < 200000 && changes < 64; ++i) {
    const unsigned long long t = globaltimer_ns();
    if (t != prev) {
      best = min(best, t - prev);
      prev = t;
      ++changes;
    }
  }
  out[0] = best;
}

// One record per block: {smid | warpid << 32, start, end, magic}.
__global__ void fe_dispatch(unsigned long long* rec) {
  if (threadIdx.x == 0) {
    const unsigned long long t = globaltimer_ns();
    const unsigned long long id = smid() | (static_cast<unsigned long long>(warpid()) << 32);
    rec[4 * blockIdx.x] = id;
    rec[4 * blockIdx.x + 1] = t;
    rec[4 * blockIdx.x + 2] = globaltimer_ns();
    rec[4 * blockIdx.x + 3] = kMagic;
  }
}

// Occupancy: every block spins spin_ns from its own start; the dynamic shared memory the
// launch asks for limits residency whether touched or not (so it is not touched: with 0
// bytes asked there is none to touch).
__global__ void fe_spin(unsigned long long* rec, unsigned long long spin_ns) {
  __shared__ unsigned long long start;
  if (threadIdx.x == 0) {
    start = globaltimer_ns();
    rec[4 * blockIdx.x] = smid() | (static_cast<unsigned long long>(warpid()) << 32);
    rec[4 * blockIdx.x + 1] = start;
  }
  __syncthreads();
  while (globaltimer_ns() - start < spin_ns) {
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    rec[4 * blockIdx.x + 2] = globaltimer_ns();
    rec[4 * blockIdx.x + 3] = kMagic;
  }
}
}  // namespace

}  // namespace gd::cuda
