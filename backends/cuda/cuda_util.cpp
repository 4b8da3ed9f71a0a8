#include "cuda_util.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <regex>
#include <sstream>
#include <vector>

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

std::map<std::string, KernelMemoryOps> kernel_memory_ops(const std::string& listing) {
  std::map<std::string, KernelMemoryOps> out;
  std::istringstream sass(listing);
  static const std::regex kFunction(R"(Function : (\S+))");
  static const std::regex kLoad(
      R"(\b((?:LDG|LDS|LDC|TLD|TEX|LD)(?:\.[A-Z0-9_]+)*)\s+(?:RZ|PT|R\d+), (.*?);)");
  static const std::regex kStore(R"(\b((?:STG|STS|ST)(?:\.[A-Z0-9_]+)*)\s+(?:desc)?\[)");
  static const std::regex kBulk(R"(\b((?:UBLKCP|UTMALDG)(?:\.[A-Z0-9_]+)*)\s)");
  static const std::regex kAtomic(
      R"(\b((?:ATOMS|ATOMG|ATOM|REDUX|REDG|RED)(?:\.[A-Za-z0-9_]+)*)\s)");  // F16x2: lower case
  std::string fn;
  std::map<std::string, int> loads, stores, bulks;
  std::vector<std::string> bulk_order, atomic_order;  // first appearance
  auto best = [](const std::map<std::string, int>& m) {
    if (m.empty()) return std::string();
    return std::max_element(m.begin(), m.end(),
                            [](auto& a, auto& b) { return a.second < b.second; })
        ->first;
  };
  auto flush = [&] {
    if (!fn.empty()) {
      std::string all;
      for (const std::string& b : bulk_order) all += (all.empty() ? "" : " + ") + b;
      std::string atomics;
      for (const std::string& a : atomic_order) atomics += (atomics.empty() ? "" : " + ") + a;
      out[fn] = {best(loads), best(stores), best(bulks), all, atomics};
    }
    loads.clear();
    stores.clear();
    bulks.clear();
    bulk_order.clear();
    atomic_order.clear();
  };
  std::smatch m;
  for (std::string l; std::getline(sass, l);) {
    if (std::regex_search(l, m, kFunction)) {
      flush();
      fn = m[1];
    } else if (std::regex_search(l, m, kAtomic)) {
      if (std::find(atomic_order.begin(), atomic_order.end(), m[1].str()) == atomic_order.end())
        atomic_order.push_back(m[1]);
    } else if (std::regex_search(l, m, kLoad)) {
      if (m[2].str().find("c[0x0]") == std::string::npos) ++loads[m[1]];
    } else if (std::regex_search(l, m, kStore)) {
      ++stores[m[1]];
    } else if (std::regex_search(l, m, kBulk)) {
      if (++bulks[m[1]] == 1) bulk_order.push_back(m[1]);
    }
  }
  flush();
  return out;
}

}  // namespace gd::cuda
