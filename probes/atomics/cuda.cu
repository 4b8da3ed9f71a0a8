// CUDA kernels of the atomics probe: ping-pong between two threads (two warps through
// shared memory, two SMs through global memory by CAS, exchange or release/acquire, a GPU
// thread and a host thread through mapped pinned memory), the SM-to-SM matrix (every pair
// of SMs, many disjoint pairs at once), and atomic throughput by space, type, contention,
// result use and scope. Every atomic is inline PTX with its state space, operation and
// scope spelled out, so the instruction timed is the one intended (ATOMS vs a generic ATOM,
// ATOM vs RED), and every kernel's memory is checked exactly on the host.
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "cuda_probes.hpp"
#include "cuda_util.hpp"
#include "device_clock.cuh"

#include "atomics/cuda_pingpong.cuh"
#include "atomics/cuda_throughput.cuh"

namespace gd::cuda {

// The device code's copies of the placement rule (atomics.hpp) must agree with it.
static_assert(at::kRegion == gd::kPlacementRegion && at::kLocationStride == gd::kLocationStride &&
                  at::kLocationBytes == gd::kLocationBytes &&
                  at::kMaxPlacements == gd::kMaxPlacements &&
                  at::kMaxLocations == gd::kMaxLocations,
              "CUDA's placements differ from gd's");

namespace {

class CudaAtomics final : public AtomicsKernels {
 public:
  CudaAtomics(int device, cudaStream_t stream, const DeviceInfo& info)
      : device_(device), stream_(stream), info_(info) {
    int can_map = 0;
    cudaDeviceGetAttribute(&can_map, cudaDevAttrCanMapHostMemory, device);
    can_map_ = can_map != 0;
    // Blocks that must sit alone on their SM ask for more than half its shared memory.
    alone_smem_ = static_cast<int>(info.shared_per_sm_bytes.value_or(0) / 2 + 1024);
    if (info.shared_per_block_optin_bytes &&
        uint64_t(alone_smem_) > *info.shared_per_block_optin_bytes)
      alone_smem_ = static_cast<int>(*info.shared_per_block_optin_bytes);
    if (info.shared_per_sm_bytes) {
      for (const void* k :
           {(const void*)at::pp_global_kernel<at::kCas>,
            (const void*)at::pp_global_kernel<at::kExch>,
            (const void*)at::pp_global_kernel<at::kRa>, (const void*)at::pp_matrix_kernel})
        check(cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, alone_smem_),
              "cudaFuncSetAttribute (ping-pong kernels)");
      const int tp_smem = static_cast<int>(
          std::min<uint64_t>(info.shared_per_block_optin_bytes.value_or(48 * 1024), 64 * 1024));
      for (const auto& [key, e] : tp_kernels())
        if (std::get<0>(key) == int(AtomicSpace::shared))
          check(cudaFuncSetAttribute((const void*)e.kernel,
                                     cudaFuncAttributeMaxDynamicSharedMemorySize, tp_smem),
                "cudaFuncSetAttribute (shared atomics kernels)");
    }
    check(cudaMalloc(&ping_, sizeof(at::PingOut)), "cudaMalloc (ping-pong result)");
    check(cudaMalloc(&clk_, sizeof(unsigned long long) * 4 * kClockSlots), "cudaMalloc (clock)");
    check(cudaEventCreate(&e0_), "cudaEventCreate");
    check(cudaEventCreate(&e1_), "cudaEventCreate");
  }

  ~CudaAtomics() override {
    if (ping_) cudaFree(ping_);
    if (clk_) cudaFree(clk_);
    if (host_words_) cudaFreeHost(host_words_);
    if (e0_) cudaEventDestroy(e0_);
    if (e1_) cudaEventDestroy(e1_);
  }

  bool has_clock() const override { return true; }

