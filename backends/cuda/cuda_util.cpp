#include "cuda_util.hpp"

#include <dlfcn.h>
#include <nvrtc.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>
#include <vector>

#include "gpudissect/device.hpp"
#include "gpudissect/shell.hpp"

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
  if (FILE* f = popen((cuobjdump() + " --dump-sass " + shell_quote(file) + " 2>/dev/null").c_str(),
                      "r")) {
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

const std::map<std::string, KernelMemoryOps>& own_memory_ops() {
  static const std::map<std::string, KernelMemoryOps> ops = kernel_memory_ops(own_sass());
  return ops;
}

// ---- NVRTC, the disk cache of compiled kernels, disassembly (shared by the probes) ----

namespace {

// NVRTC is opened at run time, not linked: a binary built with the CUDA backend (the .deb)
// must start on a node with only the driver, where the toolkit's libnvrtc is absent. There
// the kernels compiled at run time fail with this message; everything else measures.
struct Nvrtc {
  void* lib = nullptr;
  std::string why;  // why it is not loaded
  nvrtcResult (*create)(nvrtcProgram*, const char*, const char*, int, const char* const*,
                        const char* const*) = nullptr;
  nvrtcResult (*compile)(nvrtcProgram, int, const char* const*) = nullptr;
  nvrtcResult (*log_size)(nvrtcProgram, std::size_t*) = nullptr;
  nvrtcResult (*log)(nvrtcProgram, char*) = nullptr;
  nvrtcResult (*cubin_size)(nvrtcProgram, std::size_t*) = nullptr;
  nvrtcResult (*cubin)(nvrtcProgram, char*) = nullptr;
  nvrtcResult (*ptx_size)(nvrtcProgram, std::size_t*) = nullptr;
  nvrtcResult (*ptx)(nvrtcProgram, char*) = nullptr;
  nvrtcResult (*destroy)(nvrtcProgram*) = nullptr;
  const char* (*error_string)(nvrtcResult) = nullptr;
  nvrtcResult (*version)(int*, int*) = nullptr;
};

template <class F>
bool bind_symbol(void* lib, const char* name, F& f) {
  f = reinterpret_cast<F>(dlsym(lib, name));
  return f != nullptr;
}

const Nvrtc& nvrtc() {
  static const Nvrtc api = [] {
    Nvrtc a;
    // The NVRTC of the toolkit this was built with (its major version: the CUBIN it writes
    // must load in the runtime linked in), else whichever the loader finds.
    for (const char* name : {GD_NVRTC_SONAME, "libnvrtc.so"}) {
      a.lib = dlopen(name, RTLD_NOW | RTLD_LOCAL);
      if (a.lib) break;
      a.why += std::string(a.why.empty() ? "" : "; ") + dlerror();
    }
    if (!a.lib) {
      a.why = "NVRTC (" GD_NVRTC_SONAME ", from the CUDA toolkit) is not installed: " + a.why;
      return a;
    }
    const bool all = bind_symbol(a.lib, "nvrtcCreateProgram", a.create) &&
                     bind_symbol(a.lib, "nvrtcCompileProgram", a.compile) &&
                     bind_symbol(a.lib, "nvrtcGetProgramLogSize", a.log_size) &&
                     bind_symbol(a.lib, "nvrtcGetProgramLog", a.log) &&
                     bind_symbol(a.lib, "nvrtcGetCUBINSize", a.cubin_size) &&
                     bind_symbol(a.lib, "nvrtcGetCUBIN", a.cubin) &&
                     bind_symbol(a.lib, "nvrtcGetPTXSize", a.ptx_size) &&
                     bind_symbol(a.lib, "nvrtcGetPTX", a.ptx) &&
                     bind_symbol(a.lib, "nvrtcDestroyProgram", a.destroy) &&
                     bind_symbol(a.lib, "nvrtcGetErrorString", a.error_string) &&
                     bind_symbol(a.lib, "nvrtcVersion", a.version);
    if (!all) {
      a.why = "the NVRTC found lacks a function this build calls";
      dlclose(a.lib);
      a.lib = nullptr;
    }
    return a;
  }();
  return api;
}

}  // namespace

Compiled nvrtc_compile(const std::string& source, const std::string& arch, bool cubin,
                       const std::vector<std::string>& extra) {
  const Nvrtc& api = nvrtc();
  if (!api.lib) throw BackendError(api.why);
  nvrtcProgram prog = nullptr;
  if (api.create(&prog, source.c_str(), "gd_compute.cu", 0, nullptr, nullptr) != NVRTC_SUCCESS)
    throw BackendError("nvrtcCreateProgram failed");
  const std::string arch_opt = "--gpu-architecture=" + arch;
  // No fast-math: the "precise" ops must be what ordinary code gets.
  std::vector<const char*> opts = {arch_opt.c_str(), "-std=c++17", "-default-device"};
  for (const auto& e : extra) opts.push_back(e.c_str());
  const nvrtcResult rc = api.compile(prog, static_cast<int>(opts.size()), opts.data());
  Compiled c;
  std::size_t n = 0;
  api.log_size(prog, &n);
  c.log.resize(n);
  if (n) api.log(prog, c.log.data());
  if (rc != NVRTC_SUCCESS) {
    api.destroy(&prog);
    throw BackendError("NVRTC (" + arch + "): " + api.error_string(rc) + "\n" + c.log);
  }
  if (cubin) {
    api.cubin_size(prog, &n);
    c.image.resize(n);
    api.cubin(prog, c.image.data());
  } else {
    api.ptx_size(prog, &n);
    c.image.resize(n);
    api.ptx(prog, c.image.data());
  }
  api.destroy(&prog);
  return c;
}

const DriverLaunch& driver_launch() {
  static const DriverLaunch d = [] {
    DriverLaunch r;
    void* launch = nullptr;
    void* sync = nullptr;
    cudaDriverEntryPointQueryResult q1{}, q2{};
    if (cudaGetDriverEntryPointByVersion("cuLaunchKernel", &launch, 12000, cudaEnableDefault,
                                         &q1) == cudaSuccess &&
        q1 == cudaDriverEntryPointSuccess &&
        cudaGetDriverEntryPointByVersion("cuStreamSynchronize", &sync, 12000, cudaEnableDefault,
                                         &q2) == cudaSuccess &&
        q2 == cudaDriverEntryPointSuccess) {
      r.launch = reinterpret_cast<decltype(r.launch)>(launch);
      r.synchronize = reinterpret_cast<decltype(r.synchronize)>(sync);
    }
    cudaGetLastError();  // a failed query leaves the runtime's launch to the caller
    return r;
  }();
  return d;
}

uint64_t fnv1a(const std::string& s) {
  uint64_t h = 1469598103934665603ULL;
  for (unsigned char ch : s) h = (h ^ ch) * 1099511628211ULL;
  return h;
}

std::filesystem::path cache_dir(const std::string& sub) {
  const char* xdg = std::getenv("XDG_CACHE_HOME");
  const char* home = std::getenv("HOME");
  std::filesystem::path d = xdg && *xdg     ? std::filesystem::path(xdg)
                            : home && *home ? std::filesystem::path(home) / ".cache"
                                            : std::filesystem::temp_directory_path();
  return d / "gpudissect" / sub;
}

std::string read_file(const std::filesystem::path& p) {
  std::ifstream f(p, std::ios::binary);
  if (!f) return {};
  std::ostringstream s;
  s << f.rdbuf();
  return s.str();
}

void write_file(const std::filesystem::path& p, const std::string& data) {
  std::error_code ec;
  std::filesystem::create_directories(p.parent_path(), ec);
  const auto tmp = p.string() + ".tmp" + std::to_string(fnv1a(data) & 0xffff);
  {
    std::ofstream f(tmp, std::ios::binary);
    if (!f) return;
    f << data;
  }
  std::filesystem::rename(tmp, p, ec);
}

CachedCubin cached_cubin(const std::string& source, const std::string& arch,
                         const std::vector<std::string>& extra, const std::filesystem::path& dir,
                         uint64_t key) {
  CachedCubin c;
  const auto path = dir / (std::to_string(key) + ".cubin");
  c.cubin = read_file(path);
  if (c.cubin.empty()) {
    c.cubin = nvrtc_compile(source, arch, true, extra).image;
    write_file(path, c.cubin);
  }
  const auto sass_path = dir / (std::to_string(key) + ".sass");
  c.sass = read_file(sass_path);
  if (c.sass.empty()) {
    c.sass = disassemble(c.cubin, key);
    if (!c.sass.empty()) write_file(sass_path, c.sass);
  }
  return c;
}

// cuobjdump -sass of a cubin held in memory, through a temporary file.
std::string disassemble(const std::string& cubin, uint64_t key) {
  const auto tmp =
      std::filesystem::temp_directory_path() /
      ("gd_compute_" + std::to_string(key) + "_" +
       std::to_string(std::hash<std::thread::id>{}(std::this_thread::get_id())) + ".cubin");
  write_file(tmp, cubin);
  std::string out = dump_sass(tmp.string());
  std::error_code ec;
  std::filesystem::remove(tmp, ec);
  return out;
}

CubinLibrary::~CubinLibrary() {
  if (lib_) cudaLibraryUnload(lib_);
}

void CubinLibrary::load(const std::string& cubin, const char* what) {
  if (lib_) return;
  check(cudaLibraryLoadData(&lib_, cubin.data(), nullptr, nullptr, 0, nullptr, nullptr, 0), what);
}

cudaKernel_t CubinLibrary::kernel(const std::string& name, const char* what) {
  auto it = kernels_.find(name);
  if (it != kernels_.end()) return it->second;
  cudaKernel_t k = nullptr;
  check(cudaLibraryGetKernel(&k, lib_, name.c_str()), what);
  kernels_[name] = k;
  return k;
}

std::string nvrtc_version() {
  const Nvrtc& api = nvrtc();
  int major = 0, minor = 0;
  if (!api.lib || api.version(&major, &minor) != NVRTC_SUCCESS) return "none";
  return std::to_string(major) + "." + std::to_string(minor);
}

int compute_capability(int device) {
  int major = 0, minor = 0;
  cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device);
  cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device);
  return major * 10 + minor;
}

}  // namespace gd::cuda
