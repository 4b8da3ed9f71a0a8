// CUDA kernels of the frontend probe. The instruction-cache loops and the register-forcing
// occupancy kernels are generated and compiled with NVRTC (in parallel, cached on disk like
// the compute probe's), loaded through the runtime's library API, their loops measured from
// cuobjdump's listing. Launch, dispatch and the plain occupancy kernel are compiled here by
// nvcc. Every kernel's output is checked on the host; every wait on the GPU is bounded.
#include <cuda_runtime.h>
#include <nvrtc.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <map>
#include <sstream>

#include "cuda_probes.hpp"
#include "cuda_util.hpp"
#include "device_clock.cuh"
#include "frontend/cuda_kernels.cuh"
#include "frontend/host_clock.hpp"
#include "gpudissect/build_once.hpp"
#include "gpudissect/parallel.hpp"
#include "gpudissect/sass.hpp"

namespace gd::cuda {

namespace {

using gd::frontend::now_ns;

class CudaFrontend final : public FrontendKernels {
 public:
  CudaFrontend(int device, cudaStream_t stream, const DeviceInfo& info)
      : device_(device), stream_(stream), info_(info) {
    cc_ = compute_capability(device);
    nvrtc_version_ = nvrtc_version();
  }
  ~CudaFrontend() override {
    for (cudaStream_t s : streams_) cudaStreamDestroy(s);
    if (graph_exec_) cudaGraphExecDestroy(graph_exec_);
    if (host_) cudaFreeHost(host_);
  }

  std::string language() const override { return "cuda"; }

  Support supports(const std::string& part) override {
    if (cc_ < 70)
      return Support::no("needs compute capability 7.0 (16-byte instructions, %globaltimer)");
    (void)part;
    return Support::yes();
  }

  // Safe beside other probes' measurements: NVRTC, cuobjdump and the disk cache only.
  bool compiles_beside_measurements() const override { return true; }

  // The largest kernels first: the compiles end together instead of waiting on one.
  void prepare_icache(const std::vector<IcacheKernelSpec>& specs,
                      const std::atomic<bool>* cancel) override {
    std::vector<IcacheKernelSpec> order = specs;
    std::stable_sort(order.begin(), order.end(), [](const auto& a, const auto& b) {
      return a.body_instructions * a.regions > b.body_instructions * b.regions;
    });
    parallel_for(order.size(), cancel, [&](std::size_t i) {
      build(key_of(order[i]), generate_icache_cuda(order[i]), {});
    });
  }

  void prepare_occupancy(const std::vector<int>& regs, const std::atomic<bool>* cancel) override {
    parallel_for(regs.size(), cancel, [&](std::size_t i) {
      build(occupancy_key(regs[i]), generate_occupancy_cuda(regs[i]),
            {"--maxrregcount=" + std::to_string(regs[i])});
    });
  }

