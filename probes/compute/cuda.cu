// CUDA kernels of the compute probe: sources from the core generator, compiled with NVRTC
// straight to CUBIN for the device (sm_90a where wgmma needs it), cached in memory and on
// disk, loaded through the runtime's library API (no libcuda link: the binary must start
// where no driver is), their timed loops read back with cuobjdump.
#include <cuda_runtime.h>
#include <nvrtc.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <tuple>

#include "compute/compute.hpp"
#include "cuda_probes.hpp"
#include "cuda_util.hpp"
#include "gpudissect/build_once.hpp"
#include "gpudissect/parallel.hpp"

namespace gd::cuda {

namespace {

class CudaCompute final : public ComputeKernels {
 public:
  CudaCompute(int device, cudaStream_t stream, const DeviceInfo& info)
      : device_(device), stream_(stream), info_(info) {
    cc_ = compute_capability(device);
    nvrtc_version_ = nvrtc_version();
  }
  ~CudaCompute() override {
    if (out_) cudaFree(out_);
    if (tim_) cudaFree(tim_);
  }

  std::string language() const override { return "cuda"; }

  Support supports(const ComputeOp& op) override {
    if (op.sm90a && cc_ != 90)
      return Support::no("needs wgmma (sm_90a); this device is sm_" + std::to_string(cc_));
    if (cc_ < op.min_cc)
      return Support::no(op.ptx_expect + " needs sm_" + std::to_string(op.min_cc) +
                         "; this device is sm_" + std::to_string(cc_));
    if (op.klass == "tensor" && op.name.find("e4m3") == std::string::npos &&
        op.name.find("e5m2") == std::string::npos && cc_ < 80)
      return Support::no("mma.sync shapes of sm_80 need compute capability 8.0");
    if ((op.name.find("e4m3") != std::string::npos || op.name.find("e5m2") != std::string::npos) &&
        cc_ < 89)
      return Support::no("FP8 mma needs compute capability 8.9");
    if (cc_ < 80) return Support::no("the generated kernels need compute capability 8.0");
    return Support::yes();
  }

  // Safe beside other probes' measurements: NVRTC, cuobjdump and the disk cache only.
  bool compiles_beside_measurements() const override { return true; }

  // Each launch's ILP and ILP 1 (every figure's latency is one dependent chain).
  void prepare(const std::vector<ComputeLaunch>& ls, const std::atomic<bool>* cancel) override {
    std::vector<std::tuple<std::string, std::string, int>> keys;
    auto add = [&](const std::string& op, const std::string& mix, int ilp) {
      std::tuple<std::string, std::string, int> k{op, mix, ilp_of(op, ilp)};
      if (std::find(keys.begin(), keys.end(), k) == keys.end()) keys.push_back(k);
    };
    for (const auto& l : ls) add(l.op, l.mix, l.ilp);
    for (const auto& l : ls) add(l.op, l.mix, 1);
    // NVRTC and cuobjdump run in parallel; loading stays on the run's thread.
    // A failed compile is kept in its Built and reported when the launch asks for it.
    parallel_for(keys.size(), cancel, [&](std::size_t i) {
      build(std::get<0>(keys[i]), std::get<1>(keys[i]), std::get<2>(keys[i]));
    });
  }

