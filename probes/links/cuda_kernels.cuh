// The links probe's CUDA kernels and its per-GPU memory (cuda.cu includes this once):
// fills, SM reads and writes across a link, the pointer chase, the flag ping-pong.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "cuda_util.hpp"
#include "device_clock.cuh"

namespace gd::cuda {

namespace {
// word i = i + seed: a pattern whose sums the host knows in closed form.
__global__ void links_fill(uint32_t* p, uint64_t words, uint32_t seed) {
  for (uint64_t i = blockIdx.x * uint64_t(blockDim.x) + threadIdx.x; i < words;
       i += uint64_t(gridDim.x) * blockDim.x)
    p[i] = uint32_t(i) + seed;
}

// One pass of 16-byte loads over the peer's buffer (.cg: no L1), every word summed; the
// block's sum is added to *sum. Each thread keeps LOADS loads in flight per step, a grid
// stride apart (LOADS = 4, 8 or 12, nvbandwidth's unroll: the probe tries each, as the link's
// best needs enough bytes in flight without too many blocks contending for it).
template <int LOADS>
__global__ void links_sm_read(const uint4* __restrict__ p, uint64_t n16, int passes,
                              unsigned long long* sum) {
  const uint64_t stride = uint64_t(gridDim.x) * blockDim.x;
  unsigned long long acc = 0;
  for (int pass = 0; pass < passes; ++pass) {
    uint64_t i = blockIdx.x * uint64_t(blockDim.x) + threadIdx.x;
    for (; i + (LOADS - 1) * stride < n16; i += LOADS * stride) {
      uint4 v[LOADS];
#pragma unroll
      for (int k = 0; k < LOADS; ++k) v[k] = __ldcg(p + i + k * stride);
#pragma unroll
      for (int k = 0; k < LOADS; ++k) acc += (unsigned long long)v[k].x + v[k].y + v[k].z + v[k].w;
    }
    for (; i < n16; i += stride) {
      const uint4 a = __ldcg(p + i);
      acc += (unsigned long long)a.x + a.y + a.z + a.w;
    }
  }
  for (int o = 16; o > 0; o >>= 1) acc += __shfl_down_sync(0xffffffffu, acc, o);
  if ((threadIdx.x & 31) == 0) atomicAdd(sum, acc);
}

// One pass of 16-byte stores into the peer's buffer: word i = i + seed.
__global__ void links_sm_write(uint4* __restrict__ p, uint64_t n16, uint32_t seed) {
  const uint64_t stride = uint64_t(gridDim.x) * blockDim.x;
  for (uint64_t i = blockIdx.x * uint64_t(blockDim.x) + threadIdx.x; i < n16; i += stride) {
    const uint32_t w = uint32_t(i * 4) + seed;
    __stcg(p + i, make_uint4(w, w + 1, w + 2, w + 3));
  }
}

// One thread chases the chain in the peer's memory: out[r] cycles and out[R + r] ns of
// repeat r, out[2R] the line reached, out[2R + 1] the SM that chased, plus one. Each line
// holds the address of the next, so a hop is one 64-bit load and nothing else (as the
// latency probe's chases and nvbandwidth's; an index times a stride added an integer
// multiply-add to every hop). The store of the address into shared memory makes the warp wait
// for the last load before it reads the clocks (in-order issue). With want_sm >= 0 many
// blocks are launched and only the first to find itself on that SM (and to claim *claim)
// chases; the rest leave at once.
__global__ void links_chase(const unsigned long long* chain, uint32_t stride_bytes, uint64_t warmup,
                            uint64_t hops, int repeats, unsigned long long* out, int want_sm,
                            int* claim) {
  __shared__ volatile unsigned long long sink;
  if (threadIdx.x != 0) return;
  uint32_t sm;
  asm volatile("mov.u32 %0, %%smid;" : "=r"(sm));
  if (want_sm >= 0 && (int(sm) != want_sm || atomicCAS(claim, 0, 1) != 0)) return;
  out[2 * repeats + 1] = sm + 1ull;
  const unsigned long long* cur = chain;
  for (uint64_t h = 0; h < warmup; ++h)
    cur = reinterpret_cast<const unsigned long long*>(__ldcg(cur));
  sink = reinterpret_cast<unsigned long long>(cur);
  for (int r = 0; r < repeats; ++r) {
    const uint64_t c0 = clock64(), t0 = globaltimer_ns();
    for (uint64_t h = 0; h < hops; ++h)
      cur = reinterpret_cast<const unsigned long long*>(__ldcg(cur));
    sink = reinterpret_cast<unsigned long long>(cur);
    const uint64_t c1 = clock64(), t1 = globaltimer_ns();
    out[r] = c1 - c0;
    out[repeats + r] = t1 - t0;
  }
  out[2 * repeats] =
      (sink - reinterpret_cast<unsigned long long>(chain)) / (stride_bytes ? stride_bytes : 1);
}

// Ping-pong player. The starter writes 2k+1 into the other's flag and waits for 2k+2 in its
// own; the responder waits for 2k+1 and writes 2k+2. Warm-up round trips, then `repeats`
// timed segments of `round_trips` each (timed by the starter). out: [0..R) cycles,
// [R..2R) ns, [2R] hand-overs made, [2R+1] timeouts.
__global__ void links_ping_pong(volatile uint32_t* mine, volatile uint32_t* theirs, int starter,
                                uint32_t warmup, uint32_t round_trips, int repeats,
                                uint64_t timeout_ns, unsigned long long* out) {
  const uint64_t total = warmup + uint64_t(round_trips) * repeats;
  unsigned long long made = 0, timeouts = 0;
  auto wait_for = [&](uint32_t v) {
    const uint64_t start = globaltimer_ns();
    while (*mine != v) {
      if (globaltimer_ns() - start > timeout_ns) {
        ++timeouts;
        return false;
      }
    }
    return true;
  };
  uint64_t k = 0;
  for (int seg = -1; seg < repeats; ++seg) {
    const uint64_t n = seg < 0 ? warmup : round_trips;
    const uint64_t c0 = clock64(), t0 = globaltimer_ns();
    for (uint64_t j = 0; j < n; ++j, ++k) {
      if (starter) {
        *theirs = uint32_t(2 * k + 1);
        ++made;
        if (!wait_for(uint32_t(2 * k + 2))) goto done;
      } else {
        if (!wait_for(uint32_t(2 * k + 1))) goto done;
        *theirs = uint32_t(2 * k + 2);
        ++made;
      }
    }
    if (seg >= 0) {
      out[seg] = clock64() - c0;
      out[repeats + seg] = globaltimer_ns() - t0;
    }
  }
done:
  (void)total;
  out[2 * repeats] = made;
  out[2 * repeats + 1] = timeouts;
}

// Floats of piece i / chunk: base + piece x step (the collectives' send pattern).
__global__ void links_fill_pieces(float* p, uint64_t count, uint64_t chunk, float base,
                                  float step) {
  for (uint64_t i = blockIdx.x * uint64_t(blockDim.x) + threadIdx.x; i < count;
       i += uint64_t(gridDim.x) * blockDim.x)
    p[i] = base + float(i / chunk) * step;
}

class OnDevice {
 public:
  explicit OnDevice(int d) {
    cudaGetDevice(&prev_);
    check(cudaSetDevice(d), "cudaSetDevice");
  }
  ~OnDevice() { cudaSetDevice(prev_); }

