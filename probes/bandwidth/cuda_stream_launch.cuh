// The bandwidth probe's stream launches (cuda.cu includes this once, after the kernels):
// which kernel instance a request runs, on a persistent or a flat grid.
#pragma once

#include "bandwidth/bandwidth.hpp"
#include "bandwidth/cuda_stream.cuh"
#include "cuda_util.hpp"

namespace gd::cuda {

namespace {

int load_index(BwLoad l) {
  switch (l) {
    case BwLoad::cached:
      return 0;
    case BwLoad::l2_only:
      return 1;
    case BwLoad::no_allocate:
      return 3;
    case BwLoad::bulk:
      return 6;
    default:
      return 2;
  }
}

// A non-persistent ("flat") grid: the kernel for the request's op, load, vectors per thread
// and block size.
void launch_flat_stream(const StreamRequest& r, const StreamLayout& l, const uint4* src, uint4* dst,
                        cudaStream_t stream) {
  const int unroll = r.unroll > 0 ? r.unroll : bw::kUnroll;
  const bw::FlatArgs fa{static_cast<unsigned>(l.chunks), static_cast<unsigned>(r.passes)};
  const dim3 grid(static_cast<unsigned>(l.chunks * r.passes));
  const int li = load_index(r.load);
  const bool cs = r.streaming_stores;
#define GD_FLAT_WRITE(U)                                                           \
  if (cs)                                                                          \
    bw::bw_write_flat_kernel<true, U><<<grid, bw::kThreads, 0, stream>>>(dst, fa); \
  else                                                                             \
    bw::bw_write_flat_kernel<false, U><<<grid, bw::kThreads, 0, stream>>>(dst, fa);
#define GD_FLAT_COPY(L, U)                                                                \
  if (cs)                                                                                 \
    bw::bw_copy_flat_kernel<L, true, U><<<grid, bw::kThreads, 0, stream>>>(src, dst, fa); \
  else                                                                                    \
    bw::bw_copy_flat_kernel<L, false, U><<<grid, bw::kThreads, 0, stream>>>(src, dst, fa);
  if (r.op == BwOp::write) {
    if (unroll == 1) {
      GD_FLAT_WRITE(1)
    } else {
      GD_FLAT_WRITE(4)
    }
  } else if (li == 0 && r.threads == 512 && unroll == 2 && !r.prefetch_256) {
    if (cs)
      bw::bw_copy_flat_kernel<0, true, 2, 512><<<grid, 512, 0, stream>>>(src, dst, fa);
    else
      bw::bw_copy_flat_kernel<0, false, 2, 512><<<grid, 512, 0, stream>>>(src, dst, fa);
  } else if (r.threads != 0 && r.threads != bw::kThreads) {
    throw BackendError("stream: no flat kernel for this block size");
  } else if (li == 0 && r.prefetch_256 && unroll == 1) {
    GD_FLAT_COPY(5, 1)
  } else if (li == 2) {
    if (unroll == 1) {
      GD_FLAT_COPY(2, 1)
    } else {
      GD_FLAT_COPY(2, 4)
    }
  } else if (unroll == 1) {
    GD_FLAT_COPY(0, 1)
  } else {
    GD_FLAT_COPY(0, 4)
  }
#undef GD_FLAT_WRITE
#undef GD_FLAT_COPY
  check(cudaGetLastError(), "launching a flat stream kernel");
}

// A persistent grid (or the SM-scaling grid, r.blocks > 0): a.clk is this launch's slot.
void launch_stream(const StreamRequest& r, const StreamLayout& l, const uint4* src, uint4* dst,
                   const bw::StreamArgs& a, int smem, cudaStream_t stream) {
  const int li = load_index(r.load);
  const bool scale = r.blocks > 0;
  const dim3 grid(static_cast<unsigned>(l.blocks));
  switch (r.op) {
    case BwOp::read:
      if (scale) {
        if (li == 0)
          bw::bw_read_kernel<0, bw::kScaleThreads>
              <<<grid, bw::kScaleThreads, smem, stream>>>(src, a);
        else
          bw::bw_read_kernel<1, bw::kScaleThreads>
              <<<grid, bw::kScaleThreads, smem, stream>>>(src, a);
      } else if (li == 6) {
        bw::bw_read_bulk_kernel<<<grid, bw::kThreads, bw::kBulkSmem, stream>>>(src, a);
      } else if (r.unroll == 1) {
        const int rl = li == 3 ? (r.prefetch_256 ? 4 : 3) : li == 0 && r.prefetch_256 ? 5 : li;
        if (rl == 0)
          bw::bw_read_rot_kernel<0><<<grid, bw::kThreads, 0, stream>>>(src, a);
        else if (rl == 1)
          bw::bw_read_rot_kernel<1><<<grid, bw::kThreads, 0, stream>>>(src, a);
        else if (rl == 3)
          bw::bw_read_rot_kernel<3><<<grid, bw::kThreads, 0, stream>>>(src, a);
        else if (rl == 4)
          bw::bw_read_rot_kernel<4><<<grid, bw::kThreads, 0, stream>>>(src, a);
        else if (rl == 5)
          bw::bw_read_rot_kernel<5><<<grid, bw::kThreads, 0, stream>>>(src, a);
        else
          throw BackendError("stream: no rotating kernel for this load");
      } else if (li == 0) {
        bw::bw_read_kernel<0, bw::kThreads><<<grid, bw::kThreads, 0, stream>>>(src, a);
      } else if (li == 1) {
        bw::bw_read_kernel<1, bw::kThreads><<<grid, bw::kThreads, 0, stream>>>(src, a);
      } else if (li == 3) {
        bw::bw_read_kernel<3, bw::kThreads><<<grid, bw::kThreads, 0, stream>>>(src, a);
      } else {
        bw::bw_read_kernel<2, bw::kThreads><<<grid, bw::kThreads, 0, stream>>>(src, a);
      }
      break;
    case BwOp::write:
      if (scale) throw BackendError("stream: scaling runs reads only");
      if (r.streaming_stores)
        bw::bw_write_kernel<bw::kThreads, true><<<grid, bw::kThreads, 0, stream>>>(dst, a);
      else
        bw::bw_write_kernel<bw::kThreads, false><<<grid, bw::kThreads, 0, stream>>>(dst, a);
      break;
    case BwOp::copy:
      if (scale) throw BackendError("stream: scaling runs reads only");
      if (li == 6) {
        bw::bw_copy_bulk_kernel<<<grid, bw::kBulkCopyThreads, bw::kBulkSmem, stream>>>(src, dst, a);
        break;
      }
      if (li >= 2) throw BackendError("stream: this copy runs on flat grids only");
      if (li == 1 && r.streaming_stores)
        bw::bw_copy_kernel<1, bw::kThreads, true><<<grid, bw::kThreads, 0, stream>>>(src, dst, a);
      else if (li == 1)
        bw::bw_copy_kernel<1, bw::kThreads, false><<<grid, bw::kThreads, 0, stream>>>(src, dst, a);
      else if (r.streaming_stores)
        bw::bw_copy_kernel<0, bw::kThreads, true><<<grid, bw::kThreads, 0, stream>>>(src, dst, a);
      else
        bw::bw_copy_kernel<0, bw::kThreads, false><<<grid, bw::kThreads, 0, stream>>>(src, dst, a);
      break;
  }
  check(cudaGetLastError(), "launching a stream kernel");
}

}  // namespace

}  // namespace gd::cuda
