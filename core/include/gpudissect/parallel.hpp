// Runs independent host work items on a few threads: the CUDA backends compile their
// generated kernels this way. GPU-free.
#pragma once

#include <atomic>
#include <cstddef>
#include <functional>

namespace gd {

// Calls fn(i) for every i in [0, n) on up to `workers` threads (0: the machine's cores, at
// most 16), each thread taking the next index as it frees; returns when all calls returned.
// Once `cancel` (optional) is set, no further index is started. An exception thrown by fn is
// swallowed: fn must record its own failures (the compile loops keep them per kernel and
// report them when the kernel is asked for).
void parallel_for(std::size_t n, const std::atomic<bool>* cancel,
                  const std::function<void(std::size_t)>& fn, unsigned workers = 0);

}  // namespace gd
