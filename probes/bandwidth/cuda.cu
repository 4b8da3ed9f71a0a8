// CUDA kernels of the bandwidth probe: streams (read/write/copy through L1, L2 only or the
// read-only path), shared-memory loads at a stride, constant broadcast, host<->device
// copies. The work layout and the bytes counted come from gpudissect/bandwidth.hpp, so the
// host knows exactly what each launch moved and what its checksum must be.
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <memory>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "bandwidth/bandwidth.hpp"
#include "bandwidth/cuda_shared.cuh"
#include "bandwidth/cuda_stream.cuh"
#include "bandwidth/cuda_stream_launch.cuh"
#include "cuda_probes.hpp"
#include "cuda_util.hpp"
#include "device_clock.cuh"

namespace gd::cuda {

namespace {

class CudaBandwidth final : public BandwidthKernels {
 public:
  CudaBandwidth(int device, cudaStream_t stream, const DeviceInfo& info)
      : device_(device), stream_(stream), info_(info) {
    check(cudaMalloc(&sum_, sizeof(unsigned int)), "cudaMalloc (sum)");
    check(cudaMalloc(&clk_, sizeof(unsigned long long) * 4 * bw::kMaxRepeats),
          "cudaMalloc (clock)");
    check(cudaMalloc(&smids_, sizeof(int) * 4096), "cudaMalloc (smids)");
    check(cudaEventCreate(&e0_), "cudaEventCreate");
    check(cudaEventCreate(&e1_), "cudaEventCreate");
    // One block per SM for the scaling kernels: ask for more shared memory than half an SM.
    scale_smem_ = static_cast<int>(info.shared_per_sm_bytes.value_or(0) / 2 + 1024);
    if (info.shared_per_block_optin_bytes &&
        uint64_t(scale_smem_) > *info.shared_per_block_optin_bytes)
      scale_smem_ = static_cast<int>(*info.shared_per_block_optin_bytes);
    for (const void* k : {(const void*)bw::bw_read_kernel<0, bw::kScaleThreads>,
                          (const void*)bw::bw_read_kernel<1, bw::kScaleThreads>})
      check(cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, scale_smem_),
            "cudaFuncSetAttribute (scaling kernels)");
    check(cudaFuncSetAttribute((const void*)bw::bw_read_bulk_kernel,
                               cudaFuncAttributeMaxDynamicSharedMemorySize, bw::kBulkSmem),
          "cudaFuncSetAttribute (bulk read kernel)");
    check(cudaFuncSetAttribute((const void*)bw::bw_copy_bulk_kernel,
                               cudaFuncAttributeMaxDynamicSharedMemorySize, bw::kBulkSmem),
          "cudaFuncSetAttribute (bulk copy kernel)");
  }

  ~CudaBandwidth() override {
    src_.release();
    dst_.release();
    flush_.release();
    dev_host_.release();
    if (pinned_) cudaFreeHost(pinned_);
    if (sum_) cudaFree(sum_);
    if (clk_) cudaFree(clk_);
    if (smids_) cudaFree(smids_);
    if (e0_) cudaEventDestroy(e0_);
    if (e1_) cudaEventDestroy(e1_);
    if (stream2_) cudaStreamDestroy(stream2_);
  }

  uint64_t stream_chunk_bytes(const StreamRequest& r) const override {
    if (r.flat && r.blocks == 0 && r.op != BwOp::read)
      return uint64_t(r.threads == 512 ? 512 : bw::kThreads) *
             (r.unroll == 1 || r.unroll == 2 ? r.unroll : bw::kUnroll) * bw::kVector;
    if (r.op == BwOp::read && !r.flat && r.blocks == 0 && r.unroll == 1 && r.load != BwLoad::bulk)
      return uint64_t(bw::kThreads) * bw::kVector;
    return uint64_t(r.blocks > 0 ? bw::kScaleThreads : bw::kThreads) * bw::kUnroll * bw::kVector;
  }
  int stream_blocks() const override { return info_.compute_units * bw::kBlocksPerSm; }

