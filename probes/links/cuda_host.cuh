// The links probe's pinned host transfers on every GPU at once: CudaLinks::host_copy
// (cuda.cu includes this once, after the class).
#pragma once

#include <string>

namespace gd::cuda {

namespace {

// shape: one transfer on every GPU at once: buffers, timed repeats, check, in the order they run
HostCopyTiming CudaLinks::host_copy(const HostCopyRequest& r) {
  refuse_after_hang();
  if (r.gpus.empty()) throw BackendError("host copy: no GPU");
  const bool h2d = r.dir != HostLinkDir::d2h, d2h = r.dir != HostLinkDir::h2d;
  struct Side {
    Gpu* g;
    void *hs, *hd, *ds, *dd;
  };
  std::vector<Side> sides;
  for (int i : r.gpus) {
    Gpu& g = gpu(i);
    Side s{&g, nullptr, nullptr, nullptr, nullptr};
    const uint32_t seed = 0x4000u * (i + 1);
    if (h2d) {
      s.hs = g.host_src.get(r.bytes, seed, true, "pinned host source");
      s.dd = g.in.get(r.bytes, "host copy destination");
    }
    if (d2h) {
      s.ds = g.out.get(r.bytes, "host copy source");
      s.hd = g.host_dst.get(r.bytes, 0, false, "pinned host destination");
      fill(g, s.ds, r.bytes, seed + 5);
    }
    sides.push_back(s);
  }
  sync_all(r.timeout_s, "preparing the host copies");
  HostCopyTiming t;
  t.bytes_per_gpu_per_repeat = r.bytes * uint64_t(r.iterations) * ((h2d ? 1 : 0) + (d2h ? 1 : 0));
  t.gpu_seconds.assign(sides.size(), {});
  Gpu& leader = *sides[0].g;
  for (int rep = -1; rep < r.repeats; ++rep) {
    const int iters = rep < 0 ? 1 : r.iterations;
    OnDevice on(leader.index);
    check(cudaEventRecord(leader.event(0), leader.stream[0]), "cudaEventRecord");
    for (size_t k = 0; k < sides.size(); ++k) {
      Gpu& g = *sides[k].g;
      OnDevice og(g.index);
      for (int s = 0; s < 2; ++s)
        check(cudaStreamWaitEvent(g.stream[s], leader.event(0), 0), "cudaStreamWaitEvent");
      check(cudaEventRecord(g.event(2), g.stream[0]), "cudaEventRecord");
      for (int i = 0; i < iters; ++i) {
        if (h2d)
          check(cudaMemcpyAsync(sides[k].dd, sides[k].hs, r.bytes, cudaMemcpyHostToDevice,
                                g.stream[0]),
                "cudaMemcpyAsync host to device");
        if (d2h)
          check(cudaMemcpyAsync(sides[k].hd, sides[k].ds, r.bytes, cudaMemcpyDeviceToHost,
                                g.stream[h2d ? 1 : 0]),
                "cudaMemcpyAsync device to host");
      }
      if (h2d && d2h) {
        check(cudaEventRecord(g.event(4), g.stream[1]), "cudaEventRecord");
        check(cudaStreamWaitEvent(g.stream[0], g.event(4), 0), "cudaStreamWaitEvent");
      }
      check(cudaEventRecord(g.event(3), g.stream[0]), "cudaEventRecord");
    }
    OnDevice back(leader.index);
    for (size_t k = 0; k < sides.size(); ++k)
      check(cudaStreamWaitEvent(leader.stream[0], sides[k].g->event(3), 0), "cudaStreamWaitEvent");
    check(cudaEventRecord(leader.event(1), leader.stream[0]), "cudaEventRecord");
    wait(leader.stream[0], r.timeout_s, "host copies " + to_string(r.dir));
    if (rep < 0) continue;
    float ms = 0;
    check(cudaEventElapsedTime(&ms, leader.event(0), leader.event(1)), "cudaEventElapsedTime");
    t.wall_seconds.push_back(ms / 1e3);
    for (size_t k = 0; k < sides.size(); ++k) {
      Gpu& g = *sides[k].g;
      OnDevice og(g.index);
      check(cudaEventElapsedTime(&ms, g.event(2), g.event(3)), "cudaEventElapsedTime");
      t.gpu_seconds[k].push_back(ms / 1e3);
    }
  }
  for (size_t k = 0; k < sides.size() && t.check_error.empty(); ++k) {
    Gpu& g = *sides[k].g;
    const uint32_t seed = 0x4000u * (g.index + 1);
    if (h2d)
      t.check_error =
          check_words(g, sides[k].dd, r.bytes, seed, 0, "GPU " + std::to_string(g.index));
    if (t.check_error.empty() && d2h) {
      const uint32_t* w = static_cast<const uint32_t*>(sides[k].hd);
      for (uint64_t i : sample_words(r.bytes / 4))
        if (w[i] != uint32_t(i) + seed + 5) {
          t.check_error = "host word " + std::to_string(i) + " holds " + std::to_string(w[i]) +
                          " after the copy from GPU " + std::to_string(g.index);
          break;
        }
    }
  }
  return t;
}

}  // namespace

}  // namespace gd::cuda
