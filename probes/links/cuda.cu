// The links probe's CUDA kernels and transfers, over every CUDA GPU of the process (the
// device the run was opened on only hosts the kernel set): peer copies by copy engine
// (cudaMemcpyPeerAsync) and by SM kernels, a pointer chase and a flag ping-pong across the
// link, pinned host transfers on every GPU at once, and NCCL collectives (nccl.cpp).
//
// Timing across GPUs: a "leader" stream records the start event and every other stream
// waits on it (cudaStreamWaitEvent accepts another device's event); each stream records
// its done event and the leader waits on all of them before its end event, so one elapsed
// time on the leader covers the work of every GPU. Every wait on the host is bounded
// (timeout_s): a hang becomes a BackendError, never a hung run.
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "cuda_probes.hpp"
#include "cuda_util.hpp"
#include "device_clock.cuh"
#include "links/cuda_kernels.cuh"
#include "links/cuda_nccl.hpp"
#include "links/links.hpp"
#include "nvml.hpp"

namespace gd::cuda {

namespace {

class CudaLinks final : public LinksKernels {
 public:
  CudaLinks() {
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess) {
      (void)cudaGetLastError();
      n = 0;
    }
    for (int i = 0; i < n; ++i) {
      auto g = std::make_unique<Gpu>();
      g->index = i;
      OnDevice on(i);
      cudaDeviceGetAttribute(&g->sms, cudaDevAttrMultiProcessorCount, i);
      for (auto& s : g->stream)
        check(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), "cudaStreamCreate");
      g->out.dev = g->in.dev = g->scratch.dev = i;
      gpus_.push_back(std::move(g));
    }
  }
  ~CudaLinks() override {
    release();
    for (auto& g : gpus_) {
      OnDevice on(g->index);
      for (cudaEvent_t e : g->events) cudaEventDestroy(e);
      for (auto s : g->stream) cudaStreamDestroy(s);
    }
  }

  int gpu_count() override { return int(gpus_.size()); }

  Topology topology() override {
    Topology t;
    std::string why;
    if (!nvml_load(&why)) t.nvml = {StatusCode::unsupported, why};
    std::vector<std::optional<NvmlLinks>> links;
    for (auto& g : gpus_) {
      LinkGpu lg;
      lg.index = g->index;
      cudaDeviceProp prop{};
      if (cudaGetDeviceProperties(&prop, g->index) == cudaSuccess) {
        lg.name = prop.name;
        lg.sms = prop.multiProcessorCount;
        lg.compute_capability = std::to_string(prop.major) + "." + std::to_string(prop.minor);
      }
      char bus[32] = {};
      if (cudaDeviceGetPCIBusId(bus, sizeof bus, g->index) == cudaSuccess) lg.pci_bus_id = bus;
      links.push_back(t.nvml.ok() ? nvml_links(lg.pci_bus_id) : std::nullopt);
      if (const auto& l = links.back()) {
        lg.pcie_gen_current = l->pcie_gen_current;
        lg.pcie_width_current = l->pcie_width_current;
        lg.pcie_gen_max = l->pcie_gen_max;
        lg.pcie_width_max = l->pcie_width_max;
      }
      t.gpus.push_back(lg);
    }
    for (size_t a = 0; a < t.gpus.size(); ++a)
      for (size_t b = 0; b < t.gpus.size(); ++b) {
        if (a == b) continue;
        PairTopology p;
        p.a = int(a);
        p.b = int(b);
        const auto want = parse_pci_bus_id(t.gpus[b].pci_bus_id);
        int direct = 0;
        if (links[a] && want)
          for (const auto& l : links[a]->nvlinks) {
            const auto got = parse_pci_bus_id(l.remote_pci_bus_id);
            if (l.remote_type == 2 || !got || !(*got == *want)) continue;
            ++direct;
            if (!p.nvlink_version_nvml && l.version) p.nvlink_version_nvml = l.version;
          }
        const int sw_a = switch_links(links[a]), sw_b = switch_links(links[b]);
        const PairLinks pl = pair_nvlinks(
            direct, sw_a, sw_b,
            direct || !sw_a ? std::nullopt
                            : nvml_nvlink_p2p(t.gpus[a].pci_bus_id, t.gpus[b].pci_bus_id));
        p.nvlinks = pl.links;
        p.via_nvswitch = pl.via_switch;
        if (pl.via_switch && links[a])
          for (const auto& l : links[a]->nvlinks)
            if (l.remote_type == 2 && l.version && !p.nvlink_version_nvml)
              p.nvlink_version_nvml = l.version;
        if (t.nvml.ok())
          if (auto level = nvml_common_ancestor(t.gpus[a].pci_bus_id, t.gpus[b].pci_bus_id))
            p.pcie_path = pcie_path_name(*level);
        t.pairs.push_back(p);
      }
    return t;
  }

