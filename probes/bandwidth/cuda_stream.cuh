// The bandwidth probe's stream kernels (cuda.cu includes this once): reads, writes and
// copies on persistent grids and on flat (non-persistent) ones, by the copy engine, and
// the exact checks of what they left.
#pragma once

#include <cuda_runtime.h>

#include "device_clock.cuh"

namespace gd::cuda::bw {
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
}  // namespace gd::cuda::bw