  Support supports(PingPong kind) const override {
    if (kind == PingPong::host && !can_map_)
      return Support::no("the device cannot map host memory");
    if ((kind == PingPong::global_cas || kind == PingPong::global_exch ||
         kind == PingPong::global_release_acquire) &&
        (!info_.shared_per_sm_bytes || info_.compute_units < 2))
      return Support::no("two SMs cannot be guaranteed (shared memory per SM unknown)");
    return Support::yes();
  }

  PingPongTiming ping_pong(const PingPongRequest& r) override {
    if (!supports(r.kind).ok) throw BackendError("ping_pong: " + supports(r.kind).reason);
    if (r.round_trips == 0 || r.repeats < 1) throw BackendError("ping_pong: empty request");
    const bool global = r.kind == PingPong::global_cas || r.kind == PingPong::global_exch ||
                        r.kind == PingPong::global_release_acquire;
    const int locations = global ? r.locations : 1;
    if (locations < 1 || locations > at::kMaxLocations)
      throw BackendError("ping_pong: bad location count");
    PingPongTiming t;
    const unsigned warmup = std::max(1u, r.round_trips / 8), total = warmup + r.round_trips;
    t.total_round_trips = total;
    if (locations > 1) {
      t.cycles_by_location.resize(locations);
      t.ns_by_location.resize(locations);
    }
    // Every flag location in its own 2 MiB region of one buffer (~2 MiB per location).
    unsigned* flags = nullptr;
    if (global)
      flags = static_cast<unsigned*>(flags_.get(
          size_t(locations - 1) * at::kLocationStride + at::kLocationBytes, "ping-pong flags"));
    std::vector<double> clocks;
    // Every repeat visits every location in turn, so a drift over time touches all alike.
    for (int rep = 0; rep < r.repeats; ++rep)
      for (int loc = 0; loc < locations; ++loc) {
        at::PingOut o = launch_ping(
            r.kind, warmup, total,
            global ? flags + size_t(loc) * at::kLocationStride / sizeof(unsigned) : nullptr);
        t.outcome = {o.final_value, o.handoffs[0], o.handoffs[1],
                     uint64_t(o.timeouts[0]) + o.timeouts[1], o.payload_errors};
        t.sm_a = o.sm[0];
        t.sm_b = r.kind == PingPong::host ? -1 : o.sm[1];
        if (!pingpong_check(t.outcome, total).empty()) return t;  // the probe reports it
        const double cycles = double(o.c1 - o.c0), ns = double(o.n1 - o.n0);
        const double handoffs = 2.0 * r.round_trips;
        t.cycles_per_handoff.push_back(cycles / handoffs);
        t.ns_per_handoff.push_back(ns / handoffs);
        if (locations > 1) {
          t.cycles_by_location[loc].push_back(cycles / handoffs);
          t.ns_by_location[loc].push_back(ns / handoffs);
        }
        if (ns > 0) clocks.push_back(cycles / ns * 1000.0);
      }
    if (!clocks.empty()) {
      std::sort(clocks.begin(), clocks.end());
      t.clock_mhz = clocks[clocks.size() / 2];
    }
    return t;
  }

  Support supports_matrix() const override {
    if (!info_.shared_per_sm_bytes) return Support::no("shared memory per SM unknown");
    if (info_.compute_units < 2) return Support::no("fewer than two SMs");
    return Support::yes();
  }

