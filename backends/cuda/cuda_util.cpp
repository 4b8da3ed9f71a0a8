#include "cuda_util.hpp"

#include <cstdio>
#include <cstdlib>
#include <filesystem>

#include "gpudissect/device.hpp"

namespace gd::cuda {

void check(cudaError_t rc, const char* what) {
  if (rc == cudaSuccess) return;
  (void)cudaGetLastError();
  const std::string msg = std::string(what) + ": " + cudaGetErrorString(rc);
  if (rc == cudaErrorMemoryAllocation) throw AllocationFailed(msg);
  throw BackendError(msg);
}

void* DeviceBuffer::get(std::size_t bytes, const char* what) {
  if (bytes <= size_) return ptr_;
  const std::size_t doubled = size_ * 2;
  release();
  void* p = nullptr;
  if (doubled > bytes && cudaMalloc(&p, doubled) == cudaSuccess) {
    bytes = doubled;
  } else {
    (void)cudaGetLastError();
    if (const cudaError_t rc = cudaMalloc(&p, bytes); rc != cudaSuccess) {
      (void)cudaGetLastError();
      const std::string msg = "cudaMalloc of " + std::to_string(bytes) + " bytes for " + what +
                              ": " + cudaGetErrorString(rc);
      if (rc == cudaErrorMemoryAllocation) throw AllocationFailed(msg);
      throw BackendError(msg);
    }
  }
  ptr_ = p;
  size_ = bytes;
  return ptr_;
}

void DeviceBuffer::release() {
  if (ptr_) cudaFree(ptr_);
  ptr_ = nullptr;
  size_ = 0;
}

namespace {
const std::string& cuobjdump() {
  static const std::string tool = [] {
    for (const char* c : {"cuobjdump", "/usr/local/cuda/bin/cuobjdump"})
      if (std::system((std::string("command -v ") + c + " >/dev/null 2>&1").c_str()) == 0)
        return std::string(c);
    return std::string();
  }();
  return tool;
}
}  // namespace

std::string dump_sass(const std::string& file) {
  if (cuobjdump().empty()) return {};
  std::string out;
  if (FILE* f = popen((cuobjdump() + " --dump-sass '" + file + "' 2>/dev/null").c_str(), "r")) {
    char buf[4096];
    std::size_t n;
    while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) out.append(buf, n);
    pclose(f);
  }
  return out;
}

const std::string& own_sass() {
  // Resolved here: inside cuobjdump's process, /proc/self would be cuobjdump itself.
  static const std::string sass = [] {
    std::error_code ec;
    const std::string self = std::filesystem::read_symlink("/proc/self/exe", ec).string();
    return ec || self.empty() ? std::string() : dump_sass(self);
  }();
  return sass;
}

}  // namespace gd::cuda
