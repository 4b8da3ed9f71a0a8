// The memory probe's CUDA kernels: a chase by lane 0 of each warp of one block, each warp on
// its own chain, through ld.global.ca / .nc / .cg or this file's own __constant__ bank, in a
// kernel whose shared-memory carve-out preference and dynamic shared memory are set per launch
// (the attribute persists on the function, so every launch sets it, the default included).
#include <cuda.h>  // the virtual-memory API's types; its functions come through the runtime

#include <algorithm>
#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "cuda_probes.hpp"
#include "cuda_util.hpp"
#include "device_clock.cuh"
#include "latency/cuda_chase.cuh"
#include "memory/memory.hpp"

namespace gd::cuda {

namespace {

constexpr std::size_t kConstBytes = 65536;  // one constant bank: this translation unit's own
__constant__ uint32_t c_mem[kConstBytes / 4];
// Past the 64 KiB bank, the chase goes on in the kernel's parameters (bank c[0x0]; 32764 bytes
// of parameters per kernel since CUDA 12.1 on sm_70+), read in place through __grid_constant__:
// constant memory the same caches serve, so a level larger than 64 KiB can still show its end.
constexpr std::size_t kParamBytes = 31 * 1024;
struct ParamBank {
  uint32_t w[kParamBytes / 4];
};

struct MemArgs {
  const unsigned long long* starts;  // per warp: an address (global) or a byte offset (constant)
  unsigned long long* out;           // per warp: 2 * repeats (cycles, ns), then the end position
  unsigned long long warmup, hops;
  int repeats;
  // Read through L2 only before the walk (MemChaseRequest::l2_prefetch); 0 bytes: none.
  unsigned long long prefetch_base, prefetch_bytes;
};

// Inline PTX fixes the cache operator; each hop's address is the last hop's value, so the
// loads are strictly serial and none can be dropped (the end position is checked).
struct HopCa {
  __device__ __forceinline__ unsigned long long operator()(unsigned long long p) const {
    unsigned long long v;
    asm volatile("ld.global.ca.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
    return v;
  }
};
struct HopNc {
  __device__ __forceinline__ unsigned long long operator()(unsigned long long p) const {
    unsigned long long v;
    asm volatile("ld.global.nc.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
    return v;
  }
};
struct HopCg {
  __device__ __forceinline__ unsigned long long operator()(unsigned long long p) const {
    unsigned long long v;
    asm volatile("ld.global.cg.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
    return v;
  }
};
// A byte offset into the __constant__ bank: one LDC c[0x3][R] a hop, nothing else on the
// chain (the latency probe's constant chase): a footprint within the bank is timed with it.
struct HopConst1 {
  __device__ __forceinline__ unsigned long long operator()(unsigned long long off) const {
    return *reinterpret_cast<const uint32_t*>(reinterpret_cast<const char*>(c_mem) +
                                              static_cast<uint32_t>(off));
  }
};
struct HopConst {
  // A byte offset into the two banks laid end to end: below 64 KiB the __constant__ bank,
  // above it the parameters. The bank test is on the chain (sm_90 SASS, ptxas stall counts):
  // LOP3.LUT P0 (13 cycles to the predicate's use), @P0 VIADD (4), @P0 LDC c[0x0][R+0x250]
  // (8), then @!P0 LDC c[0x3][R]: 25 cycles a hop before the load in the bank, 17 in the
  // parameters (whose LDC issues 8 earlier). They are measured (constant_overheads) and taken
  // off, so that the curve is the load's latency, the latency probe's quantity.
  const ParamBank* bank;
  __device__ __forceinline__ unsigned long long operator()(unsigned long long off) const {
    const uint32_t o = static_cast<uint32_t>(off);
    if (o < kConstBytes)
      return *reinterpret_cast<const uint32_t*>(reinterpret_cast<const char*>(c_mem) + o);
    return *reinterpret_cast<const uint32_t*>(reinterpret_cast<const char*>(bank->w) +
                                              (o - kConstBytes));
  }
};

// A 32-bit element index through the texture path (the index of the next line's element).
struct HopTex {
  cudaTextureObject_t tex;
  __device__ __forceinline__ unsigned long long operator()(unsigned long long i) const {
    return tex1Dfetch<uint32_t>(tex, static_cast<int>(i));
  }
};

template <class Hop>
__device__ __forceinline__ void chase_warp(const MemArgs& a, Hop hop) {
  // Lane 0 of every warp walks (one request per hop, as a warp of 32 threads all on one
  // address would make); the other lanes only take part in the barriers.
  const bool walker = (threadIdx.x & 31) == 0;
  const unsigned w = threadIdx.x >> 5;
  unsigned long long p = a.starts[w];
  unsigned long long* out = a.out + static_cast<unsigned long long>(w) * (2 * a.repeats + 1);
  // The warps start every repeat together (a barrier outside the timed part). Without it, on
  // the partition test's n warps sharing one cache, a warp that falls behind at the edge
  // keeps missing while the others finish and leave, then runs on alone with the whole cache,
  // and its later repeats read as hits: n warps seemed to hold more than the SM has (totals
  // of 256-321 KiB per warp x n on an H200). With it, every repeat is timed with all n chains
  // live at its start. One warp: the barriers cost nothing timed.
  if (a.prefetch_bytes && w == 0) {
    // One 8-byte load per 32-byte sector, warp 0's lanes side by side; volatile, so kept.
    for (unsigned long long off = (threadIdx.x & 31) * 32ull; off < a.prefetch_bytes;
         off += 32ull * 32) {
      unsigned long long v;
      asm volatile("ld.global.cg.u64 %0, [%1];" : "=l"(v) : "l"(a.prefetch_base + off) : "memory");
    }
  }
  __syncthreads();
  if (walker)
    for (unsigned long long i = 0; i < a.warmup; ++i) p = hop(p);
  __syncthreads();
  for (int r = 0; r < a.repeats; ++r) {
    if (walker) {
      const unsigned long long t0 = globaltimer_ns();
      const long long c0 = clock64();
      unsigned long long i = 0;
      for (; i + 16 <= a.hops; i += 16) {
#pragma unroll
        for (int u = 0; u < 16; ++u) p = hop(p);
      }
      for (; i < a.hops; ++i) p = hop(p);
      const long long c1 = clock64();
      const unsigned long long t1 = globaltimer_ns();
      out[2 * r] = static_cast<unsigned long long>(c1 - c0);
      out[2 * r + 1] = t1 - t0;
    }
    __syncthreads();
  }
  if (walker) out[2 * a.repeats] = p;
}

// One kernel per load so each has its own name in the SASS (the timed instruction is read
// from it).
__global__ void mem_chase_ca(MemArgs a, cudaTextureObject_t) { chase_warp(a, HopCa{}); }
__global__ void mem_chase_nc(MemArgs a, cudaTextureObject_t) { chase_warp(a, HopNc{}); }
__global__ void mem_chase_cg(MemArgs a, cudaTextureObject_t) { chase_warp(a, HopCg{}); }
__global__ void mem_chase_const(MemArgs a, cudaTextureObject_t,
                                const __grid_constant__ ParamBank bank) {
  chase_warp(a, HopConst{&bank});
}
__global__ void mem_chase_const1(MemArgs a, cudaTextureObject_t) { chase_warp(a, HopConst1{}); }
__global__ void mem_chase_tex(MemArgs a, cudaTextureObject_t t) { chase_warp(a, HopTex{t}); }

const void* kernel_of(MemLoad l) {
  switch (l) {
    case MemLoad::ca:
      return reinterpret_cast<const void*>(&mem_chase_ca);
    case MemLoad::nc:
      return reinterpret_cast<const void*>(&mem_chase_nc);
    case MemLoad::cg:
      return reinterpret_cast<const void*>(&mem_chase_cg);
    case MemLoad::constant:
      return reinterpret_cast<const void*>(&mem_chase_const);
    case MemLoad::texture:
      return reinterpret_cast<const void*>(&mem_chase_tex);
  }
  return nullptr;
}

// The driver's virtual-memory API (cuMemCreate, cuMemMap ...) reached through the runtime's
// entry-point query, so the binary does not link libcuda; null where the driver lacks it.
struct Vmm {
  decltype(&::cuMemGetAllocationGranularity) granularity = nullptr;
  decltype(&::cuMemCreate) create = nullptr;
  decltype(&::cuMemRelease) release = nullptr;
  decltype(&::cuMemAddressReserve) reserve = nullptr;
  decltype(&::cuMemAddressFree) free = nullptr;
  decltype(&::cuMemMap) map = nullptr;
  decltype(&::cuMemUnmap) unmap = nullptr;
  decltype(&::cuMemSetAccess) access = nullptr;
  std::string missing;  // the first symbol not found, or empty
  static const Vmm& get() {
    static const Vmm v = [] {
      Vmm m;
      auto load = [&](const char* name, auto& fn) {
        void* p = nullptr;
        cudaDriverEntryPointQueryResult q{};
        if (cudaGetDriverEntryPointByVersion(name, &p, 12000, cudaEnableDefault, &q) !=
                cudaSuccess ||
            q != cudaDriverEntryPointSuccess || !p) {
          (void)cudaGetLastError();
          if (m.missing.empty()) m.missing = name;
          return;
        }
        fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(p);
      };
      load("cuMemGetAllocationGranularity", m.granularity);
      load("cuMemCreate", m.create);
      load("cuMemRelease", m.release);
      load("cuMemAddressReserve", m.reserve);
      load("cuMemAddressFree", m.free);
      load("cuMemMap", m.map);
      load("cuMemUnmap", m.unmap);
      load("cuMemSetAccess", m.access);
      return m;
    }();
    return v;
  }
};

// Device memory mapped from separate physical allocations of `chunk` bytes each, side by side
// in one reserved address range: no page table entry can span two chunks, whatever page sizes
// the driver would pick for one large allocation. Grows by whole chunks; an out-of-memory
// chunk becomes AllocationFailed (the point is skipped).
class ChunkedBuffer {
 public:
  ChunkedBuffer() = default;
  ChunkedBuffer(const ChunkedBuffer&) = delete;
  ChunkedBuffer& operator=(const ChunkedBuffer&) = delete;
  ~ChunkedBuffer() { release(); }