  // shape: one matrix launch: its single allocation, placements, launch, readback and checks
  MatrixTiming sm_matrix(const MatrixRequest& r) override {
    if (!supports_matrix().ok) throw BackendError("sm_matrix: " + supports_matrix().reason);
    if (r.sms < 2 || r.sms > info_.compute_units) throw BackendError("sm_matrix: bad SM count");
    if (r.round_trips == 0 || r.segments < 1 || r.warmup_round_trips == 0)
      throw BackendError("sm_matrix: empty request");
    const int n = r.sms;
    const auto rounds = round_robin_rounds(n);
    const int nr = static_cast<int>(rounds.size());
    std::vector<int> partner(size_t(nr) * n, -1);
    for (int k = 0; k < nr; ++k)
      for (auto [a, b] : rounds[k]) {
        partner[size_t(k) * n + a] = b;
        partner[size_t(k) * n + b] = a;
      }
    const size_t pairs = size_t(nr) * n, segs = pairs * r.segments;
    // One allocation: partner table, owners, flags, abort, segments, results.
    const size_t off_owner = partner.size() * 4, off_flags = off_owner + size_t(n) * 4;
    // Placement k puts the flag lines k regions further: each region is the flags' size
    // rounded up to 2 MiB plus 2 MiB and 4 KiB, so lines move to other pages and other
    // offsets within them, and the address hash sends them to other L2 slices.
    const size_t region = ((pairs * 128 + (2u << 20) - 1) / (2u << 20) + 1) * (2u << 20) + 4096;
    const size_t flags_at = off_flags + size_t(std::max(0, r.placement)) * region;
    const size_t off_abort = flags_at + pairs * 128, off_cyc = off_abort + 128;
    const size_t off_ns = off_cyc + segs * 8, off_out = off_ns + segs * 8;
    const size_t bytes = off_out + pairs * sizeof(at::PingOut);
    auto* base = static_cast<unsigned char*>(matrix_buf_.get(bytes, "the SM matrix buffers"));
    check(cudaMemsetAsync(base, 0, bytes, stream_), "clearing the SM matrix buffers");
    check(cudaMemsetAsync(base + off_owner, 0xff, size_t(n) * 4, stream_), "clearing owners");
    check(
        cudaMemcpyAsync(base, partner.data(), partner.size() * 4, cudaMemcpyHostToDevice, stream_),
        "uploading the tournament");
    at::MatrixArgs a{};
    a.n = n;
    a.rounds = nr;
    a.partner = reinterpret_cast<const int*>(base);
    a.owner = reinterpret_cast<int*>(base + off_owner);
    a.flags = reinterpret_cast<unsigned*>(base + flags_at);
    a.payloads = reinterpret_cast<unsigned*>(base + off_abort) + 16;
    a.abort_word = reinterpret_cast<unsigned*>(base + off_abort);
    a.warmup = r.warmup_round_trips;
    a.segment = r.round_trips;
    a.segments = unsigned(r.segments);
    a.seg_cycles = reinterpret_cast<unsigned long long*>(base + off_cyc);
    a.seg_ns = reinterpret_cast<unsigned long long*>(base + off_ns);
    a.out = reinterpret_cast<at::PingOut*>(base + off_out);
    check(cudaStreamSynchronize(stream_), "preparing the SM matrix");
    const auto t0 = std::chrono::steady_clock::now();
    // Twice as many blocks as SMs: every SM gets one (each block sits alone on its SM), and
    // the blocks that find their SM taken or outside the matrix leave at once.
    at::pp_matrix_kernel<<<info_.compute_units * 2, 32, alone_smem_, stream_>>>(a);
    check(cudaGetLastError(), "launching the SM matrix kernel");
    check(cudaStreamSynchronize(stream_), "running the SM matrix kernel");
    MatrixTiming t;
    t.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    t.sms = n;
    t.round_trips_per_pair = uint64_t(r.warmup_round_trips) + uint64_t(r.round_trips) * r.segments;
    std::vector<unsigned> flags(pairs * 32);
    std::vector<unsigned long long> cyc(segs), ns(segs);
    std::vector<at::PingOut> outs(pairs);
    check(cudaMemcpy(flags.data(), base + flags_at, pairs * 128, cudaMemcpyDeviceToHost),
          "reading the SM matrix flags");
    check(cudaMemcpy(cyc.data(), base + off_cyc, segs * 8, cudaMemcpyDeviceToHost),
          "reading the SM matrix cycles");
    check(cudaMemcpy(ns.data(), base + off_ns, segs * 8, cudaMemcpyDeviceToHost),
          "reading the SM matrix times");
    check(cudaMemcpy(outs.data(), base + off_out, pairs * sizeof(at::PingOut),
                     cudaMemcpyDeviceToHost),
          "reading the SM matrix results");
    double all_cycles = 0, all_ns = 0;
    const double per = 2.0 * r.round_trips;  // hand-overs per segment
    for (int k = 0; k < nr; ++k)
      for (auto [lo, hi] : rounds[k]) {
        const size_t pair = size_t(k) * n + lo;
        PairSample p;
        p.a = lo;
        p.b = hi;
        const at::PingOut& o = outs[pair];
        p.outcome = {flags[pair * 32], o.handoffs[0], o.handoffs[1],
                     uint64_t(o.timeouts[0]) + o.timeouts[1], o.payload_errors};
        // The players must be on the SMs they were placed for.
        if (p.outcome.timeouts == 0 && (o.sm[0] != lo || o.sm[1] != hi)) p.outcome.timeouts = 1;
        for (int s = 0; s < r.segments; ++s) {
          const double c = double(cyc[pair * r.segments + s]),
                       d = double(ns[pair * r.segments + s]);
          p.cycles_per_handoff.push_back(c / per);
          p.ns_per_handoff.push_back(d / per);
          all_cycles += c;
          all_ns += d;
        }
        t.pairs.push_back(std::move(p));
      }
    if (all_ns > 0) t.clock_mhz = all_cycles / all_ns * 1000.0;
    return t;
  }

