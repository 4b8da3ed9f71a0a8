// The atomics probe's CUDA device code, part 2 of 3 (cuda.cu includes it once): the
// ping-pong kernels and the SM-to-SM matrix, and the kernels' names for the tools.
#pragma once

#include <string>

#include "atomics/cuda_ptx.cuh"
#include "cuda_probes.hpp"

namespace gd::cuda {

namespace at {
// ---- ping-pong ----

// Modes of a hand-over. CAS: the CAS that turns `want` into want+1 is both the wait and the
// hand-over. EXCH: wait by load, hand over by exchange (which must return `want`). RA: wait
// by ld.acquire, check the payload the partner wrote before its release, write the next
// payload, hand over by st.release. HOST: RA at system scope (the partner is a CPU thread).
enum Mode { kCas = 0, kExch = 1, kRa = 2, kHost = 3 };

// What one launch's players leave (per pair in the matrix).
struct PingOut {
  unsigned long long c0, c1, n0, n1;  // player A's clock and ns after the warm-up and at the end
  unsigned handoffs[2];
  unsigned timeouts[2];
  unsigned payload_errors;
  unsigned final_value;
  int sm[2];
};

// One player's game on a global flag: player `me` (0 = A, 1 = B) makes flag 2k+me into
// 2k+me+1 for k < total. A takes timestamps right after its hand-over number `warmup - 1`
// and after every further `segment` hand-overs (`seg_cycles` / `seg_ns`, when given), so
// each segment spans exactly `segment` round trips.
template <int MODE>
__device__ void play_global(unsigned* flag, unsigned* payload, unsigned* abort_word, unsigned me,
                            unsigned warmup, unsigned total, unsigned segment,
                            unsigned long long* seg_cycles, unsigned long long* seg_ns,
                            PingOut* out) {
  unsigned done = 0, timed_out = 0, bad_payload = 0;
  unsigned long long c_prev = 0, n_prev = 0;
  for (unsigned k = 0; k < total && !timed_out; ++k) {
    const unsigned want = 2 * k + me;
    unsigned spins = 0;
    bool ok = true;
    if (MODE == kCas) {
      while (cas_global(flag, want, want + 1) != want)
        if (++spins > kSpinLimit || (spins % 64 == 0 && ld_relaxed_gpu(abort_word))) {
          timed_out = 1;
          break;
        }
    } else {
      while ((MODE == kHost ? ld_acquire_sys(flag)
              : MODE == kRa ? ld_acquire_gpu(flag)
                            : ld_relaxed_gpu(flag)) != want)
        if (++spins > kSpinLimit ||
            (spins % 64 == 0 &&
             (MODE == kHost ? ld_relaxed_sys(abort_word) : ld_relaxed_gpu(abort_word)))) {
          timed_out = 1;
          break;
        }
      if (!timed_out) {
        if (MODE == kExch) {
          ok = exch_global(flag, want + 1) == want;
        } else {
          if (ld_weak(payload) != want) ++bad_payload;
          st_weak(payload, want + 1);
          if (MODE == kHost)
            st_release_sys(flag, want + 1);
          else
            st_release_gpu(flag, want + 1);
        }
      }
    }
    if (timed_out) {
      if (MODE == kHost)
        st_relaxed_sys(abort_word, 1);
      else
        atomicExch(abort_word, 1u);
      break;
    }
    if (ok) ++done;
    // Timestamps (player A): after hand-over warmup-1, then every `segment` hand-overs.
    if (me == 0 && k + 1 >= warmup && (k + 1 - warmup) % segment == 0) {
      const unsigned long long c = clock64(), n = globaltimer_ns();
      if (k + 1 == warmup) {
        out->c0 = c;
        out->n0 = n;
      } else if (seg_cycles) {
        const unsigned s = (k + 1 - warmup) / segment - 1;
        seg_cycles[s] = c - c_prev;
        seg_ns[s] = n - n_prev;
      }
      c_prev = c;
      n_prev = n;
      out->c1 = c;
      out->n1 = n;
    }
  }
  out->handoffs[me] = done;
  out->timeouts[me] = timed_out;
  if (bad_payload) atomicAdd(&out->payload_errors, bad_payload);
  out->sm[me] = smid();
}

// Two warps of one block (threads 0 and 32) through a shared-memory flag.
template <int MODE>
__global__ void __launch_bounds__(64)
    pp_shared_kernel(unsigned warmup, unsigned total, PingOut* out) {
  __shared__ unsigned cell[2];  // flag, abort
  if (threadIdx.x == 0) {
    cell[0] = 0;
    cell[1] = 0;
  }
  __syncthreads();
  if ((threadIdx.x & 31) == 0) {
    const unsigned me = threadIdx.x >> 5;
    const unsigned flag = shared_addr(&cell[0]), abort_word = shared_addr(&cell[1]);
    unsigned done = 0, timed_out = 0;
    for (unsigned k = 0; k < total && !timed_out; ++k) {
      const unsigned want = 2 * k + me;
      unsigned spins = 0;
      bool ok = true;
      if (MODE == kCas) {
        while (cas_shared(flag, want, want + 1) != want)
          if (++spins > kSpinLimit || (spins % 64 == 0 && ld_volatile_shared(abort_word))) {
            timed_out = 1;
            break;
          }
      } else {
        while (ld_volatile_shared(flag) != want)
          if (++spins > kSpinLimit || (spins % 64 == 0 && ld_volatile_shared(abort_word))) {
            timed_out = 1;
            break;
          }
        if (!timed_out) ok = exch_shared(flag, want + 1) == want;
      }
      if (timed_out) {
        exch_shared(abort_word, 1);
        break;
      }
      if (ok) ++done;
      if (me == 0 && k + 1 == warmup) {
        out->c0 = clock64();
        out->n0 = globaltimer_ns();
      }
    }
    if (me == 0) {
      out->c1 = clock64();
      out->n1 = globaltimer_ns();
    }
    out->handoffs[me] = done;
    out->timeouts[me] = timed_out;
    out->sm[me] = smid();
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    out->final_value = cell[0];
    out->payload_errors = 0;
  }
}

// Two blocks on two SMs (each asks for more than half an SM's shared memory, so no SM holds
// both): block b is player b. words: [0] flag, [32] payload, [64] abort (own lines).
template <int MODE>
__global__ void __launch_bounds__(32)
    pp_global_kernel(unsigned* words, unsigned warmup, unsigned total, PingOut* out) {
  if (threadIdx.x != 0) return;
  // One segment: the whole timed part (A's stamps after the warm-up and at the end).
  play_global<MODE>(words, words + 32, words + 64, blockIdx.x, warmup, total, total - warmup,
                    nullptr, nullptr, out);
}

// A GPU thread against a host thread through mapped pinned memory (the host is player B).
__global__ void __launch_bounds__(32)
    pp_host_kernel(unsigned* words, unsigned warmup, unsigned total, PingOut* out) {
  if (threadIdx.x != 0) return;
  play_global<kHost>(words, words + 32, words + 64, 0, warmup, total, total - warmup, nullptr,
                     nullptr, out);
}

// ---- the SM-to-SM matrix ----

struct MatrixArgs {
  int n;                 // SMs 0..n-1 take part
  int rounds;            // tournament rounds
  const int* partner;    // rounds x n: SM s's partner in round r, -1 when it rests
  int* owner;            // n: the block that plays for SM s (-1: none yet)
  unsigned* flags;       // rounds x n pairs, 32 words (one line) each, at [(r*n + a) * 32]
  unsigned* payloads;    // unused by CAS; kept for symmetry of play_global's arguments
  unsigned* abort_word;  // any timeout stops every pair
  unsigned warmup, segment, segments;
  unsigned long long* seg_cycles;  // rounds x n x segments, at A = min(pair)
  unsigned long long* seg_ns;
  PingOut* out;  // rounds x n, at A
};

// One block per SM plays for it: blocks find their SM, the first to claim it stays, the
// others leave. Each round, every SM plays the partner the tournament gives it; pairs of a
// round run at once, and a pair only waits for its own partner (rounds need no barrier: a
// block in round r waits at most for its partner to finish round r-1).
__global__ void __launch_bounds__(32) pp_matrix_kernel(MatrixArgs a) {
  if (threadIdx.x != 0) return;
  const int sm = smid();
  if (sm >= a.n) return;
  if (atomicCAS(&a.owner[sm], -1, int(blockIdx.x)) != -1) return;
  const unsigned total = a.warmup + a.segment * a.segments;
  for (int r = 0; r < a.rounds; ++r) {
    const int p = a.partner[r * a.n + sm];
    if (p < 0) continue;
    const int lo = min(sm, p);
    const size_t pair = size_t(r) * a.n + lo;
    play_global<kCas>(a.flags + pair * 32, a.payloads, a.abort_word, sm == lo ? 0 : 1, a.warmup,
                      total, a.segment, a.seg_cycles + pair * a.segments,
                      a.seg_ns + pair * a.segments, a.out + pair);
    if (ld_relaxed_gpu(a.abort_word)) return;
  }
}

}  // namespace at

namespace {

std::string pingpong_fragment(PingPong k) {
  switch (k) {
    case PingPong::shared_cas:
      return "pp_shared_kernelILi0E";
    case PingPong::shared_exch:
      return "pp_shared_kernelILi1E";
    case PingPong::global_cas:
      return "pp_global_kernelILi0E";
    case PingPong::global_exch:
      return "pp_global_kernelILi1E";
    case PingPong::global_release_acquire:
      return "pp_global_kernelILi2E";
    case PingPong::host:
      return "pp_host_kernel";
  }
  return "?";
}
}  // namespace

}  // namespace gd::cuda