  // shape: one timed launch: module, arguments, warm-up, events, checksum, in the order they run
  ComputeTiming run(const ComputeLaunch& l) override {
    const ComputeOp* op = find_compute_op(l.op);
    if (!op) throw BackendError("unknown compute op " + l.op);
    const bool wg = op->warpgroup;
    const int ilp = ilp_of(l.op, l.ilp);
    Module& mod = module(l.op, l.mix, ilp);
    cudaKernel_t k = kernel(mod, ilp);
    int block = 0, grid = 0, per_sm = 1;
    const int sms = info_.compute_units;
    if (l.latency) {
      block = l.block_threads > 0 ? l.block_threads : wg ? 128 : 32;
      grid = 1;
    } else {
      block = wg ? 256 : 256;
      // Above 32 warps one block cannot hold them: 512-thread blocks make 48 = 3 x 16 (one
      // block of 1024 made 48 collapse to 32).
      if (l.warps_per_sm > 0) block = l.warps_per_sm <= 32 ? l.warps_per_sm * 32 : 512;
      if (wg) block = std::max(128, block / 128 * 128);
      int occ = 0;
      if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&occ, reinterpret_cast<const void*>(k),
                                                        block, 0) != cudaSuccess ||
          occ < 1) {
        (void)cudaGetLastError();
        occ = 1;
      }
      const int want = l.warps_per_sm > 0 ? std::max(1, l.warps_per_sm * 32 / block) : 2048 / block;
      per_sm = std::max(1, std::min(occ, want));
      grid = sms * per_sm;
    }
    const std::size_t threads = static_cast<std::size_t>(grid) * block;
    ensure(threads, grid);
    check(cudaMemsetAsync(out_, 0xA5, threads * sizeof(unsigned), stream_), "clearing results");
    int iters = static_cast<int>(std::min<uint64_t>(l.iters ? l.iters : 1, 1u << 30));
    const ComputeSeeds seeds;
    float fs = seeds.fs, fb = seeds.fb, fc = seeds.fc;
    unsigned ub = seeds.ub, uc = seeds.uc;
    void* args[] = {&out_, &tim_, &iters, &fs, &fb, &fc, &ub, &uc};
    check(cudaLaunchKernel(reinterpret_cast<const void*>(k), dim3(grid), dim3(block), args, 0,
                           stream_),
          "launching a compute kernel");
    check(cudaStreamSynchronize(stream_), "running a compute kernel");
    std::vector<unsigned> out(threads);
    std::vector<unsigned long long> tim(static_cast<std::size_t>(grid) * 4);
    check(cudaMemcpy(out.data(), out_, threads * sizeof(unsigned), cudaMemcpyDeviceToHost),
          "reading results");
    check(cudaMemcpy(tim.data(), tim_, tim.size() * sizeof(unsigned long long),
                     cudaMemcpyDeviceToHost),
          "reading timings");
    ComputeTiming t;
    t.threads = threads;
    t.sms = l.latency ? 1 : sms;
    t.warps_per_sm = l.latency ? block / 32 : per_sm * block / 32;
    unsigned long long lo = ~0ull, hi = 0;
    std::vector<double> cyc, mhz;
    for (int b = 0; b < grid; ++b) {
      const auto c = tim[4 * b], t0 = tim[4 * b + 1], t1 = tim[4 * b + 2];
      lo = std::min(lo, t0);
      hi = std::max(hi, t1);
      cyc.push_back(static_cast<double>(c));
      if (t1 > t0) mhz.push_back(static_cast<double>(c) / static_cast<double>(t1 - t0) * 1000.0);
    }
    t.span_ns = hi > lo ? static_cast<double>(hi - lo) : 0;
    t.cycles_per_block = median(cyc);
    if (!mhz.empty()) t.clock_mhz = median(mhz);
    // Per-SM windows (tim[4b+3]: SM id and clock64 at the loop's start): throughput per clock
    // from the SMs' own cycle counts, and the clock over the same windows.
    std::vector<BlockClock> blocks;
    for (int b = 0; b < grid; ++b) {
      const unsigned long long w = tim[4 * b + 3];
      blocks.push_back({static_cast<int>(w >> 48), w & ((1ull << 48) - 1), tim[4 * b],
                        tim[4 * b + 1], tim[4 * b + 2]});
    }
    const SmWindows win = sm_windows(blocks);
    if (!l.latency && win.cycles > 0 && win.ns > 0) {
      t.sm_cycles = win.cycles;
      t.sm_ns = win.ns;
      t.clock_mhz = win.cycles / win.ns * 1000.0;
    }
    // Seeds depend on the lane only (a warpgroup's fragment for wgmma): every warp (or
    // warpgroup) folds the same values, and none is the fill pattern (the kernel wrote it).
    const std::size_t period = std::min<std::size_t>(threads, wg ? 128 : 32);
    const unsigned v0 = out[0];
    std::size_t differ = 0, unwritten = 0;
    for (std::size_t i = 0; i < threads; ++i) {
      differ += out[i] != out[i % period];
      unwritten += out[i] == 0xA5A5A5A5u;
    }
    t.check_ok = differ == 0 && unwritten == 0;
    std::ostringstream s;
    s << "value 0x" << std::hex << v0 << std::dec << ", " << differ << " of " << threads
      << " threads differ";
    // The host replays one thread's chains where it can (FP32/FP64 fma): a kernel that ran
    // other steps, other operands or another rounding cannot match. Bounded so that a long
    // launch costs the host at most ~50 ms.
    if (!l.mix.empty()) return finish(t, s);
    const uint64_t steps = static_cast<uint64_t>(iters) * steps_per_iteration(*op, ilp);
    if (steps * ilp <= (uint64_t{1} << 26))
      if (auto ref = reference_checksum(*op, ilp, steps, seeds)) {
        s << ", host reference 0x" << std::hex << *ref << std::dec;
        if (*ref != v0) {
          t.check_ok = false;
          s << " MISMATCH";
        }
      }
    return finish(t, s);
  }

  static ComputeTiming finish(ComputeTiming& t, std::ostringstream& s) {
    t.check = s.str();
    return t;
  }