  Support supports(const ThroughputRequest& r) const override {
    if (!tp_kernels().count(key_of(r)))
      return Support::no("no CUDA kernel for " + r.key() + " (not part of the plan)");
    if (r.space == AtomicSpace::shared) {
      if (r.contention == Contention::same_gpu) return Support::no("shared memory is per block");
      if (r.contention == Contention::bank_conflict &&
          (r.ways < 1 || r.ways > 32 || 32 % r.ways != 0))
        return Support::no("conflict ways must divide 32");
    } else if (r.contention == Contention::bank_conflict) {
      return Support::no("bank conflicts are a shared-memory pattern");
    }
    if (r.type == AtomicType::bf16x2 && std::atof(info_.compute_capability.c_str()) < 9.0)
      return Support::no("bf16x2 atomics need compute capability 9.0");
    return Support::yes();
  }

  ThroughputTiming throughput(const ThroughputRequest& r) override {
    const Support s = supports(r);
    if (!s.ok) throw BackendError("throughput: " + s.reason);
    if (r.repeats < 1 || r.repeats > at::kMaxRepeats)
      throw BackendError("throughput: bad repeat count");
    // Shared memory has no placement to vary: its arrays are the block's own.
    const int places = r.space == AtomicSpace::shared ? 1 : r.placements;
    if (places < 1 || places > at::kMaxPlacements)
      throw BackendError("throughput: bad placement count");
    const uint64_t cap = max_exact_iterations(r, layout(r, 1));
    uint64_t it = r.iterations;
    if (it == 0) {
      // Calibrate: one short launch, then what fills ~2 ms, ~1.5 ms with placements (each
      // repeat visits every placement, so a figure is placements x repeats launches).
      const uint64_t probe_it = std::min<uint64_t>(64, cap);
      launch_tp(r, layout(r, probe_it), 0, 0);  // warm: first-launch costs
      const double s0 = launch_tp(r, layout(r, probe_it), 0, 0);
      const double want = places > 1 ? 1.5e-3 : 2e-3;
      it = s0 > 0 ? uint64_t(double(probe_it) * want / s0) : probe_it;
      it = std::clamp<uint64_t>(it, 8, 1u << 22);
    }
    ThroughputTiming t;
    t.layout = layout(r, std::min(it, cap));
    time_placements(t, r.repeats, places,
                    [&](int rep, int p) { return launch_tp(r, t.layout, rep * places + p, p); });
    const int launches = r.repeats * places;
    std::vector<unsigned long long> clk(4 * size_t(launches));
    check(cudaMemcpy(clk.data(), clk_, clk.size() * 8, cudaMemcpyDeviceToHost),
          "reading the clocks");
    for (int n = 0; n < launches; ++n) {
      const double c = double(clk[4 * n + 2] - clk[4 * n]);
      const double ns = double(clk[4 * n + 3] - clk[4 * n + 1]);
      if (ns > 0 && clk[4 * n + 2] > clk[4 * n]) t.clock_mhz.push_back(c / ns * 1000.0);
    }
    t.sms = info_.compute_units;
    // Every placement's memory after its last launch, every word, and (CAS) every thread's
    // successes: each placement is checked exactly.
    const uint64_t words = target_words(t.layout), threads = t.layout.blocks * t.layout.threads;
    const int wb = r.space == AtomicSpace::shared ? 4 : type_bytes(r.type);
    for (int p = 0; p < places; ++p) {
      const auto* target = static_cast<const unsigned char*>(target_at(r, t.layout, p));
      std::vector<uint64_t> finals(words, 0);
      if (wb == 8) {
        check(cudaMemcpy(finals.data(), target, words * 8, cudaMemcpyDeviceToHost),
              "reading the atomics target");
      } else {
        std::vector<uint32_t> w32(words);
        check(cudaMemcpy(w32.data(), target, words * 4, cudaMemcpyDeviceToHost),
              "reading the atomics target");
        std::copy(w32.begin(), w32.end(), finals.begin());
      }
      std::vector<uint32_t> successes;
      if (r.op == AtomicOp::cas) {
        successes.resize(threads);
        check(cudaMemcpy(successes.data(), per_thread_at(t.layout, p), threads * 4,
                         cudaMemcpyDeviceToHost),
              "reading the CAS successes");
      }
      const std::string err = throughput_check(r, t.layout, finals, successes);
      if (!err.empty()) {
        t.check_error = places > 1 ? "placement " + std::to_string(p) + ": " + err : err;
        break;
      }
    }
    return t;
  }

