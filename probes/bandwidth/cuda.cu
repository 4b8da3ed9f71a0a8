// CUDA kernels of the bandwidth probe: streams (read/write/copy through L1, L2 only or the
// read-only path), shared-memory loads at a stride, constant broadcast, host<->device
// copies. The work layout and the bytes counted come from gpudissect/bandwidth.hpp, so the
// host knows exactly what each launch moved and what its checksum must be.
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <memory>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "bandwidth/bandwidth.hpp"
#include "cuda_probes.hpp"
#include "cuda_util.hpp"
#include "device_clock.cuh"

namespace gd::cuda {

namespace bw {

// 16-byte vectors, 4 in flight per thread: a 256-thread block moves 16 KiB per step, so
// with 4 blocks per SM each SM has 64 KiB of loads in flight, well above the ~30 KiB that
// HBM's latency x bandwidth share per SM asks for.
constexpr int kVector = 16;
constexpr int kUnroll = 4;
constexpr int kThreads = 256;
constexpr int kBlocksPerSm = 4;
// SM scaling: one 1024-thread block per SM, kept alone on its SM by a shared-memory
// request larger than half of what an SM has.
constexpr int kScaleThreads = 1024;
constexpr int kMaxRepeats = 64;
constexpr int kSharedThreads = 1024;
constexpr int kSharedBytes = 32 * 1024;
constexpr int kConstantWords = 4096;

struct StreamArgs {
  unsigned long long chunks, blocks, chunks_per_block, passes;
  unsigned int* sum;        // reads: the sum of every word loaded
  unsigned long long* clk;  // [clock start, ns start, clock end, ns end] per launch
  int* smids;               // per block, or null
};

__device__ __forceinline__ int smid() {
  int s;
  asm volatile("mov.u32 %0, %%smid;" : "=r"(s));
  return s;
}

// Loads are volatile asm so the compiler can neither drop nor hoist a re-read of the same
// address out of the pass loop; the cache operator picks the path.
template <int LOAD>
__device__ __forceinline__ uint4 load16(const uint4* p) {
  uint4 v;
  if constexpr (LOAD == 0)
    asm volatile("ld.global.ca.v4.u32 {%0,%1,%2,%3}, [%4];"
                 : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
                 : "l"(p)
                 : "memory");
  else if constexpr (LOAD == 1)
    asm volatile("ld.global.cg.v4.u32 {%0,%1,%2,%3}, [%4];"
                 : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
                 : "l"(p)
                 : "memory");
  else if constexpr (LOAD == 2)
    asm volatile("ld.global.nc.v4.u32 {%0,%1,%2,%3}, [%4];"
                 : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
                 : "l"(p)
                 : "memory");
  // 3: weak load that never allocates in L1 (BwLoad::no_allocate).
  else if constexpr (LOAD == 3)
    asm volatile("ld.global.L1::no_allocate.v4.u32 {%0,%1,%2,%3}, [%4];"
                 : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
                 : "l"(p)
                 : "memory");
  // 4: the same with the L2 prefetch-size hint (a miss fetches 256 bytes from memory).
  else if constexpr (LOAD == 4)
    asm volatile("ld.global.L1::no_allocate.L2::256B.v4.u32 {%0,%1,%2,%3}, [%4];"
                 : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
                 : "l"(p)
                 : "memory");
  // 5: the default (cached) load with the L2 prefetch-size hint.
  else
    asm volatile("ld.global.L2::256B.v4.u32 {%0,%1,%2,%3}, [%4];"
                 : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
                 : "l"(p)
                 : "memory");
  return v;
}

// STREAMING: st.global.cs (evict first), so written lines do not push anything useful out.
template <bool STREAMING>
__device__ __forceinline__ void store16(uint4* p, uint4 v) {
  if constexpr (STREAMING)
    asm volatile("st.global.cs.v4.u32 [%0], {%1,%2,%3,%4};" ::"l"(p), "r"(v.x), "r"(v.y), "r"(v.z),
                 "r"(v.w)
                 : "memory");
  else
    asm volatile("st.global.v4.u32 [%0], {%1,%2,%3,%4};" ::"l"(p), "r"(v.x), "r"(v.y), "r"(v.z),
                 "r"(v.w)
                 : "memory");
}

__device__ __forceinline__ void begin(const StreamArgs& a) {
  if (a.smids && threadIdx.x == 0) a.smids[blockIdx.x] = smid();
  if (blockIdx.x == 0 && threadIdx.x == 0) {
    a.clk[0] = clock64();
    a.clk[1] = globaltimer_ns();
  }
}

__device__ __forceinline__ void end(const StreamArgs& a) {
  if (blockIdx.x == 0 && threadIdx.x == 0) {
    a.clk[2] = clock64();
    a.clk[3] = globaltimer_ns();
  }
}

__device__ __forceinline__ void add_sum(unsigned int* sum, unsigned int acc) {
  acc = __reduce_add_sync(0xffffffffu, acc);
  if ((threadIdx.x & 31) == 0) atomicAdd(sum, acc);
}

// The first chunk this block moves and the distance to its next one, in chunks: see
// gd::stream_chunk (interleaved, so at any moment the whole grid works on one compact
// window of memory, as DRAM pages like it).
__device__ __forceinline__ unsigned long long first_chunk(const StreamArgs& a) {
  return a.chunks <= a.blocks ? blockIdx.x % a.chunks : blockIdx.x;
}

template <int LOAD, int THREADS>
__global__ void __launch_bounds__(THREADS)
    bw_read_kernel(const uint4* __restrict__ buf, StreamArgs a) {
  begin(a);
  constexpr unsigned long long kChunk = THREADS * kUnroll;  // in uint4
  unsigned int acc = 0;
  const uint4* start = buf + first_chunk(a) * kChunk + threadIdx.x;
  const unsigned long long step = a.blocks * kChunk;
  for (unsigned long long pass = 0; pass < a.passes; ++pass) {
    const uint4* p = start;
    for (unsigned long long j = 0; j < a.chunks_per_block; ++j, p += step) {
      uint4 v[kUnroll];
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) v[u] = load16<LOAD>(p + u * THREADS);
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) acc += v[u].x + v[u].y + v[u].z + v[u].w;
    }
  }
  add_sum(a.sum, acc);
  end(a);
}