  Support supports(BwOp op, BwLoad load) const override {
    if (load == BwLoad::texture)
      return Support::no("texture streams are not implemented on CUDA yet");
    if (load == BwLoad::bulk && op == BwOp::write)
      return Support::no("bulk (copy-engine) streams are reads and copies only");
    // Copies read through cached, l2_only or (flat grids only) the read-only path.
    return Support::yes();
  }

  StreamTiming stream(const StreamRequest& r) override {
    if (r.repeats < 1 || r.repeats > bw::kMaxRepeats)
      throw BackendError("stream: bad repeat count");
    if (!supports(r.op, r.load).ok) throw BackendError("stream: unsupported load");
    if (r.blocks > info_.compute_units) throw BackendError("stream: more blocks than SMs");
    const uint64_t blocks = r.blocks > 0 ? uint64_t(r.blocks) : uint64_t(stream_blocks());
    StreamTiming t;
    const bool flat = r.flat && r.op != BwOp::read && r.blocks == 0;
    t.layout = flat ? stream_layout_flat(r.buffer_bytes, stream_chunk_bytes(r))
                    : stream_layout(r.buffer_bytes, blocks, stream_chunk_bytes(r));
    if (flat && (t.layout.chunks * r.passes > 0x7fffffffull || t.layout.chunks > 0xffffffffull))
      throw BackendError("stream: flat grid larger than 2^31 blocks");
    const StreamLayout& l = t.layout;
    const uint64_t bytes = l.buffer_bytes();
    if (r.op != BwOp::write) prepare_source(bytes);
    uint4* dst = nullptr;
    if (r.op != BwOp::read) dst = static_cast<uint4*>(dst_.get(bytes, "the destination buffer"));
    // A write reads nothing and leaves the source alone: the source grows only in
    // prepare_source, which fills what it grows. (A write's 4 GiB point once regrew it
    // unfilled, and the flat copies after it copied zeros: "stores were lost".)
    const uint4* src = nullptr;
    if (r.op != BwOp::write)
      src = static_cast<const uint4*>(src_.get(std::max<uint64_t>(bytes, 16), "the source"));
    void* flush = nullptr;
    const std::size_t flush_bytes = 2 * info_.l2_bytes.value_or(64u << 20);
    if (r.flush_l2) flush = flush_.get(flush_bytes, "the cache-flush buffer");

    bw::StreamArgs a{l.chunks,
                     l.blocks,
                     l.chunks_per_block,
                     r.passes,
                     sum_,
                     clk_,
                     r.blocks > 0 ? smids_ : nullptr};
    check(cudaMemsetAsync(sum_, 0, sizeof(unsigned int), stream_), "cudaMemsetAsync");
    const int li = load_index(r.load);
    const bool scale = r.blocks > 0;
    const int smem = scale ? scale_smem_ : 0;
    auto launch = [&](int rep) {
      if (flat) return launch_flat_stream(r, l, src, dst, stream_);
      a.clk = clk_ + 4 * rep;
      launch_stream(r, l, src, dst, a, smem, stream_);
    };

    // The bulk copy leaves dst equal to src: start from bytes no copy could leave, so a
    // launch that stores nothing (or part) cannot pass the check below.
    const bool exact_copy = r.op == BwOp::copy && li == 6;
    if (exact_copy) check(cudaMemsetAsync(dst, 0xff, bytes, stream_), "poisoning the destination");
    int launches = 0;
    if (!r.flush_l2) {  // one untimed launch warms the caches and the TLB
      launch(0);
      ++launches;
    }
    std::vector<float> ms(r.repeats);
    std::vector<unsigned long long> clk(4 * r.repeats);
    for (int rep = 0; rep < r.repeats; ++rep) {
      if (flush) check(cudaMemsetAsync(flush, rep & 0xff, flush_bytes, stream_), "flushing the L2");
      check(cudaEventRecord(e0_, stream_), "cudaEventRecord");
      launch(rep);
      ++launches;
      check(cudaEventRecord(e1_, stream_), "cudaEventRecord");
      check(cudaEventSynchronize(e1_), "running a stream kernel");
      check(cudaEventElapsedTime(&ms[rep], e0_, e1_), "cudaEventElapsedTime");
    }
    check(cudaMemcpyAsync(clk.data(), clk_, sizeof(unsigned long long) * clk.size(),
                          cudaMemcpyDeviceToHost, stream_),
          "reading the clocks");
    if (scale) t.distinct_sms = distinct_sms(l);
    t.check_error = check_stream(r, l, flat, exact_copy, launches, dst, bytes);
    for (int rep = 0; rep < r.repeats; ++rep) {
      t.seconds.push_back(ms[rep] / 1000.0);
      const double c = double(clk[4 * rep + 2] - clk[4 * rep]);
      const double ns = double(clk[4 * rep + 3] - clk[4 * rep + 1]);
      // Flat grids leave the clock slots untouched (stale values from an earlier kernel).
      if (!flat && ns > 0 && clk[4 * rep + 2] > clk[4 * rep])
        t.clock_mhz.push_back(c / ns * 1000.0);
    }
    return t;
  }

