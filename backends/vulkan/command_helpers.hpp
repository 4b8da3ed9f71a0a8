// Recording helpers the Vulkan context's files share: a one-time command buffer begun, and
// the barrier that makes every earlier write visible to what follows.
#pragma once

#include <vulkan/vulkan.h>

#include "vulkan_context.hpp"

namespace gd::vulkan {

inline void begin(VkCommandBuffer cmd) {
  check(vkResetCommandBuffer(cmd, 0), "vkResetCommandBuffer");
  VkCommandBufferBeginInfo bi{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
  bi.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
  check(vkBeginCommandBuffer(cmd, &bi), "vkBeginCommandBuffer");
}

// Each submission is waited for before the next, but a fence orders execution only: this
// barrier makes every earlier write (shader, copy, host) visible to what follows.
inline void full_barrier(VkCommandBuffer cmd) {
  VkMemoryBarrier mb{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
  mb.srcAccessMask = VK_ACCESS_MEMORY_WRITE_BIT | VK_ACCESS_HOST_WRITE_BIT;
  mb.dstAccessMask =
      VK_ACCESS_MEMORY_READ_BIT | VK_ACCESS_MEMORY_WRITE_BIT | VK_ACCESS_HOST_READ_BIT;
  vkCmdPipelineBarrier(cmd, VK_PIPELINE_STAGE_ALL_COMMANDS_BIT | VK_PIPELINE_STAGE_HOST_BIT,
                       VK_PIPELINE_STAGE_ALL_COMMANDS_BIT | VK_PIPELINE_STAGE_HOST_BIT, 0, 1, &mb,
                       0, nullptr, 0, nullptr);
}

}  // namespace gd::vulkan