  Support peer_access(int src, int dst) override {
    if (!valid(src) || !valid(dst) || src == dst) return Support::no("no such pair");
    int fwd = 0, back = 0;
    check(cudaDeviceCanAccessPeer(&fwd, dst, src), "cudaDeviceCanAccessPeer");
    check(cudaDeviceCanAccessPeer(&back, src, dst), "cudaDeviceCanAccessPeer");
    if (!fwd || !back)
      return Support::no("cudaDeviceCanAccessPeer says no between GPU " + std::to_string(src) +
                         " and GPU " + std::to_string(dst));
    for (auto [from, to] : {std::pair{dst, src}, std::pair{src, dst}}) {
      OnDevice on(from);
      const cudaError_t rc = cudaDeviceEnablePeerAccess(to, 0);
      if (rc == cudaErrorPeerAccessAlreadyEnabled) {
        (void)cudaGetLastError();
      } else if (rc != cudaSuccess) {
        (void)cudaGetLastError();
        return Support::no(std::string("cudaDeviceEnablePeerAccess: ") + cudaGetErrorString(rc));
      }
    }
    return Support::yes();
  }

  TransferTiming peer_copy(const PeerCopyRequest& r) override {
    refuse_after_hang();
    Gpu& s = gpu(r.src);
    Gpu& d = gpu(r.dst);
    const bool bidir = r.mode == PeerCopyMode::bidir;
    const uint32_t seed_s = 0x1000u * (r.src + 1), seed_d = 0x1000u * (r.dst + 1) + 7;
    void* s_out = s.out.get(r.bytes, "peer copy source");
    void* d_in = d.in.get(r.bytes, "peer copy destination");
    void* d_out = bidir ? d.out.get(r.bytes, "peer copy source (back)") : nullptr;
    void* s_in = bidir ? s.in.get(r.bytes, "peer copy destination (back)") : nullptr;
    fill(s, s_out, r.bytes, seed_s);
    if (bidir) fill(d, d_out, r.bytes, seed_d);
    sync_all(r.timeout_s, "filling the peer copy buffers");
    // Forward copy on dst (read, bidir) or src (write); the backward one on src.
    cudaStream_t fwd = r.mode == PeerCopyMode::write ? s.stream[0] : d.stream[0];
    Gpu& leader = r.mode == PeerCopyMode::write ? s : d;
    Gpu* other = bidir ? &s : nullptr;
    auto issue = [&](int iters) {
      for (int i = 0; i < iters; ++i) {
        check(cudaMemcpyPeerAsync(d_in, r.dst, s_out, r.src, r.bytes, fwd), "cudaMemcpyPeerAsync");
        if (bidir) {
          OnDevice on(r.src);
          check(cudaMemcpyPeerAsync(s_in, r.src, d_out, r.dst, r.bytes, s.stream[0]),
                "cudaMemcpyPeerAsync (back)");
        }
      }
    };
    TransferTiming t;
    t.bytes_per_repeat = r.bytes * uint64_t(r.iterations) * (bidir ? 2 : 1);
    t.seconds = timed(leader, fwd, other, r.repeats, r.timeout_s, "peer copy " + two(r.src, r.dst),
                      [&](int rep) { issue(rep < 0 ? 1 : r.iterations); });
    t.check_error = check_words(d, d_in, r.bytes, seed_s, 0, "GPU " + std::to_string(r.dst));
    if (t.check_error.empty() && bidir)
      t.check_error = check_words(s, s_in, r.bytes, seed_d, 0, "GPU " + std::to_string(r.src));
    return t;
  }