  IcacheTiming icache(const IcacheRun& run) override {
    const std::string key = key_of(run.spec);
    Module& m = module(key, generate_icache_cuda(run.spec), {});
    cudaKernel_t k = kernel(m, icache_kernel_name());
    const int warps = std::max(1, run.warps);
    const int threads = warps * 32;
    unsigned* out = static_cast<unsigned*>(out_.get(threads * sizeof(unsigned), "icache results"));
    auto* tim = static_cast<unsigned long long*>(tim_.get(
        static_cast<std::size_t>(warps) * 4 * sizeof(unsigned long long), "icache timings"));
    check(cudaMemsetAsync(out, 0xA5, threads * sizeof(unsigned), stream_),
          "clearing icache results");
    int iters = static_cast<int>(std::min<uint64_t>(run.iters, 1u << 30));
    int mode = run.different ? 1 : 0;
    float seed = kIcacheSeed, addend = kIcacheAddend;
    void* args[] = {&out, &tim, &iters, &mode, &seed, &addend};
    check(cudaLaunchKernel(reinterpret_cast<const void*>(k), dim3(1), dim3(threads), args, 0,
                           stream_),
          "launching the instruction-cache kernel");
    check(cudaStreamSynchronize(stream_), "running the instruction-cache kernel");
    std::vector<unsigned> o(threads);
    std::vector<unsigned long long> t(static_cast<std::size_t>(warps) * 4);
    check(cudaMemcpy(o.data(), out, o.size() * sizeof(unsigned), cudaMemcpyDeviceToHost),
          "reading icache results");
    check(cudaMemcpy(t.data(), tim, t.size() * sizeof(unsigned long long), cudaMemcpyDeviceToHost),
          "reading icache timings");
    IcacheTiming r;
    std::vector<double> mhz;
    std::ostringstream msg;
    int bad = 0;
    for (int w = 0; w < warps; ++w) {
      const double c = static_cast<double>(t[4 * w]);
      const auto t0 = t[4 * w + 2], t1 = t[4 * w + 3];
      r.cycles_per_warp.push_back(c);
      if (t1 > t0) {
        mhz.push_back(c / static_cast<double>(t1 - t0) * 1000.0);
        r.ns = std::max(r.ns, static_cast<double>(t1 - t0));
      }
      const int region = run.different ? w % std::max(1, run.spec.regions) : 0;
      const uint32_t want = reference(run.spec, region, static_cast<uint64_t>(iters));
      for (int l = 0; l < 32; ++l)
        if (o[w * 32 + l] != want) {
          if (bad++ == 0)
            msg << "warp " << w << " lane " << l << " wrote 0x" << std::hex << o[w * 32 + l]
                << ", host reference 0x" << want << std::dec;
        }
    }
    if (bad) {
      r.check_ok = false;
      msg << " (" << bad << " of " << threads << " threads wrong)";
    }
    r.check = bad ? msg.str() : "every thread matched the host reference";
    if (!mhz.empty()) r.clock_mhz = median(mhz);
    const auto loops = region_loops(m.built->loops, std::max(1, run.spec.regions));
    if (!loops.empty()) {
      r.loop_instructions = loops.front().instructions;
      r.code_bytes = loops.front().bytes();
      r.code_bytes_source = "sass";
      r.opcodes = top_opcodes(loops.front().opcodes, 4);
    }
    return r;
  }

  // The round trip of an empty kernel, apart: fe_stamp's timer writes add to its own. It is
  // launched as the peers launch it (clpeak: cuLaunchKernel of a 1x1x1 grid on a stream, then
  // cuStreamSynchronize), through the driver's entry point, so that the runtime's own checks
  // around cudaLaunchKernel are not in it; the runtime's call is timed apart ("call"). A few
  // milliseconds of work first: the stamp launches before leave the GPU idle enough for its
  // clock to start falling. (Warm-up first: with lazy loading the first launch also loads the
  // module.) Fills out.empty_round_trip_ns and the call that launched them.
  void empty_round_trips(int launches, LaunchTiming& out) {
    const DriverLaunch& api = driver_launch();
    cudaFunction_t fn = nullptr;
    const bool driver =
        api && cudaGetFuncBySymbol(&fn, reinterpret_cast<const void*>(&fe_empty)) == cudaSuccess;
    cudaGetLastError();  // without it, the runtime's launch
    fe_busy<<<1, 32, 0, stream_>>>(2000000ull);
    check(cudaGetLastError(), "launching fe_busy");
    check(cudaStreamSynchronize(stream_), "running fe_busy");
    std::vector<double> ns(static_cast<std::size_t>(launches));
    for (int i = -5; i < launches; ++i) {
      int launched = 0, done = 0;
      const double t0 = now_ns();
      if (driver) {
        launched = api.launch(fn, 1, 1, 1, 1, 1, 1, 0, stream_, nullptr, nullptr);
        done = api.synchronize(stream_);
      } else {
        fe_empty<<<1, 1, 0, stream_>>>();
        done = static_cast<int>(cudaStreamSynchronize(stream_));
      }
      const double t1 = now_ns();
      if (driver && (launched != 0 || done != 0))
        throw BackendError("fe_empty: cuLaunchKernel returned " + std::to_string(launched) +
                           ", cuStreamSynchronize " + std::to_string(done));
      check(cudaGetLastError(), "launching fe_empty");
      check(static_cast<cudaError_t>(done), "running fe_empty");
      if (i >= 0) ns[static_cast<std::size_t>(i)] = t1 - t0;
    }
    out.empty_round_trip_ns = std::move(ns);
    out.empty_round_trip_api = driver ? "cuLaunchKernel" : "kernel<<<>>>";
  }