 private:
  int prev_ = 0;
};

// Device memory on one GPU that grows and is reused.
struct Mem {
  int dev = 0;
  void* p = nullptr;
  size_t size = 0;
  void* get(size_t bytes, const char* what) {
    if (bytes <= size && p) return p;
    OnDevice on(dev);
    if (p) cudaFree(p);
    p = nullptr;
    size = 0;
    check(cudaMalloc(&p, bytes), what);
    size = bytes;
    return p;
  }
  void release() {
    if (p) {
      OnDevice on(dev);
      cudaFree(p);
    }
    p = nullptr;
    size = 0;
  }
};

// Pinned host memory, filled with the word pattern once at allocation.
struct Pinned {
  void* p = nullptr;
  size_t size = 0;
  uint32_t seed = 0;
  void* get(size_t bytes, uint32_t fill_seed, bool fill, const char* what) {
    if (bytes <= size && p && (!fill || seed == fill_seed)) return p;
    if (p) cudaFreeHost(p);
    p = nullptr;
    size = 0;
    check(cudaHostAlloc(&p, bytes, cudaHostAllocPortable), what);
    size = bytes;
    seed = fill_seed;
    if (fill) {
      uint32_t* w = static_cast<uint32_t*>(p);
      for (size_t i = 0; i < bytes / 4; ++i) w[i] = uint32_t(i) + fill_seed;
    }
    return p;
  }
  void release() {
    if (p) cudaFreeHost(p);
    p = nullptr;
    size = 0;
  }
};

struct Gpu {
  int index = 0;
  int sms = 1;
  cudaStream_t stream[2] = {nullptr, nullptr};
  Mem out, in, scratch;  // transfer source, transfer destination, results / chains
  Pinned host_src, host_dst;
  std::vector<cudaEvent_t> events;  // created on demand
  cudaEvent_t event(size_t i) {
    while (events.size() <= i) {
      OnDevice on(index);
      cudaEvent_t e;
      check(cudaEventCreate(&e), "cudaEventCreate");
      events.push_back(e);
    }
    return events[i];
  }
};

std::string two(int a, int b) { return std::to_string(a) + "->" + std::to_string(b); }
}  // namespace

}  // namespace gd::cuda