  char* get(int device, uint64_t bytes, uint64_t chunk, uint64_t reserve_bytes) {
    const Vmm& v = Vmm::get();
    if (!v.missing.empty())
      throw BackendError("the driver has no " + v.missing + " (CUDA virtual-memory API)");
    if (chunk_ && chunk != chunk_) release();
    if (!base_) {
      CUmemAllocationProp prop{};
      prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
      prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
      prop.location.id = device;
      size_t gran = 0;
      drv(v.granularity(&gran, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM), "granularity");
      if (gran == 0 || chunk % gran != 0)
        throw BackendError("chunks of " + std::to_string(chunk) +
                           " bytes are not a multiple of the allocation granularity " +
                           std::to_string(gran));
      reserved_ = (std::max(bytes, reserve_bytes) + chunk - 1) / chunk * chunk;
      CUdeviceptr p = 0;
      drv(v.reserve(&p, reserved_, chunk, 0, 0), "cuMemAddressReserve");
      base_ = p;
      chunk_ = chunk;
      prop_ = prop;
    }
    if (bytes > reserved_)
      throw AllocationFailed("chunk-mapped buffer of " + std::to_string(bytes) +
                             " bytes: past the " + std::to_string(reserved_) + " reserved");
    while (handles_.size() * chunk_ < bytes) {
      CUmemGenericAllocationHandle h{};
      const CUresult rc = v.create(&h, chunk_, &prop_, 0);
      if (rc == CUDA_ERROR_OUT_OF_MEMORY)
        throw AllocationFailed("cuMemCreate: out of device memory after " +
                               std::to_string(handles_.size()) + " chunks");
      drv(rc, "cuMemCreate");
      const CUdeviceptr at = base_ + handles_.size() * chunk_;
      const CUresult mr = v.map(at, chunk_, 0, h, 0);
      if (mr != CUDA_SUCCESS) {
        v.release(h);
        drv(mr, "cuMemMap");
      }
      CUmemAccessDesc acc{};
      acc.location = prop_.location;
      acc.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
      const CUresult ar = v.access(at, chunk_, &acc, 1);
      handles_.push_back(h);
      drv(ar, "cuMemSetAccess");
    }
    return reinterpret_cast<char*>(base_);
  }