  LaunchTiming launch_latency(int launches) override {
    // Host-timed: the device's background read of this binary's SASS (a cuobjdump and its
    // parse, started when the device opened) must be over first; this waits for it.
    (void)own_memory_ops();
    LaunchTiming out;
    out.start_source = "globaltimer synced to steady_clock";
    auto* rec = static_cast<unsigned long long*>(rec_.get(
        static_cast<std::size_t>(launches) * 2 * sizeof(unsigned long long), "launch records"));
    // Timer resolution.
    fe_timer_step<<<1, 1, 0, stream_>>>(rec);
    check(cudaGetLastError(), "launching fe_timer_step");
    check(cudaStreamSynchronize(stream_), "running fe_timer_step");
    unsigned long long step = 0;
    check(cudaMemcpy(&step, rec, sizeof step, cudaMemcpyDeviceToHost), "reading the timer step");
    if (step != ~0ull && step > 0) out.timer_resolution_ns = static_cast<double>(step);
    // The launches keep the GPU nearly idle: its clock falls within tens of milliseconds and
    // the round trip grows with it (8.1 -> 9.4 us on an H200 after four batches). A few
    // milliseconds of work first put every batch at a busy GPU's clock.
    fe_busy<<<1, 32, 0, stream_>>>(5000000ull);
    check(cudaGetLastError(), "launching fe_busy");
    check(cudaStreamSynchronize(stream_), "running fe_busy");
    double before_host = 0, after_host = 0;
    const ClockSync before = sync(&before_host);
    check(cudaMemsetAsync(
              rec, 0, static_cast<std::size_t>(launches) * 2 * sizeof(unsigned long long), stream_),
          "clearing launch records");
    // Warm-up, then one launch at a time on an idle stream.
    for (int i = 0; i < 5; ++i) {
      check(cudaLaunchKernel(reinterpret_cast<const void*>(&fe_stamp), dim3(1), dim3(32),
                             args_for(rec, 0), 0, stream_),
            "launching fe_stamp");
      check(cudaStreamSynchronize(stream_), "running fe_stamp");
    }
    // The warm-up wrote record 0: clear it again.
    check(cudaMemsetAsync(rec, 0, 2 * sizeof(unsigned long long), stream_),
          "clearing launch records");
    check(cudaStreamSynchronize(stream_), "clearing launch records");
    std::vector<double> host0(launches), api(launches), rt(launches);
    for (int i = 0; i < launches; ++i) {
      void** a = args_for(rec, i);
      const double t0 = now_ns();
      const cudaError_t e = cudaLaunchKernel(reinterpret_cast<const void*>(&fe_stamp), dim3(1),
                                             dim3(32), a, 0, stream_);
      const double t1 = now_ns();
      check(e, "launching fe_stamp");
      check(cudaStreamSynchronize(stream_), "running fe_stamp");
      const double t2 = now_ns();
      host0[i] = t0;
      api[i] = t1 - t0;
      rt[i] = t2 - t0;
    }
    const ClockSync after = sync(&after_host);
    empty_round_trips(launches, out);
    std::vector<unsigned long long> g(static_cast<std::size_t>(launches) * 2);
    check(cudaMemcpy(g.data(), rec, g.size() * sizeof(unsigned long long), cudaMemcpyDeviceToHost),
          "reading launch records");
    out.sync = before.uncertainty_ns > after.uncertainty_ns ? before : after;
    // Offset interpolated between the syncs before and after (the two clocks drift apart
    // by parts per million).
    const double span = after_host - before_host;
    for (int i = 0; i < launches; ++i) {
      LaunchSample s;
      s.api_ns = api[i];
      s.round_trip_ns = rt[i];
      const double f = span > 0 ? (host0[i] - before_host) / span : 0;
      const double offset = before.offset_ns + f * (after.offset_ns - before.offset_ns);
      const double start_host = static_cast<double>(g[2 * i]) - offset;
      s.start_ns = start_host - host0[i];
      s.kernel_ns = static_cast<double>(g[2 * i + 1] - g[2 * i]);
      if (g[2 * i] == 0)
        throw BackendError("launch latency: kernel " + std::to_string(i) + " left no record");
      out.samples.push_back(s);
    }
    return out;
  }

