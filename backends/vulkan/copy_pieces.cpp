// One transfer in pieces, each submitted as soon as it is recorded and none waited for: the
// host stages a piece of pageable memory while the copy of the piece before it runs, which is
// how a driver moves a pageable copy through its pinned staging memory.
#include <chrono>
#include <string>

#include "command_helpers.hpp"
#include "vulkan_context.hpp"

namespace gd::vulkan {

void Context::copy_piece(std::size_t i, const Buffer& src, const Buffer& dst, uint64_t offset,
                         uint64_t bytes) {
  if (i >= kMaxPieces)
    throw BackendError("copy_piece: piece " + std::to_string(i) + " of at most " +
                       std::to_string(kMaxPieces));
  if (offset + bytes > src.size() || offset + bytes > dst.size())
    throw BackendError("copy_piece: the piece runs past a buffer's end");
  while (pieces_.size() <= i) {
    Piece p;
    VkCommandBufferAllocateInfo cai{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
    cai.commandPool = pool_;
    cai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
    cai.commandBufferCount = 1;
    check(vkAllocateCommandBuffers(device_, &cai, &p.cmd), "vkAllocateCommandBuffers (a piece)");
    VkFenceCreateInfo fci{VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
    check(vkCreateFence(device_, &fci, nullptr, &p.fence), "vkCreateFence (a piece)");
    pieces_.push_back(p);
  }
  const Piece& p = pieces_[i];
  begin(p.cmd);
  full_barrier(p.cmd);
  const VkBufferCopy region{offset, offset, bytes};
  vkCmdCopyBuffer(p.cmd, src.get(), dst.get(), 1, &region);
  full_barrier(p.cmd);
  check(vkEndCommandBuffer(p.cmd), "vkEndCommandBuffer");
  check(vkResetFences(device_, 1, &p.fence), "vkResetFences");
  VkSubmitInfo si{VK_STRUCTURE_TYPE_SUBMIT_INFO};
  si.commandBufferCount = 1;
  si.pCommandBuffers = &p.cmd;
  check(vkQueueSubmit(queue_, 1, &si, p.fence), "vkQueueSubmit (a piece of a copy)");
}

void Context::wait_piece(std::size_t i) {
  if (i >= pieces_.size()) throw BackendError("wait_piece: no piece " + std::to_string(i));
  check(vkWaitForFences(device_, 1, &pieces_[i].fence, VK_TRUE, UINT64_MAX),
        "waiting for a piece of a copy");
  last_done_ = std::chrono::steady_clock::now();
}

}  // namespace gd::vulkan