  Support supports_shared() const override { return Support::yes(); }

  SharedTiming shared(const SharedRequest& r) override {
    if (r.repeats < 1 || r.repeats > bw::kMaxRepeats)
      throw BackendError("shared: bad repeat count");
    SharedTiming t;
    SharedLayout& l = t.layout;
    // Exactly the blocks that fit at once (one wave), so the event time of the launch is
    // the time every SM spent loading: a second, partial wave would leave SMs idle.
    int per_sm = 0;
    const void* fn = r.width_bytes == 4   ? (const void*)bw::bw_shared_kernel<4>
                     : r.width_bytes == 8 ? (const void*)bw::bw_shared_kernel<8>
                                          : (const void*)bw::bw_shared_kernel<16>;
    check(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, fn, bw::kSharedThreads,
                                                        bw::kSharedBytes),
          "cudaOccupancyMaxActiveBlocksPerMultiprocessor (shared)");
    l.blocks = uint64_t(info_.compute_units) * uint64_t(std::max(per_sm, 1));
    l.threads = bw::kSharedThreads;
    l.width_bytes = r.width_bytes;
    l.stride = r.stride;
    l.elements = bw::kSharedBytes / r.width_bytes;
    l.loads_per_iteration = 8;
    // ~2 ms at 128 B/clk/SM when conflict-free.
    l.iterations = r.iterations ? r.iterations : 4096 * 16 / r.width_bytes;
    if (l.iterations > 0xffffffffull) throw BackendError("shared: too many iterations");
    bw::SharedArgs a{l.elements, l.stride, static_cast<unsigned int>(l.iterations), 0u, sum_, clk_};
    check(cudaMemsetAsync(sum_, 0, sizeof(unsigned int), stream_), "cudaMemsetAsync");
    auto launch = [&](int rep) {
      a.clk = clk_ + 4 * rep;
      const dim3 grid(static_cast<unsigned>(l.blocks));
      switch (r.width_bytes) {
        case 4:
          bw::bw_shared_kernel<4><<<grid, bw::kSharedThreads, bw::kSharedBytes, stream_>>>(a);
          break;
        case 8:
          bw::bw_shared_kernel<8><<<grid, bw::kSharedThreads, bw::kSharedBytes, stream_>>>(a);
          break;
        case 16:
          bw::bw_shared_kernel<16><<<grid, bw::kSharedThreads, bw::kSharedBytes, stream_>>>(a);
          break;
        default:
          throw BackendError("shared: width must be 4, 8 or 16 bytes");
      }
      check(cudaGetLastError(), "launching the shared-memory kernel");
    };
    launch(0);
    std::vector<float> ms(r.repeats);
    for (int rep = 0; rep < r.repeats; ++rep) {
      check(cudaEventRecord(e0_, stream_), "cudaEventRecord");
      launch(rep);
      check(cudaEventRecord(e1_, stream_), "cudaEventRecord");
      check(cudaEventSynchronize(e1_), "running the shared-memory kernel");
      check(cudaEventElapsedTime(&ms[rep], e0_, e1_), "cudaEventElapsedTime");
    }
    finish_timing(r.repeats, ms, t.seconds, t.clock_mhz);
    unsigned int got = read_sum();
    const uint32_t want = shared_checksum(l) * static_cast<uint32_t>(r.repeats + 1);
    if (got != want)
      t.check_error =
          "shared checksum " + std::to_string(got) + ", expected " + std::to_string(want);
    return t;
  }