  // shape: one rate measurement per launch mode, side by side so the modes stay comparable
  RateTiming launch_rate(const std::string& mode, int kernels, int nstreams) override {
    auto* rec = static_cast<unsigned long long*>(rec_.get(
        static_cast<std::size_t>(kernels) * 2 * sizeof(unsigned long long), "launch records"));
    check(cudaMemsetAsync(
              rec, 0, static_cast<std::size_t>(kernels) * 2 * sizeof(unsigned long long), stream_),
          "clearing launch records");
    check(cudaStreamSynchronize(stream_), "clearing launch records");
    RateTiming r;
    r.kernels = kernels;
    const void* fn = reinterpret_cast<const void*>(&fe_stamp);
    if (mode == "plain") {
      const double t0 = now_ns();
      for (int i = 0; i < kernels; ++i)
        check(cudaLaunchKernel(fn, dim3(1), dim3(32), args_for(rec, i), 0, stream_),
              "launching fe_stamp");
      check(cudaStreamSynchronize(stream_), "running fe_stamp");
      r.host_ns = now_ns() - t0;
    } else if (mode == "streams") {
      while (static_cast<int>(streams_.size()) < nstreams) {
        cudaStream_t s = nullptr;
        check(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), "cudaStreamCreate");
        streams_.push_back(s);
      }
      const double t0 = now_ns();
      for (int i = 0; i < kernels; ++i)
        check(cudaLaunchKernel(fn, dim3(1), dim3(32), args_for(rec, i), 0, streams_[i % nstreams]),
              "launching fe_stamp");
      for (int s = 0; s < nstreams; ++s)
        check(cudaStreamSynchronize(streams_[s]), "running fe_stamp");
      r.host_ns = now_ns() - t0;
    } else if (mode == "graph") {
      if (!graph_exec_ || graph_kernels_ != kernels || graph_rec_ != rec) {
        if (graph_exec_) cudaGraphExecDestroy(graph_exec_);
        graph_exec_ = nullptr;
        if (streams_.empty()) {
          cudaStream_t s = nullptr;
          check(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), "cudaStreamCreate");
          streams_.push_back(s);
        }
        cudaGraph_t graph = nullptr;
        check(cudaStreamBeginCapture(streams_[0], cudaStreamCaptureModeThreadLocal),
              "cudaStreamBeginCapture");
        for (int i = 0; i < kernels; ++i) {
          const cudaError_t e =
              cudaLaunchKernel(fn, dim3(1), dim3(32), args_for(rec, i), 0, streams_[0]);
          if (e != cudaSuccess) {
            cudaStreamEndCapture(streams_[0], &graph);
            if (graph) cudaGraphDestroy(graph);
            check(e, "capturing fe_stamp into a graph");
          }
        }
        check(cudaStreamEndCapture(streams_[0], &graph), "cudaStreamEndCapture");
        const cudaError_t e = cudaGraphInstantiate(&graph_exec_, graph, 0);
        cudaGraphDestroy(graph);
        check(e, "cudaGraphInstantiate");
        graph_kernels_ = kernels;
        graph_rec_ = rec;
        check(cudaGraphLaunch(graph_exec_, streams_[0]), "cudaGraphLaunch (warm-up)");
        check(cudaStreamSynchronize(streams_[0]), "running the graph (warm-up)");
      }
      const double t0 = now_ns();
      check(cudaGraphLaunch(graph_exec_, streams_[0]), "cudaGraphLaunch");
      check(cudaStreamSynchronize(streams_[0]), "running the graph");
      r.host_ns = now_ns() - t0;
    } else {
      throw BackendError("unknown launch-rate mode " + mode);
    }
    std::vector<unsigned long long> g(static_cast<std::size_t>(kernels) * 2);
    check(cudaMemcpy(g.data(), rec, g.size() * sizeof(unsigned long long), cudaMemcpyDeviceToHost),
          "reading launch records");
    unsigned long long lo = ~0ull, hi = 0;
    int missing = 0;
    for (int i = 0; i < kernels; ++i) {
      if (g[2 * i] == 0) {
        ++missing;
        continue;
      }
      lo = std::min(lo, g[2 * i]);
      hi = std::max(hi, g[2 * i]);
    }
    if (missing)
      throw BackendError("launch rate (" + mode + "): " + std::to_string(missing) + " of " +
                         std::to_string(kernels) + " kernels left no record");
    if (hi > lo) r.gpu_span_ns = static_cast<double>(hi - lo);
    return r;
  }

