// The CUDA Device: device facts from the runtime, chases through the kernels in
// chase_kernels.cu, the SM clock measured on the SM, and NVML telemetry where present.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <future>
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "cuda_backend.hpp"
#include "cuda_probes.hpp"
#include "cuda_util.hpp"
#include "gpudissect/kernel_sets.hpp"
#include "gpudissect/units.hpp"
#include "latency/cuda_chase.cuh"
#include "nvml.hpp"

namespace gd::cuda {

namespace {

std::string version_string(int v) {
  return std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10);
}

int attribute(cudaDeviceAttr a, int dev) {
  int v = 0;
  return cudaDeviceGetAttribute(&v, a, dev) == cudaSuccess ? v : 0;
}

class CudaDevice final : public Device {
 public:
  explicit CudaDevice(int index) : index_(index) {
    // This binary's SASS (cuobjdump of a 4.7 MB listing, then its parse) names every timed
    // instruction; it is read beside the first measurements instead of before them (on the
    // H200 the first latency point came 5.5 s into a --quick run).
    own_sass_read_ = std::async(std::launch::async, [] { own_memory_ops(); });
    char bus[32] = {};
    if (cudaDeviceGetPCIBusId(bus, sizeof bus, index) == cudaSuccess) pci_bus_id_ = bus;
    // Where NVML reports the host's pids (in a container) our getpid() is not among them:
    // the pids that appear with our context are ours, and are not "another process".
    const std::vector<unsigned> pids_before =
        pci_bus_id_.empty() ? std::vector<unsigned>{} : nvml_process_pids(pci_bus_id_);
    check(cudaSetDevice(index), "cudaSetDevice");
    check(cudaFree(nullptr), "creating the CUDA context");
    if (!pci_bus_id_.empty())
      for (unsigned pid : nvml_process_pids(pci_bus_id_))
        if (std::find(pids_before.begin(), pids_before.end(), pid) == pids_before.end())
          own_pids_.push_back(pid);
    check(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "cudaStreamCreate");
    cudaDeviceProp prop{};
    check(cudaGetDeviceProperties(&prop, index), "cudaGetDeviceProperties");

    info_.backend = "cuda";
    info_.id = "cuda:" + std::to_string(index);
    info_.name = prop.name;
    info_.vendor = "NVIDIA";
    info_.compute_units = prop.multiProcessorCount;
    info_.compute_capability = std::to_string(prop.major) + "." + std::to_string(prop.minor);
    if (int khz = attribute(cudaDevAttrClockRate, index)) info_.clock_mhz_reported = khz / 1000.0;
    if (int khz = attribute(cudaDevAttrMemoryClockRate, index))
      info_.memory_clock_mhz = khz / 1000.0;
    if (int bits = attribute(cudaDevAttrGlobalMemoryBusWidth, index))
      info_.memory_bus_width_bits = bits;
    info_.memory_bytes = prop.totalGlobalMem;
    if (prop.l2CacheSize > 0) info_.l2_bytes = prop.l2CacheSize;
    info_.shared_per_sm_bytes = prop.sharedMemPerMultiprocessor;
    info_.shared_per_block_bytes = prop.sharedMemPerBlock;
    info_.shared_per_block_optin_bytes = prop.sharedMemPerBlockOptin;
    info_.constant_bytes = prop.totalConstMem;
    int drv = 0, rt = 0;
    cudaDriverGetVersion(&drv);
    cudaRuntimeGetVersion(&rt);
    // The release where NVML can tell it, and the CUDA level the driver supports.
    const auto release = nvml_driver_version();
    info_.driver_version =
        (release ? *release + ", " : std::string()) + "CUDA " + version_string(drv);
    info_.toolkit_version = version_string(rt);
    info_.extra["pci_bus_id"] = pci_bus_id_;
    info_.extra["l1_cache_global_supported"] = prop.globalL1CacheSupported ? "yes" : "no";
    info_.extra["max_persisting_l2_bytes"] = std::to_string(prop.persistingL2CacheMaxSize);
    info_.extra["regs_per_sm"] = std::to_string(prop.regsPerMultiprocessor);
    info_.extra["max_threads_per_sm"] = std::to_string(prop.maxThreadsPerMultiProcessor);
    info_.extra["warp_size"] = std::to_string(prop.warpSize);
    info_.extra["nvml"] = nvml_load(nullptr) ? "yes" : "no";
    for (const auto& [k, v] : nvml_identity(pci_bus_id_)) info_.extra[k] = v;  // uuid, ECC

    cudaChannelFormatDesc desc = cudaCreateChannelDesc<uint32_t>();
    std::size_t width = 0;
    if (cudaDeviceGetTexture1DLinearMaxWidth(&width, &desc, index) == cudaSuccess)
      max_texture_elements_ = width;
    else
      (void)cudaGetLastError();
    check(cudaMalloc(&out_, sizeof(unsigned long long) * kMaxOut), "cudaMalloc (results)");
  }