  Support supports_constant() const override { return Support::yes(); }

  ConstantTiming constant(int repeats) override {
    if (repeats < 1 || repeats > bw::kMaxRepeats) throw BackendError("constant: bad repeat count");
    if (!constant_filled_) {
      std::vector<unsigned int> w(bw::kConstantWords);
      for (unsigned i = 0; i < w.size(); ++i) w[i] = i;
      check(cudaMemcpyToSymbolAsync(bw::c_words, w.data(), w.size() * 4, 0, cudaMemcpyHostToDevice,
                                    stream_),
            "filling constant memory");
      constant_filled_ = true;
    }
    const uint64_t iterations = 8192;
    const unsigned blocks = unsigned(info_.compute_units) * 8;
    ConstantTiming t;
    t.bytes_delivered = uint64_t(blocks) * 256 * iterations * 8 * 4;
    check(cudaMemsetAsync(sum_, 0, sizeof(unsigned int), stream_), "cudaMemsetAsync");
    std::vector<float> ms(repeats);
    bw::bw_constant_kernel<<<blocks, 256, 0, stream_>>>(iterations, sum_, clk_);
    for (int rep = 0; rep < repeats; ++rep) {
      check(cudaEventRecord(e0_, stream_), "cudaEventRecord");
      bw::bw_constant_kernel<<<blocks, 256, 0, stream_>>>(iterations, sum_, clk_ + 4 * rep);
      check(cudaGetLastError(), "launching the constant kernel");
      check(cudaEventRecord(e1_, stream_), "cudaEventRecord");
      check(cudaEventSynchronize(e1_), "running the constant kernel");
      check(cudaEventElapsedTime(&ms[rep], e0_, e1_), "cudaEventElapsedTime");
    }
    finish_timing(repeats, ms, t.seconds, t.clock_mhz);
    uint32_t per_thread = 0;
    for (uint64_t it = 0; it < iterations; ++it)
      for (uint32_t k = 0; k < 8; ++k)
        per_thread += ((uint32_t(it) * 8) & (bw::kConstantWords - 1)) + k;
    const uint32_t want = per_thread * blocks * 256u * uint32_t(repeats + 1);
    const unsigned int got = read_sum();
    if (got != want)
      t.check_error =
          "constant checksum " + std::to_string(got) + ", expected " + std::to_string(want);
    return t;
  }

  Support supports_host(bool) const override { return Support::yes(); }
  Support supports_streaming_stores() const override { return Support::yes(); }  // st.global.cs

