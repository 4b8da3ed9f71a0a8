#include "links/cuda_nccl.hpp"

#include <dlfcn.h>

#include <cstdlib>
#include <mutex>

namespace gd::cuda {

std::string Nccl::describe() const {
  std::string s = path;
  if (version > 0)
    s += " (NCCL " + std::to_string(version / 10000) + "." + std::to_string(version / 100 % 100) +
         "." + std::to_string(version % 100) + ")";
  return s;
}

std::string Nccl::error(ncclResult rc) const {
  const char* s = error_string ? error_string(rc) : nullptr;
  return "NCCL error " + std::to_string(rc) + (s ? std::string(": ") + s : std::string());
}

const Nccl* nccl_load(std::string* why) {
  static Nccl n;
  static std::string failure;
  static bool ok = false;
  static std::once_flag once;
  std::call_once(once, [] {
    // Before NCCL reads its environment (at load and at communicator creation).
    setenv("NCCL_NVLS_ENABLE", "0", 1);
    const char* env = std::getenv("GD_NCCL_LIBRARY");
    n.path = env && *env ? env : "libnccl.so.2";
    n.lib = dlopen(n.path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!n.lib) {
      const char* e = dlerror();
      failure = "NCCL not loadable: " + std::string(e ? e : n.path) +
                " (set GD_NCCL_LIBRARY to the library's path)";
      return;
    }
    auto sym = [](const char* name) { return dlsym(n.lib, name); };
    n.get_version = reinterpret_cast<decltype(n.get_version)>(sym("ncclGetVersion"));
    n.error_string = reinterpret_cast<decltype(n.error_string)>(sym("ncclGetErrorString"));
    n.comm_init_all = reinterpret_cast<decltype(n.comm_init_all)>(sym("ncclCommInitAll"));
    n.comm_destroy = reinterpret_cast<decltype(n.comm_destroy)>(sym("ncclCommDestroy"));
    n.group_start = reinterpret_cast<decltype(n.group_start)>(sym("ncclGroupStart"));
    n.group_end = reinterpret_cast<decltype(n.group_end)>(sym("ncclGroupEnd"));
    n.all_reduce = reinterpret_cast<decltype(n.all_reduce)>(sym("ncclAllReduce"));
    n.all_gather = reinterpret_cast<decltype(n.all_gather)>(sym("ncclAllGather"));
    n.reduce_scatter = reinterpret_cast<decltype(n.reduce_scatter)>(sym("ncclReduceScatter"));
    n.broadcast = reinterpret_cast<decltype(n.broadcast)>(sym("ncclBroadcast"));
    n.send = reinterpret_cast<decltype(n.send)>(sym("ncclSend"));
    n.recv = reinterpret_cast<decltype(n.recv)>(sym("ncclRecv"));
    if (!n.comm_init_all || !n.comm_destroy || !n.group_start || !n.group_end || !n.all_reduce ||
        !n.all_gather || !n.reduce_scatter || !n.broadcast || !n.send || !n.recv) {
      failure = n.path + " lacks an entry point this probe needs (NCCL 2.7 or later has them all)";
      return;
    }
    if (n.get_version) n.get_version(&n.version);
    ok = true;
  });
  if (!ok) {
    if (why) *why = failure;
    return nullptr;
  }
  return &n;
}

}  // namespace gd::cuda
