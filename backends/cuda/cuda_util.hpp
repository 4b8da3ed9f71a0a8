// What every CUDA file of the backend needs: turning an error into the right exception,
// device memory that grows and is reused, and reading machine code with cuobjdump.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "gpudissect/sass.hpp"

namespace gd::cuda {

// Throws AllocationFailed for an out-of-memory error and BackendError for any other, the
// message naming `what`; a non-sticky error is cleared so later calls are not poisoned.
void check(cudaError_t rc, const char* what);

// Device memory that grows to the largest size asked of it and is reused after that. It
// grows geometrically, so a rising sweep reallocates a few times rather than at every
// point; when the doubled size cannot be had, the exact size is tried.
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  ~DeviceBuffer() { release(); }
  void* get(std::size_t bytes, const char* what);
  void release();
  std::size_t size() const { return size_; }

 private:
  void* ptr_ = nullptr;
  std::size_t size_ = 0;
};

// cuobjdump --dump-sass of a file (an executable or a cubin); empty where cuobjdump is not
// installed or fails.
std::string dump_sass(const std::string& file);

// The SASS of this running binary, read once; empty where cuobjdump is not installed.
const std::string& own_sass();

// kernel_memory_ops of this binary's own listing, parsed once for every probe that asks.
const std::map<std::string, KernelMemoryOps>& own_memory_ops();

// NVRTC: `source` compiled for `arch` ("sm_90", "compute_90") to CUBIN (or PTX), with
// `extra` options after the defaults (-std=c++17 -default-device). Throws BackendError with
// NVRTC's log.
struct Compiled {
  std::string image;  // PTX or CUBIN
  std::string log;
};
Compiled nvrtc_compile(const std::string& source, const std::string& arch, bool cubin,
                       const std::vector<std::string>& extra = {});
uint64_t fnv1a(const std::string& s);
// $XDG_CACHE_HOME (or ~/.cache, or the temp folder) / gpudissect / sub.
std::filesystem::path cache_dir(const std::string& sub = "compute");
std::string read_file(const std::filesystem::path& p);  // empty where it cannot be read
void write_file(const std::filesystem::path& p, const std::string& data);  // atomic, best effort
// cuobjdump --dump-sass of a cubin held in memory (through a temporary file); empty where
// cuobjdump is missing.
std::string disassemble(const std::string& cubin, uint64_t key);

// `source` compiled for `arch` to a CUBIN (nvrtc_compile with `extra`) and its SASS
// (disassemble; empty where cuobjdump is missing), read from `dir` where an earlier run
// cached them under `key` (the caller's hash of everything that determines them), else made
// and cached there. Throws what nvrtc_compile throws.
struct CachedCubin {
  std::string cubin, sass;
};
CachedCubin cached_cubin(const std::string& source, const std::string& arch,
                         const std::vector<std::string>& extra, const std::filesystem::path& dir,
                         uint64_t key);

// A CUBIN loaded through the runtime's library API (no libcuda link: the binary must start
// where no driver is), each of its kernels looked up once; unloaded with the object.
class CubinLibrary {
 public:
  CubinLibrary() = default;
  CubinLibrary(const CubinLibrary&) = delete;
  CubinLibrary& operator=(const CubinLibrary&) = delete;
  ~CubinLibrary();
  // Loads `cubin` on the first call; later calls return at once. `what` names it in errors.
  void load(const std::string& cubin, const char* what);
  cudaKernel_t kernel(const std::string& name, const char* what);

 private:
  cudaLibrary_t lib_ = nullptr;
  std::map<std::string, cudaKernel_t> kernels_;
};

// The NVRTC linked in, "major.minor": part of every compiled kernel's cache key.
std::string nvrtc_version();
// The device's compute capability as major * 10 + minor (90 for sm_90).
int compute_capability(int device);

// The driver API's launch and stream synchronize, reached through the runtime's entry-point
// query (no libcuda link): a launch timed as the peers time it, without the runtime's checks
// around cudaLaunchKernel. Both null where the driver does not give them.
struct DriverLaunch {
  int (*launch)(void* function, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                unsigned bz, unsigned shared_bytes, void* stream, void** params,
                void** extra) = nullptr;       // cuLaunchKernel
  int (*synchronize)(void* stream) = nullptr;  // cuStreamSynchronize
  explicit operator bool() const { return launch && synchronize; }
};
const DriverLaunch& driver_launch();

}  // namespace gd::cuda