  std::optional<std::string> instruction(const std::string& what) override {
    const std::map<std::string, KernelMemoryOps>& ops = own_memory_ops();
    std::string fragment;
    if (what == "matrix") {
      fragment = "pp_matrix_kernel";
    } else if (what.rfind("pingpong.", 0) == 0) {
      for (PingPong k : all_ping_pongs())
        if (what == "pingpong." + to_string(k)) fragment = pingpong_fragment(k);
    } else {
      for (const ThroughputRequest& r : known_requests())
        if (r.key() == what) {
          auto e = tp_kernels().find(key_of(r));
          if (e != tp_kernels().end()) fragment = e->second.fragment;
        }
    }
    if (fragment.empty()) return std::nullopt;
    // Ping-pongs: the hand-over's instructions, not the abort path's (an exchange on the
    // abort word, later in the code). CAS: the first atomic; exchange: the polling load and
    // the exchange; release/acquire and host: the ordered load and store.
    const bool pingpong = what == "matrix" || what.rfind("pingpong.", 0) == 0;
    const bool exch = what.find("exch_pingpong") != std::string::npos;
    const bool ordered = what == "pingpong." + to_string(PingPong::global_release_acquire) ||
                         what == "pingpong." + to_string(PingPong::host);
    for (const auto& [fn, op] : ops) {
      if (fn.find(fragment) == std::string::npos) continue;
      const std::string first = op.atomic_all.substr(0, op.atomic_all.find(" + "));
      if (ordered) return op.load + " + " + op.store;
      if (op.atomic_all.empty()) continue;
      if (exch) return op.load + " + " + first;
      return pingpong ? first : op.atomic_all;
    }
    return std::nullopt;
  }