  ~CudaDevice() override {
    kernel_sets_.clear();
    if (out_) cudaFree(out_);
    if (stream_) cudaStreamDestroy(stream_);
  }

  const DeviceInfo& info() const override { return info_; }

  Support supports(MemPath p) const override {
    switch (p) {
      case MemPath::global:
      case MemPath::l2:
      case MemPath::readonly:
      case MemPath::constant:
      case MemPath::shared:
        return Support::yes();
      case MemPath::texture:
        return max_texture_elements_
                   ? Support::yes()
                   : Support::no("the runtime reports no 1D linear texture width");
      case MemPath::local:
      case MemPath::image:
        return Support::no("OpenCL path; on CUDA use shared (local) or texture (image)");
    }
    return Support::no("unknown path");
  }

  uint64_t max_footprint(MemPath p) const override {
    const uint64_t mem = info_.memory_bytes.value_or(0);
    switch (p) {
      case MemPath::constant:
        return std::min<uint64_t>(kConstantChainBytes, info_.constant_bytes.value_or(0));
      case MemPath::shared:
        return info_.shared_per_block_optin_bytes.value_or(0);
      case MemPath::texture:
        return std::min<uint64_t>(mem / 2, uint64_t{max_texture_elements_} * 4);
      default:
        return mem / 2;
    }
  }