  HostTiming host(const HostRequest& r) override {
    if (r.bytes == 0 || r.bytes % 4)
      throw BackendError("host: size must be a positive multiple of 4");
    HostTiming t;
    const uint64_t words = r.bytes / 4;
    // Two device buffers (one per direction) and two host buffers of the kind asked for.
    auto* dev = static_cast<unsigned char*>(dev_host_.get(2 * r.bytes, "the host-link buffers"));
    unsigned int* dev_in = reinterpret_cast<unsigned int*>(dev);
    unsigned int* dev_out = reinterpret_cast<unsigned int*>(dev + r.bytes);
    unsigned int* h_in = nullptr;   // host -> device source
    unsigned int* h_out = nullptr;  // device -> host destination
    if (r.pinned) {
      if (pinned_bytes_ < 2 * r.bytes) {
        if (pinned_) cudaFreeHost(pinned_);
        pinned_ = nullptr;
        pinned_bytes_ = 0;
        check(cudaMallocHost(&pinned_, 2 * r.bytes), "cudaMallocHost");
        pinned_bytes_ = 2 * r.bytes;
      }
      h_in = static_cast<unsigned int*>(pinned_);
    } else {
      if (pageable_words_ < 2 * words) {
        pageable_.reset(new unsigned int[2 * words]);  // uninitialised: the fill below touches it
        pageable_words_ = 2 * words;
      }
      h_in = pageable_.get();
    }
    h_out = h_in + words;
    for (uint64_t i = 0; i < words; ++i) h_in[i] = static_cast<unsigned int>(i);
    fill(dev_out, words);
    if (!stream2_)
      check(cudaStreamCreateWithFlags(&stream2_, cudaStreamNonBlocking), "cudaStreamCreate");
    check(cudaStreamSynchronize(stream_), "preparing the host-link buffers");
    auto once = [&] {
      if (r.dir != HostDir::to_host)
        check(cudaMemcpyAsync(dev_in, h_in, r.bytes, cudaMemcpyHostToDevice, stream_),
              "host->device copy");
      if (r.dir != HostDir::to_device)
        check(cudaMemcpyAsync(h_out, dev_out, r.bytes, cudaMemcpyDeviceToHost,
                              r.dir == HostDir::both ? stream2_ : stream_),
              "device->host copy");
      check(cudaStreamSynchronize(stream_), "host-link copy");
      check(cudaStreamSynchronize(stream2_), "host-link copy");
    };
    once();  // warm: first touch of the pages, the driver's staging buffers
    using Clock = std::chrono::steady_clock;
    for (int rep = 0; rep < r.repeats; ++rep) {
      const auto t0 = Clock::now();
      once();
      t.seconds.push_back(std::chrono::duration<double>(Clock::now() - t0).count());
    }
    std::optional<uint32_t> arrived;
    if (r.dir != HostDir::to_host) arrived = sum_of(reinterpret_cast<uint4*>(dev_in), r.bytes);
    t.check_error = host_transfer_error(r.dir, arrived, h_out, r.bytes);
    return t;
  }