  void release() {
    const Vmm& v = Vmm::get();
    if (!base_ || !v.missing.empty()) return;
    cudaDeviceSynchronize();  // nothing may still read the chunks
    for (size_t i = 0; i < handles_.size(); ++i) {
      v.unmap(base_ + i * chunk_, chunk_);
      v.release(handles_[i]);
    }
    handles_.clear();
    v.free(base_, reserved_);
    base_ = 0;
    reserved_ = 0;
    chunk_ = 0;
  }

 private:
  static void drv(CUresult rc, const char* what) {
    if (rc == CUDA_SUCCESS) return;
    if (rc == CUDA_ERROR_OUT_OF_MEMORY)
      throw AllocationFailed(std::string(what) + ": out of memory");
    throw BackendError(std::string(what) + " failed (CUresult " + std::to_string(int(rc)) + ")");
  }
  CUdeviceptr base_ = 0;
  uint64_t reserved_ = 0, chunk_ = 0;
  CUmemAllocationProp prop_{};
  std::vector<CUmemGenericAllocationHandle> handles_;
};

std::string fragment_of(MemLoad l) {
  return "mem_chase_" + (l == MemLoad::constant ? std::string("const") : to_string(l));
}

class CudaMemory final : public MemoryKernels {
 public:
  CudaMemory(int device, cudaStream_t stream, const DeviceInfo& info)
      : device_(device), stream_(stream), info_(info) {}