  // shape: one chase from chain upload through timed repeats to the host's check, in order
  ChaseTiming chase(const ChaseRequest& req) override {
    if (!req.next || req.next->empty()) throw BackendError("chase: empty chain");
    if (req.repeats < 1 || 2 * req.repeats + 1 > kMaxOut)
      throw BackendError("chase: bad repeat count");
    if (req.stride_bytes % 8 != 0)
      throw BackendError("chase: stride must be a multiple of 8 bytes");
    const auto lines = static_cast<uint32_t>(req.next->size());
    const uint64_t bytes = req.footprint_bytes();
    if (bytes > max_footprint(req.path))
      throw AllocationFailed("footprint " + std::to_string(bytes) + " exceeds what the " +
                             to_string(req.path) + " path can hold (" +
                             std::to_string(max_footprint(req.path)) + " bytes)");

    ChaseArgs a;
    a.warmup = req.warmup_hops;
    a.hops = req.hops_per_repeat;
    a.repeats = req.repeats;
    a.out = out_;

    auto* next_dev = static_cast<uint32_t*>(chain_.get(sizeof(uint32_t) * lines, "the chain"));
    check(cudaMemcpyAsync(next_dev, req.next->data(), sizeof(uint32_t) * lines,
                          cudaMemcpyHostToDevice, stream_),
          "uploading the chain");

    uint64_t end_to_line_div = req.stride_bytes;  // how the final position maps to a line
    uint64_t end_base = 0;
    cudaTextureObject_t tex = 0;
    switch (req.path) {
      case MemPath::global:
      case MemPath::l2:
      case MemPath::readonly: {
        char* buf = static_cast<char*>(data_.get(bytes, "the chase buffer"));
        fill_pointer_chain(buf, next_dev, lines, req.stride_bytes, stream_);
        check(cudaGetLastError(), "filling the chain");
        const PtrLoad k = req.path == MemPath::global ? PtrLoad::ca
                          : req.path == MemPath::l2   ? PtrLoad::cg
                                                      : PtrLoad::nc;
        chase_pointers(k, buf, a, stream_);
        end_base = reinterpret_cast<uint64_t>(buf);
        break;
      }
      case MemPath::texture: {
        auto* buf = static_cast<uint32_t*>(data_.get(bytes, "the texture buffer"));
        fill_index_chain(buf, next_dev, lines, req.stride_bytes, stream_);
        check(cudaGetLastError(), "filling the chain");
        cudaResourceDesc res{};
        res.resType = cudaResourceTypeLinear;
        res.res.linear.devPtr = buf;
        res.res.linear.desc = cudaCreateChannelDesc<uint32_t>();
        res.res.linear.sizeInBytes = bytes;
        cudaTextureDesc td{};
        td.readMode = cudaReadModeElementType;
        check(cudaCreateTextureObject(&tex, &res, &td, nullptr), "cudaCreateTextureObject");
        chase_texture(tex, a, stream_);
        end_to_line_div = req.stride_bytes / 4;  // element index
        break;
      }
      case MemPath::constant: {
        std::vector<uint32_t> image(kConstantChainBytes / 4, 0);
        for (uint32_t i = 0; i < lines; ++i)
          image[i * req.stride_bytes / 4] =
              static_cast<uint32_t>((*req.next)[i] * req.stride_bytes);
        check(cudaStreamSynchronize(stream_), "cudaStreamSynchronize");
        check(upload_constant_chain(image.data(), kConstantChainBytes, stream_),
              "copying the chain to constant memory");
        chase_constant(a, stream_);
        break;
      }
      case MemPath::shared: {
        std::vector<uint32_t> image(bytes / 4, 0);
        for (uint32_t i = 0; i < lines; ++i)
          image[i * req.stride_bytes / 4] =
              static_cast<uint32_t>((*req.next)[i] * req.stride_bytes);
        auto* img = static_cast<uint32_t*>(data_.get(bytes, "the shared-memory image"));
        check(cudaMemcpyAsync(img, image.data(), bytes, cudaMemcpyHostToDevice, stream_),
              "uploading the shared-memory image");
        check(prepare_shared_chase(bytes), "cudaFuncSetAttribute (dynamic shared memory)");
        chase_shared(img, bytes, a, stream_);
        break;
      }
      default:
        throw BackendError("path " + to_string(req.path) + " is not a CUDA path");
    }
    check(cudaGetLastError(), "launching the chase");
    std::vector<unsigned long long> host(2 * req.repeats + 1);
    check(cudaMemcpyAsync(host.data(), out_, sizeof(unsigned long long) * host.size(),
                          cudaMemcpyDeviceToHost, stream_),
          "reading the chase results");
    const cudaError_t sync = cudaStreamSynchronize(stream_);
    if (tex) cudaDestroyTextureObject(tex);
    check(sync, "running the chase kernel");

    ChaseTiming t;
    double cycles = 0, ns = 0;
    for (int r = 0; r < req.repeats; ++r) {
      const double c = static_cast<double>(host[2 * r]);
      const double n = static_cast<double>(host[2 * r + 1]);
      t.cycles_per_hop.push_back(c / static_cast<double>(req.hops_per_repeat));
      t.ns_per_hop.push_back(n / static_cast<double>(req.hops_per_repeat));
      cycles += c;
      ns += n;
    }
    if (ns > 0) t.clock_mhz = cycles / ns * 1000.0;
    t.end_line = static_cast<uint32_t>((host[2 * req.repeats] - end_base) / end_to_line_div);
    return t;
  }

  std::optional<ClockSample> sample_clock() override {
    constexpr uint64_t kWindowNs = 2'000'000;
    measure_clock(kWindowNs, out_, stream_);
    check(cudaGetLastError(), "launching the clock kernel");
    unsigned long long host[2] = {};
    check(cudaMemcpyAsync(host, out_, sizeof host, cudaMemcpyDeviceToHost, stream_),
          "reading the clock");
    check(cudaStreamSynchronize(stream_), "running the clock kernel");
    if (host[1] == 0) return std::nullopt;
    return ClockSample{static_cast<double>(host[0]) / static_cast<double>(host[1]) * 1000.0,
                       static_cast<double>(host[1]) / 1000.0};
  }

  std::optional<Telemetry> telemetry() override {
    if (pci_bus_id_.empty()) return std::nullopt;
    return nvml_read(pci_bus_id_);
  }

  std::optional<GpuActivity> activity() override {
    if (pci_bus_id_.empty()) return std::nullopt;
    return nvml_activity(pci_bus_id_, own_pids_);
  }