  std::optional<std::string> instruction(const std::string& kind) override {
    const std::map<std::string, KernelMemoryOps>& ops = own_memory_ops();
    // kind -> (kernel name fragment, which op)
    static const std::map<std::string, std::pair<std::string, int>> kernels = {
        {"read.cached", {"bw_read_kernelILi0ELi256", 0}},
        {"read.l2_only", {"bw_read_kernelILi1ELi256", 0}},
        {"read.readonly", {"bw_read_kernelILi2ELi256", 0}},
        {"read.no_allocate", {"bw_read_kernelILi3ELi256", 0}},
        {"read.l2_only.rot", {"bw_read_rot_kernelILi1E", 0}},
        {"read.no_allocate.rot", {"bw_read_rot_kernelILi3E", 0}},
        {"read.no_allocate.l2_256.rot", {"bw_read_rot_kernelILi4E", 0}},
        {"read.cached.l2_256.rot", {"bw_read_rot_kernelILi5E", 0}},
        {"read.bulk", {"bw_read_bulk_kernel", 3}},
        {"copy.bulk", {"bw_copy_bulk_kernel", 4}},
        {"copy.cached.flat2.t512", {"bw_copy_flat_kernelILi0ELb0ELi2ELi512E", 2}},
        {"copy.cached.l2_256.streaming.flat1", {"bw_copy_flat_kernelILi5ELb1ELi1E", 2}},
        {"copy.cached.l2_256.flat1", {"bw_copy_flat_kernelILi5ELb0ELi1E", 2}},
        {"scale.cached", {"bw_read_kernelILi0ELi1024", 0}},
        {"scale.l2_only", {"bw_read_kernelILi1ELi1024", 0}},
        {"write", {"bw_write_kernelILi256ELb0", 1}},
        {"write.streaming", {"bw_write_kernelILi256ELb1", 1}},
        {"copy.cached", {"bw_copy_kernelILi0ELi256ELb0", 2}},
        {"copy.l2_only", {"bw_copy_kernelILi1ELi256ELb0", 2}},
        {"copy.cached.streaming", {"bw_copy_kernelILi0ELi256ELb1", 2}},
        {"copy.l2_only.streaming", {"bw_copy_kernelILi1ELi256ELb1", 2}},
        {"write.flat1", {"bw_write_flat_kernelILb0ELi1E", 1}},
        {"write.flat4", {"bw_write_flat_kernelILb0ELi4E", 1}},
        {"write.streaming.flat1", {"bw_write_flat_kernelILb1ELi1E", 1}},
        {"write.streaming.flat4", {"bw_write_flat_kernelILb1ELi4E", 1}},
        {"copy.cached.flat1", {"bw_copy_flat_kernelILi0ELb0ELi1E", 2}},
        {"copy.cached.flat4", {"bw_copy_flat_kernelILi0ELb0ELi4E", 2}},
        {"copy.cached.streaming.flat1", {"bw_copy_flat_kernelILi0ELb1ELi1E", 2}},
        {"copy.cached.streaming.flat4", {"bw_copy_flat_kernelILi0ELb1ELi4E", 2}},
        {"copy.readonly.flat1", {"bw_copy_flat_kernelILi2ELb0ELi1E", 2}},
        {"copy.readonly.flat4", {"bw_copy_flat_kernelILi2ELb0ELi4E", 2}},
        {"copy.readonly.streaming.flat1", {"bw_copy_flat_kernelILi2ELb1ELi1E", 2}},
        {"copy.readonly.streaming.flat4", {"bw_copy_flat_kernelILi2ELb1ELi4E", 2}},
        {"shared.4", {"bw_shared_kernelILi4", 0}},
        {"shared.8", {"bw_shared_kernelILi8", 0}},
        {"shared.16", {"bw_shared_kernelILi16", 0}},
        {"constant", {"bw_constant_kernel", 0}}};
    auto k = kernels.find(kind);
    if (k == kernels.end()) return std::nullopt;
    for (const auto& [fn, op] : ops)
      if (fn.find(k->second.first) != std::string::npos) {
        const std::string s = k->second.second == 0   ? op.load
                              : k->second.second == 1 ? op.store
                              : k->second.second == 3 ? op.bulk + " + " + op.load
                              : k->second.second == 4 ? op.bulk_all
                                                      : op.load + " + " + op.store;
        if (!s.empty() && s != " + ") return s;
      }
    return std::nullopt;
  }

 private:
  // The source holds word i = i; refilled only when it grows (no kernel writes it).
  void prepare_source(uint64_t bytes) {
    if (bytes <= src_filled_) return;
    auto* p = static_cast<unsigned int*>(src_.get(bytes, "the source buffer"));
    fill(p, src_.size() / 4);
    src_filled_ = src_.size();
  }
  void fill(unsigned int* p, uint64_t words) {
    bw::bw_fill_kernel<<<info_.compute_units * 8, 256, 0, stream_>>>(p, words);
    check(cudaGetLastError(), "filling a buffer");
  }
  // The SMs a scaling run's blocks ran on, counted once each.
  int distinct_sms(const StreamLayout& l) {
    std::vector<int> ids(l.blocks);
    check(cudaMemcpyAsync(ids.data(), smids_, sizeof(int) * ids.size(), cudaMemcpyDeviceToHost,
                          stream_),
          "reading the SM ids");
    check(cudaStreamSynchronize(stream_), "reading the SM ids");
    return static_cast<int>(std::set<int>(ids.begin(), ids.end()).size());
  }