  Support supports(const std::string& part) override {
    if (part == "tlb.chunks" && !Vmm::get().missing.empty())
      return Support::no("the driver has no " + Vmm::get().missing +
                         " (the CUDA virtual-memory API maps the chunks)");
    return Support::yes();
  }
  // The TLB part's buffers (GiB of each) go back before the probes after this one.
  void release_tlb_buffers() override {
    chunked_.release();
    chain_.release();
  }
  uint64_t constant_bank_bytes() const override { return kConstBytes + kParamBytes; }

  // shape: one chase for every path and mapping: buffer, launch, readback, check, in order
  MemChaseTiming chase(const MemChaseRequest& r) override {
    if (!r.next || r.next->empty()) throw BackendError("memory chase: empty chain");
    if (r.warps < 1 || r.warps > 32 || static_cast<int>(r.starts.size()) != r.warps)
      throw BackendError("memory chase: " + std::to_string(r.warps) + " warps, " +
                         std::to_string(r.starts.size()) + " starts");
    check(cudaSetDevice(device_), "cudaSetDevice");
    MemChaseTiming t;
    const void* fn = kernel_of(r.load);
    const uint64_t lines = r.next->size();
    std::vector<unsigned long long> starts(r.warps);
    char* base = nullptr;
    cudaTextureObject_t tex = 0;
    // The texture object lives for this chase only, whatever happens.
    struct TexGuard {
      cudaTextureObject_t* t;
      ~TexGuard() {
        if (*t) cudaDestroyTextureObject(*t);
      }
    } tex_guard{&tex};
    double hop_overhead = 0;  // cycles of the two-bank hop's bank test, taken off each hop
    if (r.load == MemLoad::constant) {
      if (lines * r.stride_bytes > kConstBytes + kParamBytes || r.stride_bytes % 4 != 0)
        throw BackendError("constant chase: " + std::to_string(lines * r.stride_bytes) +
                           " bytes at stride " + std::to_string(r.stride_bytes) +
                           " does not fit the 64 KiB bank and the parameters");
      if (lines * r.stride_bytes <= kConstBytes) {
        fn = reinterpret_cast<const void*>(&mem_chase_const1);
      } else {
        // Each line is visited once a round: the hops in each bank in proportion to its lines.
        const auto [in_bank, in_params] = constant_overheads();
        const uint64_t bank_lines = (kConstBytes + r.stride_bytes - 1) / r.stride_bytes;
        hop_overhead =
            (double(bank_lines) * in_bank + double(lines - bank_lines) * in_params) / double(lines);
      }
      std::vector<uint32_t> image((kConstBytes + kParamBytes) / 4, 0);
      for (uint64_t i = 0; i < lines; ++i)
        image[i * r.stride_bytes / 4] = static_cast<uint32_t>((*r.next)[i] * r.stride_bytes);
      // On the chase's own stream, so the launch is ordered after the copy whatever kind of
      // stream it is; `image` outlives it (the stream is synchronised before returning).
      check(cudaMemcpyToSymbolAsync(c_mem, image.data(), kConstBytes, 0, cudaMemcpyHostToDevice,
                                    stream_),
            "uploading the constant chain");
      std::copy(image.begin() + kConstBytes / 4, image.end(), params_.w);
      for (int w = 0; w < r.warps; ++w) starts[w] = r.starts[w] * r.stride_bytes;
    } else if (r.load == MemLoad::texture) {
      if (r.stride_bytes < 4 || r.stride_bytes % 4 != 0)
        throw BackendError("texture chase: stride must be a multiple of 4 bytes");
      base = static_cast<char*>(chain_.get(lines * r.stride_bytes, "memory chase chain"));
      auto* next = static_cast<uint32_t*>(next_.get(lines * 4, "memory chase next"));
      check(cudaMemcpyAsync(next, r.next->data(), lines * 4, cudaMemcpyHostToDevice, stream_),
            "copying the chain");
      fill_index_chain(reinterpret_cast<uint32_t*>(base), next, static_cast<uint32_t>(lines),
                       r.stride_bytes, stream_);
      check(cudaGetLastError(), "filling the chain");
      cudaResourceDesc res{};
      res.resType = cudaResourceTypeLinear;
      res.res.linear.devPtr = base;
      res.res.linear.desc = cudaCreateChannelDesc<uint32_t>();
      res.res.linear.sizeInBytes = lines * r.stride_bytes;
      cudaTextureDesc td{};
      td.readMode = cudaReadModeElementType;
      check(cudaCreateTextureObject(&tex, &res, &td, nullptr), "cudaCreateTextureObject");
      for (int w = 0; w < r.warps; ++w) starts[w] = r.starts[w] * (r.stride_bytes / 4);
    } else {
      if (r.stride_bytes < 8 || r.stride_bytes % 8 != 0)
        throw BackendError("memory chase: stride must be a multiple of 8 bytes");
      // A chunk-mapped buffer reserves addresses for the whole device memory at once (nothing
      // mapped), then maps chunks as the footprint grows.
      base = r.chunk_bytes
                 ? chunked_.get(device_, lines * r.stride_bytes, r.chunk_bytes,
                                std::max<uint64_t>(info_.memory_bytes.value_or(0), 64ull << 30))
                 : static_cast<char*>(chain_.get(lines * r.stride_bytes, "memory chase chain"));
      auto* next = static_cast<uint32_t*>(next_.get(lines * 4, "memory chase next"));
      check(cudaMemcpyAsync(next, r.next->data(), lines * 4, cudaMemcpyHostToDevice, stream_),
            "copying the chain");
      fill_pointer_chain(base, next, static_cast<uint32_t>(lines), r.stride_bytes, stream_);
      check(cudaGetLastError(), "filling the chain");
      for (int w = 0; w < r.warps; ++w)
        starts[w] = reinterpret_cast<unsigned long long>(base + r.starts[w] * r.stride_bytes);
      if (r.flush_l2) {
        // Writes allocate in L2 (the point of coherence): three times its size evicts the chain.
        const uint64_t l2 = info_.l2_bytes.value_or(64ull << 20);
        check(cudaMemsetAsync(flush_.get(3 * l2, "L2 flush buffer"), 0x5a, 3 * l2, stream_),
              "flushing L2");
      }
    }
    // The split: preference (-1 is the driver default, so an earlier point's setting does not
    // linger) and the dynamic shared memory limit, both attributes of the function.
    if (r.carveout_percent >= 0) {
      check(cudaFuncSetAttribute(fn, cudaFuncAttributePreferredSharedMemoryCarveout,
                                 r.carveout_percent),
            "cudaFuncSetAttribute (carveout)");
    } else {
      // cudaSharedmemCarveoutDefault (-1). Should a driver refuse it, the function keeps what
      // it had: the driver's default for the first launch of each kernel, which is where the
      // probe asks for it (the carve-out part's first point).
      (void)cudaFuncSetAttribute(fn, cudaFuncAttributePreferredSharedMemoryCarveout,
                                 cudaSharedmemCarveoutDefault);
      (void)cudaGetLastError();
    }
    const int max_dynamic = static_cast<int>(std::max<uint64_t>(r.dynamic_shared_bytes, 48 * 1024));
    check(cudaFuncSetAttribute(fn, cudaFuncAttributeMaxDynamicSharedMemorySize, max_dynamic),
          "cudaFuncSetAttribute (dynamic shared memory)");
    // Read back what the API says of this split: blocks of 7 KiB dynamic (+ the reservation)
    // that fit one SM.
    int blocks = 0;
    if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, fn, 32, kCarveoutProbeBlockBytes) ==
        cudaSuccess)
      t.api_probe_blocks = blocks;
    (void)cudaGetLastError();
    cudaFuncAttributes attr{};
    if (cudaFuncGetAttributes(&attr, fn) == cudaSuccess && attr.preferredShmemCarveout >= 0)
      t.attr_carveout_percent = attr.preferredShmemCarveout;
    int reserved = 0;
    if (cudaDeviceGetAttribute(&reserved, cudaDevAttrReservedSharedMemoryPerBlock, device_) ==
        cudaSuccess)
      t.reserved_per_block = static_cast<uint64_t>(reserved);
    (void)cudaGetLastError();