  TransferTiming peer_sm(const PeerSmRequest& r) override {
    refuse_after_hang();
    Gpu& s = gpu(r.src);
    Gpu& d = gpu(r.dst);
    const uint64_t n16 = std::max<uint64_t>(1, r.bytes / 16);
    const uint64_t bytes = n16 * 16;
    TransferTiming t;
    t.bytes_per_repeat = bytes * uint64_t(r.iterations);
    Gpu& exec = r.write ? s : d;
    const std::map<std::string, KernelMemoryOps>& ops = own_memory_ops();
    for (const auto& [name, o] : ops)
      if (name.find(r.write ? "links_sm_write" : "links_sm_read") != std::string::npos)
        t.instruction = r.write ? o.store : o.load;
    if (r.loads_per_thread != 4 && r.loads_per_thread != 8 && r.loads_per_thread != 12)
      throw BackendError("peer SM transfer: loads per thread must be 4, 8 or 12");
    if (r.blocks_per_sm < 1 || r.blocks_per_sm > 4)
      throw BackendError("peer SM transfer: 1 to 4 blocks of 512 threads per SM");
    const int threads = 512, per_thread = r.loads_per_thread;
    const int blocks =
        int(std::clamp<uint64_t>((n16 + threads * per_thread - 1) / (threads * per_thread), 1,
                                 uint64_t(exec.sms) * r.blocks_per_sm));
    if (!r.write) {
      const uint32_t seed = 0x2000u * (r.src + 1);
      void* src = s.out.get(bytes, "SM read source");
      fill(s, src, bytes, seed);
      auto* sum = static_cast<unsigned long long*>(d.scratch.get(64 << 10, "SM read sum"));
      {
        OnDevice on(d.index);
        check(cudaMemsetAsync(sum, 0, sizeof *sum, d.stream[0]), "cudaMemsetAsync");
      }
      sync_all(r.timeout_s, "filling the SM read buffer");
      uint64_t launches = 0;
      t.seconds = timed(d, d.stream[0], nullptr, r.repeats, r.timeout_s,
                        "SM read " + two(r.src, r.dst), [&](int rep) {
                          const int n = rep < 0 ? 1 : r.iterations;
                          const auto* q = static_cast<const uint4*>(src);
                          launches += uint64_t(n);
                          if (per_thread == 12)
                            links_sm_read<12><<<blocks, threads, 0, d.stream[0]>>>(q, n16, n, sum);
                          else if (per_thread == 8)
                            links_sm_read<8><<<blocks, threads, 0, d.stream[0]>>>(q, n16, n, sum);
                          else
                            links_sm_read<4><<<blocks, threads, 0, d.stream[0]>>>(q, n16, n, sum);
                          check(cudaGetLastError(), "launching links_sm_read");
                        });
      unsigned long long got = 0;
      {
        OnDevice on(d.index);
        check(cudaMemcpy(&got, sum, sizeof got, cudaMemcpyDeviceToHost), "reading the SM sum");
      }
      const unsigned long long words = bytes / 4;
      const unsigned long long one =
          (unsigned long long)(((unsigned __int128)words * (words - 1) / 2) +
                               (unsigned __int128)words * seed);
      if (got != one * launches)
        t.check_error = "the loads summed to " + std::to_string(got) + ", expected " +
                        std::to_string(one * launches) + " (" + std::to_string(launches) +
                        " passes)";
    } else {
      const uint32_t seed = 0x3000u * (r.dst + 1);
      void* dst = d.in.get(bytes, "SM write destination");
      sync_all(r.timeout_s, "allocating the SM write buffer");
      t.seconds = timed(s, s.stream[0], nullptr, r.repeats, r.timeout_s,
                        "SM write " + two(r.src, r.dst), [&](int rep) {
                          const int n = rep < 0 ? 1 : r.iterations;
                          for (int i = 0; i < n; ++i)
                            links_sm_write<<<blocks, threads, 0, s.stream[0]>>>(
                                static_cast<uint4*>(dst), n16, seed);
                          check(cudaGetLastError(), "launching links_sm_write");
                        });
      t.check_error = check_words(d, dst, bytes, seed, 0, "GPU " + std::to_string(r.dst));
    }
    return t;
  }