// Reads with one 16-byte vector per thread per chunk (a 4 KiB chunk for 256 threads), the
// (pass, step) loops flattened into passes x chunks_per_block loads per thread
// (gd::stream_chunk_flattened), kUnroll of them in flight: each block keeps 4 chunks in
// flight even when it owns a single chunk, and every block reads data of its own from
// blocks x 4 KiB (2.06 MiB on an H200) on, where the 16 KiB-chunk kernel needs 8.25 MiB.
template <int LOAD>
__global__ void __launch_bounds__(kThreads)
    bw_read_rot_kernel(const uint4* __restrict__ buf, StreamArgs a) {
  begin(a);
  constexpr unsigned long long kChunk = kThreads;  // in uint4
  unsigned int acc = 0;
  const uint4* base = buf + first_chunk(a) * kChunk + threadIdx.x;
  const unsigned long long step = a.blocks * kChunk;
  const unsigned long long cpb = a.chunks_per_block;
  const unsigned long long total = a.passes * cpb;
  const uint4* p = base;
  unsigned long long j = 0, k = 0;
  for (; k + kUnroll <= total; k += kUnroll) {
    uint4 v[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      v[u] = load16<LOAD>(p);
      p += step;
      if (++j == cpb) {
        j = 0;
        p = base;
      }
    }
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) acc += v[u].x + v[u].y + v[u].z + v[u].w;
  }
  for (; k < total; ++k) {
    const uint4 v = load16<LOAD>(p);
    acc += v.x + v.y + v.z + v.w;
    p += step;
    if (++j == cpb) {
      j = 0;
      p = base;
    }
  }
  add_sum(a.sum, acc);
  end(a);
}

// Reads by the copy engine: thread 0 issues one cp.async.bulk of a whole 16 KiB chunk
// (the persistent layout's chunk) into one of kBulkStages shared-memory stages, completing
// on that stage's mbarrier (expect_tx of the chunk's bytes); the block waits on it, every
// thread sums its 4 vectors of the stage from shared memory (the data is consumed and
// checked like any read's), and the stage is refilled with the chunk kBulkStages ahead.
// Chunks follow gd::stream_chunk_flattened. 3 stages x 16 KiB x 4 blocks = 192 KiB in
// flight per SM, against the ~30 KiB HBM's latency x bandwidth asks per SM.
constexpr int kBulkStages = 3;
constexpr int kBulkChunkBytes = kThreads * kUnroll * kVector;
constexpr int kBulkSmem = kBulkStages * kBulkChunkBytes;

__device__ __forceinline__ void bulk_issue(unsigned int dst, const void* src, unsigned int bar) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(bar),
               "n"(kBulkChunkBytes)
               : "memory");
  asm volatile(
      "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::
          "r"(dst),
      "l"(src), "n"(kBulkChunkBytes), "r"(bar)
      : "memory");
}

__device__ __forceinline__ void bulk_wait(unsigned int bar, unsigned int parity) {
  asm volatile(
      "{\n"
      ".reg .pred p;\n"
      "WAIT_%=:\n"
      "mbarrier.try_wait.parity.shared::cta.b64 p, [%0], %1;\n"
      "@!p bra WAIT_%=;\n"
      "}\n" ::"r"(bar),
      "r"(parity)
      : "memory");
}

__global__ void __launch_bounds__(kThreads)
    bw_read_bulk_kernel(const uint4* __restrict__ buf, StreamArgs a) {
  extern __shared__ __align__(128) uint4 stage[];
  __shared__ __align__(8) unsigned long long bar[kBulkStages];
  begin(a);
  constexpr unsigned long long kChunk = kBulkChunkBytes / kVector;  // in uint4
  const unsigned int s0 = static_cast<unsigned int>(__cvta_generic_to_shared(stage));
  const unsigned int b0 = static_cast<unsigned int>(__cvta_generic_to_shared(bar));
  const unsigned long long cpb = a.chunks_per_block;
  const unsigned long long total = a.passes * cpb;
  const uint4* base = buf + first_chunk(a) * kChunk;
  const unsigned long long step = a.blocks * kChunk;
  const uint4* next = base;  // thread 0: the next chunk to issue
  unsigned long long next_j = 0;
  if (threadIdx.x == 0) {
    for (int s = 0; s < kBulkStages; ++s)
      asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(b0 + 8 * s) : "memory");
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    for (unsigned long long k = 0; k < kBulkStages && k < total; ++k) {
      bulk_issue(s0 + unsigned(k) * kBulkChunkBytes, next, b0 + 8 * unsigned(k));
      next += step;
      if (++next_j == cpb) {
        next_j = 0;
        next = base;
      }
    }
  }
  __syncthreads();
  unsigned int acc = 0;
  int s = 0;
  unsigned int parity = 0;
  for (unsigned long long k = 0; k < total; ++k) {
    bulk_wait(b0 + 8 * s, parity);
    const uint4* st = stage + s * kChunk + threadIdx.x;
    uint4 v[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) v[u] = st[u * kThreads];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) acc += v[u].x + v[u].y + v[u].z + v[u].w;
    __syncthreads();  // every thread has read stage s: it may be refilled
    if (threadIdx.x == 0 && k + kBulkStages < total) {
      bulk_issue(s0 + unsigned(s) * kBulkChunkBytes, next, b0 + 8 * s);
      next += step;
      if (++next_j == cpb) {
        next_j = 0;
        next = base;
      }
    }
    if (++s == kBulkStages) {
      s = 0;
      parity ^= 1u;
    }
  }
  add_sum(a.sum, acc);
  end(a);
}

// Copies by the copy engine both ways: no thread touches the data. One warp per block,
// lane 0 alone: it waits on a stage's mbarrier (the chunk has arrived), stores the stage to
// the same chunk of the destination with cp.async.bulk.global.shared::cta.bulk_group and
// commits that group; then, once cp.async.bulk.wait_group.read 1 says the previous chunk's
// store has read its stage, refills that stage with the chunk kBulkStages ahead. Chunks
// follow gd::stream_chunk_flattened (the read_bulk order); the destination equals the
// source (the engine adds nothing). In flight per block: kBulkStages - 1 loads and up to
// 2 stores of 16 KiB (4 blocks per SM: 128 KiB of loads).
constexpr int kBulkCopyThreads = 32;

__device__ __forceinline__ void bulk_store(void* dst, unsigned int src) {
  asm volatile("cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], %2;" ::"l"(dst), "r"(src),
               "n"(kBulkChunkBytes)
               : "memory");
  asm volatile("cp.async.bulk.commit_group;" ::: "memory");
}

