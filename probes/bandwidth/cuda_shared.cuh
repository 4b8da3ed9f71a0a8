// The bandwidth probe's shared-memory and constant-cache kernels (cuda.cu includes this
// once).
#pragma once

#include "bandwidth/cuda_stream.cuh"

namespace gd::cuda::bw {
struct SharedArgs {
  unsigned int elements, stride;
  unsigned int iterations;
  unsigned int zero;  // 0 at run time; the compiler cannot know it (see bw_shared_kernel)
  unsigned int* sum;
  unsigned long long* clk;
};

// gd::shared_word, the fill; the host's checksum recomputes it.
__device__ __forceinline__ unsigned int shared_word(unsigned int i) {
  unsigned int x = i * 0x9E3779B1u + 0x7F4A7C15u;
  x ^= x >> 16;
  x *= 0x85EBCA6Bu;
  x ^= x >> 13;
  return x;
}

template <int WIDTH>
__device__ __forceinline__ unsigned int lds(unsigned int addr) {
  if constexpr (WIDTH == 16) {
    unsigned int a, b, c, d;
    asm volatile("ld.shared.v4.u32 {%0,%1,%2,%3}, [%4];"
                 : "=r"(a), "=r"(b), "=r"(c), "=r"(d)
                 : "r"(addr)
                 : "memory");
    return a + b + c + d;
  } else if constexpr (WIDTH == 8) {
    unsigned int a, b;
    asm volatile("ld.shared.v2.u32 {%0,%1}, [%2];" : "=r"(a), "=r"(b) : "r"(addr) : "memory");
    return a + b;
  } else {
    unsigned int a;
    asm volatile("ld.shared.u32 %0, [%1];" : "=r"(a) : "r"(addr) : "memory");
    return a;
  }
}

// Thread t's k-th load reads element (t*stride + k*33) mod elements: gd::shared_element.
// Why the address carries `dz`: `asm volatile` binds only the front end; ptxas sees plain
// ld.shared and merges re-reads of shared memory that nothing stores to. The previous
// kernel (even/odd address sets) was unrolled 4x by ptxas, which kept 40 of its 64 LDS.128
// (its SASS): the 1.6x excess over the 128 B/clk/SM limit. Here each iteration's
// addresses add dz = acc & zero, the running sum of the previous iteration's data masked
// by a kernel argument that is 0 at run time: the addresses differ as far as ptxas can
// tell, so every LDS stays, and the real addresses are exactly gd::shared_element's.
// The data dependence costs nothing measurable: with 32 warps per SM each iteration's
// 8 loads are 1024 cycles of work per SM against a ~30-cycle LDS latency.
template <int WIDTH>
__global__ void __launch_bounds__(kSharedThreads, 1) bw_shared_kernel(SharedArgs a) {
  extern __shared__ uint4 smem_raw[];
  auto* words = reinterpret_cast<unsigned int*>(smem_raw);
  for (unsigned int w = threadIdx.x; w < a.elements * (WIDTH / 4); w += blockDim.x)
    words[w] = shared_word(w);
  __syncthreads();
  if (blockIdx.x == 0 && threadIdx.x == 0) {
    a.clk[0] = clock64();
    a.clk[1] = globaltimer_ns();
  }
  const unsigned int base = static_cast<unsigned int>(__cvta_generic_to_shared(smem_raw));
  unsigned int even[8], odd[8];
#pragma unroll
  for (int k = 0; k < 8; ++k) {
    const unsigned int e = (threadIdx.x * a.stride + k * 33u) & (a.elements - 1);
    even[k] = base + e * WIDTH;
    odd[k] = base + (e ^ (a.elements / 2)) * WIDTH;
  }
  unsigned int acc = 0, dz = 0;
  const unsigned int pairs = a.iterations / 2;
#pragma unroll 1
  for (unsigned int it = 0; it < pairs; ++it) {
    unsigned int v[8];
#pragma unroll
    for (int k = 0; k < 8; ++k) v[k] = lds<WIDTH>(even[k] + dz);
#pragma unroll
    for (int k = 0; k < 8; ++k) acc += v[k];
    dz = acc & a.zero;
#pragma unroll
    for (int k = 0; k < 8; ++k) v[k] = lds<WIDTH>(odd[k] + dz);
#pragma unroll
    for (int k = 0; k < 8; ++k) acc += v[k];
    dz = acc & a.zero;
  }
  if (a.iterations & 1) {
#pragma unroll
    for (int k = 0; k < 8; ++k) acc += lds<WIDTH>(even[k] + dz);
  }
  add_sum(a.sum, acc);
  if (blockIdx.x == 0 && threadIdx.x == 0) {
    a.clk[2] = clock64();
    a.clk[3] = globaltimer_ns();
  }
}

__constant__ unsigned int c_words[kConstantWords];

// Every thread of the grid reads the same word at the same time: the constant cache's
// broadcast. The index depends on the loop so each load is a real LDC.
__global__ void __launch_bounds__(256)
    bw_constant_kernel(unsigned long long iterations, unsigned int* sum, unsigned long long* clk) {
  if (blockIdx.x == 0 && threadIdx.x == 0) {
    clk[0] = clock64();
    clk[1] = globaltimer_ns();
  }
  unsigned int acc = 0;
  for (unsigned long long it = 0; it < iterations; ++it) {
    const unsigned int b = static_cast<unsigned int>(it * 8) & (kConstantWords - 1);
#pragma unroll
    for (int k = 0; k < 8; ++k) acc += c_words[b + k];
  }
  add_sum(sum, acc);
  if (blockIdx.x == 0 && threadIdx.x == 0) {
    clk[2] = clock64();
    clk[3] = globaltimer_ns();
  }
}
}  // namespace gd::cuda::bw