  ChaseTiming peer_chase(const PeerChaseRequest& r) override {
    refuse_after_hang();
    if (!r.next || r.next->empty()) throw BackendError("peer chase: empty chain");
    Gpu& owner = gpu(r.owner);
    Gpu& exec = gpu(r.executor);
    // The results (2 per repeat, the line reached, the SM), then the word a block claims its
    // SM with, all in the executor's 64 KiB result buffer.
    constexpr uint64_t kResultWords = 4096;
    if (2 * uint64_t(r.repeats) + 2 > kResultWords)
      throw BackendError("peer chase: too many repeats");
    if (r.sm >= exec.sms) throw BackendError("peer chase: no SM " + std::to_string(r.sm));
    if (r.stride_bytes < 8 || r.stride_bytes % 8 != 0)
      throw BackendError("peer chase: the stride must be a multiple of 8 bytes");
    const uint64_t lines = r.next->size();
    const uint64_t bytes = lines * r.stride_bytes;
    void* chain = owner.scratch.get(std::max<uint64_t>(bytes, 64 << 10), "peer chase chain");
    // Each line holds the address of the next (one address space for every GPU).
    const uint64_t base = reinterpret_cast<uintptr_t>(chain);
    std::vector<uint64_t> image(bytes / 8, 0);
    for (uint64_t i = 0; i < lines; ++i)
      image[i * (r.stride_bytes / 8)] = base + uint64_t((*r.next)[i]) * r.stride_bytes;
    {
      OnDevice on(owner.index);
      check(cudaMemcpy(chain, image.data(), bytes, cudaMemcpyHostToDevice), "copying the chain");
      // From pageable memory cudaMemcpy may return before the copy lands, and the chase runs
      // on another GPU's non-blocking stream, which does not wait for it.
      check(cudaDeviceSynchronize(), "waiting for the chain's copy");
    }
    auto* out = static_cast<unsigned long long*>(exec.in.get(64 << 10, "peer chase results"));
    int* claim = reinterpret_cast<int*>(out + kResultWords);
    {
      OnDevice on(exec.index);
      check(cudaMemsetAsync(out, 0, kResultWords * 8 + sizeof(int), exec.stream[0]),
            "cudaMemsetAsync");
      // To run on a chosen SM, four blocks per SM, of which the first on that SM chases.
      const int blocks = r.sm >= 0 ? 4 * exec.sms : 1;
      links_chase<<<blocks, 32, 0, exec.stream[0]>>>(
          static_cast<const unsigned long long*>(chain), uint32_t(r.stride_bytes), r.warmup_hops,
          r.hops_per_repeat, r.repeats, out, r.sm, claim);
      check(cudaGetLastError(), "launching links_chase");
    }
    wait(exec.stream[0], r.timeout_s, "peer chase " + two(r.executor, r.owner));
    std::vector<unsigned long long> h(2 * r.repeats + 2);
    {
      OnDevice on(exec.index);
      check(cudaMemcpy(h.data(), out, h.size() * 8, cudaMemcpyDeviceToHost), "chase results");
    }
    ChaseTiming t;
    std::vector<double> mhz;
    for (int i = 0; i < r.repeats; ++i) {
      const double hops = double(std::max<uint64_t>(1, r.hops_per_repeat));
      t.cycles_per_hop.push_back(double(h[i]) / hops);
      t.ns_per_hop.push_back(double(h[r.repeats + i]) / hops);
      if (h[r.repeats + i] > 0) mhz.push_back(double(h[i]) / double(h[r.repeats + i]) * 1e3);
    }
    if (!mhz.empty()) {
      std::sort(mhz.begin(), mhz.end());
      t.clock_mhz = mhz[mhz.size() / 2];
    }
    t.end_line = uint32_t(h[2 * r.repeats]);
    t.hops_walked = r.warmup_hops + r.hops_per_repeat * uint64_t(r.repeats);
    if (h[2 * r.repeats + 1] == 0)
      throw BackendError("peer chase: no block ran on SM " + std::to_string(r.sm) + " of GPU " +
                         std::to_string(r.executor));
    t.sm = int(h[2 * r.repeats + 1] - 1);
    return t;
  }