__global__ void __launch_bounds__(kBulkCopyThreads)
    bw_copy_bulk_kernel(const uint4* __restrict__ src, uint4* __restrict__ dst, StreamArgs a) {
  extern __shared__ __align__(128) uint4 stage[];
  __shared__ __align__(8) unsigned long long bar[kBulkStages];
  begin(a);
  if (threadIdx.x != 0) return;
  constexpr unsigned long long kChunk = kBulkChunkBytes / kVector;  // in uint4
  const unsigned int s0 = static_cast<unsigned int>(__cvta_generic_to_shared(stage));
  const unsigned int b0 = static_cast<unsigned int>(__cvta_generic_to_shared(bar));
  const unsigned long long cpb = a.chunks_per_block;
  const unsigned long long total = a.passes * cpb;
  const unsigned long long first = first_chunk(a) * kChunk;
  const unsigned long long step = a.blocks * kChunk;
  unsigned long long ld = first, ld_j = 0;  // the next chunk to load (offset in uint4)
  unsigned long long st = first, st_j = 0;  // the next chunk to store
  for (int s = 0; s < kBulkStages; ++s)
    asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(b0 + 8 * s) : "memory");
  asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  for (unsigned long long k = 0; k < kBulkStages && k < total; ++k) {
    bulk_issue(s0 + unsigned(k) * kBulkChunkBytes, src + ld, b0 + 8 * unsigned(k));
    ld += step;
    if (++ld_j == cpb) {
      ld_j = 0;
      ld = first;
    }
  }
  int s = 0, prev = kBulkStages - 1;
  unsigned int parity = 0;
  for (unsigned long long k = 0; k < total; ++k) {
    bulk_wait(b0 + 8 * s, parity);
    // The stage was written by the copy engine and is read by it next; the proxy fence
    // orders the completed load (seen through the mbarrier) before the store's read.
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
    bulk_store(dst + st, s0 + unsigned(s) * kBulkChunkBytes);
    st += step;
    if (++st_j == cpb) {
      st_j = 0;
      st = first;
    }
    // Chunk k - 1's store has read stage `prev`: refill it with chunk k - 1 + kBulkStages.
    if (k >= 1 && k - 1 + kBulkStages < total) {
      asm volatile("cp.async.bulk.wait_group.read 1;" ::: "memory");
      bulk_issue(s0 + unsigned(prev) * kBulkChunkBytes, src + ld, b0 + 8 * prev);
      ld += step;
      if (++ld_j == cpb) {
        ld_j = 0;
        ld = first;
      }
    }
    prev = s;
    if (++s == kBulkStages) {
      s = 0;
      parity ^= 1u;
    }
  }
  asm volatile("cp.async.bulk.wait_group 0;" ::: "memory");  // every store done
  end(a);
}

// The exact check of a copy that leaves the destination equal to the source (word i = i):
// the number of words of the whole buffer that differ.
__global__ void bw_mismatch_kernel(const uint4* buf, unsigned long long vecs, unsigned int* bad) {
  unsigned int n = 0;
  for (unsigned long long i = blockIdx.x * 256ull + threadIdx.x; i < vecs;
       i += gridDim.x * 256ull) {
    const uint4 v = buf[i];
    const unsigned int w = static_cast<unsigned int>(i * 4);
    n += (v.x != w) + (v.y != w + 1) + (v.z != w + 2) + (v.w != w + 3);
  }
  add_sum(bad, n);
}

// Pass p stores word i = i + p: full 16-byte stores, a warp covers 512 contiguous bytes.
template <int THREADS, bool STREAMING>
__global__ void __launch_bounds__(THREADS) bw_write_kernel(uint4* __restrict__ buf, StreamArgs a) {
  begin(a);
  constexpr unsigned long long kChunk = THREADS * kUnroll;
  const unsigned long long first = first_chunk(a) * kChunk + threadIdx.x;
  const unsigned long long step = a.blocks * kChunk;
  for (unsigned long long pass = 0; pass < a.passes; ++pass) {
    unsigned long long e = first;
    for (unsigned long long j = 0; j < a.chunks_per_block; ++j, e += step) {
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) {
        const unsigned int w = static_cast<unsigned int>((e + u * THREADS) * 4 + pass);
        store16<STREAMING>(buf + e + u * THREADS, make_uint4(w, w + 1, w + 2, w + 3));
      }
    }
  }
  end(a);
}

template <int LOAD, int THREADS, bool STREAMING>
__global__ void __launch_bounds__(THREADS)
    bw_copy_kernel(const uint4* __restrict__ src, uint4* __restrict__ dst, StreamArgs a) {
  begin(a);
  constexpr unsigned long long kChunk = THREADS * kUnroll;
  const unsigned long long first = first_chunk(a) * kChunk + threadIdx.x;
  const unsigned long long step = a.blocks * kChunk;
  for (unsigned long long pass = 0; pass < a.passes; ++pass) {
    const unsigned int p = static_cast<unsigned int>(pass);
    unsigned long long e = first;
    for (unsigned long long j = 0; j < a.chunks_per_block; ++j, e += step) {
      uint4 v[kUnroll];
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) v[u] = load16<LOAD>(src + e + u * THREADS);
#pragma unroll
      for (int u = 0; u < kUnroll; ++u)
        store16<STREAMING>(dst + e + u * THREADS,
                           make_uint4(v[u].x + p, v[u].y + p, v[u].z + p, v[u].w + p));
    }
  }
  end(a);
}

__global__ void bw_fill_kernel(unsigned int* buf, unsigned long long words) {
  for (unsigned long long i = blockIdx.x * 256ull + threadIdx.x; i < words; i += gridDim.x * 256ull)
    buf[i] = static_cast<unsigned int>(i);
}

// The trusted check of what a write or copy left: the sum of every word.
__global__ void bw_sum_kernel(const uint4* buf, unsigned long long vecs, unsigned int* sum) {
  unsigned int acc = 0;
  for (unsigned long long i = blockIdx.x * 256ull + threadIdx.x; i < vecs;
       i += gridDim.x * 256ull) {
    const uint4 v = buf[i];
    acc += v.x + v.y + v.z + v.w;
  }
  add_sum(sum, acc);
}

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
// (as its SASS showed): the 1.6x excess over the 128 B/clk/SM limit. Here each iteration's
// addresses add dz = acc & zero, the running sum of the previous iteration's data masked
// by a kernel argument that is 0 at run time: the addresses differ as far as ptxas can
// tell, so every LDS stays, and the real addresses are exactly gd::shared_element's. The
// data dependence costs nothing measurable: with 32 warps per SM each iteration's 8 loads
// are 1024 cycles of work per SM against a ~30-cycle LDS latency.
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

// Non-persistent ("flat") grids, gd::stream_layout_flat: block i moves chunk i mod chunks
// in pass i / chunks, once, and exits. Blocks start in index order, so the grid streams
// the buffer front to back `passes` times; a pass's block and the next pass's block of the
// same chunk are `chunks` blocks apart (the probe runs these only past 2x the L2, where
// chunks is many times the blocks an H200 holds), so the last pass's value is what stays.
// No block lives long enough to read the SM clock: the probe uses the clock the other
// kernels measured.
struct FlatArgs {
  unsigned int chunks, passes;
};