    auto* st = static_cast<unsigned long long*>(starts_.get(r.warps * 8, "chase starts"));
    check(cudaMemcpyAsync(st, starts.data(), r.warps * 8, cudaMemcpyHostToDevice, stream_),
          "copying the starts");
    const std::size_t per_warp = 2 * r.repeats + 1;
    auto* out = static_cast<unsigned long long*>(out_.get(r.warps * per_warp * 8, "chase out"));
    MemArgs a{st, out, r.warmup_hops, r.hops_per_repeat, r.repeats, 0, 0};
    if (r.l2_prefetch && base) {
      a.prefetch_base = reinterpret_cast<unsigned long long>(base);
      a.prefetch_bytes = lines * r.stride_bytes;
    }
    void* args[] = {&a, &tex, &params_};  // the third only for the constant kernel
    check(cudaLaunchKernel(fn, dim3(1), dim3(32 * r.warps), args, r.dynamic_shared_bytes, stream_),
          "launching the memory chase");
    std::vector<unsigned long long> host(r.warps * per_warp);
    check(cudaMemcpyAsync(host.data(), out, host.size() * 8, cudaMemcpyDeviceToHost, stream_),
          "reading the chase");
    check(cudaStreamSynchronize(stream_), "running the memory chase");

    double cyc = 0, ns = 0;
    for (int w = 0; w < r.warps; ++w) {
      const unsigned long long* o = host.data() + w * per_warp;
      std::vector<double> v;
      for (int k = 0; k < r.repeats; ++k) {
        v.push_back(r.hops_per_repeat
                        ? static_cast<double>(o[2 * k]) / r.hops_per_repeat - hop_overhead
                        : 0);
        if (w == 0) {
          cyc += static_cast<double>(o[2 * k]);
          ns += static_cast<double>(o[2 * k + 1]);
        }
      }
      t.cycles_per_hop.push_back(v);
      const unsigned long long end = o[2 * r.repeats];
      // Back to a line: byte offsets (constant), element indices (texture), addresses (global).
      const unsigned long long line =
          r.load == MemLoad::constant ? end / r.stride_bytes
          : r.load == MemLoad::texture
              ? end / (r.stride_bytes / 4)
              : (end - reinterpret_cast<unsigned long long>(base)) / r.stride_bytes;
      t.end_lines.push_back(static_cast<uint32_t>(line));
    }
    if (ns > 0) t.clock_mhz = cyc / ns * 1000.0;
    t.instruction = instruction(r.load);
    return t;
  }

