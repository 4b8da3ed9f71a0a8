// The Vulkan layer's device facts: what a physical device reports (limits, memory, the
// extensions the probes use) and what it supports of each memory path.
#include <algorithm>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "gpudissect/units.hpp"
#include "vulkan_context.hpp"

namespace gd::vulkan {

bool has_extension(VkPhysicalDevice pd, const char* name) {
  uint32_t n = 0;
  if (vkEnumerateDeviceExtensionProperties(pd, nullptr, &n, nullptr) != VK_SUCCESS) return false;
  std::vector<VkExtensionProperties> ext(n);
  if (vkEnumerateDeviceExtensionProperties(pd, nullptr, &n, ext.data()) != VK_SUCCESS) return false;
  for (const auto& e : ext)
    if (std::strcmp(e.extensionName, name) == 0) return true;
  return false;
}

namespace {

// One feature struct (its sType set by the caller's initialiser) filled through
// vkGetPhysicalDeviceFeatures2, alone in the chain.
template <typename T>
T features_of(VkPhysicalDevice pd, T s) {
  VkPhysicalDeviceFeatures2 f2{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2};
  f2.pNext = &s;
  vkGetPhysicalDeviceFeatures2(pd, &f2);
  s.pNext = nullptr;
  return s;
}

const char* kCudaOnly =
    "CUDA-only path; Vulkan has global (storage buffer), l2 (coherent storage buffer), "
    "constant (uniform buffer), shared (workgroup memory) and image (uniform texel buffer)";

}  // namespace

// shape: one pass over the device's properties and features; each fact is a few lines
Facts query_facts(VkPhysicalDevice pd, int index) {
  Facts f;
  f.index = index;
  const bool sm_builtins = has_extension(pd, VK_NV_SHADER_SM_BUILTINS_EXTENSION_NAME);
  VkPhysicalDeviceShaderSMBuiltinsPropertiesNV sm{
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_SM_BUILTINS_PROPERTIES_NV};
  VkPhysicalDeviceMaintenance3Properties m3{
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MAINTENANCE_3_PROPERTIES};
  if (sm_builtins) m3.pNext = &sm;
  // Driver name and version string: core in Vulkan 1.2, else VK_KHR_driver_properties.
  VkPhysicalDeviceProperties basic{};
  vkGetPhysicalDeviceProperties(pd, &basic);
  VkPhysicalDeviceDriverProperties driver{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_DRIVER_PROPERTIES};
  const bool driver_props = basic.apiVersion >= VK_API_VERSION_1_2 ||
                            has_extension(pd, VK_KHR_DRIVER_PROPERTIES_EXTENSION_NAME);
  if (driver_props) {
    driver.pNext = m3.pNext;
    m3.pNext = &driver;
  }
  VkPhysicalDeviceSubgroupProperties subgroup{
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_PROPERTIES};
  subgroup.pNext = m3.pNext;
  m3.pNext = &subgroup;
  VkPhysicalDeviceIDProperties ids{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_ID_PROPERTIES};
  ids.pNext = m3.pNext;
  m3.pNext = &ids;
  VkPhysicalDeviceProperties2 p2{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2};
  p2.pNext = &m3;
  vkGetPhysicalDeviceProperties2(pd, &p2);
  f.uuid = hex_bytes(ids.deviceUUID, sizeof ids.deviceUUID);
  f.subgroup_size = subgroup.subgroupSize;
  f.subgroup_operations = subgroup.supportedOperations;
  f.subgroup_in_compute = (subgroup.supportedStages & VK_SHADER_STAGE_COMPUTE_BIT) != 0;
  if (driver_props) {
    f.driver_name = driver.driverName;
    f.driver_info = driver.driverInfo;
    if (driver.driverID == VK_DRIVER_ID_MESA_LLVMPIPE) f.loop_iteration_limit = 65535;
  }
  f.props = p2.properties;
  f.max_allocation_bytes = m3.maxMemoryAllocationSize;
  if (sm_builtins && sm.shaderSMCount > 0) f.sm_count = sm.shaderSMCount;

  if (has_extension(pd, VK_KHR_SHADER_CLOCK_EXTENSION_NAME)) {
    const auto clock =
        features_of(pd, VkPhysicalDeviceShaderClockFeaturesKHR{
                            VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_CLOCK_FEATURES_KHR});
    f.shader_clock = clock.shaderSubgroupClock == VK_TRUE;
    f.shader_device_clock = clock.shaderDeviceClock == VK_TRUE;
  }
  if (sm_builtins) {
    const auto smf =
        features_of(pd, VkPhysicalDeviceShaderSMBuiltinsFeaturesNV{
                            VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_SM_BUILTINS_FEATURES_NV});
    f.sm_builtins = smf.shaderSMBuiltins == VK_TRUE;
  }
  {
    // FP16 arithmetic through the extension only: the instance asks for Vulkan 1.1, so the
    // 1.2 core feature struct is not ours to use.
    VkPhysicalDeviceShaderFloat16Int8Features f16{
        VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_FLOAT16_INT8_FEATURES};
    const bool f16_ext = has_extension(pd, VK_KHR_SHADER_FLOAT16_INT8_EXTENSION_NAME);
    VkPhysicalDeviceFeatures2 f2{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2};
    if (f16_ext) f2.pNext = &f16;
    vkGetPhysicalDeviceFeatures2(pd, &f2);
    f.shader_float64 = f2.features.shaderFloat64 == VK_TRUE;
    f.shader_float16 = f16_ext && f16.shaderFloat16 == VK_TRUE;
    f.shader_int8 = f16_ext && f16.shaderInt8 == VK_TRUE;
    f.shader_int64 = f2.features.shaderInt64 == VK_TRUE;
  }
  if (has_extension(pd, VK_KHR_SHADER_INTEGER_DOT_PRODUCT_EXTENSION_NAME)) {
    const auto dot = features_of(
        pd, VkPhysicalDeviceShaderIntegerDotProductFeaturesKHR{
                VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_INTEGER_DOT_PRODUCT_FEATURES_KHR});
    f.shader_integer_dot_product = dot.shaderIntegerDotProduct == VK_TRUE;
  }
  if (has_extension(pd, VK_KHR_BUFFER_DEVICE_ADDRESS_EXTENSION_NAME)) {
    const auto bda =
        features_of(pd, VkPhysicalDeviceBufferDeviceAddressFeaturesKHR{
                            VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_BUFFER_DEVICE_ADDRESS_FEATURES_KHR});
    f.buffer_device_address = bda.bufferDeviceAddress == VK_TRUE;
  }
  if (has_extension(pd, VK_KHR_UNIFORM_BUFFER_STANDARD_LAYOUT_EXTENSION_NAME)) {
    const auto ubsl = features_of(
        pd, VkPhysicalDeviceUniformBufferStandardLayoutFeaturesKHR{
                VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_UNIFORM_BUFFER_STANDARD_LAYOUT_FEATURES_KHR});
    f.uniform_standard_layout = ubsl.uniformBufferStandardLayout == VK_TRUE;
  }
  f.calibrated_timestamps = has_extension(pd, VK_EXT_CALIBRATED_TIMESTAMPS_EXTENSION_NAME);
  if (has_extension(pd, VK_KHR_PIPELINE_EXECUTABLE_PROPERTIES_EXTENSION_NAME)) {
    const auto pe = features_of(
        pd, VkPhysicalDevicePipelineExecutablePropertiesFeaturesKHR{
                VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PIPELINE_EXECUTABLE_PROPERTIES_FEATURES_KHR});
    f.pipeline_executable_info = pe.pipelineExecutableInfo == VK_TRUE;
  }
  // llvmpipe compiles the clock read to a plain call that LLVM may schedule across the
  // chase's loads: seen on lavapipe (Mesa 22.3), 2N hops often counted fewer ticks than N.
  // Its ticks are no measurement of the loop there, so none are reported.
  if (f.shader_clock && f.loop_iteration_limit) {
    f.shader_clock = false;
    f.shader_clock_note =
        "VK_KHR_shader_clock present but not used: llvmpipe's clock readings are not ordered "
        "with the chase's loads (2N hops counted fewer ticks than N)";
  }

  vkGetPhysicalDeviceMemoryProperties(pd, &f.memory);
  for (uint32_t h = 0; h < f.memory.memoryHeapCount; ++h)
    if (f.memory.memoryHeaps[h].flags & VK_MEMORY_HEAP_DEVICE_LOCAL_BIT)
      f.device_local_bytes = std::max<uint64_t>(f.device_local_bytes, f.memory.memoryHeaps[h].size);

  uint32_t nq = 0;
  vkGetPhysicalDeviceQueueFamilyProperties(pd, &nq, nullptr);
  std::vector<VkQueueFamilyProperties> families(nq);
  vkGetPhysicalDeviceQueueFamilyProperties(pd, &nq, families.data());
  for (uint32_t q = 0; q < nq; ++q)
    if (families[q].queueFlags & VK_QUEUE_COMPUTE_BIT) {
      f.compute_queue_family = q;
      f.timestamp_valid_bits = families[q].timestampValidBits;
      break;
    }
  for (uint32_t q = 0; q < nq; ++q)
    if ((families[q].queueFlags & VK_QUEUE_TRANSFER_BIT) && families[q].queueCount > 0 &&
        !(families[q].queueFlags & (VK_QUEUE_GRAPHICS_BIT | VK_QUEUE_COMPUTE_BIT))) {
      f.transfer_queue_family = q;
      f.transfer_queue_count = families[q].queueCount;
      break;
    }

  VkFormatProperties fmt{};
  vkGetPhysicalDeviceFormatProperties(pd, VK_FORMAT_R32_UINT, &fmt);
  f.texel_r32ui = (fmt.bufferFeatures & VK_FORMAT_FEATURE_UNIFORM_TEXEL_BUFFER_BIT) != 0;
  return f;
}

void query_cooperative_matrix(VkInstance instance, VkPhysicalDevice pd, Facts& f) {
  f.cooperative_matrix_shapes.clear();
  if (!has_extension(pd, kCooperativeMatrixExtension)) {
    f.cooperative_matrix_why = std::string("the device lacks ") + kCooperativeMatrixExtension;
    return;
  }
  f.cooperative_matrix = features_of(pd, CooperativeMatrixFeatures{}).cooperativeMatrix == VK_TRUE;
  if (!f.cooperative_matrix) {
    f.cooperative_matrix_why = "the device lists VK_KHR_cooperative_matrix without its feature";
    return;
  }
  const auto get = reinterpret_cast<PFN_GetCooperativeMatrixProperties>(
      vkGetInstanceProcAddr(instance, "vkGetPhysicalDeviceCooperativeMatrixPropertiesKHR"));
  uint32_t n = 0;
  if (!get || get(pd, &n, nullptr) != VK_SUCCESS) {
    f.cooperative_matrix = false;
    f.cooperative_matrix_why = "vkGetPhysicalDeviceCooperativeMatrixPropertiesKHR failed";
    return;
  }
  std::vector<CooperativeMatrixProperties> props(n);
  if (n > 0 && get(pd, &n, props.data()) != VK_SUCCESS) n = 0;
  props.resize(n);
  for (const CooperativeMatrixProperties& p : props) {
    CoopMatShape s;
    s.m = p.MSize;
    s.n = p.NSize;
    s.k = p.KSize;
    s.a = coop_type_from_vk(p.AType);
    s.b = coop_type_from_vk(p.BType);
    s.c = coop_type_from_vk(p.CType);
    s.result = coop_type_from_vk(p.ResultType);
    s.saturating = p.saturatingAccumulation == VK_TRUE;
    s.scope = p.scope;
    f.cooperative_matrix_shapes.push_back(s);
  }
  if (f.cooperative_matrix_shapes.empty())
    f.cooperative_matrix_why = "the driver lists no cooperative matrix shape";
  if (has_extension(pd, VK_KHR_VULKAN_MEMORY_MODEL_EXTENSION_NAME))
    f.vulkan_memory_model =
        features_of(pd,
                    VkPhysicalDeviceVulkanMemoryModelFeaturesKHR{
                        VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_MEMORY_MODEL_FEATURES_KHR})
            .vulkanMemoryModel == VK_TRUE;
  if (has_extension(pd, kBFloat16Extension)) {
    const auto b = features_of(pd, BFloat16Features{});
    f.bfloat16_cooperative_matrix =
        b.shaderBFloat16Type == VK_TRUE && b.shaderBFloat16CooperativeMatrix == VK_TRUE;
  }
  if (has_extension(pd, kFloat8Extension)) {
    const auto e = features_of(pd, Float8Features{});
    f.float8_cooperative_matrix =
        e.shaderFloat8 == VK_TRUE && e.shaderFloat8CooperativeMatrix == VK_TRUE;
  }
}

void DeviceFeatures::add(const char* extension, void* feature_struct) {
  static_cast<VkBaseOutStructure*>(feature_struct)->pNext = static_cast<VkBaseOutStructure*>(chain);
  chain = feature_struct;
  extensions.push_back(extension);
}

DeviceFeatures::DeviceFeatures(VkPhysicalDevice pd, const Facts& f) {
  // FP16 and FP64 arithmetic for the compute probe's modules, where the device has them.
  // 8-bit integers for the matrix units' s8/u8 operands.
  if (f.shader_float16 || f.shader_int8) {
    f16.shaderFloat16 = f.shader_float16 ? VK_TRUE : VK_FALSE;
    f16.shaderInt8 = f.shader_int8 ? VK_TRUE : VK_FALSE;
    add(VK_KHR_SHADER_FLOAT16_INT8_EXTENSION_NAME, &f16);
  }
  // The matrix units (compute probe's mma rows), with the bfloat16 and FP8 types where the
  // driver lists them.
  if (f.cooperative_matrix) {
    cooperative_matrix.cooperativeMatrix = VK_TRUE;
    add(kCooperativeMatrixExtension, &cooperative_matrix);
    if (f.vulkan_memory_model) {
      memory_model.vulkanMemoryModel = VK_TRUE;
      add(VK_KHR_VULKAN_MEMORY_MODEL_EXTENSION_NAME, &memory_model);
    }
    if (f.bfloat16_cooperative_matrix) {
      bfloat16.shaderBFloat16Type = VK_TRUE;
      bfloat16.shaderBFloat16CooperativeMatrix = VK_TRUE;
      add(kBFloat16Extension, &bfloat16);
    }
    if (f.float8_cooperative_matrix) {
      float8.shaderFloat8 = VK_TRUE;
      float8.shaderFloat8CooperativeMatrix = VK_TRUE;
      add(kFloat8Extension, &float8);
    }
  }
  // The compiled code of each pipeline, read back beside the compute probe's figures.
  if (f.pipeline_executable_info) {
    executables.pipelineExecutableInfo = VK_TRUE;
    add(VK_KHR_PIPELINE_EXECUTABLE_PROPERTIES_EXTENSION_NAME, &executables);
  }
  // The chases' address chains and flat uniform chain; only the feature they use.
  if (f.buffer_device_address) {
    addresses.bufferDeviceAddress = VK_TRUE;
    add(VK_KHR_BUFFER_DEVICE_ADDRESS_EXTENSION_NAME, &addresses);
  }
  if (f.uniform_standard_layout) {
    uniform_layout.uniformBufferStandardLayout = VK_TRUE;
    add(VK_KHR_UNIFORM_BUFFER_STANDARD_LAYOUT_EXTENSION_NAME, &uniform_layout);
  }
  // Each extension with every feature it offers (to enable, not only to name): shader clock,
  // SM builtins (gl_SMIDNV), int64 and float atomics, integer dot product (int32.dp4a).
  for (auto [name, s] : {std::pair<const char*, void*>{VK_KHR_SHADER_CLOCK_EXTENSION_NAME, &clock},
                         {VK_NV_SHADER_SM_BUILTINS_EXTENSION_NAME, &sm_builtins},
                         {VK_KHR_SHADER_ATOMIC_INT64_EXTENSION_NAME, &i64_atomics},
                         {VK_EXT_SHADER_ATOMIC_FLOAT_EXTENSION_NAME, &float_atomics},
                         {VK_KHR_SHADER_INTEGER_DOT_PRODUCT_EXTENSION_NAME, &int_dot}}) {
    if (!has_extension(pd, name)) continue;
    VkPhysicalDeviceFeatures2 f2{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2, s};
    vkGetPhysicalDeviceFeatures2(pd, &f2);
    add(name, s);
  }
  // The device's timestamps against the host clock (no features: the extension alone).
  if (f.calibrated_timestamps) extensions.push_back(VK_EXT_CALIBRATED_TIMESTAMPS_EXTENSION_NAME);
  core.shaderFloat64 = f.shader_float64 ? VK_TRUE : VK_FALSE;
  core.shaderInt64 = f.shader_int64 ? VK_TRUE : VK_FALSE;  // int64 ops and atomics
}

std::string Facts::device_type() const {
  switch (props.deviceType) {
    case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU:
      return "integrated GPU";
    case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU:
      return "discrete GPU";
    case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU:
      return "virtual GPU";
    case VK_PHYSICAL_DEVICE_TYPE_CPU:
      return "CPU";
    default:
      return "other";
  }
}

std::string Facts::api_version() const {
  return "Vulkan " + std::to_string(VK_API_VERSION_MAJOR(props.apiVersion)) + "." +
         std::to_string(VK_API_VERSION_MINOR(props.apiVersion)) + "." +
         std::to_string(VK_API_VERSION_PATCH(props.apiVersion));
}

Support Facts::timing() const {
  if (!compute_queue_family) return Support::no("the device has no compute queue");
  if (timestamp_valid_bits == 0)
    return Support::no("the compute queue family " + std::to_string(*compute_queue_family) +
                       " has timestampValidBits = 0 (timestampComputeAndGraphics = " +
                       (props.limits.timestampComputeAndGraphics ? "true" : "false") +
                       "): no timestamp queries, so nothing can be timed");
  if (!(props.limits.timestampPeriod > 0))
    return Support::no("the device reports timestampPeriod = 0");
  return Support::yes();
}

Support Facts::supports(MemPath p) const {
  switch (p) {
    case MemPath::global:
    case MemPath::l2:  // a coherent storage buffer (chase_global.comp, GD_COHERENT)
    case MemPath::constant:
    case MemPath::shared:
      break;
    case MemPath::image:
      if (!texel_r32ui)
        return Support::no("VK_FORMAT_R32_UINT cannot be a uniform texel buffer on this device");
      break;
    case MemPath::local:
      return Support::no("OpenCL-only name; Vulkan's workgroup memory is the shared path");
    case MemPath::readonly:
    case MemPath::texture:
      return Support::no(kCudaOnly);
  }
  return timing();
}

uint64_t Facts::max_footprint(MemPath p) const {
  const uint64_t alloc = max_allocation_bytes ? max_allocation_bytes : UINT64_MAX;
  switch (p) {
    case MemPath::global:
    case MemPath::l2: {
      uint64_t limit = std::min<uint64_t>(props.limits.maxStorageBufferRange, alloc);
      if (device_local_bytes) limit = std::min(limit, device_local_bytes / 2);
      return limit;
    }
    case MemPath::constant:
      // chase_uniform.comp declares 64 KiB.
      return std::min<uint64_t>(props.limits.maxUniformBufferRange, 64 * 1024);
    case MemPath::shared:
      return props.limits.maxComputeSharedMemorySize;
    case MemPath::image:
      return texel_r32ui
                 ? std::min<uint64_t>(uint64_t(props.limits.maxTexelBufferElements) * 4, alloc)
                 : 0;
    default:
      return 0;
  }
}

std::string Facts::summary() const {
  std::string s = device_type() + ", " + api_version();
  if (device_local_bytes) s += ", " + format_bytes(static_cast<double>(device_local_bytes));
  s += shader_clock ? ", shader clock" : ", no shader clock";
  const Support t = timing();
  if (!t.ok) s += ", cannot time: " + t.reason;
  return s;
}

}  // namespace gd::vulkan