template <bool STREAMING, int UNROLL>
__global__ void __launch_bounds__(kThreads)
    bw_write_flat_kernel(uint4* __restrict__ buf, FlatArgs a) {
  const unsigned int pass = blockIdx.x / a.chunks;
  const unsigned int chunk = blockIdx.x - pass * a.chunks;
  const unsigned long long e =
      static_cast<unsigned long long>(chunk) * (kThreads * UNROLL) + threadIdx.x;
#pragma unroll
  for (int u = 0; u < UNROLL; ++u) {
    // No pass in the value: blocks of different passes write the same chunk in no set
    // order, so only a pass-independent value leaves a checkable result.
    const unsigned int w = static_cast<unsigned int>((e + u * kThreads) * 4);
    store16<STREAMING>(buf + e + u * kThreads, make_uint4(w, w + 1, w + 2, w + 3));
  }
}

template <int LOAD, bool STREAMING, int UNROLL, int THREADS = kThreads>
__global__ void __launch_bounds__(THREADS)
    bw_copy_flat_kernel(const uint4* __restrict__ src, uint4* __restrict__ dst, FlatArgs a) {
  const unsigned int pass = blockIdx.x / a.chunks;
  const unsigned int chunk = blockIdx.x - pass * a.chunks;
  const unsigned long long e =
      static_cast<unsigned long long>(chunk) * (THREADS * UNROLL) + threadIdx.x;
  uint4 v[UNROLL];
#pragma unroll
  for (int u = 0; u < UNROLL; ++u) v[u] = load16<LOAD>(src + e + u * THREADS);
#pragma unroll
  for (int u = 0; u < UNROLL; ++u)
    store16<STREAMING>(dst + e + u * THREADS, v[u]);  // pass-independent: see the write
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

}  // namespace bw

namespace {

int load_index(BwLoad l) {
  switch (l) {
    case BwLoad::cached:
      return 0;
    case BwLoad::l2_only:
      return 1;
    case BwLoad::no_allocate:
      return 3;
    case BwLoad::bulk:
      return 6;
    default:
      return 2;
  }
}

class CudaBandwidth final : public BandwidthKernels {
 public:
  CudaBandwidth(int device, cudaStream_t stream, const DeviceInfo& info)
      : device_(device), stream_(stream), info_(info) {
    check(cudaMalloc(&sum_, sizeof(unsigned int)), "cudaMalloc (sum)");
    check(cudaMalloc(&clk_, sizeof(unsigned long long) * 4 * bw::kMaxRepeats),
          "cudaMalloc (clock)");
    check(cudaMalloc(&smids_, sizeof(int) * 4096), "cudaMalloc (smids)");
    check(cudaEventCreate(&e0_), "cudaEventCreate");
    check(cudaEventCreate(&e1_), "cudaEventCreate");
    // One block per SM for the scaling kernels: ask for more shared memory than half an SM.
    scale_smem_ = static_cast<int>(info.shared_per_sm_bytes.value_or(0) / 2 + 1024);
    if (info.shared_per_block_optin_bytes &&
        uint64_t(scale_smem_) > *info.shared_per_block_optin_bytes)
      scale_smem_ = static_cast<int>(*info.shared_per_block_optin_bytes);
    for (const void* k : {(const void*)bw::bw_read_kernel<0, bw::kScaleThreads>,
                          (const void*)bw::bw_read_kernel<1, bw::kScaleThreads>})
      check(cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, scale_smem_),
            "cudaFuncSetAttribute (scaling kernels)");
    check(cudaFuncSetAttribute((const void*)bw::bw_read_bulk_kernel,
                               cudaFuncAttributeMaxDynamicSharedMemorySize, bw::kBulkSmem),
          "cudaFuncSetAttribute (bulk read kernel)");
    check(cudaFuncSetAttribute((const void*)bw::bw_copy_bulk_kernel,
                               cudaFuncAttributeMaxDynamicSharedMemorySize, bw::kBulkSmem),
          "cudaFuncSetAttribute (bulk copy kernel)");
  }

  ~CudaBandwidth() override {
    src_.release();
    dst_.release();
    flush_.release();
    dev_host_.release();
    if (pinned_) cudaFreeHost(pinned_);
    if (sum_) cudaFree(sum_);
    if (clk_) cudaFree(clk_);
    if (smids_) cudaFree(smids_);
    if (e0_) cudaEventDestroy(e0_);
    if (e1_) cudaEventDestroy(e1_);
    if (stream2_) cudaStreamDestroy(stream2_);
  }

  uint64_t stream_chunk_bytes(const StreamRequest& r) const override {
    if (r.flat && r.blocks == 0 && r.op != BwOp::read)
      return uint64_t(r.threads == 512 ? 512 : bw::kThreads) *
             (r.unroll == 1 || r.unroll == 2 ? r.unroll : bw::kUnroll) * bw::kVector;
    if (r.op == BwOp::read && !r.flat && r.blocks == 0 && r.unroll == 1 && r.load != BwLoad::bulk)
      return uint64_t(bw::kThreads) * bw::kVector;
    return uint64_t(r.blocks > 0 ? bw::kScaleThreads : bw::kThreads) * bw::kUnroll * bw::kVector;
  }
  int stream_blocks() const override { return info_.compute_units * bw::kBlocksPerSm; }

  Support supports(BwOp op, BwLoad load) const override {
    if (load == BwLoad::texture)
      return Support::no("texture streams are not implemented on CUDA yet");
    if (load == BwLoad::bulk && op == BwOp::write)
      return Support::no("bulk (copy-engine) streams are reads and copies only");
    // Copies read through cached, l2_only or (flat grids only) the read-only path.
    return Support::yes();
  }

