// A foreign load for checking that gpudissect names a shared GPU (scripts/busy-check.sh):
// keeps every SM of one GPU busy with FMA loops for SECONDS, from a process of its own, as
// another user's job would. Not part of gpudissect.
//   busy_load [SECONDS=60] [DEVICE=0]
// Prints "busy_load: running" once the first kernel has finished (so a caller knows the
// context exists and the GPU is loaded), and exits 0 after SECONDS, or at SIGTERM/SIGINT.
#include <cuda_runtime.h>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>

namespace {

volatile std::sig_atomic_t g_stop = 0;
extern "C" void on_signal(int) { g_stop = 1; }

// About 10 ms per launch on an H100 at the grid below: short enough that SIGTERM ends the
// process promptly, long enough that the GPU is never idle between launches for long.
__global__ void fma_loop(float* out, int iters) {
  float a = threadIdx.x * 1e-3f, b = 1.0001f, c = 0.9999f, d = blockIdx.x * 1e-3f;
  for (int i = 0; i < iters; ++i) {
    a = fmaf(a, b, c);
    d = fmaf(d, c, b);
    b = fmaf(b, a, d);
    c = fmaf(c, d, a);
  }
  if (a + b + c + d == 42.0f) out[0] = a;  // keeps the loop; practically never true
}

bool ok(cudaError_t e, const char* what) {
  if (e == cudaSuccess) return true;
  std::fprintf(stderr, "busy_load: %s: %s\n", what, cudaGetErrorString(e));
  return false;
}

}  // namespace

int main(int argc, char** argv) {
  const double seconds = argc > 1 ? std::atof(argv[1]) : 60.0;
  const int device = argc > 2 ? std::atoi(argv[2]) : 0;
  std::signal(SIGTERM, on_signal);
  std::signal(SIGINT, on_signal);
  if (!ok(cudaSetDevice(device), "cudaSetDevice")) return 1;
  int sms = 0;
  if (!ok(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device), "SM count"))
    return 1;
  float* out = nullptr;
  if (!ok(cudaMalloc(&out, sizeof(float)), "cudaMalloc")) return 1;
  const auto t0 = std::chrono::steady_clock::now();
  auto elapsed = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  };
  bool said = false;
  long launches = 0;
  while (!g_stop && elapsed() < seconds) {
    fma_loop<<<sms * 8, 256>>>(out, 1 << 18);
    if (!ok(cudaGetLastError(), "launch")) return 1;
    if (++launches % 4 == 0 || !said) {  // a few launches in flight, never an idle gap
      if (!ok(cudaDeviceSynchronize(), "kernel")) return 1;
      if (!said) {
        std::printf("busy_load: running on device %d (%d SMs) for %.0f s\n", device, sms, seconds);
        std::fflush(stdout);
        said = true;
      }
    }
  }
  cudaDeviceSynchronize();
  cudaFree(out);
  std::printf("busy_load: %ld launches in %.1f s\n", launches, elapsed());
  return 0;
}