 private:
  // Every request the plan can make, to map a figure key back to its kernel.
  static const std::vector<ThroughputRequest>& known_requests() {
    static const std::vector<ThroughputRequest> all = [] {
      std::vector<ThroughputRequest> v;
      for (AtomicSpace sp : {AtomicSpace::shared, AtomicSpace::global})
        for (AtomicOp op : {AtomicOp::add, AtomicOp::min, AtomicOp::max, AtomicOp::cas})
          for (AtomicType ty : {AtomicType::i32, AtomicType::u64, AtomicType::f32, AtomicType::f64,
                                AtomicType::f16x2, AtomicType::bf16x2})
            for (Contention c :
                 {Contention::distinct, Contention::bank_conflict, Contention::same_per_warp,
                  Contention::same_per_block, Contention::same_gpu})
              for (int ways : {1, 2, 4, 8, 16, 32})
                for (bool ret : {true, false})
                  for (AtomicScope sc : {AtomicScope::cta, AtomicScope::gpu, AtomicScope::sys}) {
                    if (c != Contention::bank_conflict && ways != 1) continue;
                    ThroughputRequest r;
                    r.space = sp;
                    r.op = op;
                    r.type = ty;
                    r.contention = c;
                    r.ways = ways;
                    r.use_return = ret;
                    r.scope = sc;
                    v.push_back(r);
                  }
      return v;
    }();
    return all;
  }

  ThroughputLayout layout(const ThroughputRequest& r, uint64_t iterations) const {
    ThroughputLayout l;
    l.space = r.space;
    l.contention = r.contention;
    l.ways = r.contention == Contention::bank_conflict ? r.ways : 1;
    l.threads = at::kThreads;
    l.iterations = iterations;
    // Full occupancy (2048 threads per SM); shared patterns as many blocks as their arrays
    // allow, at least one per SM.
    const uint64_t per_sm =
        throughput_groups_per_unit(l, info_.shared_per_sm_bytes.value_or(64 * 1024), 1);
    l.blocks = uint64_t(std::max(1, info_.compute_units)) * per_sm;
    return l;
  }

  // Bytes from one placement of the target to the next (gd::placement_stride: the rule the
  // OpenCL and Vulkan backends share).
  static size_t placement_stride(size_t bytes) { return size_t(gd::placement_stride(bytes)); }

  // Placement p of the target (one allocation holds every placement the request asks for).
  void* target_at(const ThroughputRequest& r, const ThroughputLayout& l, int p) {
    const bool shared = r.space == AtomicSpace::shared;
    const size_t bytes = target_words(l) * size_t(shared ? 4 : type_bytes(r.type));
    const int places = shared ? 1 : std::max(r.placements, 1);
    const size_t stride = placement_stride(bytes);
    auto* base = static_cast<unsigned char*>(
        target_.get(stride * size_t(places - 1) + bytes, "the atomics target"));
    return base + stride * size_t(p);
  }
  unsigned* per_thread_at(const ThroughputLayout& l, int p) {
    const size_t threads = l.blocks * l.threads;
    return static_cast<unsigned*>(
               per_thread_.get(threads * 4 * at::kMaxPlacements, "per-thread results")) +
           threads * size_t(p);
  }

