// The atomics probe's CUDA device code, part 3 of 3 (cuda.cu includes it once): the
// throughput kernels and the table that picks one per request.
#pragma once

#include <map>
#include <string>
#include <tuple>

#include "atomics/cuda_ptx.cuh"
#include "cuda_probes.hpp"

namespace gd::cuda {

namespace at {
// ---- throughput ----

enum Op { kAdd = 0, kMin = 1, kMax = 2, kCasOp = 3 };
enum Type { kI32 = 0, kU64 = 1, kF32 = 2, kF64 = 3, kF16x2 = 4, kBf16x2 = 5 };
enum Scope { kCta = 0, kGpu = 1, kSys = 2 };

struct TpArgs {
  void* target;         // global: the target words; shared: where each block's array goes
  unsigned contention;  // gd::Contention
  unsigned ways;
  unsigned long long iterations;
  unsigned words_per_block;  // shared
  unsigned initial;          // shared: every word's start value
  unsigned* per_thread;      // the returned values' xor (keeps them live), or CAS successes
  unsigned long long* clk;   // [clock start, ns start, clock end, ns end]
};

// gd::target_word, global space.
__device__ __forceinline__ unsigned long long global_word(unsigned contention,
                                                          unsigned long long g) {
  if (contention == 2) return (g / 32) * 32;       // same_per_warp
  if (contention == 3) return blockIdx.x * 32ull;  // same_per_block
  if (contention == 4) return 0;                   // same_gpu
  return g;
}
// gd::target_word, shared space (within the block's array).
__device__ __forceinline__ unsigned local_word(unsigned contention, unsigned ways, unsigned t) {
  const unsigned warp = t / 32, lane = t % 32;
  if (contention == 0) return warp * 32 + lane;
  if (contention == 1) {
    const unsigned banks = 32 / ways;
    return warp * 32 * ways + lane % banks + (lane / banks) * 32;
  }
  if (contention == 2) return warp * 32;
  return 0;
}

// gd::minmax_operand.
__device__ __forceinline__ int minmax_operand(int op, unsigned long long g, unsigned long long k) {
  const int v = int((g % 977) * 2048 + (k % 2048));
  return op == kMin ? -v : v;
}

template <int SCOPE>
__device__ __forceinline__ unsigned add_u32(unsigned* p, unsigned v) {
  unsigned old;
  if (SCOPE == kCta)
    asm volatile("atom.relaxed.cta.global.add.u32 %0, [%1], %2;"
                 : "=r"(old)
                 : "l"(p), "r"(v)
                 : "memory");
  else if (SCOPE == kSys)
    asm volatile("atom.relaxed.sys.global.add.u32 %0, [%1], %2;"
                 : "=r"(old)
                 : "l"(p), "r"(v)
                 : "memory");
  else
    asm volatile("atom.relaxed.gpu.global.add.u32 %0, [%1], %2;"
                 : "=r"(old)
                 : "l"(p), "r"(v)
                 : "memory");
  return old;
}
template <int SCOPE>
__device__ __forceinline__ void red_u32(unsigned* p, unsigned v) {
  if (SCOPE == kCta)
    asm volatile("red.relaxed.cta.global.add.u32 [%0], %1;" ::"l"(p), "r"(v) : "memory");
  else if (SCOPE == kSys)
    asm volatile("red.relaxed.sys.global.add.u32 [%0], %1;" ::"l"(p), "r"(v) : "memory");
  else
    asm volatile("red.relaxed.gpu.global.add.u32 [%0], %1;" ::"l"(p), "r"(v) : "memory");
}

// One global atomic of the kind asked; returns the old value's low 32 bits (0 for RED).
template <int OP, int TYPE, bool RET, int SCOPE>
__device__ __forceinline__ unsigned global_atomic(void* target, unsigned long long word,
                                                  unsigned long long g, unsigned long long k) {
  if constexpr (OP == kAdd && TYPE == kI32) {
    unsigned* p = static_cast<unsigned*>(target) + word;
    if constexpr (RET) return add_u32<SCOPE>(p, 1u);
    red_u32<SCOPE>(p, 1u);
    return 0;
  } else if constexpr (OP == kAdd && TYPE == kU64) {
    unsigned long long* p = static_cast<unsigned long long*>(target) + word;
    unsigned long long old = 0, one = 1;
    if constexpr (RET)
      asm volatile("atom.global.add.u64 %0, [%1], %2;" : "=l"(old) : "l"(p), "l"(one) : "memory");
    else
      asm volatile("red.global.add.u64 [%0], %1;" ::"l"(p), "l"(one) : "memory");
    return unsigned(old);
  } else if constexpr (OP == kAdd && TYPE == kF32) {
    float* p = static_cast<float*>(target) + word;
    float old = 0;
    if constexpr (RET)
      asm volatile("atom.global.add.f32 %0, [%1], %2;" : "=f"(old) : "l"(p), "f"(1.0f) : "memory");
    else
      asm volatile("red.global.add.f32 [%0], %1;" ::"l"(p), "f"(1.0f) : "memory");
    return __float_as_uint(old);
  } else if constexpr (OP == kAdd && TYPE == kF64) {
    double* p = static_cast<double*>(target) + word;
    double old = 0;
    if constexpr (RET)
      asm volatile("atom.global.add.f64 %0, [%1], %2;" : "=d"(old) : "l"(p), "d"(1.0) : "memory");
    else
      asm volatile("red.global.add.f64 [%0], %1;" ::"l"(p), "d"(1.0) : "memory");
    return unsigned(__double_as_longlong(old));
  } else if constexpr (OP == kAdd && TYPE == kF16x2) {
    unsigned* p = static_cast<unsigned*>(target) + word;
    unsigned old = 0;
    const unsigned ones = 0x3c003c00u;  // (1.0, 1.0) in half precision
    if constexpr (RET)
      asm volatile("atom.global.add.noftz.f16x2 %0, [%1], %2;"
                   : "=r"(old)
                   : "l"(p), "r"(ones)
                   : "memory");
    else
      asm volatile("red.global.add.noftz.f16x2 [%0], %1;" ::"l"(p), "r"(ones) : "memory");
    return old;
  } else if constexpr (OP == kAdd && TYPE == kBf16x2) {
    unsigned* p = static_cast<unsigned*>(target) + word;
    unsigned old = 0;
    const unsigned ones = 0x3f803f80u;  // (1.0, 1.0) in bfloat16
    if constexpr (RET)
      asm volatile("atom.global.add.noftz.bf16x2 %0, [%1], %2;"
                   : "=r"(old)
                   : "l"(p), "r"(ones)
                   : "memory");
    else
      asm volatile("red.global.add.noftz.bf16x2 [%0], %1;" ::"l"(p), "r"(ones) : "memory");
    return old;
  } else if constexpr (OP == kMin || OP == kMax) {
    int* p = static_cast<int*>(target) + word;
    const int v = minmax_operand(OP, g, k);
    int old = 0;
    if constexpr (OP == kMin)
      asm volatile("atom.global.min.s32 %0, [%1], %2;" : "=r"(old) : "l"(p), "r"(v) : "memory");
    else
      asm volatile("atom.global.max.s32 %0, [%1], %2;" : "=r"(old) : "l"(p), "r"(v) : "memory");
    return unsigned(old);
  } else {
    static_assert(OP == kAdd, "no such global atomic");
    return 0;
  }
}

__device__ __forceinline__ void clock_begin(const TpArgs& a) {
  if (blockIdx.x == 0 && threadIdx.x == 0) {
    a.clk[0] = clock64();
    a.clk[1] = globaltimer_ns();
  }
}
__device__ __forceinline__ void clock_end(const TpArgs& a) {
  if (blockIdx.x == 0 && threadIdx.x == 0) {
    a.clk[2] = clock64();
    a.clk[3] = globaltimer_ns();
  }
}

// Every thread makes `iterations` atomics on its word (8 per loop trip, unrolled, so the
// loop's own instructions stay out of the way). CAS: a loop of attempts, each one counted
// as an operation; successes are counted per thread for the check.
template <int OP, int TYPE, bool RET, int SCOPE>
__global__ void __launch_bounds__(kThreads) tp_global_kernel(TpArgs a) {
  clock_begin(a);
  const unsigned long long g = blockIdx.x * 1ull * blockDim.x + threadIdx.x;
  const unsigned long long word = global_word(a.contention, g);
  unsigned acc = 0;
  if constexpr (OP == kCasOp) {
    unsigned* p = static_cast<unsigned*>(a.target) + word;
    unsigned guess = 0, won = 0;
    for (unsigned long long k = 0; k < a.iterations; ++k) {
      const unsigned old = cas_global(p, guess, guess + 1);
      won += old == guess;
      guess = old == guess ? old + 1 : old;
    }
    acc = won;
  } else {
    unsigned long long k = 0;
    for (; k + 8 <= a.iterations; k += 8) {
#pragma unroll
      for (int u = 0; u < 8; ++u)
        acc ^= global_atomic<OP, TYPE, RET, SCOPE>(a.target, word, g, k + u);
    }
    for (; k < a.iterations; ++k) acc ^= global_atomic<OP, TYPE, RET, SCOPE>(a.target, word, g, k);
  }
  a.per_thread[g] = acc;
  clock_end(a);
}

// Shared memory: the block's array starts at `initial`, every thread hammers its word, and
// the array is copied out for the check.
template <int OP, bool RET, bool F32>
__global__ void __launch_bounds__(kThreads) tp_shared_kernel(TpArgs a) {
  extern __shared__ unsigned arr[];
  clock_begin(a);
  for (unsigned w = threadIdx.x; w < a.words_per_block; w += blockDim.x) arr[w] = a.initial;
  __syncthreads();
  const unsigned addr = shared_addr(arr + local_word(a.contention, a.ways, threadIdx.x));
  unsigned acc = 0;
  if constexpr (OP == kCasOp) {
    unsigned guess = a.initial, won = 0;
    for (unsigned long long k = 0; k < a.iterations; ++k) {
      const unsigned old = cas_shared(addr, guess, guess + 1);
      won += old == guess;
      guess = old == guess ? old + 1 : old;
    }
    acc = won;
  } else {
    unsigned long long k = 0;
    auto one = [&]() {
      unsigned old = 0;
      if constexpr (F32) {
        float f;
        asm volatile("atom.shared.add.f32 %0, [%1], %2;"
                     : "=f"(f)
                     : "r"(addr), "f"(1.0f)
                     : "memory");
        old = __float_as_uint(f);
      } else if constexpr (RET)
        asm volatile("atom.shared.add.u32 %0, [%1], %2;"
                     : "=r"(old)
                     : "r"(addr), "r"(1u)
                     : "memory");
      else
        asm volatile("red.shared.add.u32 [%0], %1;" ::"r"(addr), "r"(1u) : "memory");
      acc ^= old;
    };
    for (; k + 8 <= a.iterations; k += 8) {
#pragma unroll
      for (int u = 0; u < 8; ++u) one();
    }
    for (; k < a.iterations; ++k) one();
  }
  __syncthreads();
  unsigned* out = static_cast<unsigned*>(a.target) + size_t(blockIdx.x) * a.words_per_block;
  for (unsigned w = threadIdx.x; w < a.words_per_block; w += blockDim.x) out[w] = arr[w];
  a.per_thread[blockIdx.x * 1ull * blockDim.x + threadIdx.x] = acc;
  clock_end(a);
}

__global__ void fill_words(unsigned* p, unsigned long long n, unsigned v) {
  for (unsigned long long i = blockIdx.x * 1ull * blockDim.x + threadIdx.x; i < n;
       i += 1ull * gridDim.x * blockDim.x)
    p[i] = v;
}

}  // namespace at

namespace {

using TpKernel = void (*)(at::TpArgs);
// (space, op, type, use_return, scope) -> kernel and its mangled-name fragment.
using TpKey = std::tuple<int, int, int, bool, int>;
struct TpEntry {
  TpKernel kernel;
  std::string fragment;
};

template <int OP, int TYPE, bool RET, int SCOPE>
std::pair<TpKey, TpEntry> global_entry() {
  const std::string frag = "tp_global_kernelILi" + std::to_string(OP) + "ELi" +
                           std::to_string(TYPE) + "ELb" + (RET ? "1" : "0") + "ELi" +
                           std::to_string(SCOPE) + "E";
  return {TpKey{int(AtomicSpace::global), OP, TYPE, RET, SCOPE},
          TpEntry{at::tp_global_kernel<OP, TYPE, RET, SCOPE>, frag}};
}
template <int OP, bool RET, bool F32>
std::pair<TpKey, TpEntry> shared_entry() {
  const std::string frag = "tp_shared_kernelILi" + std::to_string(OP) + "ELb" + (RET ? "1" : "0") +
                           "ELb" + (F32 ? "1" : "0") + "E";
  return {TpKey{int(AtomicSpace::shared), OP, F32 ? at::kF32 : at::kI32, RET, at::kGpu},
          TpEntry{at::tp_shared_kernel<OP, RET, F32>, frag}};
}

const std::map<TpKey, TpEntry>& tp_kernels() {
  using namespace at;
  static const std::map<TpKey, TpEntry> table = {
      global_entry<kAdd, kI32, true, kCta>(),   global_entry<kAdd, kI32, true, kGpu>(),
      global_entry<kAdd, kI32, true, kSys>(),   global_entry<kAdd, kI32, false, kGpu>(),
      global_entry<kAdd, kU64, true, kGpu>(),   global_entry<kAdd, kU64, false, kGpu>(),
      global_entry<kAdd, kF32, true, kGpu>(),   global_entry<kAdd, kF32, false, kGpu>(),
      global_entry<kAdd, kF64, true, kGpu>(),   global_entry<kAdd, kF64, false, kGpu>(),
      global_entry<kAdd, kF16x2, true, kGpu>(), global_entry<kAdd, kBf16x2, true, kGpu>(),
      global_entry<kMin, kI32, true, kGpu>(),   global_entry<kMax, kI32, true, kGpu>(),
      global_entry<kCasOp, kI32, true, kGpu>(), shared_entry<kAdd, true, false>(),
      shared_entry<kAdd, false, false>(),       shared_entry<kAdd, true, true>(),
      shared_entry<kCasOp, true, false>(),
  };
  return table;
}

int op_code(AtomicOp o) {
  switch (o) {
    case AtomicOp::add:
      return at::kAdd;
    case AtomicOp::min:
      return at::kMin;
    case AtomicOp::max:
      return at::kMax;
    case AtomicOp::cas:
      return at::kCasOp;
  }
  return -1;
}
int scope_code(AtomicScope s) {
  return s == AtomicScope::cta ? at::kCta : s == AtomicScope::sys ? at::kSys : at::kGpu;
}
TpKey key_of(const ThroughputRequest& r) {
  // CAS always uses its result; shared memory has one scope here.
  const bool ret = r.op == AtomicOp::cas ? true : r.use_return;
  const int scope = r.space == AtomicSpace::shared ? at::kGpu : scope_code(r.scope);
  return {int(r.space), op_code(r.op), int(r.type), ret, scope};
}
}  // namespace

}  // namespace gd::cuda