  PeerPingPongTiming peer_ping_pong(const PeerPingPongRequest& r) override {
    refuse_after_hang();
    Gpu& a = gpu(r.a);
    Gpu& b = gpu(r.b);
    // Each flag lives in its reader's memory, 4 KiB past the results.
    auto* out_a = static_cast<unsigned long long*>(a.scratch.get(64 << 10, "ping-pong results"));
    auto* out_b = static_cast<unsigned long long*>(b.scratch.get(64 << 10, "ping-pong results"));
    auto* flag_a = reinterpret_cast<uint32_t*>(reinterpret_cast<char*>(out_a) + 4096);
    auto* flag_b = reinterpret_cast<uint32_t*>(reinterpret_cast<char*>(out_b) + 4096);
    for (Gpu* g : {&a, &b}) {
      OnDevice on(g->index);
      check(cudaMemset(g == &a ? out_a : out_b, 0, 8192), "cudaMemset (ping-pong)");
      // The players run on non-blocking streams, which do not wait for the legacy stream's
      // memset: the flags must be zero before either starts.
      check(cudaDeviceSynchronize(), "waiting for the ping-pong flags' reset");
    }
    const uint32_t warmup = std::max<uint32_t>(16, r.round_trips / 8);
    const uint64_t total = warmup + uint64_t(r.round_trips) * r.repeats;
    if (2 * total + 2 >= (1ull << 32)) throw BackendError("ping-pong: too many round trips");
    const uint64_t timeout_ns = uint64_t(r.timeout_s * 1e9);
    {
      OnDevice on(b.index);  // the responder first: it only waits
      links_ping_pong<<<1, 1, 0, b.stream[0]>>>(flag_b, flag_a, 0, warmup, r.round_trips, r.repeats,
                                                timeout_ns, out_b);
      check(cudaGetLastError(), "launching links_ping_pong");
    }
    {
      OnDevice on(a.index);
      links_ping_pong<<<1, 1, 0, a.stream[0]>>>(flag_a, flag_b, 1, warmup, r.round_trips, r.repeats,
                                                timeout_ns, out_a);
      check(cudaGetLastError(), "launching links_ping_pong");
    }
    const std::string what = "ping-pong " + std::to_string(r.a) + "<->" + std::to_string(r.b);
    wait(a.stream[0], r.timeout_s * 2 + 5, what);
    wait(b.stream[0], r.timeout_s * 2 + 5, what);
    std::vector<unsigned long long> ha(2 * r.repeats + 2), hb(2 * r.repeats + 2);
    uint32_t fa = 0, fb = 0;
    {
      OnDevice on(a.index);
      check(cudaMemcpy(ha.data(), out_a, ha.size() * 8, cudaMemcpyDeviceToHost), "results");
      check(cudaMemcpy(&fa, flag_a, 4, cudaMemcpyDeviceToHost), "flag");
    }
    {
      OnDevice on(b.index);
      check(cudaMemcpy(hb.data(), out_b, hb.size() * 8, cudaMemcpyDeviceToHost), "results");
      check(cudaMemcpy(&fb, flag_b, 4, cudaMemcpyDeviceToHost), "flag");
    }
    PeerPingPongTiming t;
    const unsigned long long timeouts = ha[2 * r.repeats + 1] + hb[2 * r.repeats + 1];
    if (timeouts)
      t.check_error = "a player waited more than " + std::to_string(int(r.timeout_s)) +
                      " s for the other (timed out)";
    else if (ha[2 * r.repeats] != total || hb[2 * r.repeats] != total ||
             fa != uint32_t(2 * total) || fb != uint32_t(2 * total - 1))
      t.check_error = "hand-overs " + std::to_string(ha[2 * r.repeats]) + " and " +
                      std::to_string(hb[2 * r.repeats]) + ", flags " + std::to_string(fa) +
                      " and " + std::to_string(fb) + "; expected " + std::to_string(total) +
                      " each and flags " + std::to_string(2 * total) + ", " +
                      std::to_string(2 * total - 1);
    std::vector<double> mhz;
    for (int i = 0; i < r.repeats; ++i) {
      const double handoffs = 2.0 * r.round_trips;
      t.cycles_per_handoff.push_back(double(ha[i]) / handoffs);
      t.ns_per_handoff.push_back(double(ha[r.repeats + i]) / handoffs);
      if (ha[r.repeats + i]) mhz.push_back(double(ha[i]) / double(ha[r.repeats + i]) * 1e3);
    }
    if (!mhz.empty()) {
      std::sort(mhz.begin(), mhz.end());
      t.clock_mhz = mhz[mhz.size() / 2];
    }
    return t;
  }

