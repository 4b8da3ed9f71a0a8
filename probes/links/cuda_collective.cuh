// The links probe's NCCL collectives: CudaLinks's members that open NCCL, time a collective
// and check what it left (cuda.cu includes this once, after the class).
#pragma once

#include <string>

#include "links/cuda_nccl.hpp"

namespace gd::cuda {

namespace {

Support CudaLinks::nccl_open() {
  if (hung_) return Support::no("an earlier operation on these GPUs timed out");
  if (comms_.size() == gpus_.size() && !comms_.empty()) return Support::yes();
  std::string why;
  nccl_ = nccl_load(&why);
  if (!nccl_) return Support::no(why);
  if (gpus_.size() < 2) return Support::no("needs 2 GPUs");
  std::vector<int> devs;
  for (auto& g : gpus_) devs.push_back(g->index);
  std::vector<ncclComm> comms(gpus_.size(), nullptr);
  if (ncclResult rc = nccl_->comm_init_all(comms.data(), int(devs.size()), devs.data()))
    return Support::no("ncclCommInitAll: " + nccl_->error(rc));
  comms_ = comms;
  return Support::yes();
}

std::string CudaLinks::nccl_description() {
  std::string why;
  const Nccl* n = nccl_load(&why);
  return n ? n->describe() : std::string();
}

// shape: one collective: buffers on every GPU, warm-up, timed iterations, check, in order
CollectiveTiming CudaLinks::collective(const CollectiveRequest& r) {
  refuse_after_hang();
  if (comms_.empty()) throw BackendError("NCCL is not open");
  const int n = int(gpus_.size());
  const auto counts = collective_counts(r.op, r.bytes, n);
  if (!counts) throw BackendError("collective: size too small for the ranks");
  for (int k = 0; k < n; ++k) {
    Gpu& g = *gpus_[k];
    float* send = static_cast<float*>(g.out.get(counts->send_count * 4, "NCCL send buffer"));
    float* recv = static_cast<float*>(g.in.get(counts->recv_count * 4, "NCCL receive buffer"));
    OnDevice on(g.index);
    const float base = collective_send_value(r.op, n, k, 0);
    const float step = collective_send_value(r.op, n, k, 1) - base;
    const uint64_t chunk = r.op == Collective::all_to_all
                               ? counts->chunk_count
                               : std::max<uint64_t>(1, counts->send_count);
    links_fill_pieces<<<256, 256, 0, g.stream[0]>>>(send, counts->send_count, chunk, base, step);
    check(cudaGetLastError(), "launching links_fill_pieces");
    check(cudaMemsetAsync(recv, 0xff, counts->recv_count * 4, g.stream[0]), "cudaMemsetAsync");
  }
  const Nccl& nc = *nccl_;
  auto one = [&] {
    if (ncclResult rc = nc.group_start()) throw BackendError("ncclGroupStart: " + nc.error(rc));
    for (int k = 0; k < n; ++k) {
      Gpu& g = *gpus_[k];
      const void* s = g.out.p;
      void* d = g.in.p;
      ncclResult rc = 0;
      switch (r.op) {
        case Collective::all_reduce:
          rc = nc.all_reduce(s, d, counts->send_count, kNcclFloat32, kNcclSum, comms_[k],
                             g.stream[0]);
          break;
        case Collective::all_gather:
          rc = nc.all_gather(s, d, counts->send_count, kNcclFloat32, comms_[k], g.stream[0]);
          break;
        case Collective::reduce_scatter:
          rc = nc.reduce_scatter(s, d, counts->recv_count, kNcclFloat32, kNcclSum, comms_[k],
                                 g.stream[0]);
          break;
        case Collective::broadcast:
          rc = nc.broadcast(s, d, counts->send_count, kNcclFloat32, 0, comms_[k], g.stream[0]);
          break;
        case Collective::all_to_all:
          for (int p = 0; p < n && rc == 0; ++p) {
            const uint64_t off = counts->chunk_count * 4 * uint64_t(p);
            rc = nc.send(static_cast<const char*>(s) + off, counts->chunk_count, kNcclFloat32, p,
                         comms_[k], g.stream[0]);
            if (rc == 0)
              rc = nc.recv(static_cast<char*>(d) + off, counts->chunk_count, kNcclFloat32, p,
                           comms_[k], g.stream[0]);
          }
          break;
      }
      if (rc) {
        nc.group_end();
        throw BackendError("NCCL " + to_string(r.op) + ": " + nc.error(rc));
      }
    }
    if (ncclResult rc = nc.group_end()) throw BackendError("ncclGroupEnd: " + nc.error(rc));
  };
  CollectiveTiming t;
  const std::string what = "NCCL " + to_string(r.op) + " of " + std::to_string(r.bytes) + " B";
  for (int i = 0; i < r.warmup; ++i) one();
  sync_all(r.timeout_s, what + " (warm-up)");
  if (r.check) {
    t.check_error = check_collective(r.op, *counts);
    t.checked = true;
  }
  Gpu& leader = *gpus_[0];
  for (int rep = 0; rep < r.repeats && t.check_error.empty(); ++rep) {
    {
      OnDevice on(leader.index);
      check(cudaEventRecord(leader.event(0), leader.stream[0]), "cudaEventRecord");
    }
    for (int k = 1; k < n; ++k) {
      OnDevice on(gpus_[k]->index);
      check(cudaStreamWaitEvent(gpus_[k]->stream[0], leader.event(0), 0), "cudaStreamWaitEvent");
    }
    for (int i = 0; i < r.iterations; ++i) one();
    for (int k = 1; k < n; ++k) {
      OnDevice on(gpus_[k]->index);
      check(cudaEventRecord(gpus_[k]->event(3), gpus_[k]->stream[0]), "cudaEventRecord");
    }
    OnDevice on(leader.index);
    for (int k = 1; k < n; ++k)
      check(cudaStreamWaitEvent(leader.stream[0], gpus_[k]->event(3), 0), "cudaStreamWaitEvent");
    check(cudaEventRecord(leader.event(1), leader.stream[0]), "cudaEventRecord");
    sync_all(r.timeout_s, what);
    float ms = 0;
    check(cudaEventElapsedTime(&ms, leader.event(0), leader.event(1)), "cudaEventElapsedTime");
    t.seconds_per_op.push_back(ms / 1e3 / r.iterations);
  }
  return t;
}

std::string CudaLinks::check_collective(Collective op, const CollectiveCounts& c) {
  const int n = int(gpus_.size());
  for (int k = 0; k < n; ++k) {
    Gpu& g = *gpus_[k];
    OnDevice on(g.index);
    for (uint64_t i : sample_words(c.recv_count)) {
      float v = 0;
      check(cudaMemcpy(&v, static_cast<const float*>(g.in.p) + i, 4, cudaMemcpyDeviceToHost),
            "reading back a collective's output");
      const uint64_t piece =
          op == Collective::all_gather || op == Collective::all_to_all ? i / c.chunk_count : 0;
      const float want = collective_expected_value(op, n, k, piece);
      if (!(v == want))
        return "rank " + std::to_string(k) + " element " + std::to_string(i) + " holds " +
               std::to_string(v) + ", expected " + std::to_string(want);
    }
  }
  return {};
}

}  // namespace

}  // namespace gd::cuda