 private:
  // Cycles per hop of one warp chasing from `start` (a byte offset) through `fn`, on the chain
  // constant_overheads lays out: 64 warm-up hops, the median of 3 repeats of 2048.
  double constant_hop_cycles(const void* fn, unsigned long long start) {
    constexpr int kRepeats = 3;
    constexpr unsigned long long kHops = 2048;
    auto* st = static_cast<unsigned long long*>(starts_.get(8, "chase starts"));
    auto* out = static_cast<unsigned long long*>(out_.get((2 * kRepeats + 1) * 8, "chase out"));
    check(cudaMemcpyAsync(st, &start, 8, cudaMemcpyHostToDevice, stream_), "copying the start");
    MemArgs a{st, out, 64, kHops, kRepeats, 0, 0};
    cudaTextureObject_t tex = 0;
    void* args[] = {&a, &tex, &params_};
    check(cudaLaunchKernel(fn, dim3(1), dim3(32), args, 0, stream_),
          "launching the constant calibration chase");
    unsigned long long host[2 * kRepeats + 1] = {};
    check(cudaMemcpyAsync(host, out, sizeof host, cudaMemcpyDeviceToHost, stream_),
          "reading the constant calibration chase");
    check(cudaStreamSynchronize(stream_), "running the constant calibration chase");
    std::vector<double> v;
    for (int k = 0; k < kRepeats; ++k) v.push_back(double(host[2 * k]) / double(kHops));
    std::sort(v.begin(), v.end());
    return v[kRepeats / 2];
  }

