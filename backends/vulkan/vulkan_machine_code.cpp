// NVIDIA's machine code of a pipeline, from the data of the pipeline cache it was created
// through (Context::keep_nv_machine_code; core/src/nv_shader_cache.cpp reads the data).
#include <future>
#include <optional>

#include "vulkan_context.hpp"

namespace gd::vulkan {

const NvCacheSass& Context::nv_sass(const Pipeline& p) const {
  std::call_once(p.nv_sass_once, [&] {
    if (nv_sm_arch_.empty())
      p.nv_sass = {{}, nv_why_.empty() ? "machine code not kept" : nv_why_};
    else if (p.nv_cache.empty())
      p.nv_sass = {{}, "the driver's pipeline cache returned no data"};
    else
      p.nv_sass = nv_cache_sass(p.nv_cache, nv_sm_arch_, nvdisasm_tool());
  });
  return p.nv_sass;
}

std::future<void> Context::nv_sass_ahead(const Pipeline& p) const {
  if (nv_sm_arch_.empty()) return {};
  return std::async(std::launch::async, [this, &p] { nv_sass(p); });
}

std::optional<KernelMemoryOps> Context::nv_memory_ops(const Pipeline& p) const {
  const NvCacheSass& code = nv_sass(p);
  if (code.sass.empty()) return std::nullopt;
  const auto ops = kernel_memory_ops(code.sass);
  const auto it = ops.find("main");
  if (it == ops.end()) return std::nullopt;
  return it->second;
}

}  // namespace gd::vulkan