  HostCopyTiming host_copy(const HostCopyRequest& r) override;

  Support nccl_open() override;

  std::string nccl_description() override;

  CollectiveTiming collective(const CollectiveRequest& r) override;

  void release() override {
    // After a timeout a kernel or collective may still run: freeing would wait for it
    // forever, so everything is left to the process's end.
    if (hung_) return;
    if (nccl_)
      for (ncclComm c : comms_)
        if (c) nccl_->comm_destroy(c);
    comms_.clear();
    for (auto& g : gpus_) {
      OnDevice on(g->index);
      cudaDeviceSynchronize();
      g->out.release();
      g->in.release();
      g->scratch.release();
      g->host_src.release();
      g->host_dst.release();
    }
  }

 private:
  // After a timeout the GPUs may still run what hung: every later request fails at once
  // instead of waiting out its own timeout behind it.
  void refuse_after_hang() const {
    if (hung_) throw BackendError("not run: an earlier operation on these GPUs timed out");
  }
  static int switch_links(const std::optional<NvmlLinks>& l) {
    int n = 0;
    if (l)
      for (const auto& k : l->nvlinks) n += k.remote_type == 2 ? 1 : 0;
    return n;
  }
  bool valid(int i) const { return i >= 0 && i < int(gpus_.size()); }
  Gpu& gpu(int i) {
    if (!valid(i)) throw BackendError("links: no GPU " + std::to_string(i));
    return *gpus_[i];
  }

  void fill(Gpu& g, void* p, uint64_t bytes, uint32_t seed) {
    OnDevice on(g.index);
    links_fill<<<std::max(1, g.sms * 4), 256, 0, g.stream[0]>>>(static_cast<uint32_t*>(p),
                                                                bytes / 4, seed);
    check(cudaGetLastError(), "launching links_fill");
  }