  // One launch on placement `p` from a freshly initialised target; returns its time
  // (events). `slot`: where its clock stamps go.
  double launch_tp(const ThroughputRequest& r, const ThroughputLayout& l, int slot, int p) {
    if (slot < 0 || slot >= kClockSlots) throw BackendError("throughput: too many launches");
    const uint64_t words = target_words(l);
    const bool shared = r.space == AtomicSpace::shared;
    const int wb = shared ? 4 : type_bytes(r.type);
    void* target = target_at(r, l, p);
    unsigned* per_thread = per_thread_at(l, p);
    const unsigned init = static_cast<unsigned>(initial_word(r));
    if (!shared) {
      if (init == 0) {
        check(cudaMemsetAsync(target, 0, words * wb, stream_), "clearing the atomics target");
      } else {
        at::fill_words<<<std::max(1, info_.compute_units) * 4, 256, 0, stream_>>>(
            static_cast<unsigned*>(target), words, init);
        check(cudaGetLastError(), "filling the atomics target");
      }
    }
    at::TpArgs a{};
    a.target = target;
    a.contention = unsigned(r.contention);
    a.ways = unsigned(l.ways);
    a.iterations = l.iterations;
    a.words_per_block = unsigned(shared_words_per_block(l));
    a.initial = init;
    a.per_thread = per_thread;
    a.clk = clk_ + 4 * slot;
    const TpEntry& e = tp_kernels().at(key_of(r));
    const size_t smem = shared ? size_t(a.words_per_block) * 4 : 0;
    check(cudaEventRecord(e0_, stream_), "cudaEventRecord");
    e.kernel<<<unsigned(l.blocks), unsigned(l.threads), smem, stream_>>>(a);
    check(cudaGetLastError(), "launching an atomics throughput kernel");
    check(cudaEventRecord(e1_, stream_), "cudaEventRecord");
    check(cudaEventSynchronize(e1_), "running an atomics throughput kernel");
    float ms = 0;
    check(cudaEventElapsedTime(&ms, e0_, e1_), "cudaEventElapsedTime");
    return ms / 1000.0;
  }

  // `words`: the flag location (global kinds): flag, payload and abort, kLocationBytes.
  at::PingOut launch_ping(PingPong kind, unsigned warmup, unsigned total, unsigned* words) {
    check(cudaMemsetAsync(ping_, 0, sizeof(at::PingOut), stream_), "clearing the ping-pong result");
    at::PingOut o{};
    switch (kind) {
      case PingPong::shared_cas:
        at::pp_shared_kernel<at::kCas><<<1, 64, 0, stream_>>>(warmup, total, ping_);
        break;
      case PingPong::shared_exch:
        at::pp_shared_kernel<at::kExch><<<1, 64, 0, stream_>>>(warmup, total, ping_);
        break;
      case PingPong::global_cas:
      case PingPong::global_exch:
      case PingPong::global_release_acquire: {
        if (!words) throw BackendError("ping_pong: no flag location");
        check(cudaMemsetAsync(words, 0, at::kLocationBytes, stream_), "clearing the flag");
        if (kind == PingPong::global_cas)
          at::pp_global_kernel<at::kCas>
              <<<2, 32, alone_smem_, stream_>>>(words, warmup, total, ping_);
        else if (kind == PingPong::global_exch)
          at::pp_global_kernel<at::kExch>
              <<<2, 32, alone_smem_, stream_>>>(words, warmup, total, ping_);
        else
          at::pp_global_kernel<at::kRa>
              <<<2, 32, alone_smem_, stream_>>>(words, warmup, total, ping_);
        break;
      }
      case PingPong::host:
        return launch_host_ping(warmup, total);
    }
    check(cudaGetLastError(), "launching a ping-pong kernel");
    check(cudaMemcpyAsync(&o, ping_, sizeof o, cudaMemcpyDeviceToHost, stream_),
          "reading the ping-pong result");
    check(cudaStreamSynchronize(stream_), "running a ping-pong kernel");
    if (kind == PingPong::global_cas || kind == PingPong::global_exch ||
        kind == PingPong::global_release_acquire) {
      unsigned flag = 0;
      check(cudaMemcpy(&flag, words, 4, cudaMemcpyDeviceToHost), "reading the flag");
      o.final_value = flag;
      // Two players on one SM would not be the figure asked for: report it as a failure.
      if (o.sm[0] == o.sm[1] && o.timeouts[0] + o.timeouts[1] == 0) o.timeouts[1] = 1;
    }
    return o;
  }

