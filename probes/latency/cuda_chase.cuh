// Launchers of the pointer-chase kernels. Each kernel runs one thread that walks a chain:
// warm-up hops, then `repeats` timed segments of `hops` hops, recording per segment the
// SM cycles (clock64) and nanoseconds (%globaltimer), and finally the position reached,
// which the host checks so no load can be dropped.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

namespace gd::cuda {

// out[2r] = cycles and out[2r+1] = ns of segment r; out[2*repeats] = final position.
struct ChaseArgs {
  uint64_t warmup = 0;
  uint64_t hops = 0;
  int repeats = 1;
  unsigned long long* out = nullptr;  // device memory, 2*repeats+1 entries
};

enum class PtrLoad { ca, cg, nc };  // ld.global.ca / .cg / .nc

// Buffers hold, at line i (byte offset i*stride), the 64-bit address of the next line.
void fill_pointer_chain(char* buf, const uint32_t* next, uint32_t lines, uint64_t stride,
                        cudaStream_t s);
void chase_pointers(PtrLoad kind, const char* start, const ChaseArgs& a, cudaStream_t s);

// Buffers hold, at line i, the 32-bit element index (4-byte elements) of the next line.
void fill_index_chain(uint32_t* buf, const uint32_t* next, uint32_t lines, uint64_t stride,
                      cudaStream_t s);
void chase_texture(cudaTextureObject_t tex, const ChaseArgs& a, cudaStream_t s);

// Constant bank: 64 KiB image of byte offsets, copied into the __constant__ array first.
inline constexpr std::size_t kConstantChainBytes = 65536;
cudaError_t upload_constant_chain(const uint32_t* host_image, std::size_t bytes, cudaStream_t s);
void chase_constant(const ChaseArgs& a, cudaStream_t s);

// Shared memory: `image` (device memory, `bytes` long) holds byte offsets; it is copied
// into dynamic shared memory and chased there.
cudaError_t prepare_shared_chase(std::size_t bytes);
void chase_shared(const uint32_t* image, std::size_t bytes, const ChaseArgs& a, cudaStream_t s);

// Spins one thread for about window_ns, reporting cycles and ns (out[0], out[1]).
void measure_clock(uint64_t window_ns, unsigned long long* out, cudaStream_t s);

}  // namespace gd::cuda
