// NCCL, loaded at run time (no build-time dependency): GD_NCCL_LIBRARY names the library
// file where set, else the loader's search for libnccl.so.2. Declared from NCCL's public
// API (nccl.h); the enum values are NCCL's.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <string>

namespace gd::cuda {

using ncclResult = int;  // 0 == ncclSuccess
using ncclComm = void*;
constexpr int kNcclFloat32 = 7;  // ncclDataType_t
constexpr int kNcclSum = 0;      // ncclRedOp_t

struct Nccl {
  void* lib = nullptr;
  std::string path;  // what was dlopen'ed
  int version = 0;   // ncclGetVersion: major*10000 + minor*100 + patch (2.9 and later)
  ncclResult (*get_version)(int*) = nullptr;
  const char* (*error_string)(ncclResult) = nullptr;
  ncclResult (*comm_init_all)(ncclComm*, int, const int*) = nullptr;
  ncclResult (*comm_destroy)(ncclComm) = nullptr;
  ncclResult (*group_start)() = nullptr;
  ncclResult (*group_end)() = nullptr;
  ncclResult (*all_reduce)(const void*, void*, size_t, int, int, ncclComm, cudaStream_t) = nullptr;
  ncclResult (*all_gather)(const void*, void*, size_t, int, ncclComm, cudaStream_t) = nullptr;
  ncclResult (*reduce_scatter)(const void*, void*, size_t, int, int, ncclComm,
                               cudaStream_t) = nullptr;
  ncclResult (*broadcast)(const void*, void*, size_t, int, int, ncclComm, cudaStream_t) = nullptr;
  ncclResult (*send)(const void*, size_t, int, int, ncclComm, cudaStream_t) = nullptr;
  ncclResult (*recv)(void*, size_t, int, int, ncclComm, cudaStream_t) = nullptr;
  std::string describe() const;  // "libnccl.so.2 (NCCL 2.28.3)"
  std::string error(ncclResult rc) const;
};

// Loads NCCL once; nullptr with the reason (the dlopen error, a missing symbol) when it
// cannot. Sets NCCL_NVLS_ENABLE=0 in the process environment first (overwriting any value):
// this project never creates NVLink multicast objects.
const Nccl* nccl_load(std::string* why);

}  // namespace gd::cuda