  // The two-bank hop's cycles over the plain LDC's, in the bank and in the parameters: 16
  // lines 64 B apart (1 KiB, inside the constant L1) chased by the plain kernel in the bank,
  // by the two-bank kernel in the bank and in the parameters (the two banks' LDCs taken to
  // hit in the same time). Measured once; the point's own chain is uploaded after.
  std::pair<double, double> constant_overheads() {
    if (overheads_) return *overheads_;
    constexpr uint32_t kLines = 16, kStride = 64;
    std::vector<uint32_t> bank(kLines * kStride / 4, 0);
    for (uint32_t i = 0; i < kLines; ++i) {
      bank[i * kStride / 4] = ((i + 1) % kLines) * kStride;
      params_.w[i * kStride / 4] =
          static_cast<uint32_t>(kConstBytes) + ((i + 1) % kLines) * kStride;
    }
    check(cudaMemcpyToSymbolAsync(c_mem, bank.data(), bank.size() * 4, 0, cudaMemcpyHostToDevice,
                                  stream_),
          "uploading the constant calibration chain");
    const auto* plain = reinterpret_cast<const void*>(&mem_chase_const1);
    const auto* two = reinterpret_cast<const void*>(&mem_chase_const);
    const double ldc = constant_hop_cycles(plain, 0);
    const std::pair<double, double> o{constant_hop_cycles(two, 0) - ldc,
                                      constant_hop_cycles(two, kConstBytes) - ldc};
    // The SASS predicts 25 and 17; a negative or outsized difference is not the bank test.
    for (double d : {o.first, o.second})
      if (!(d > -2 && d < 64))
        throw BackendError("constant chase: the two-bank hop differs from the plain LDC by " +
                           std::to_string(d) + " cycles (" + std::to_string(ldc) +
                           " cycles a plain hop)");
    overheads_ = o;
    return o;
  }

  static std::string instruction(MemLoad l) {
    const std::map<std::string, KernelMemoryOps>& ops = own_memory_ops();
    const std::string frag = fragment_of(l);
    for (const auto& [fn, op] : ops)
      // "mem_chase_c" would match both ca and cg/const: the fragment must end the name part.
      if (fn.find(frag + "E") != std::string::npos || fn.find(frag + "(") != std::string::npos ||
          fn == frag)
        return op.load;
    return {};
  }

  int device_;
  cudaStream_t stream_;
  DeviceInfo info_;
  DeviceBuffer chain_, next_, starts_, out_, flush_;
  ChunkedBuffer chunked_;  // the TLB part's chunk-mapped chain
  ParamBank params_{};     // the constant chase's second bank, passed by value at launch
  std::optional<std::pair<double, double>> overheads_;  // constant_overheads, once measured
};

}  // namespace

std::unique_ptr<MemoryKernels> make_memory_kernels(int device, cudaStream_t stream,
                                                   const DeviceInfo& info) {
  return std::make_unique<CudaMemory>(device, stream, info);
}

}  // namespace gd::cuda
