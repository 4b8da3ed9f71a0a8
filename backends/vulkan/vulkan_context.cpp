// The Vulkan layer: instance, device facts, buffers, pipelines and one timed dispatch at a time
// (each call waits for its work: one command buffer, fence and descriptor pool, reset per use).
#include "vulkan_context.hpp"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <utility>

#include "command_helpers.hpp"
#include "gpu_clock.hpp"
#include "gpudissect/units.hpp"
#include "vulkan_shaders.hpp"

namespace gd::vulkan {

std::string result_name(VkResult r) {
  switch (r) {
#define GD_VK_RESULT(x) \
  case x:               \
    return #x;
    GD_VK_RESULT(VK_SUCCESS)
    GD_VK_RESULT(VK_NOT_READY)
    GD_VK_RESULT(VK_TIMEOUT)
    GD_VK_RESULT(VK_INCOMPLETE)
    GD_VK_RESULT(VK_ERROR_OUT_OF_HOST_MEMORY)
    GD_VK_RESULT(VK_ERROR_OUT_OF_DEVICE_MEMORY)
    GD_VK_RESULT(VK_ERROR_INITIALIZATION_FAILED)
    GD_VK_RESULT(VK_ERROR_DEVICE_LOST)
    GD_VK_RESULT(VK_ERROR_MEMORY_MAP_FAILED)
    GD_VK_RESULT(VK_ERROR_LAYER_NOT_PRESENT)
    GD_VK_RESULT(VK_ERROR_EXTENSION_NOT_PRESENT)
    GD_VK_RESULT(VK_ERROR_FEATURE_NOT_PRESENT)
    GD_VK_RESULT(VK_ERROR_INCOMPATIBLE_DRIVER)
    GD_VK_RESULT(VK_ERROR_TOO_MANY_OBJECTS)
    GD_VK_RESULT(VK_ERROR_FORMAT_NOT_SUPPORTED)
    GD_VK_RESULT(VK_ERROR_FRAGMENTED_POOL)
    GD_VK_RESULT(VK_ERROR_OUT_OF_POOL_MEMORY)
    GD_VK_RESULT(VK_ERROR_INVALID_SHADER_NV)
#undef GD_VK_RESULT
    default:
      return "VkResult " + std::to_string(static_cast<int>(r));
  }
}

void check(VkResult r, const std::string& what) {
  if (r == VK_SUCCESS) return;
  const std::string msg = what + " failed: " + result_name(r);
  if (r == VK_ERROR_OUT_OF_DEVICE_MEMORY || r == VK_ERROR_OUT_OF_HOST_MEMORY)
    throw AllocationFailed(msg);
  throw BackendError(msg);
}

// ---- instance ----

std::shared_ptr<Instance> Instance::create() {
  VkApplicationInfo app{VK_STRUCTURE_TYPE_APPLICATION_INFO};
  app.pApplicationName = "gpudissect";
  app.apiVersion = VK_API_VERSION_1_1;  // physical-device features2/properties2 are core
  VkInstanceCreateInfo ci{VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO};
  ci.pApplicationInfo = &app;
  auto inst = std::shared_ptr<Instance>(new Instance);
  check(vkCreateInstance(&ci, nullptr, &inst->instance_), "vkCreateInstance");
  return inst;
}

Instance::~Instance() {
  if (instance_) vkDestroyInstance(instance_, nullptr);
}

std::vector<VkPhysicalDevice> Instance::physical_devices() const {
  uint32_t n = 0;
  check(vkEnumeratePhysicalDevices(instance_, &n, nullptr), "vkEnumeratePhysicalDevices");
  std::vector<VkPhysicalDevice> v(n);
  if (n) check(vkEnumeratePhysicalDevices(instance_, &n, v.data()), "vkEnumeratePhysicalDevices");
  v.resize(n);
  return v;
}

// ---- buffers and pipelines ----

Buffer::Buffer(Buffer&& o) noexcept { *this = std::move(o); }

Buffer& Buffer::operator=(Buffer&& o) noexcept {
  if (this != &o) {
    reset();
    device_ = std::exchange(o.device_, VK_NULL_HANDLE);
    buffer_ = std::exchange(o.buffer_, VK_NULL_HANDLE);
    memory_ = std::exchange(o.memory_, VK_NULL_HANDLE);
    view_ = std::exchange(o.view_, VK_NULL_HANDLE);
    size_ = std::exchange(o.size_, 0);
    mapped_ = std::exchange(o.mapped_, nullptr);
    flags_ = std::exchange(o.flags_, 0);
  }
  return *this;
}

void Buffer::reset() {
  if (view_) vkDestroyBufferView(device_, view_, nullptr);
  if (buffer_) vkDestroyBuffer(device_, buffer_, nullptr);
  if (memory_) vkFreeMemory(device_, memory_, nullptr);  // unmaps too
  view_ = VK_NULL_HANDLE;
  buffer_ = VK_NULL_HANDLE;
  memory_ = VK_NULL_HANDLE;
  size_ = 0;
  mapped_ = nullptr;
  flags_ = 0;
}

Pipeline::~Pipeline() {
  if (pipeline) vkDestroyPipeline(device, pipeline, nullptr);
  if (layout) vkDestroyPipelineLayout(device, layout, nullptr);
  if (set_layout) vkDestroyDescriptorSetLayout(device, set_layout, nullptr);
  if (module) vkDestroyShaderModule(device, module, nullptr);
}

std::vector<uint32_t> shader_words(const std::string& name) {
  for (const auto& m : shaders::all)
    if (name == m.name) return {m.words, m.words + m.count};
  throw BackendError("no embedded SPIR-V module named " + name);
}

// ---- context ----

// shape: device, queue, pools and timer created in the order Vulkan needs; each step uses the last
Context::Context(std::shared_ptr<Instance> instance, VkPhysicalDevice pd, const Facts& facts)
    : instance_(std::move(instance)), physical_(pd), facts_(facts) {
  if (!facts_.compute_queue_family) throw BackendError("the device has no compute queue");
  const float priority[2] = {1.0f, 1.0f};
  // One compute queue, and one or two transfer queues where there is a dedicated family.
  VkDeviceQueueCreateInfo qci[2] = {{VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO},
                                    {VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO}};
  qci[0].queueFamilyIndex = *facts_.compute_queue_family;
  qci[0].queueCount = 1;
  qci[0].pQueuePriorities = priority;
  const uint32_t transfer_queues = std::min<uint32_t>(2, facts_.transfer_queue_count);
  if (facts_.transfer_queue_family) {
    qci[1].queueFamilyIndex = *facts_.transfer_queue_family;
    qci[1].queueCount = std::max<uint32_t>(1, transfer_queues);
    qci[1].pQueuePriorities = priority;
  }
  VkDeviceCreateInfo dci{VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO};
  dci.queueCreateInfoCount = facts_.transfer_queue_family ? 2 : 1;
  dci.pQueueCreateInfos = qci;
  DeviceFeatures features(pd, facts_);
  dci.pEnabledFeatures = &features.core;
  dci.pNext = features.chain;
  dci.enabledExtensionCount = static_cast<uint32_t>(features.extensions.size());
  dci.ppEnabledExtensionNames = features.extensions.data();
  check(vkCreateDevice(pd, &dci, nullptr, &device_), "vkCreateDevice");
  vkGetDeviceQueue(device_, *facts_.compute_queue_family, 0, &queue_);

  VkCommandPoolCreateInfo pci{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
  pci.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;
  pci.queueFamilyIndex = *facts_.compute_queue_family;
  check(vkCreateCommandPool(device_, &pci, nullptr, &pool_), "vkCreateCommandPool");
  VkCommandBufferAllocateInfo cai{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
  cai.commandPool = pool_;
  cai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
  cai.commandBufferCount = 1;
  check(vkAllocateCommandBuffers(device_, &cai, &cmd_), "vkAllocateCommandBuffers");
  VkFenceCreateInfo fci{VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
  check(vkCreateFence(device_, &fci, nullptr, &fence_), "vkCreateFence");
  if (facts_.transfer_queue_family) {
    vkGetDeviceQueue(device_, *facts_.transfer_queue_family, 0, &transfer_queue_);
    pci.queueFamilyIndex = *facts_.transfer_queue_family;
    check(vkCreateCommandPool(device_, &pci, nullptr, &transfer_pool_),
          "vkCreateCommandPool (transfer)");
    cai.commandPool = transfer_pool_;
    check(vkAllocateCommandBuffers(device_, &cai, &transfer_cmd_),
          "vkAllocateCommandBuffers (transfer)");
    check(vkCreateFence(device_, &fci, nullptr, &transfer_fence_), "vkCreateFence");
    if (transfer_queues == 2) {
      vkGetDeviceQueue(device_, *facts_.transfer_queue_family, 1, &transfer_queue2_);
      check(vkAllocateCommandBuffers(device_, &cai, &transfer_cmd2_),
            "vkAllocateCommandBuffers (second transfer queue)");
      check(vkCreateFence(device_, &fci, nullptr, &transfer_fence2_), "vkCreateFence");
    }
  }
  find_calibration(pd);
  if (facts_.timing().ok) {
    VkQueryPoolCreateInfo qpi{VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO};
    qpi.queryType = VK_QUERY_TYPE_TIMESTAMP;
    qpi.queryCount = 2;
    check(vkCreateQueryPool(device_, &qpi, nullptr, &timestamps_), "vkCreateQueryPool");
  }
  const VkDescriptorPoolSize sizes[] = {{VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 8},
                                        {VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER, 4},
                                        {VK_DESCRIPTOR_TYPE_UNIFORM_TEXEL_BUFFER, 4}};
  VkDescriptorPoolCreateInfo dpi{VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO};
  dpi.maxSets = 1;
  dpi.poolSizeCount = 3;
  dpi.pPoolSizes = sizes;
  check(vkCreateDescriptorPool(device_, &dpi, nullptr, &descriptors_), "vkCreateDescriptorPool");
}

Context::~Context() {
  if (!device_) return;
  vkDeviceWaitIdle(device_);
  clock_.reset();  // its pipeline and buffers, before the device
  if (descriptors_) vkDestroyDescriptorPool(device_, descriptors_, nullptr);
  if (timestamps_) vkDestroyQueryPool(device_, timestamps_, nullptr);
  if (fence_) vkDestroyFence(device_, fence_, nullptr);
  if (pool_) vkDestroyCommandPool(device_, pool_, nullptr);
  if (transfer_fence_) vkDestroyFence(device_, transfer_fence_, nullptr);
  if (transfer_fence2_) vkDestroyFence(device_, transfer_fence2_, nullptr);
  for (const Piece& p : pieces_) vkDestroyFence(device_, p.fence, nullptr);
  if (transfer_pool_) vkDestroyCommandPool(device_, transfer_pool_, nullptr);
  vkDestroyDevice(device_, nullptr);
}

Buffer Context::buffer(uint64_t bytes, VkBufferUsageFlags usage, Memory where, bool texel,
                       bool both_queues) {
  if (bytes == 0) throw BackendError("a Vulkan buffer cannot be empty");
  const std::string what =
      format_bytes(static_cast<double>(bytes)) + " (" + std::to_string(bytes) + " bytes)";
  if (facts_.max_allocation_bytes && bytes > facts_.max_allocation_bytes)
    throw AllocationFailed("cannot allocate " + what + ": above maxMemoryAllocationSize (" +
                           format_bytes(static_cast<double>(facts_.max_allocation_bytes)) + ")");
  Buffer b;
  b.device_ = device_;
  VkBufferCreateInfo bci{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
  bci.size = bytes;
  bci.usage = usage | VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT;
  bci.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
  const uint32_t families[2] = {*facts_.compute_queue_family,
                                facts_.transfer_queue_family.value_or(0)};
  if (both_queues && facts_.transfer_queue_family) {
    bci.sharingMode = VK_SHARING_MODE_CONCURRENT;
    bci.queueFamilyIndexCount = 2;
    bci.pQueueFamilyIndices = families;
  }
  check(vkCreateBuffer(device_, &bci, nullptr, &b.buffer_), "vkCreateBuffer of " + what);
  VkMemoryRequirements req{};
  vkGetBufferMemoryRequirements(device_, b.buffer_, &req);
  const VkMemoryPropertyFlags want =
      where == Memory::device
          ? VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT
          : VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
  std::optional<uint32_t> type;
  // The first type with `need` and none of `avoid`, trying in order: host memory away from
  // the device first (a resizable BAR's DEVICE_LOCAL|HOST_VISIBLE type is the device's own
  // memory, not the host's; where every type is device-local, as on lavapipe and integrated
  // GPUs, that is all there is), host-cached first where asked for.
  auto pick = [&](VkMemoryPropertyFlags need, VkMemoryPropertyFlags avoid) {
    for (uint32_t t = 0; t < facts_.memory.memoryTypeCount && !type; ++t) {
      const VkMemoryPropertyFlags f = facts_.memory.memoryTypes[t].propertyFlags;
      if ((req.memoryTypeBits & (1u << t)) && (f & need) == need && !(f & avoid)) type = t;
    }
  };
  const VkMemoryPropertyFlags local = VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT;
  if (where == Memory::host_cached) {
    pick(want | VK_MEMORY_PROPERTY_HOST_CACHED_BIT, local);
    pick(want | VK_MEMORY_PROPERTY_HOST_CACHED_BIT, 0);
  }
  if (where != Memory::device) pick(want, local);
  pick(want, 0);
  // A device without a DEVICE_LOCAL type for this buffer (none seen) still runs from any.
  if (where == Memory::device) pick(0, 0);
  if (!type) throw BackendError("no suitable memory type for a buffer of " + what);
  VkMemoryAllocateInfo mai{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
  mai.allocationSize = req.size;
  mai.memoryTypeIndex = *type;
  // A buffer whose address shaders take needs memory allocated for that.
  VkMemoryAllocateFlagsInfo address{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_FLAGS_INFO};
  address.flags = VK_MEMORY_ALLOCATE_DEVICE_ADDRESS_BIT_KHR;
  if (usage & VK_BUFFER_USAGE_SHADER_DEVICE_ADDRESS_BIT_KHR) mai.pNext = &address;
  check(vkAllocateMemory(device_, &mai, nullptr, &b.memory_), "vkAllocateMemory of " + what);
  check(vkBindBufferMemory(device_, b.buffer_, b.memory_, 0), "vkBindBufferMemory");
  b.flags_ = facts_.memory.memoryTypes[*type].propertyFlags;
  if (where != Memory::device)
    check(vkMapMemory(device_, b.memory_, 0, VK_WHOLE_SIZE, 0, &b.mapped_), "vkMapMemory");
  if (texel) {
    VkBufferViewCreateInfo vci{VK_STRUCTURE_TYPE_BUFFER_VIEW_CREATE_INFO};
    vci.buffer = b.buffer_;
    vci.format = VK_FORMAT_R32_UINT;
    vci.range = VK_WHOLE_SIZE;
    check(vkCreateBufferView(device_, &vci, nullptr, &b.view_), "vkCreateBufferView");
  }
  b.size_ = bytes;
  return b;
}

void Context::submit_and_wait(const char* what) {
  check(vkEndCommandBuffer(cmd_), "vkEndCommandBuffer");
  VkSubmitInfo si{VK_STRUCTURE_TYPE_SUBMIT_INFO};
  si.commandBufferCount = 1;
  si.pCommandBuffers = &cmd_;
  check(vkResetFences(device_, 1, &fence_), "vkResetFences");
  check(vkQueueSubmit(queue_, 1, &si, fence_), std::string("vkQueueSubmit (") + what + ")");
  check(vkWaitForFences(device_, 1, &fence_, VK_TRUE, UINT64_MAX),
        std::string("waiting for ") + what);
  last_done_ = std::chrono::steady_clock::now();
}

GpuClock& Context::clock() {
  if (!clock_) clock_ = std::make_unique<GpuClock>(*this);
  return *clock_;
}

void Context::fill(const Buffer& dst, uint64_t bytes, uint32_t word, uint64_t offset) {
  begin(cmd_);
  full_barrier(cmd_);
  vkCmdFillBuffer(cmd_, dst.get(), offset, bytes, word);
  full_barrier(cmd_);
  submit_and_wait("a buffer fill");
}

double Context::copy(const Buffer& src, const Buffer& dst, uint64_t bytes) {
  if (!timestamps_) throw BackendError(facts_.timing().reason);
  begin(cmd_);
  full_barrier(cmd_);
  vkCmdResetQueryPool(cmd_, timestamps_, 0, 2);
  vkCmdWriteTimestamp(cmd_, VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT, timestamps_, 0);
  const VkBufferCopy region{0, 0, bytes};
  vkCmdCopyBuffer(cmd_, src.get(), dst.get(), 1, &region);
  vkCmdWriteTimestamp(cmd_, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, timestamps_, 1);
  full_barrier(cmd_);
  submit_and_wait("a copy");
  return elapsed_ns();
}

void Context::copy_pair(const Buffer& a_src, const Buffer& a_dst, const Buffer& b_src,
                        const Buffer& b_dst, uint64_t bytes) {
  if (!transfer_queue_) throw BackendError("copy_pair: the device has no transfer queue");
  const VkBufferCopy region{0, 0, bytes};
  const bool second = transfer_queue2_ != VK_NULL_HANDLE;
  VkCommandBuffer cmds[2] = {second ? transfer_cmd2_ : cmd_, transfer_cmd_};
  const Buffer* src[2] = {&a_src, &b_src};
  const Buffer* dst[2] = {&a_dst, &b_dst};
  for (int i = 0; i < 2; ++i) {
    begin(cmds[i]);
    full_barrier(cmds[i]);
    vkCmdCopyBuffer(cmds[i], src[i]->get(), dst[i]->get(), 1, &region);
    full_barrier(cmds[i]);
    check(vkEndCommandBuffer(cmds[i]), "vkEndCommandBuffer");
  }
  VkFence fences[2] = {second ? transfer_fence2_ : fence_, transfer_fence_};
  VkQueue queues[2] = {second ? transfer_queue2_ : queue_, transfer_queue_};
  check(vkResetFences(device_, 2, fences), "vkResetFences");
  for (int i = 0; i < 2; ++i) {
    VkSubmitInfo si{VK_STRUCTURE_TYPE_SUBMIT_INFO};
    si.commandBufferCount = 1;
    si.pCommandBuffers = &cmds[i];
    check(vkQueueSubmit(queues[i], 1, &si, fences[i]), "vkQueueSubmit (a copy pair)");
  }
  check(vkWaitForFences(device_, 2, fences, VK_TRUE, UINT64_MAX), "waiting for a copy pair");
  last_done_ = std::chrono::steady_clock::now();
}

std::string Context::copy_pair_queues() const {
  return transfer_queue2_ ? "host->device on the transfer family's second queue, device->host on "
                            "its first"
                          : "host->device on the compute queue, device->host on the transfer "
                            "queue";
}

void Context::upload(const Buffer& dst, const void* data, uint64_t bytes, uint64_t offset) {
  Buffer staging = buffer(bytes, 0, Memory::host);
  std::memcpy(staging.mapped(), data, bytes);
  begin(cmd_);
  full_barrier(cmd_);
  const VkBufferCopy region{0, offset, bytes};
  vkCmdCopyBuffer(cmd_, staging.get(), dst.get(), 1, &region);
  full_barrier(cmd_);
  submit_and_wait("an upload");
}

void Context::download(const Buffer& src, void* data, uint64_t bytes, uint64_t offset) {
  Buffer staging = buffer(bytes, 0, Memory::host);
  begin(cmd_);
  full_barrier(cmd_);
  const VkBufferCopy region{offset, 0, bytes};
  vkCmdCopyBuffer(cmd_, src.get(), staging.get(), 1, &region);
  full_barrier(cmd_);
  submit_and_wait("a download");
  std::memcpy(data, staging.mapped(), bytes);
}

std::unique_ptr<Pipeline> Context::pipeline(const std::string& shader,
                                            const std::vector<VkDescriptorType>& bindings,
                                            uint32_t push_bytes,
                                            const std::vector<uint32_t>& spec) {
  return pipeline_from_words(shader, shader_words(shader), bindings, push_bytes, spec);
}

std::unique_ptr<Pipeline> Context::pipeline_from_words(
    const std::string& shader, const std::vector<uint32_t>& words,
    const std::vector<VkDescriptorType>& bindings, uint32_t push_bytes,
    const std::vector<uint32_t>& spec) {
  auto p = std::make_unique<Pipeline>();
  p->device = device_;
  p->bindings = bindings;
  VkShaderModuleCreateInfo smi{VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO};
  smi.codeSize = words.size() * 4;
  smi.pCode = words.data();
  check(vkCreateShaderModule(device_, &smi, nullptr, &p->module),
        "vkCreateShaderModule(" + shader + ")");

  std::vector<VkDescriptorSetLayoutBinding> lb(bindings.size());
  for (std::size_t i = 0; i < bindings.size(); ++i) {
    lb[i].binding = static_cast<uint32_t>(i);
    lb[i].descriptorType = bindings[i];
    lb[i].descriptorCount = 1;
    lb[i].stageFlags = VK_SHADER_STAGE_COMPUTE_BIT;
  }
  VkDescriptorSetLayoutCreateInfo sli{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO};
  sli.bindingCount = static_cast<uint32_t>(lb.size());
  sli.pBindings = lb.data();
  check(vkCreateDescriptorSetLayout(device_, &sli, nullptr, &p->set_layout),
        "vkCreateDescriptorSetLayout");

  const VkPushConstantRange push{VK_SHADER_STAGE_COMPUTE_BIT, 0, push_bytes};
  VkPipelineLayoutCreateInfo pli{VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO};
  pli.setLayoutCount = 1;
  pli.pSetLayouts = &p->set_layout;
  pli.pushConstantRangeCount = push_bytes ? 1 : 0;
  pli.pPushConstantRanges = &push;
  check(vkCreatePipelineLayout(device_, &pli, nullptr, &p->layout), "vkCreatePipelineLayout");

  std::vector<VkSpecializationMapEntry> entries(spec.size());
  for (std::size_t i = 0; i < spec.size(); ++i)
    entries[i] = {static_cast<uint32_t>(i), static_cast<uint32_t>(i * 4), 4};
  VkSpecializationInfo si{};
  si.mapEntryCount = static_cast<uint32_t>(entries.size());
  si.pMapEntries = entries.data();
  si.dataSize = spec.size() * 4;
  si.pData = spec.data();
  VkComputePipelineCreateInfo cpi{VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO};
  cpi.stage.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO;
  cpi.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
  cpi.stage.module = p->module;
  cpi.stage.pName = "main";
  cpi.stage.pSpecializationInfo = spec.empty() ? nullptr : &si;
  cpi.layout = p->layout;
  if (facts_.pipeline_executable_info)
    cpi.flags = VK_PIPELINE_CREATE_CAPTURE_INTERNAL_REPRESENTATIONS_BIT_KHR |
                VK_PIPELINE_CREATE_CAPTURE_STATISTICS_BIT_KHR;
  VkPipelineCache cache = VK_NULL_HANDLE;
  if (!nv_sm_arch_.empty()) {
    const VkPipelineCacheCreateInfo pcci{VK_STRUCTURE_TYPE_PIPELINE_CACHE_CREATE_INFO};
    if (vkCreatePipelineCache(device_, &pcci, nullptr, &cache) != VK_SUCCESS)
      cache = VK_NULL_HANDLE;
  }
  const VkResult made = vkCreateComputePipelines(device_, cache, 1, &cpi, nullptr, &p->pipeline);
  if (cache != VK_NULL_HANDLE) {
    // The machine code is an aid beside a figure: a cache that cannot be read leaves none.
    std::size_t bytes = 0;
    if (made == VK_SUCCESS &&
        vkGetPipelineCacheData(device_, cache, &bytes, nullptr) == VK_SUCCESS && bytes > 0) {
      p->nv_cache.resize(bytes);
      if (vkGetPipelineCacheData(device_, cache, &bytes, p->nv_cache.data()) != VK_SUCCESS)
        bytes = 0;
      p->nv_cache.resize(bytes);
    }
    vkDestroyPipelineCache(device_, cache, nullptr);
  }
  check(made, "vkCreateComputePipelines(" + shader + ")");
  return p;
}

VkDescriptorSet Context::descriptor_set(const Pipeline& p, const std::vector<Binding>& bindings) {
  if (bindings.size() != p.bindings.size())
    throw BackendError("dispatch: " + std::to_string(bindings.size()) + " bindings given, the " +
                       "pipeline has " + std::to_string(p.bindings.size()));
  check(vkResetDescriptorPool(device_, descriptors_, 0), "vkResetDescriptorPool");
  VkDescriptorSetAllocateInfo dai{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO};
  dai.descriptorPool = descriptors_;
  dai.descriptorSetCount = 1;
  dai.pSetLayouts = &p.set_layout;
  VkDescriptorSet set = VK_NULL_HANDLE;
  check(vkAllocateDescriptorSets(device_, &dai, &set), "vkAllocateDescriptorSets");
  std::vector<VkDescriptorBufferInfo> infos(bindings.size());
  std::vector<VkBufferView> views(bindings.size());
  std::vector<VkWriteDescriptorSet> writes(bindings.size());
  for (std::size_t i = 0; i < bindings.size(); ++i) {
    const Buffer& b = *bindings[i].buffer;
    VkWriteDescriptorSet& w = writes[i];
    w = {VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET};
    w.dstSet = set;
    w.dstBinding = static_cast<uint32_t>(i);
    w.descriptorCount = 1;
    w.descriptorType = p.bindings[i];
    if (p.bindings[i] == VK_DESCRIPTOR_TYPE_UNIFORM_TEXEL_BUFFER) {
      if (!b.view_) throw BackendError("dispatch: a texel binding needs a buffer with a view");
      views[i] = b.view_;
      w.pTexelBufferView = &views[i];
    } else {
      infos[i] = {b.get(), 0, bindings[i].range ? bindings[i].range : VK_WHOLE_SIZE};
      w.pBufferInfo = &infos[i];
    }
  }
  vkUpdateDescriptorSets(device_, static_cast<uint32_t>(writes.size()), writes.data(), 0, nullptr);
  return set;
}

double Context::dispatch(const Pipeline& p, const std::vector<Binding>& bindings, const void* push,
                         uint32_t push_bytes, uint32_t groups) {
  if (!timestamps_) throw BackendError(facts_.timing().reason);
  const VkDescriptorSet set = descriptor_set(p, bindings);
  begin(cmd_);
  full_barrier(cmd_);
  vkCmdResetQueryPool(cmd_, timestamps_, 0, 2);
  vkCmdBindPipeline(cmd_, VK_PIPELINE_BIND_POINT_COMPUTE, p.pipeline);
  vkCmdBindDescriptorSets(cmd_, VK_PIPELINE_BIND_POINT_COMPUTE, p.layout, 0, 1, &set, 0, nullptr);
  if (push_bytes)
    vkCmdPushConstants(cmd_, p.layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, push_bytes, push);
  vkCmdWriteTimestamp(cmd_, VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT, timestamps_, 0);
  vkCmdDispatch(cmd_, groups, 1, 1);
  vkCmdWriteTimestamp(cmd_, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, timestamps_, 1);
  full_barrier(cmd_);
  submit_and_wait("a dispatch");
  return elapsed_ns();
}

Context::BatchTiming Context::dispatch_batch(const Pipeline& p,
                                             const std::vector<Binding>& bindings, uint32_t groups,
                                             int count, bool blocking_wait) {
  if (!timestamps_) throw BackendError(facts_.timing().reason);
  if (count < 1) throw BackendError("dispatch_batch: no dispatches");
  using Clock = std::chrono::steady_clock;
  auto ns = [](Clock::time_point a, Clock::time_point b) {
    return std::chrono::duration<double, std::nano>(b - a).count();
  };
  const VkDescriptorSet set = descriptor_set(p, bindings);
  BatchTiming t;
  const auto t0 = Clock::now();
  begin(cmd_);
  full_barrier(cmd_);
  vkCmdResetQueryPool(cmd_, timestamps_, 0, 2);
  vkCmdBindPipeline(cmd_, VK_PIPELINE_BIND_POINT_COMPUTE, p.pipeline);
  vkCmdBindDescriptorSets(cmd_, VK_PIPELINE_BIND_POINT_COMPUTE, p.layout, 0, 1, &set, 0, nullptr);
  vkCmdWriteTimestamp(cmd_, VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT, timestamps_, 0);
  VkMemoryBarrier mb{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
  mb.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT;
  mb.dstAccessMask = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT;
  for (int i = 0; i < count; ++i) {
    if (i > 0)
      vkCmdPipelineBarrier(cmd_, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
                           VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, 0, 1, &mb, 0, nullptr, 0, nullptr);
    if (i == count - 1 && count > 1)
      vkCmdWriteTimestamp(cmd_, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, timestamps_, 1);
    vkCmdDispatch(cmd_, groups, 1, 1);
  }
  if (count == 1) vkCmdWriteTimestamp(cmd_, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, timestamps_, 1);
  full_barrier(cmd_);
  check(vkEndCommandBuffer(cmd_), "vkEndCommandBuffer");
  VkSubmitInfo si{VK_STRUCTURE_TYPE_SUBMIT_INFO};
  si.commandBufferCount = 1;
  si.pCommandBuffers = &cmd_;
  check(vkResetFences(device_, 1, &fence_), "vkResetFences");
  const auto t1 = Clock::now();
  const VkResult r = vkQueueSubmit(queue_, 1, &si, fence_);
  const auto t2 = Clock::now();
  check(r, "vkQueueSubmit (a dispatch batch)");
  if (blocking_wait) {
    check(vkWaitForFences(device_, 1, &fence_, VK_TRUE, UINT64_MAX),
          "waiting for a dispatch batch");
  } else {
    VkResult st = VK_NOT_READY;
    while ((st = vkGetFenceStatus(device_, fence_)) == VK_NOT_READY) {
    }
    check(st, "polling a dispatch batch's fence");
  }
  const auto t3 = Clock::now();
  last_done_ = t3;
  t.record_ns = ns(t0, t1);
  t.submit_ns = ns(t1, t2);
  t.round_trip_ns = ns(t1, t3);
  t.submit_at_ns = ns(Clock::time_point{}, t1);
  uint64_t ticks[2] = {0, 0};
  read_timestamps(ticks);
  t.gpu_ns = span_ns(ticks);
  t.start_device_ns = static_cast<double>(ticks[0]) * facts_.props.limits.timestampPeriod;
  return t;
}

void Context::read_timestamps(uint64_t ticks[2]) {
  check(vkGetQueryPoolResults(device_, timestamps_, 0, 2, 2 * sizeof(uint64_t), ticks,
                              sizeof(uint64_t), VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT),
        "vkGetQueryPoolResults");
}

double Context::elapsed_ns() {
  uint64_t ticks[2] = {0, 0};
  read_timestamps(ticks);
  return span_ns(ticks);
}

double Context::span_ns(const uint64_t ticks[2]) const {
  // Only the low timestampValidBits bits count; the difference is taken modulo that width.
  const uint32_t bits = facts_.timestamp_valid_bits;
  const uint64_t mask = bits >= 64 ? ~0ull : ((1ull << bits) - 1);
  const uint64_t elapsed = (ticks[1] - ticks[0]) & mask;
  return static_cast<double>(elapsed) * facts_.props.limits.timestampPeriod;
}

}  // namespace gd::vulkan
