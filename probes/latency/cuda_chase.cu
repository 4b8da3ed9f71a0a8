#include "latency/cuda_chase.cuh"
#include "device_clock.cuh"

namespace gd::cuda {

namespace {

// Inline PTX so the compiler can neither pick another cache operator nor hoist loads;
// each hop's address is the previous hop's value, so the loads are strictly serial.
template <PtrLoad K>
__device__ __forceinline__ uint64_t hop(uint64_t p);
template <>
__device__ __forceinline__ uint64_t hop<PtrLoad::ca>(uint64_t p) {
  uint64_t v;
  asm volatile("ld.global.ca.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
  return v;
}
template <>
__device__ __forceinline__ uint64_t hop<PtrLoad::cg>(uint64_t p) {
  uint64_t v;
  asm volatile("ld.global.cg.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
  return v;
}
template <>
__device__ __forceinline__ uint64_t hop<PtrLoad::nc>(uint64_t p) {
  uint64_t v;
  asm volatile("ld.global.nc.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
  return v;
}

// The timed skeleton shared by every path: Step advances the position by one hop.
template <class Pos, class Step>
__device__ __forceinline__ Pos run_chase(Pos p, Step step, uint64_t warmup, uint64_t hops,
                                         int repeats, unsigned long long* out) {
  for (uint64_t i = 0; i < warmup; ++i) p = step(p);
  for (int r = 0; r < repeats; ++r) {
    const uint64_t t0 = globaltimer_ns();
    const long long c0 = clock64();
    uint64_t i = 0;
    for (; i + 16 <= hops; i += 16) {
#pragma unroll
      for (int u = 0; u < 16; ++u) p = step(p);
    }
    for (; i < hops; ++i) p = step(p);
    const long long c1 = clock64();
    const uint64_t t1 = globaltimer_ns();
    out[2 * r] = static_cast<unsigned long long>(c1 - c0);
    out[2 * r + 1] = t1 - t0;
  }
  return p;
}

template <PtrLoad K>
__global__ void chase_pointers_kernel(uint64_t start, ChaseArgs a) {
  const uint64_t end = run_chase(
      start, [](uint64_t p) { return hop<K>(p); }, a.warmup, a.hops, a.repeats, a.out);
  a.out[2 * a.repeats] = end;
}

__global__ void fill_pointer_kernel(char* buf, const uint32_t* next, uint32_t lines,
                                    uint64_t stride) {
  for (uint64_t i = blockIdx.x * blockDim.x + threadIdx.x; i < lines;
       i += static_cast<uint64_t>(gridDim.x) * blockDim.x)
    *reinterpret_cast<uint64_t*>(buf + i * stride) =
        reinterpret_cast<uint64_t>(buf + static_cast<uint64_t>(next[i]) * stride);
}

__global__ void fill_index_kernel(uint32_t* buf, const uint32_t* next, uint32_t lines,
                                  uint64_t stride) {
  const uint64_t words = stride / 4;
  for (uint64_t i = blockIdx.x * blockDim.x + threadIdx.x; i < lines;
       i += static_cast<uint64_t>(gridDim.x) * blockDim.x)
    buf[i * words] = static_cast<uint32_t>(next[i] * words);
}

__global__ void chase_texture_kernel(cudaTextureObject_t tex, ChaseArgs a) {
  const uint32_t end = run_chase(
      0u, [tex](uint32_t p) { return tex1Dfetch<uint32_t>(tex, static_cast<int>(p)); }, a.warmup,
      a.hops, a.repeats, a.out);
  a.out[2 * a.repeats] = end;
}

__constant__ uint32_t c_chain[kConstantChainBytes / 4];

__global__ void chase_constant_kernel(ChaseArgs a) {
  // Byte offsets into the bank: the load is LDC with a register offset, no index arithmetic.
  const uint32_t end = run_chase(
      0u,
      [](uint32_t off) {
        return *reinterpret_cast<const uint32_t*>(reinterpret_cast<const char*>(c_chain) + off);
      },
      a.warmup, a.hops, a.repeats, a.out);
  a.out[2 * a.repeats] = end;
}

__global__ void chase_shared_kernel(const uint32_t* image, uint32_t bytes, ChaseArgs a) {
  extern __shared__ uint32_t smem[];
  const uint32_t base = static_cast<uint32_t>(__cvta_generic_to_shared(smem));
  for (uint32_t w = threadIdx.x; w < bytes / 4; w += blockDim.x) smem[w] = base + image[w];
  __syncthreads();
  if (threadIdx.x != 0) return;
  const uint32_t end = run_chase(
      base,
      [](uint32_t p) {
        uint32_t v;
        asm volatile("ld.shared.u32 %0, [%1];" : "=r"(v) : "r"(p) : "memory");
        return v;
      },
      a.warmup, a.hops, a.repeats, a.out);
  a.out[2 * a.repeats] = end - base;
}

__global__ void clock_kernel(uint64_t window_ns, unsigned long long* out) {
  const uint64_t t0 = globaltimer_ns();
  const long long c0 = clock64();
  uint64_t t1 = t0;
  while (t1 - t0 < window_ns) t1 = globaltimer_ns();
  const long long c1 = clock64();
  out[0] = static_cast<unsigned long long>(c1 - c0);
  out[1] = t1 - t0;
}

}  // namespace

void fill_pointer_chain(char* buf, const uint32_t* next, uint32_t lines, uint64_t stride,
                        cudaStream_t s) {
  const unsigned blocks = std::min<uint32_t>((lines + 255) / 256, 4096);
  fill_pointer_kernel<<<blocks, 256, 0, s>>>(buf, next, lines, stride);
}

void fill_index_chain(uint32_t* buf, const uint32_t* next, uint32_t lines, uint64_t stride,
                      cudaStream_t s) {
  const unsigned blocks = std::min<uint32_t>((lines + 255) / 256, 4096);
  fill_index_kernel<<<blocks, 256, 0, s>>>(buf, next, lines, stride);
}

void chase_pointers(PtrLoad kind, const char* start, const ChaseArgs& a, cudaStream_t s) {
  const auto p = reinterpret_cast<uint64_t>(start);
  switch (kind) {
    case PtrLoad::ca:
      chase_pointers_kernel<PtrLoad::ca><<<1, 1, 0, s>>>(p, a);
      break;
    case PtrLoad::cg:
      chase_pointers_kernel<PtrLoad::cg><<<1, 1, 0, s>>>(p, a);
      break;
    case PtrLoad::nc:
      chase_pointers_kernel<PtrLoad::nc><<<1, 1, 0, s>>>(p, a);
      break;
  }
}

void chase_texture(cudaTextureObject_t tex, const ChaseArgs& a, cudaStream_t s) {
  chase_texture_kernel<<<1, 1, 0, s>>>(tex, a);
}

// On the chase's own stream: a plain cudaMemcpyToSymbol from pageable memory may return
// before the copy reaches the device, and the chase runs on a non-blocking stream that does
// not wait for the legacy stream; in stream order the kernel cannot start before its chain.
cudaError_t upload_constant_chain(const uint32_t* host_image, std::size_t bytes, cudaStream_t s) {
  return cudaMemcpyToSymbolAsync(c_chain, host_image, bytes, 0, cudaMemcpyHostToDevice, s);
}

void chase_constant(const ChaseArgs& a, cudaStream_t s) {
  chase_constant_kernel<<<1, 1, 0, s>>>(a);
}

cudaError_t prepare_shared_chase(std::size_t bytes) {
  return cudaFuncSetAttribute(chase_shared_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                              static_cast<int>(bytes));
}

void chase_shared(const uint32_t* image, std::size_t bytes, const ChaseArgs& a, cudaStream_t s) {
  chase_shared_kernel<<<1, 256, bytes, s>>>(image, static_cast<uint32_t>(bytes), a);
}

void measure_clock(uint64_t window_ns, unsigned long long* out, cudaStream_t s) {
  clock_kernel<<<1, 1, 0, s>>>(window_ns, out);
}

}  // namespace gd::cuda