  LoopSass sass(const ComputeLaunch& l) override {
    const int ilp = ilp_of(l.op, l.ilp);
    const Built& b = build(l.op, l.mix, ilp);
    if (!b.error.empty()) throw BackendError(b.error);
    auto it = b.loops.find(compute_kernel_name(ilp));
    return it == b.loops.end() ? LoopSass{} : it->second;
  }

 private:
  // A warpgroup op (wgmma) has one chain per warpgroup: ILP 1 whatever was asked.
  static int ilp_of(const std::string& op, int ilp) {
    const ComputeOp* o = find_compute_op(op);
    return o && o->warpgroup ? 1 : std::max(1, ilp);
  }

  // What compiling one (op, mix, ILP) source gives: immutable once built, shared between
  // threads. One source per ILP: the table needs ILP 8 and 1 of every op, the ILP x occupancy
  // sweep 1, 2, 4 and 8 of four ops; compiling all four everywhere made the full run's
  // compiles ~40 % longer than its launches need.
  struct Built {
    std::string cubin, error;
    std::map<std::string, LoopSass> loops;
  };
  // Its library loaded into the context: used on the run's thread only.
  struct Module {
    CubinLibrary lib;
  };

  std::string arch_for(const ComputeOp& op) const {
    if (op.sm90a) return "sm_90a";
    return "sm_" + std::to_string(cc_);
  }

  // Compiles (or finds in the disk cache) and disassembles; thread-safe, no CUDA calls. A
  // second caller of the same key waits for the first (the run's head start, Probe::ahead,
  // may be compiling it).
  const Built& build(const std::string& name, const std::string& mix, int ilp) {
    return built_.get(name + "|" + mix + "|" + std::to_string(ilp), [&] {
      Built m;
      const ComputeOp* op = find_compute_op(name);
      const ComputeOp* mx = mix.empty() ? nullptr : find_compute_op(mix);
      if (!op || (!mix.empty() && !mx)) {
        m.error = "unknown compute op " + name + "|" + mix;
        return m;
      }
      const std::string src = generate_cuda_source(*op, {op->warpgroup ? 1 : ilp}, mx);
      const std::string arch = mx && mx->sm90a ? "sm_90a" : arch_for(*op);
      const uint64_t h = fnv1a(src + "|" + arch + "|" + nvrtc_version_);
      try {
        CachedCubin c = cached_cubin(src, arch, {}, cache_dir(), h);
        m.cubin = std::move(c.cubin);
        if (!c.sass.empty()) m.loops = parse_sass_loops(c.sass);
      } catch (const std::exception& e) {
        m.error = e.what();
      }
      return m;
    });
  }

  Module& module(const std::string& name, const std::string& mix, int ilp) {
    const Built& b = build(name, mix, ilp);
    if (!b.error.empty()) throw BackendError(b.error);
    Module& m = modules_[name + "|" + mix + "|" + std::to_string(ilp)];
    m.lib.load(b.cubin, "loading a generated compute kernel");
    return m;
  }

  cudaKernel_t kernel(Module& m, int ilp) {
    return m.lib.kernel(compute_kernel_name(ilp), "finding a generated compute kernel");
  }

  void ensure(std::size_t threads, int grid) {
    if (threads > out_cap_) {
      if (out_) cudaFree(out_);
      out_ = nullptr;
      check(cudaMalloc(&out_, threads * sizeof(unsigned)), "cudaMalloc (compute results)");
      out_cap_ = threads;
    }
    if (static_cast<std::size_t>(grid) > tim_cap_) {
      if (tim_) cudaFree(tim_);
      tim_ = nullptr;
      check(cudaMalloc(&tim_, static_cast<std::size_t>(grid) * 4 * sizeof(unsigned long long)),
            "cudaMalloc (compute timings)");
      tim_cap_ = grid;
    }
  }

  int device_;
  cudaStream_t stream_;
  DeviceInfo info_;
  int cc_ = 0;
  std::string nvrtc_version_;
  BuildOnce<Built> built_;
  std::map<std::string, Module> modules_;  // the run's thread only
  unsigned* out_ = nullptr;
  unsigned long long* tim_ = nullptr;
  std::size_t out_cap_ = 0, tim_cap_ = 0;
};

}  // namespace

std::string compile_to_ptx(const std::string& source, const std::string& arch) {
  return nvrtc_compile(source, arch, false).image;
}

std::unique_ptr<ComputeKernels> make_compute_kernels(int device, cudaStream_t stream,
                                                     const DeviceInfo& info) {
  return std::make_unique<CudaCompute>(device, stream, info);
}

}  // namespace gd::cuda