  std::optional<std::string> timed_instruction(MemPath p) override {
    // The instruction actually timed, read from this very binary's SASS.
    const std::map<std::string, KernelMemoryOps>& sass = own_memory_ops();
    static const std::map<MemPath, std::string> kernel = {
        {MemPath::global, "chase_pointers_kernelILNS0_7PtrLoadE0"},
        {MemPath::l2, "chase_pointers_kernelILNS0_7PtrLoadE1"},
        {MemPath::readonly, "chase_pointers_kernelILNS0_7PtrLoadE2"},
        {MemPath::texture, "chase_texture_kernel"},
        {MemPath::constant, "chase_constant_kernel"},
        {MemPath::shared, "chase_shared_kernel"}};
    auto k = kernel.find(p);
    if (k == kernel.end()) return std::nullopt;
    for (const auto& [fn, ops] : sass)
      if (fn.find(k->second) != std::string::npos && !ops.load.empty()) return ops.load;
    return std::nullopt;
  }

  KernelSet* kernel_set(const std::string& probe) override {
    return kernel_set_of(kernel_sets_, kernel_factories(), probe, index_, stream_, info_);
  }

  void release_memory() override {
    chain_.release();
    data_.release();
  }

  std::optional<uint64_t> free_memory() const override {
    std::size_t free = 0, total = 0;
    if (cudaMemGetInfo(&free, &total) != cudaSuccess) return std::nullopt;
    return free;
  }

 private:
  static constexpr int kMaxOut = 257;
  int index_;
  std::future<void> own_sass_read_;  // waited for by the destructor
  cudaStream_t stream_ = nullptr;
  DeviceInfo info_;
  std::string pci_bus_id_;
  std::vector<unsigned> own_pids_;  // NVML's pids of this process's context (see the constructor)
  std::size_t max_texture_elements_ = 0;
  unsigned long long* out_ = nullptr;
  DeviceBuffer chain_, data_;
  // Declared last: released first, while the stream still exists.
  std::map<std::string, std::unique_ptr<KernelSet>> kernel_sets_;
};

}  // namespace

std::vector<DeviceEntry> enumerate(std::string* why) {
  int n = 0;
  const cudaError_t rc = cudaGetDeviceCount(&n);
  if (rc != cudaSuccess) {
    (void)cudaGetLastError();
    if (why)
      *why = rc == cudaErrorInsufficientDriver || rc == cudaErrorNoDevice
                 ? "CUDA: no NVIDIA driver or GPU on this machine"
                 : std::string("CUDA: ") + cudaGetErrorString(rc);
    return {};
  }
  if (n == 0 && why) *why = "CUDA: no CUDA device";
  std::vector<DeviceEntry> out;
  for (int i = 0; i < n; ++i) {
    cudaDeviceProp prop{};
    if (cudaGetDeviceProperties(&prop, i) != cudaSuccess) continue;
    DeviceEntry e;
    e.id = "cuda:" + std::to_string(i);
    e.name = prop.name;
    e.summary = "sm_" + std::to_string(prop.major) + std::to_string(prop.minor) + ", " +
                std::to_string(prop.multiProcessorCount) + " SMs, " +
                std::to_string(prop.totalGlobalMem >> 20) + " MiB, L2 " +
                std::to_string(prop.l2CacheSize >> 10) + " KiB";
    for (MemPath p : {MemPath::global, MemPath::l2, MemPath::readonly, MemPath::texture,
                      MemPath::constant, MemPath::shared})
      e.paths.emplace_back(p, Support::yes());
    for (MemPath p : {MemPath::local, MemPath::image})
      e.paths.emplace_back(p, Support::no("OpenCL path"));
    e.uuid = hex_bytes(prop.uuid.bytes, sizeof prop.uuid.bytes);
    if (prop.l2CacheSize > 0) e.l2_bytes = static_cast<uint64_t>(prop.l2CacheSize);
    e.sm_arch = "sm_" + std::to_string(prop.major) + std::to_string(prop.minor);
    out.push_back(std::move(e));
  }
  return out;
}

std::unique_ptr<Device> open(int index) {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) {
    (void)cudaGetLastError();
    throw BackendError("no CUDA driver or device on this machine");
  }
  if (index < 0 || index >= n)
    throw BackendError("no CUDA device " + std::to_string(index) + " (" + std::to_string(n) +
                       " present)");
  return std::make_unique<CudaDevice>(index);
}

std::string runtime_version() { return version_string(CUDART_VERSION); }

bool nvml_available(std::string* why) { return nvml_load(why); }

}  // namespace gd::cuda