  // What a stream's launches left against what they must have: the read sum, the copy's
  // mismatches, or the written data's sum. Empty where it matches.
  std::string check_stream(const StreamRequest& r, const StreamLayout& l, bool flat,
                           bool exact_copy, int launches, const uint4* dst, uint64_t bytes) {
    std::string check_error;
    unsigned int got = 0;
    if (r.op == BwOp::read) {
      check(cudaMemcpyAsync(&got, sum_, sizeof got, cudaMemcpyDeviceToHost, stream_),
            "reading the sum");
      check(cudaStreamSynchronize(stream_), "reading the sum");
      const uint32_t want = stream_read_checksum(l, r.passes) * static_cast<uint32_t>(launches);
      if (got != want)
        check_error = "read checksum " + std::to_string(got) + ", expected " +
                      std::to_string(want) + ": loads were lost";
    } else if (exact_copy) {
      check(cudaMemsetAsync(sum_, 0, sizeof(unsigned int), stream_), "cudaMemsetAsync");
      bw::bw_mismatch_kernel<<<info_.compute_units * 8, 256, 0, stream_>>>(dst, bytes / 16, sum_);
      check(cudaGetLastError(), "launching the copy check");
      got = read_sum();
      if (got != 0)
        check_error = std::to_string(got) + " of " + std::to_string(bytes / 4) +
                      " destination words differ from the source: the copy lost data";
    } else {
      got = sum_of(dst, bytes);
      // The flat grids write the same value on every pass (their passes are unordered).
      const uint32_t want = stream_written_checksum(l, flat ? 1 : r.passes);
      if (got != want)
        check_error = "written data sums to " + std::to_string(got) + ", expected " +
                      std::to_string(want) + ": stores were lost";
    }
    return check_error;
  }

  unsigned int sum_of(const uint4* p, uint64_t bytes) {
    check(cudaMemsetAsync(sum_, 0, sizeof(unsigned int), stream_), "cudaMemsetAsync");
    bw::bw_sum_kernel<<<info_.compute_units * 8, 256, 0, stream_>>>(p, bytes / 16, sum_);
    check(cudaGetLastError(), "launching the check");
    return read_sum();
  }
  unsigned int read_sum() {
    unsigned int got = 0;
    check(cudaMemcpyAsync(&got, sum_, sizeof got, cudaMemcpyDeviceToHost, stream_),
          "reading the sum");
    check(cudaStreamSynchronize(stream_), "running the check");
    return got;
  }
  void finish_timing(int repeats, const std::vector<float>& ms, std::vector<double>& seconds,
                     std::vector<double>& clock) {
    std::vector<unsigned long long> clk(4 * repeats);
    check(cudaMemcpyAsync(clk.data(), clk_, sizeof(unsigned long long) * clk.size(),
                          cudaMemcpyDeviceToHost, stream_),
          "reading the clocks");
    check(cudaStreamSynchronize(stream_), "reading the clocks");
    for (int rep = 0; rep < repeats; ++rep) {
      seconds.push_back(ms[rep] / 1000.0);
      const double c = double(clk[4 * rep + 2] - clk[4 * rep]);
      const double ns = double(clk[4 * rep + 3] - clk[4 * rep + 1]);
      if (ns > 0 && clk[4 * rep + 2] > clk[4 * rep]) clock.push_back(c / ns * 1000.0);
    }
  }

  int device_;
  cudaStream_t stream_;
  cudaStream_t stream2_ = nullptr;
  DeviceInfo info_;
  int scale_smem_ = 0;
  DeviceBuffer src_, dst_, flush_, dev_host_;
  uint64_t src_filled_ = 0;
  unsigned int* sum_ = nullptr;
  unsigned long long* clk_ = nullptr;
  int* smids_ = nullptr;
  cudaEvent_t e0_ = nullptr, e1_ = nullptr;
  void* pinned_ = nullptr;
  uint64_t pinned_bytes_ = 0;
  std::unique_ptr<unsigned int[]> pageable_;
  uint64_t pageable_words_ = 0;
  bool constant_filled_ = false;
};

}  // namespace

std::unique_ptr<BandwidthKernels> make_bandwidth_kernels(int device, cudaStream_t stream,
                                                         const DeviceInfo& info) {
  return std::make_unique<CudaBandwidth>(device, stream, info);
}

}  // namespace gd::cuda
