#!/usr/bin/env python3
"""A same-machine reference for the links probe's NCCL figures: all-reduce through
torch.distributed, one process per GPU (how users run NCCL), timed like nccl-tests (CUDA
events around 20 back-to-back operations after 5 warm-ups; bus bandwidth = 2(n-1)/n x size /
time). Prints one line per size. Keeps NCCL_NVLS_ENABLE=0 (no NVLink multicast, ever)."""
import os
import sys

os.environ["NCCL_NVLS_ENABLE"] = "0"
os.environ.setdefault("TORCH_SYMM_MEM_DISABLE_MULTICAST", "1")
os.environ.setdefault("NVSHMEM_DISABLE_NVLS", "1")

import torch
import torch.distributed as dist
import torch.multiprocessing as mp

SIZES = [1 << 20, 16 << 20, 256 << 20, 1 << 30]


def worker(rank, world):
    os.environ["MASTER_ADDR"] = "127.0.0.1"
    os.environ["MASTER_PORT"] = "29533"
    torch.cuda.set_device(rank)
    dist.init_process_group("nccl", rank=rank, world_size=world,
                            device_id=torch.device("cuda", rank))
    for size in SIZES:
        x = torch.ones(size // 4, dtype=torch.float32, device="cuda")
        for _ in range(5):
            dist.all_reduce(x)
        torch.cuda.synchronize()
        times = []
        for _ in range(5):
            a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            dist.barrier()
            a.record()
            for _ in range(20):
                dist.all_reduce(x)
            b.record()
            torch.cuda.synchronize()
            times.append(a.elapsed_time(b) / 20 / 1e3)
        times.sort()
        t = times[len(times) // 2]
        busbw = 2 * (world - 1) / world * size / t / 1e9
        if rank == 0:
            print(f"torch all_reduce {size} B: {t * 1e6:.1f} us, busbw {busbw:.1f} GB/s "
                  f"(median of 5 x 20; all: {[round(2 * (world - 1) / world * size / s / 1e9, 1) for s in times]})",
                  flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    n = torch.cuda.device_count()
    if n < 2:
        sys.exit("needs 2 GPUs")
    mp.spawn(worker, args=(n,), nprocs=n)