  StreamTiming stream(const StreamRequest& r) override {
    if (r.repeats < 1 || r.repeats > bw::kMaxRepeats)
      throw BackendError("stream: bad repeat count");
    if (!supports(r.op, r.load).ok) throw BackendError("stream: unsupported load");
    if (r.blocks > info_.compute_units) throw BackendError("stream: more blocks than SMs");
    const uint64_t blocks = r.blocks > 0 ? uint64_t(r.blocks) : uint64_t(stream_blocks());
    StreamTiming t;
    const bool flat = r.flat && r.op != BwOp::read && r.blocks == 0;
    t.layout = flat ? stream_layout_flat(r.buffer_bytes, stream_chunk_bytes(r))
                    : stream_layout(r.buffer_bytes, blocks, stream_chunk_bytes(r));
    if (flat && (t.layout.chunks * r.passes > 0x7fffffffull || t.layout.chunks > 0xffffffffull))
      throw BackendError("stream: flat grid larger than 2^31 blocks");
    const StreamLayout& l = t.layout;
    const uint64_t bytes = l.buffer_bytes();
    if (r.op != BwOp::write) prepare_source(bytes);
    uint4* dst = nullptr;
    if (r.op != BwOp::read) dst = static_cast<uint4*>(dst_.get(bytes, "the destination buffer"));
    const auto* src =
        static_cast<const uint4*>(src_.get(std::max<uint64_t>(bytes, 16), "the source"));
    void* flush = nullptr;
    const std::size_t flush_bytes = 2 * info_.l2_bytes.value_or(64u << 20);
    if (r.flush_l2) flush = flush_.get(flush_bytes, "the cache-flush buffer");

    bw::StreamArgs a{l.chunks,
                     l.blocks,
                     l.chunks_per_block,
                     r.passes,
                     sum_,
                     clk_,
                     r.blocks > 0 ? smids_ : nullptr};
    check(cudaMemsetAsync(sum_, 0, sizeof(unsigned int), stream_), "cudaMemsetAsync");
    const int li = load_index(r.load);
    const bool scale = r.blocks > 0;
    const int smem = scale ? scale_smem_ : 0;
    const int unroll = r.unroll > 0 ? r.unroll : bw::kUnroll;
    auto launch_flat = [&] {
      const bw::FlatArgs fa{static_cast<unsigned>(l.chunks), static_cast<unsigned>(r.passes)};
      const dim3 grid(static_cast<unsigned>(l.chunks * r.passes));
      const int li = load_index(r.load);
      const bool cs = r.streaming_stores;
#define GD_FLAT_WRITE(U)                                                            \
  if (cs)                                                                           \
    bw::bw_write_flat_kernel<true, U><<<grid, bw::kThreads, 0, stream_>>>(dst, fa); \
  else                                                                              \
    bw::bw_write_flat_kernel<false, U><<<grid, bw::kThreads, 0, stream_>>>(dst, fa);
#define GD_FLAT_COPY(L, U)                                                                 \
  if (cs)                                                                                  \
    bw::bw_copy_flat_kernel<L, true, U><<<grid, bw::kThreads, 0, stream_>>>(src, dst, fa); \
  else                                                                                     \
    bw::bw_copy_flat_kernel<L, false, U><<<grid, bw::kThreads, 0, stream_>>>(src, dst, fa);
      if (r.op == BwOp::write) {
        if (unroll == 1) {
          GD_FLAT_WRITE(1)
        } else {
          GD_FLAT_WRITE(4)
        }
      } else if (li == 0 && r.threads == 512 && unroll == 2 && !r.prefetch_256) {
        if (cs)
          bw::bw_copy_flat_kernel<0, true, 2, 512><<<grid, 512, 0, stream_>>>(src, dst, fa);
        else
          bw::bw_copy_flat_kernel<0, false, 2, 512><<<grid, 512, 0, stream_>>>(src, dst, fa);
      } else if (r.threads != 0 && r.threads != bw::kThreads) {
        throw BackendError("stream: no flat kernel for this block size");
      } else if (li == 0 && r.prefetch_256 && unroll == 1) {
        GD_FLAT_COPY(5, 1)
      } else if (li == 2) {
        if (unroll == 1) {
          GD_FLAT_COPY(2, 1)
        } else {
          GD_FLAT_COPY(2, 4)
        }
      } else if (unroll == 1) {
        GD_FLAT_COPY(0, 1)
      } else {
        GD_FLAT_COPY(0, 4)
      }
#undef GD_FLAT_WRITE
#undef GD_FLAT_COPY
      check(cudaGetLastError(), "launching a flat stream kernel");
    };
    auto launch = [&](int rep) {
      if (flat) return launch_flat();
      a.clk = clk_ + 4 * rep;
      const dim3 grid(static_cast<unsigned>(l.blocks));
      switch (r.op) {
        case BwOp::read:
          if (scale) {
            if (li == 0)
              bw::bw_read_kernel<0, bw::kScaleThreads>
                  <<<grid, bw::kScaleThreads, smem, stream_>>>(src, a);
            else
              bw::bw_read_kernel<1, bw::kScaleThreads>
                  <<<grid, bw::kScaleThreads, smem, stream_>>>(src, a);
          } else if (li == 6) {
            bw::bw_read_bulk_kernel<<<grid, bw::kThreads, bw::kBulkSmem, stream_>>>(src, a);
          } else if (r.unroll == 1) {
            const int rl = li == 3 ? (r.prefetch_256 ? 4 : 3) : li == 0 && r.prefetch_256 ? 5 : li;
            if (rl == 0)
              bw::bw_read_rot_kernel<0><<<grid, bw::kThreads, 0, stream_>>>(src, a);
            else if (rl == 1)
              bw::bw_read_rot_kernel<1><<<grid, bw::kThreads, 0, stream_>>>(src, a);
            else if (rl == 3)
              bw::bw_read_rot_kernel<3><<<grid, bw::kThreads, 0, stream_>>>(src, a);
            else if (rl == 4)
              bw::bw_read_rot_kernel<4><<<grid, bw::kThreads, 0, stream_>>>(src, a);
            else if (rl == 5)
              bw::bw_read_rot_kernel<5><<<grid, bw::kThreads, 0, stream_>>>(src, a);
            else
              throw BackendError("stream: no rotating kernel for this load");
          } else if (li == 0) {
            bw::bw_read_kernel<0, bw::kThreads><<<grid, bw::kThreads, 0, stream_>>>(src, a);
          } else if (li == 1) {
            bw::bw_read_kernel<1, bw::kThreads><<<grid, bw::kThreads, 0, stream_>>>(src, a);
          } else if (li == 3) {
            bw::bw_read_kernel<3, bw::kThreads><<<grid, bw::kThreads, 0, stream_>>>(src, a);
          } else {
            bw::bw_read_kernel<2, bw::kThreads><<<grid, bw::kThreads, 0, stream_>>>(src, a);
          }
          break;
        case BwOp::write:
          if (scale) throw BackendError("stream: scaling runs reads only");
          if (r.streaming_stores)
            bw::bw_write_kernel<bw::kThreads, true><<<grid, bw::kThreads, 0, stream_>>>(dst, a);
          else
            bw::bw_write_kernel<bw::kThreads, false><<<grid, bw::kThreads, 0, stream_>>>(dst, a);
          break;
        case BwOp::copy:
          if (scale) throw BackendError("stream: scaling runs reads only");
          if (li == 6) {
            bw::bw_copy_bulk_kernel<<<grid, bw::kBulkCopyThreads, bw::kBulkSmem, stream_>>>(src,
                                                                                            dst, a);
            break;
          }
          if (li >= 2) throw BackendError("stream: this copy runs on flat grids only");
          if (li == 1 && r.streaming_stores)
            bw::bw_copy_kernel<1, bw::kThreads, true>
                <<<grid, bw::kThreads, 0, stream_>>>(src, dst, a);
          else if (li == 1)
            bw::bw_copy_kernel<1, bw::kThreads, false>
                <<<grid, bw::kThreads, 0, stream_>>>(src, dst, a);
          else if (r.streaming_stores)
            bw::bw_copy_kernel<0, bw::kThreads, true>
                <<<grid, bw::kThreads, 0, stream_>>>(src, dst, a);
          else
            bw::bw_copy_kernel<0, bw::kThreads, false>
                <<<grid, bw::kThreads, 0, stream_>>>(src, dst, a);
          break;
      }
      check(cudaGetLastError(), "launching a stream kernel");
    };

    // The bulk copy leaves dst equal to src: start from bytes no copy could leave, so a
    // launch that stores nothing (or part) cannot pass the check below.
    const bool exact_copy = r.op == BwOp::copy && li == 6;
    if (exact_copy) check(cudaMemsetAsync(dst, 0xff, bytes, stream_), "poisoning the destination");
    int launches = 0;
    if (!r.flush_l2) {  // one untimed launch warms the caches and the TLB
      launch(0);
      ++launches;
    }
    std::vector<float> ms(r.repeats);
    std::vector<unsigned long long> clk(4 * r.repeats);
    for (int rep = 0; rep < r.repeats; ++rep) {
      if (flush) check(cudaMemsetAsync(flush, rep & 0xff, flush_bytes, stream_), "flushing the L2");
      check(cudaEventRecord(e0_, stream_), "cudaEventRecord");
      launch(rep);
      ++launches;
      check(cudaEventRecord(e1_, stream_), "cudaEventRecord");
      check(cudaEventSynchronize(e1_), "running a stream kernel");
      check(cudaEventElapsedTime(&ms[rep], e0_, e1_), "cudaEventElapsedTime");
    }
    check(cudaMemcpyAsync(clk.data(), clk_, sizeof(unsigned long long) * clk.size(),
                          cudaMemcpyDeviceToHost, stream_),
          "reading the clocks");
    if (scale) {
      std::vector<int> ids(l.blocks);
      check(cudaMemcpyAsync(ids.data(), smids_, sizeof(int) * ids.size(), cudaMemcpyDeviceToHost,
                            stream_),
            "reading the SM ids");
      check(cudaStreamSynchronize(stream_), "reading the SM ids");
      t.distinct_sms = static_cast<int>(std::set<int>(ids.begin(), ids.end()).size());
    }
    unsigned int got = 0;
    if (r.op == BwOp::read) {
      check(cudaMemcpyAsync(&got, sum_, sizeof got, cudaMemcpyDeviceToHost, stream_),
            "reading the sum");
      check(cudaStreamSynchronize(stream_), "reading the sum");
      const uint32_t want = stream_read_checksum(l, r.passes) * static_cast<uint32_t>(launches);
      if (got != want)
        t.check_error = "read checksum " + std::to_string(got) + ", expected " +
                        std::to_string(want) + ": loads were lost";
    } else if (exact_copy) {
      check(cudaMemsetAsync(sum_, 0, sizeof(unsigned int), stream_), "cudaMemsetAsync");
      bw::bw_mismatch_kernel<<<info_.compute_units * 8, 256, 0, stream_>>>(dst, bytes / 16, sum_);
      check(cudaGetLastError(), "launching the copy check");
      got = read_sum();
      if (got != 0)
        t.check_error = std::to_string(got) + " of " + std::to_string(bytes / 4) +
                        " destination words differ from the source: the copy lost data";
    } else {
      got = sum_of(dst, bytes);
      // The flat grids write the same value on every pass (their passes are unordered).
      const uint32_t want = stream_written_checksum(l, flat ? 1 : r.passes);
      if (got != want)
        t.check_error = "written data sums to " + std::to_string(got) + ", expected " +
                        std::to_string(want) + ": stores were lost";
    }
    for (int rep = 0; rep < r.repeats; ++rep) {
      t.seconds.push_back(ms[rep] / 1000.0);
      const double c = double(clk[4 * rep + 2] - clk[4 * rep]);
      const double ns = double(clk[4 * rep + 3] - clk[4 * rep + 1]);
      // Flat grids leave the clock slots untouched (stale values from an earlier kernel).
      if (!flat && ns > 0 && clk[4 * rep + 2] > clk[4 * rep])
        t.clock_mhz.push_back(c / ns * 1000.0);
    }
    return t;
  }

