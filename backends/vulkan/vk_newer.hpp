// Vulkan structures newer than the headers this project builds with (Debian 12's are
// 1.3.239): VK_KHR_cooperative_matrix (1.3.255), VK_KHR_shader_bfloat16 and
// VK_EXT_shader_float8 (1.4). Laid out as the Vulkan registry defines them, under names of
// our own so that newer headers, which define the real ones, do not clash.
#pragma once

#include <vulkan/vulkan.h>

namespace gd::vulkan {

constexpr const char* kCooperativeMatrixExtension = "VK_KHR_cooperative_matrix";
constexpr const char* kBFloat16Extension = "VK_KHR_shader_bfloat16";
constexpr const char* kFloat8Extension = "VK_EXT_shader_float8";

constexpr auto kSTypeCooperativeMatrixFeatures = static_cast<VkStructureType>(1000506000);
constexpr auto kSTypeCooperativeMatrixProperties = static_cast<VkStructureType>(1000506001);
constexpr auto kSTypeBFloat16Features = static_cast<VkStructureType>(1000141000);
constexpr auto kSTypeFloat8Features = static_cast<VkStructureType>(1000567000);

struct CooperativeMatrixFeatures {  // VkPhysicalDeviceCooperativeMatrixFeaturesKHR
  VkStructureType sType = kSTypeCooperativeMatrixFeatures;
  void* pNext = nullptr;
  VkBool32 cooperativeMatrix = VK_FALSE;
  VkBool32 cooperativeMatrixRobustBufferAccess = VK_FALSE;
};

struct CooperativeMatrixProperties {  // VkCooperativeMatrixPropertiesKHR
  VkStructureType sType = kSTypeCooperativeMatrixProperties;
  void* pNext = nullptr;
  uint32_t MSize = 0, NSize = 0, KSize = 0;
  uint32_t AType = 0, BType = 0, CType = 0, ResultType = 0;  // VkComponentTypeKHR
  VkBool32 saturatingAccumulation = VK_FALSE;
  uint32_t scope = 0;  // VkScopeKHR
};

using PFN_GetCooperativeMatrixProperties = VkResult(VKAPI_PTR*)(VkPhysicalDevice, uint32_t*,
                                                                CooperativeMatrixProperties*);

struct BFloat16Features {  // VkPhysicalDeviceShaderBfloat16FeaturesKHR
  VkStructureType sType = kSTypeBFloat16Features;
  void* pNext = nullptr;
  VkBool32 shaderBFloat16Type = VK_FALSE;
  VkBool32 shaderBFloat16DotProduct = VK_FALSE;
  VkBool32 shaderBFloat16CooperativeMatrix = VK_FALSE;
};

struct Float8Features {  // VkPhysicalDeviceShaderFloat8FeaturesEXT
  VkStructureType sType = kSTypeFloat8Features;
  void* pNext = nullptr;
  VkBool32 shaderFloat8 = VK_FALSE;
  VkBool32 shaderFloat8CooperativeMatrix = VK_FALSE;
};

}  // namespace gd::vulkan