  // The host thread is player B: it waits for the odd values with acquire loads, checks the
  // payload the GPU wrote before its release, and hands back with a release store. Its spin
  // gives up after 2 s without progress and raises the abort word the GPU polls.
  at::PingOut launch_host_ping(unsigned warmup, unsigned total) {
    if (!host_words_) {
      check(cudaHostAlloc(&host_words_, 4096, cudaHostAllocMapped), "cudaHostAlloc (mapped)");
      check(cudaHostGetDevicePointer(reinterpret_cast<void**>(&host_words_dev_), host_words_, 0),
            "cudaHostGetDevicePointer");
    }
    unsigned* w = static_cast<unsigned*>(host_words_);
    for (int i = 0; i < 1024; ++i) __atomic_store_n(&w[i], 0u, __ATOMIC_RELAXED);
    unsigned* flag = &w[0];
    unsigned* payload = &w[32];
    unsigned* abort_word = &w[64];
    unsigned host_done = 0, host_timeout = 0, host_bad = 0;
    check(cudaStreamSynchronize(stream_), "before the host ping-pong");
    std::thread host([&] {
      using Clock = std::chrono::steady_clock;
      for (unsigned k = 0; k < total; ++k) {
        const unsigned want = 2 * k + 1;
        auto last = Clock::now();
        unsigned polls = 0;
        while (__atomic_load_n(flag, __ATOMIC_ACQUIRE) != want) {
          if (++polls % 1024 == 0 && (__atomic_load_n(abort_word, __ATOMIC_RELAXED) ||
                                      Clock::now() - last > std::chrono::seconds(2))) {
            host_timeout = 1;
            __atomic_store_n(abort_word, 1u, __ATOMIC_RELAXED);
            return;
          }
        }
        if (__atomic_load_n(payload, __ATOMIC_RELAXED) != want) ++host_bad;
        __atomic_store_n(payload, want + 1, __ATOMIC_RELAXED);
        __atomic_store_n(flag, want + 1, __ATOMIC_RELEASE);
        ++host_done;
      }
    });
    at::pp_host_kernel<<<1, 32, 0, stream_>>>(host_words_dev_, warmup, total, ping_);
    const cudaError_t launched = cudaGetLastError();
    if (launched != cudaSuccess) __atomic_store_n(abort_word, 1u, __ATOMIC_RELAXED);
    const cudaError_t ran = cudaStreamSynchronize(stream_);
    if (ran != cudaSuccess) __atomic_store_n(abort_word, 1u, __ATOMIC_RELAXED);
    host.join();
    check(launched, "launching the host ping-pong kernel");
    check(ran, "running the host ping-pong kernel");
    at::PingOut o{};
    check(cudaMemcpy(&o, ping_, sizeof o, cudaMemcpyDeviceToHost), "reading the ping-pong result");
    o.final_value = __atomic_load_n(flag, __ATOMIC_ACQUIRE);
    o.handoffs[1] = host_done;
    o.timeouts[1] = host_timeout;
    o.payload_errors += host_bad;
    return o;
  }

  static constexpr int kClockSlots = at::kMaxRepeats * at::kMaxPlacements;

  int device_;
  cudaStream_t stream_;
  DeviceInfo info_;
  bool can_map_ = false;
  int alone_smem_ = 0;
  at::PingOut* ping_ = nullptr;
  unsigned long long* clk_ = nullptr;
  void* host_words_ = nullptr;
  unsigned* host_words_dev_ = nullptr;
  DeviceBuffer target_, per_thread_, matrix_buf_, flags_;
  cudaEvent_t e0_ = nullptr, e1_ = nullptr;
};

}  // namespace

std::unique_ptr<AtomicsKernels> make_atomics_kernels(int device, cudaStream_t stream,
                                                     const DeviceInfo& info) {
  return std::make_unique<CudaAtomics>(device, stream, info);
}

}  // namespace gd::cuda