  std::vector<BlockRecord> dispatch(int blocks, int block_threads) override {
    auto* rec = static_cast<unsigned long long*>(rec_.get(
        static_cast<std::size_t>(blocks) * 4 * sizeof(unsigned long long), "dispatch records"));
    check(cudaMemsetAsync(rec, 0, static_cast<std::size_t>(blocks) * 4 * sizeof(unsigned long long),
                          stream_),
          "clearing dispatch records");
    fe_dispatch<<<blocks, block_threads, 0, stream_>>>(rec);
    check(cudaGetLastError(), "launching fe_dispatch");
    check(cudaStreamSynchronize(stream_), "running fe_dispatch");
    return records(rec, blocks, "dispatch");
  }

  OccupancyTrace occupancy(const OccupancyRequest& req) override {
    OccupancyTrace t;
    const void* fn = nullptr;
    if (req.regs > 0) {
      Module& m = module(occupancy_key(req.regs), generate_occupancy_cuda(req.regs),
                         {"--maxrregcount=" + std::to_string(req.regs)});
      fn = reinterpret_cast<const void*>(kernel(m, "gd_occ"));
    } else {
      fn = reinterpret_cast<const void*>(&fe_spin);
    }
    cudaFuncAttributes attr{};
    check(cudaFuncGetAttributes(&attr, fn), "cudaFuncGetAttributes");
    t.regs_per_thread = attr.numRegs;
    t.static_shared_bytes = attr.sharedSizeBytes;
    // The kernel's own __shared__ bytes come out of the same per-block limit: a request at the
    // opt-in limit is trimmed by them so that it still launches (227 KiB on sm_90 less 8 B).
    std::size_t dynamic = req.shared_bytes;
    const std::size_t optin = info_.shared_per_block_optin_bytes.value_or(48 * 1024);
    if (dynamic + attr.sharedSizeBytes > optin && dynamic <= optin)
      dynamic = optin - std::min(optin, attr.sharedSizeBytes);
    t.dynamic_shared_bytes = dynamic;
    // Past 48 KiB per block (static + dynamic) a launch must opt in; the carveout at its largest.
    if (dynamic + attr.sharedSizeBytes > 48 * 1024)
      check(cudaFuncSetAttribute(fn, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                 static_cast<int>(dynamic)),
            "cudaFuncSetAttribute (dynamic shared memory)");
    (void)cudaFuncSetAttribute(fn, cudaFuncAttributePreferredSharedMemoryCarveout,
                               cudaSharedmemCarveoutMaxShared);
    (void)cudaGetLastError();
    int api = 0;
    if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&api, fn, req.block_threads, dynamic) ==
        cudaSuccess)
      t.api_blocks_per_sm = api;
    (void)cudaGetLastError();
    if (t.api_blocks_per_sm && *t.api_blocks_per_sm == 0)
      throw BackendError("a block of " + std::to_string(req.block_threads) + " threads with " +
                         std::to_string(dynamic + attr.sharedSizeBytes) +
                         " bytes of shared memory does not fit an SM");
    const int per_sm = req.waves > 0           ? req.waves * std::max(1, api)
                       : req.blocks_per_sm > 0 ? req.blocks_per_sm
                                               : 2 * std::max(1, api) + 2;
    const int blocks = std::max(1, info_.compute_units) * per_sm;
    auto* rec = static_cast<unsigned long long*>(rec_.get(
        static_cast<std::size_t>(blocks) * 4 * sizeof(unsigned long long), "occupancy records"));
    check(cudaMemsetAsync(rec, 0, static_cast<std::size_t>(blocks) * 4 * sizeof(unsigned long long),
                          stream_),
          "clearing occupancy records");
    unsigned long long spin = static_cast<unsigned long long>(req.spin_us * 1000);
    if (req.regs > 0) {
      float seed = 1.0f;
      unsigned* sink = static_cast<unsigned*>(out_.get(64, "occupancy sink"));
      void* args[] = {&rec, &spin, &seed, &sink};
      check(cudaLaunchKernel(fn, dim3(blocks), dim3(req.block_threads), args, dynamic, stream_),
            "launching the occupancy kernel");
    } else {
      void* args[] = {&rec, &spin};
      check(cudaLaunchKernel(fn, dim3(blocks), dim3(req.block_threads), args, dynamic, stream_),
            "launching the occupancy kernel");
    }
    check(cudaStreamSynchronize(stream_), "running the occupancy kernel");
    t.blocks = records(rec, blocks, "occupancy");
    return t;
  }

 private:
  // What compiling one source gives: immutable once built, shared between threads.
  struct Built {
    std::string cubin, error;
    std::vector<SassLoop> loops;
  };
  // Its library loaded into the context: used on the run's thread only.
  struct Module {
    const Built* built = nullptr;
    CubinLibrary lib;
  };

  static std::string occupancy_key(int regs) { return "occ_regs_" + std::to_string(regs); }

  static std::string key_of(const IcacheKernelSpec& s) {
    return "icache_" + std::to_string(icache_body_instructions(s.body_instructions)) + "_" +
           std::to_string(s.regions);
  }

  // Compiles (or finds in the disk cache) and disassembles; thread-safe, no CUDA calls. A
  // second caller of the same key waits for the first (the run's head start, Probe::ahead,
  // may be compiling it).
  const Built& build(const std::string& key, const std::string& src,
                     const std::vector<std::string>& extra) {
    return built_.get(key, [&] {
      const std::string arch = "sm_" + std::to_string(cc_);
      std::string opts;
      for (const auto& e : extra) opts += e + " ";
      const uint64_t h = fnv1a(src + "|" + arch + "|" + opts + "|" + nvrtc_version_);
      Built m;
      try {
        CachedCubin c = cached_cubin(src, arch, extra, cache_dir("frontend"), h);
        m.cubin = std::move(c.cubin);
        if (!c.sass.empty()) {
          const auto all = parse_sass_all_loops(c.sass);
          if (auto it = all.find(icache_kernel_name()); it != all.end()) m.loops = it->second;
        }
      } catch (const std::exception& e) {
        m.error = e.what();
      }
      return m;
    });
  }

  Module& module(const std::string& key, const std::string& src,
                 const std::vector<std::string>& extra) {
    const Built& b = build(key, src, extra);
    if (!b.error.empty()) throw BackendError(b.error);
    Module& m = modules_[key];
    m.built = &b;
    m.lib.load(b.cubin, "loading a generated frontend kernel");
    return m;
  }

  cudaKernel_t kernel(Module& m, const std::string& name) {
    return m.lib.kernel(name, "finding a generated frontend kernel");
  }

  uint32_t reference(const IcacheKernelSpec& spec, int region, uint64_t passes) {
    const std::string key =
        key_of(spec) + "|" + std::to_string(region) + "|" + std::to_string(passes);
    auto it = refs_.find(key);
    if (it != refs_.end()) return it->second;
    return refs_[key] = icache_reference(spec, region, passes);
  }

  void** args_for(unsigned long long*& rec, int i) {
    arg_rec_ = rec;
    arg_i_ = i;
    args_[0] = &arg_rec_;
    args_[1] = &arg_i_;
    return args_;
  }

  std::vector<BlockRecord> records(unsigned long long* dev, int blocks, const char* what) {
    std::vector<unsigned long long> h(static_cast<std::size_t>(blocks) * 4);
    check(cudaMemcpy(h.data(), dev, h.size() * sizeof(unsigned long long), cudaMemcpyDeviceToHost),
          "reading block records");
    std::vector<BlockRecord> out;
    int missing = 0;
    for (int b = 0; b < blocks; ++b) {
      if (h[4 * b + 3] != kMagic) {
        ++missing;
        continue;
      }
      BlockRecord r;
      r.sm = static_cast<uint32_t>(h[4 * b] & 0xffffffffu);
      r.warp_slot = static_cast<uint32_t>(h[4 * b] >> 32);
      r.start_ns = h[4 * b + 1];
      r.end_ns = h[4 * b + 2];
      out.push_back(r);
    }
    if (missing)
      throw BackendError(std::string(what) + ": " + std::to_string(missing) + " of " +
                         std::to_string(blocks) + " blocks left no record");
    return out;
  }

  // Round trips through mapped pinned memory: the host raises a flag, the kernel answers
  // with %globaltimer. Bounded on both sides (the kernel gives up after 5 s, the host after
  // 2 s per round and then tells the kernel to stop).
  ClockSync sync(double* host_at) {
    constexpr int kRounds = 32;
    if (!host_) {
      check(cudaHostAlloc(&host_, 4096, cudaHostAllocMapped), "cudaHostAlloc (clock sync)");
    }
    std::memset(host_, 0, 4096);
    auto* flag = reinterpret_cast<volatile unsigned*>(host_);
    auto* ack = reinterpret_cast<volatile unsigned*>(static_cast<char*>(host_) + 64);
    auto* reply = reinterpret_cast<volatile unsigned long long*>(static_cast<char*>(host_) + 128);
    void* dflag = nullptr;
    check(cudaHostGetDevicePointer(&dflag, host_, 0), "cudaHostGetDevicePointer");
    auto* dev_flag = static_cast<volatile unsigned*>(dflag);
    auto* dev_ack = reinterpret_cast<volatile unsigned*>(static_cast<char*>(dflag) + 64);
    auto* dev_reply =
        reinterpret_cast<volatile unsigned long long*>(static_cast<char*>(dflag) + 128);
    fe_sync<<<1, 1, 0, stream_>>>(dev_flag, dev_reply, dev_ack, kRounds);
    check(cudaGetLastError(), "launching the clock-sync kernel");
    std::vector<SyncSample> samples;
    std::string failure;
    for (int r = 0; r < kRounds && failure.empty(); ++r) {
      const double t0 = now_ns();
      std::atomic_thread_fence(std::memory_order_seq_cst);
      *flag = static_cast<unsigned>(r + 1);
      std::atomic_thread_fence(std::memory_order_seq_cst);
      double t1 = t0;
      while (*ack != static_cast<unsigned>(r + 1)) {
        t1 = now_ns();
        if (t1 - t0 > 2e9) {
          failure =
              "the clock-sync kernel did not answer round " + std::to_string(r) + " within 2 s";
          break;
        }
      }
      t1 = now_ns();
      if (failure.empty()) samples.push_back({t0, static_cast<double>(reply[r]), t1});
    }
    *flag = ~0u;
    std::atomic_thread_fence(std::memory_order_seq_cst);
    check(cudaStreamSynchronize(stream_), "running the clock-sync kernel");
    if (!failure.empty()) throw BackendError(failure);
    // The first rounds pay for the kernel's start: drop them.
    if (samples.size() > 4) samples.erase(samples.begin(), samples.begin() + 4);
    auto s = sync_clocks(samples);
    if (!s) throw BackendError("clock sync: no usable round trip");
    *host_at = samples[samples.size() / 2].host_before_ns;
    return *s;
  }

  int device_;
  cudaStream_t stream_;
  DeviceInfo info_;
  int cc_ = 0;
  std::string nvrtc_version_;
  BuildOnce<Built> built_;
  std::map<std::string, Module> modules_;  // the run's thread only
  std::map<std::string, uint32_t> refs_;
  DeviceBuffer out_, tim_, rec_;
  std::vector<cudaStream_t> streams_;
  cudaGraphExec_t graph_exec_ = nullptr;
  int graph_kernels_ = 0;
  void* graph_rec_ = nullptr;
  void* host_ = nullptr;
  unsigned long long* arg_rec_ = nullptr;
  int arg_i_ = 0;
  void* args_[2] = {nullptr, nullptr};
};

}  // namespace

std::unique_ptr<FrontendKernels> make_frontend_kernels(int device, cudaStream_t stream,
                                                       const DeviceInfo& info) {
  return std::make_unique<CudaFrontend>(device, stream, info);
}

}  // namespace gd::cuda