  // Polls a stream until it is idle; BackendError after timeout_s.
  void wait(cudaStream_t s, double timeout_s, const std::string& what) {
    const auto t0 = std::chrono::steady_clock::now();
    for (;;) {
      const cudaError_t rc = cudaStreamQuery(s);
      if (rc == cudaSuccess) return;
      if (rc != cudaErrorNotReady) check(rc, what.c_str());
      if (std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() >
          timeout_s) {
        hung_ = true;
        throw BackendError(what + ": timed out after " + std::to_string(int(timeout_s)) +
                           " s (the GPU may still be running it)");
      }
      std::this_thread::sleep_for(std::chrono::microseconds(50));
    }
  }
  void sync_all(double timeout_s, const std::string& what) {
    for (auto& g : gpus_)
      for (auto s : g->stream) wait(s, timeout_s, what);
  }

  // The leader's elapsed time of `issue(rep)` per repeat (rep -1: the untimed warm-up);
  // `other`'s stream 0 is gated by the leader's start and waited for before its end.
  std::vector<double> timed(Gpu& leader, cudaStream_t ls, Gpu* other, int repeats, double timeout_s,
                            const std::string& what, const std::function<void(int)>& issue) {
    std::vector<double> secs;
    for (int rep = -1; rep < repeats; ++rep) {
      {
        OnDevice on(leader.index);
        check(cudaEventRecord(leader.event(0), ls), "cudaEventRecord");
      }
      if (other) {
        OnDevice on(other->index);
        check(cudaStreamWaitEvent(other->stream[0], leader.event(0), 0), "cudaStreamWaitEvent");
      }
      {
        OnDevice on(leader.index);
        issue(rep);
      }
      if (other) {
        OnDevice on(other->index);
        check(cudaEventRecord(other->event(3), other->stream[0]), "cudaEventRecord");
      }
      OnDevice on(leader.index);
      if (other) check(cudaStreamWaitEvent(ls, other->event(3), 0), "cudaStreamWaitEvent");
      check(cudaEventRecord(leader.event(1), ls), "cudaEventRecord");
      wait(ls, timeout_s, what);
      if (other) wait(other->stream[0], timeout_s, what);
      if (rep < 0) continue;
      float ms = 0;
      check(cudaEventElapsedTime(&ms, leader.event(0), leader.event(1)), "cudaEventElapsedTime");
      secs.push_back(ms / 1e3);
    }
    return secs;
  }

  static std::vector<uint64_t> sample_words(uint64_t words) {
    std::vector<uint64_t> v;
    if (words == 0) return v;
    for (uint64_t k = 0; k < 31; ++k) v.push_back(words * k / 31);
    v.push_back(words - 1);
    return v;
  }

  // Sampled words of a device buffer against i + seed + add.
  std::string check_words(Gpu& g, const void* p, uint64_t bytes, uint32_t seed, uint32_t add,
                          const std::string& who) {
    OnDevice on(g.index);
    for (uint64_t i : sample_words(bytes / 4)) {
      uint32_t w = 0;
      check(cudaMemcpy(&w, static_cast<const uint32_t*>(p) + i, 4, cudaMemcpyDeviceToHost),
            "reading back a word");
      if (w != uint32_t(i) + seed + add)
        return who + " word " + std::to_string(i) + " holds " + std::to_string(w) + ", expected " +
               std::to_string(uint32_t(i) + seed + add);
    }
    return {};
  }

  std::string check_collective(Collective op, const CollectiveCounts& c);

  std::vector<std::unique_ptr<Gpu>> gpus_;
  const Nccl* nccl_ = nullptr;
  std::vector<ncclComm> comms_;
  bool hung_ = false;
};

}  // namespace

}  // namespace gd::cuda

// CudaLinks's longer members, one file per part (each included here once, after the class).
#include "links/cuda_collective.cuh"
#include "links/cuda_host.cuh"

namespace gd::cuda {

std::unique_ptr<LinksKernels> make_links_kernels(int, cudaStream_t, const DeviceInfo&) {
  return std::make_unique<CudaLinks>();
}

}  // namespace gd::cuda