  Support supports_shared() const override { return Support::yes(); }

  SharedTiming shared(const SharedRequest& r) override {
    if (r.repeats < 1 || r.repeats > bw::kMaxRepeats)
      throw BackendError("shared: bad repeat count");
    SharedTiming t;
    SharedLayout& l = t.layout;
    // Exactly the blocks that fit at once (one wave), so the event time of the launch is
    // the time every SM spent loading: a second, partial wave would leave SMs idle.
    int per_sm = 0;
    const void* fn = r.width_bytes == 4   ? (const void*)bw::bw_shared_kernel<4>
                     : r.width_bytes == 8 ? (const void*)bw::bw_shared_kernel<8>
                                          : (const void*)bw::bw_shared_kernel<16>;
    check(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, fn, bw::kSharedThreads,
                                                        bw::kSharedBytes),
          "cudaOccupancyMaxActiveBlocksPerMultiprocessor (shared)");
    l.blocks = uint64_t(info_.compute_units) * uint64_t(std::max(per_sm, 1));
    l.threads = bw::kSharedThreads;
    l.width_bytes = r.width_bytes;
    l.stride = r.stride;
    l.elements = bw::kSharedBytes / r.width_bytes;
    l.loads_per_iteration = 8;
    // ~2 ms at 128 B/clk/SM when conflict-free.
    l.iterations = r.iterations ? r.iterations : 4096 * 16 / r.width_bytes;
    if (l.iterations > 0xffffffffull) throw BackendError("shared: too many iterations");
    bw::SharedArgs a{l.elements, l.stride, static_cast<unsigned int>(l.iterations), 0u, sum_, clk_};
    check(cudaMemsetAsync(sum_, 0, sizeof(unsigned int), stream_), "cudaMemsetAsync");
    auto launch = [&](int rep) {
      a.clk = clk_ + 4 * rep;
      const dim3 grid(static_cast<unsigned>(l.blocks));
      switch (r.width_bytes) {
        case 4:
          bw::bw_shared_kernel<4><<<grid, bw::kSharedThreads, bw::kSharedBytes, stream_>>>(a);
          break;
        case 8:
          bw::bw_shared_kernel<8><<<grid, bw::kSharedThreads, bw::kSharedBytes, stream_>>>(a);
          break;
        case 16:
          bw::bw_shared_kernel<16><<<grid, bw::kSharedThreads, bw::kSharedBytes, stream_>>>(a);
          break;
        default:
          throw BackendError("shared: width must be 4, 8 or 16 bytes");
      }
      check(cudaGetLastError(), "launching the shared-memory kernel");
    };
    launch(0);
    std::vector<float> ms(r.repeats);
    for (int rep = 0; rep < r.repeats; ++rep) {
      check(cudaEventRecord(e0_, stream_), "cudaEventRecord");
      launch(rep);
      check(cudaEventRecord(e1_, stream_), "cudaEventRecord");
      check(cudaEventSynchronize(e1_), "running the shared-memory kernel");
      check(cudaEventElapsedTime(&ms[rep], e0_, e1_), "cudaEventElapsedTime");
    }
    finish_timing(r.repeats, ms, t.seconds, t.clock_mhz);
    unsigned int got = read_sum();
    const uint32_t want = shared_checksum(l) * static_cast<uint32_t>(r.repeats + 1);
    if (got != want)
      t.check_error =
          "shared checksum " + std::to_string(got) + ", expected " + std::to_string(want);
    return t;
  }

  Support supports_constant() const override { return Support::yes(); }

  ConstantTiming constant(int repeats) override {
    if (repeats < 1 || repeats > bw::kMaxRepeats) throw BackendError("constant: bad repeat count");
    if (!constant_filled_) {
      std::vector<unsigned int> w(bw::kConstantWords);
      for (unsigned i = 0; i < w.size(); ++i) w[i] = i;
      check(cudaMemcpyToSymbolAsync(bw::c_words, w.data(), w.size() * 4, 0, cudaMemcpyHostToDevice,
                                    stream_),
            "filling constant memory");
      constant_filled_ = true;
    }
    const uint64_t iterations = 8192;
    const unsigned blocks = unsigned(info_.compute_units) * 8;
    ConstantTiming t;
    t.bytes_delivered = uint64_t(blocks) * 256 * iterations * 8 * 4;
    check(cudaMemsetAsync(sum_, 0, sizeof(unsigned int), stream_), "cudaMemsetAsync");
    std::vector<float> ms(repeats);
    bw::bw_constant_kernel<<<blocks, 256, 0, stream_>>>(iterations, sum_, clk_);
    for (int rep = 0; rep < repeats; ++rep) {
      check(cudaEventRecord(e0_, stream_), "cudaEventRecord");
      bw::bw_constant_kernel<<<blocks, 256, 0, stream_>>>(iterations, sum_, clk_ + 4 * rep);
      check(cudaGetLastError(), "launching the constant kernel");
      check(cudaEventRecord(e1_, stream_), "cudaEventRecord");
      check(cudaEventSynchronize(e1_), "running the constant kernel");
      check(cudaEventElapsedTime(&ms[rep], e0_, e1_), "cudaEventElapsedTime");
    }
    finish_timing(repeats, ms, t.seconds, t.clock_mhz);
    uint32_t per_thread = 0;
    for (uint64_t it = 0; it < iterations; ++it)
      for (uint32_t k = 0; k < 8; ++k)
        per_thread += ((uint32_t(it) * 8) & (bw::kConstantWords - 1)) + k;
    const uint32_t want = per_thread * blocks * 256u * uint32_t(repeats + 1);
    const unsigned int got = read_sum();
    if (got != want)
      t.check_error =
          "constant checksum " + std::to_string(got) + ", expected " + std::to_string(want);
    return t;
  }

  Support supports_host(bool) const override { return Support::yes(); }
  Support supports_streaming_stores() const override { return Support::yes(); }  // st.global.cs

  HostTiming host(const HostRequest& r) override {
    if (r.bytes == 0 || r.bytes % 4)
      throw BackendError("host: size must be a positive multiple of 4");
    HostTiming t;
    const uint64_t words = r.bytes / 4;
    // Two device buffers (one per direction) and two host buffers of the kind asked for.
    auto* dev = static_cast<unsigned char*>(dev_host_.get(2 * r.bytes, "the host-link buffers"));
    unsigned int* dev_in = reinterpret_cast<unsigned int*>(dev);
    unsigned int* dev_out = reinterpret_cast<unsigned int*>(dev + r.bytes);
    unsigned int* h_in = nullptr;   // host -> device source
    unsigned int* h_out = nullptr;  // device -> host destination
    if (r.pinned) {
      if (pinned_bytes_ < 2 * r.bytes) {
        if (pinned_) cudaFreeHost(pinned_);
        pinned_ = nullptr;
        pinned_bytes_ = 0;
        check(cudaMallocHost(&pinned_, 2 * r.bytes), "cudaMallocHost");
        pinned_bytes_ = 2 * r.bytes;
      }
      h_in = static_cast<unsigned int*>(pinned_);
    } else {
      if (pageable_words_ < 2 * words) {
        pageable_.reset(new unsigned int[2 * words]);  // uninitialised: the fill below touches it
        pageable_words_ = 2 * words;
      }
      h_in = pageable_.get();
    }
    h_out = h_in + words;
    for (uint64_t i = 0; i < words; ++i) h_in[i] = static_cast<unsigned int>(i);
    fill(dev_out, words);
    if (!stream2_)
      check(cudaStreamCreateWithFlags(&stream2_, cudaStreamNonBlocking), "cudaStreamCreate");
    check(cudaStreamSynchronize(stream_), "preparing the host-link buffers");
    auto once = [&] {
      if (r.dir != HostDir::to_host)
        check(cudaMemcpyAsync(dev_in, h_in, r.bytes, cudaMemcpyHostToDevice, stream_),
              "host->device copy");
      if (r.dir != HostDir::to_device)
        check(cudaMemcpyAsync(h_out, dev_out, r.bytes, cudaMemcpyDeviceToHost,
                              r.dir == HostDir::both ? stream2_ : stream_),
              "device->host copy");
      check(cudaStreamSynchronize(stream_), "host-link copy");
      check(cudaStreamSynchronize(stream2_), "host-link copy");
    };
    once();  // warm: first touch of the pages, the driver's staging buffers
    using Clock = std::chrono::steady_clock;
    for (int rep = 0; rep < r.repeats; ++rep) {
      const auto t0 = Clock::now();
      once();
      t.seconds.push_back(std::chrono::duration<double>(Clock::now() - t0).count());
    }
    std::optional<uint32_t> arrived;
    if (r.dir != HostDir::to_host) arrived = sum_of(reinterpret_cast<uint4*>(dev_in), r.bytes);
    t.check_error = host_transfer_error(r.dir, arrived, h_out, r.bytes);
    return t;
  }

  std::optional<std::string> instruction(const std::string& kind) override {
    const std::map<std::string, KernelMemoryOps>& ops = own_memory_ops();
    // kind -> (kernel name fragment, which op)
    static const std::map<std::string, std::pair<std::string, int>> kernels = {
        {"read.cached", {"bw_read_kernelILi0ELi256", 0}},
        {"read.l2_only", {"bw_read_kernelILi1ELi256", 0}},
        {"read.readonly", {"bw_read_kernelILi2ELi256", 0}},
        {"read.no_allocate", {"bw_read_kernelILi3ELi256", 0}},
        {"read.l2_only.rot", {"bw_read_rot_kernelILi1E", 0}},
        {"read.no_allocate.rot", {"bw_read_rot_kernelILi3E", 0}},
        {"read.no_allocate.l2_256.rot", {"bw_read_rot_kernelILi4E", 0}},
        {"read.cached.l2_256.rot", {"bw_read_rot_kernelILi5E", 0}},
        {"read.bulk", {"bw_read_bulk_kernel", 3}},
        {"copy.bulk", {"bw_copy_bulk_kernel", 4}},
        {"copy.cached.flat2.t512", {"bw_copy_flat_kernelILi0ELb0ELi2ELi512E", 2}},
        {"copy.cached.l2_256.streaming.flat1", {"bw_copy_flat_kernelILi5ELb1ELi1E", 2}},
        {"copy.cached.l2_256.flat1", {"bw_copy_flat_kernelILi5ELb0ELi1E", 2}},
        {"scale.cached", {"bw_read_kernelILi0ELi1024", 0}},
        {"scale.l2_only", {"bw_read_kernelILi1ELi1024", 0}},
        {"write", {"bw_write_kernelILi256ELb0", 1}},
        {"write.streaming", {"bw_write_kernelILi256ELb1", 1}},
        {"copy.cached", {"bw_copy_kernelILi0ELi256ELb0", 2}},
        {"copy.l2_only", {"bw_copy_kernelILi1ELi256ELb0", 2}},
        {"copy.cached.streaming", {"bw_copy_kernelILi0ELi256ELb1", 2}},
        {"copy.l2_only.streaming", {"bw_copy_kernelILi1ELi256ELb1", 2}},
        {"write.flat1", {"bw_write_flat_kernelILb0ELi1E", 1}},
        {"write.flat4", {"bw_write_flat_kernelILb0ELi4E", 1}},
        {"write.streaming.flat1", {"bw_write_flat_kernelILb1ELi1E", 1}},
        {"write.streaming.flat4", {"bw_write_flat_kernelILb1ELi4E", 1}},
        {"copy.cached.flat1", {"bw_copy_flat_kernelILi0ELb0ELi1E", 2}},
        {"copy.cached.flat4", {"bw_copy_flat_kernelILi0ELb0ELi4E", 2}},
        {"copy.cached.streaming.flat1", {"bw_copy_flat_kernelILi0ELb1ELi1E", 2}},
        {"copy.cached.streaming.flat4", {"bw_copy_flat_kernelILi0ELb1ELi4E", 2}},
        {"copy.readonly.flat1", {"bw_copy_flat_kernelILi2ELb0ELi1E", 2}},
        {"copy.readonly.flat4", {"bw_copy_flat_kernelILi2ELb0ELi4E", 2}},
        {"copy.readonly.streaming.flat1", {"bw_copy_flat_kernelILi2ELb1ELi1E", 2}},
        {"copy.readonly.streaming.flat4", {"bw_copy_flat_kernelILi2ELb1ELi4E", 2}},
        {"shared.4", {"bw_shared_kernelILi4", 0}},
        {"shared.8", {"bw_shared_kernelILi8", 0}},
        {"shared.16", {"bw_shared_kernelILi16", 0}},
        {"constant", {"bw_constant_kernel", 0}}};
    auto k = kernels.find(kind);
    if (k == kernels.end()) return std::nullopt;
    for (const auto& [fn, op] : ops)
      if (fn.find(k->second.first) != std::string::npos) {
        const std::string s = k->second.second == 0   ? op.load
                              : k->second.second == 1 ? op.store
                              : k->second.second == 3 ? op.bulk + " + " + op.load
                              : k->second.second == 4 ? op.bulk_all
                                                      : op.load + " + " + op.store;
        if (!s.empty() && s != " + ") return s;
      }
    return std::nullopt;
  }

 private:
  // The source holds word i = i; refilled only when it grows (no kernel writes it).
  void prepare_source(uint64_t bytes) {
    if (bytes <= src_filled_) return;
    auto* p = static_cast<unsigned int*>(src_.get(bytes, "the source buffer"));
    fill(p, src_.size() / 4);
    src_filled_ = src_.size();
  }
  void fill(unsigned int* p, uint64_t words) {
    bw::bw_fill_kernel<<<info_.compute_units * 8, 256, 0, stream_>>>(p, words);
    check(cudaGetLastError(), "filling a buffer");
  }
  unsigned int sum_of(const uint4* p, uint64_t bytes) {
    check(cudaMemsetAsync(sum_, 0, sizeof(unsigned int), stream_), "cudaMemsetAsync");
    bw::bw_sum_kernel<<<info_.compute_units * 8, 256, 0, stream_>>>(p, bytes / 16, sum_);
    check(cudaGetLastError(), "launching the check");
    return read_sum();
  }
  unsigned int read_sum() {
    unsigned int got = 0;
    check(cudaMemcpyAsync(&got, sum_, sizeof got, cudaMemcpyDeviceToHost, stream_),
          "reading the sum");
    check(cudaStreamSynchronize(stream_), "running the check");
    return got;
  }
  void finish_timing(int repeats, const std::vector<float>& ms, std::vector<double>& seconds,
                     std::vector<double>& clock) {
    std::vector<unsigned long long> clk(4 * repeats);
    check(cudaMemcpyAsync(clk.data(), clk_, sizeof(unsigned long long) * clk.size(),
                          cudaMemcpyDeviceToHost, stream_),
          "reading the clocks");
    check(cudaStreamSynchronize(stream_), "reading the clocks");
    for (int rep = 0; rep < repeats; ++rep) {
      seconds.push_back(ms[rep] / 1000.0);
      const double c = double(clk[4 * rep + 2] - clk[4 * rep]);
      const double ns = double(clk[4 * rep + 3] - clk[4 * rep + 1]);
      if (ns > 0 && clk[4 * rep + 2] > clk[4 * rep]) clock.push_back(c / ns * 1000.0);
    }
  }

  int device_;
  cudaStream_t stream_;
  cudaStream_t stream2_ = nullptr;
  DeviceInfo info_;
  int scale_smem_ = 0;
  DeviceBuffer src_, dst_, flush_, dev_host_;
  uint64_t src_filled_ = 0;
  unsigned int* sum_ = nullptr;
  unsigned long long* clk_ = nullptr;
  int* smids_ = nullptr;
  cudaEvent_t e0_ = nullptr, e1_ = nullptr;
  void* pinned_ = nullptr;
  uint64_t pinned_bytes_ = 0;
  std::unique_ptr<unsigned int[]> pageable_;
  uint64_t pageable_words_ = 0;
  bool constant_filled_ = false;
};

}  // namespace

std::unique_ptr<BandwidthKernels> make_bandwidth_kernels(int device, cudaStream_t stream,
                                                         const DeviceInfo& info) {
  return std::make_unique<CudaBandwidth>(device, stream, info);
}

}  // namespace gd::cuda
