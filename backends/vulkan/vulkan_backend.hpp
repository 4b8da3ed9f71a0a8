// Entry points of the Vulkan backend. Includes no Vulkan header.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "gpudissect/device.hpp"

namespace gd::vulkan {

// Every physical device the loader reports, ids "vulkan:N". On failure (no loader, no
// driver) returns an empty list and sets *why.
std::vector<DeviceEntry> enumerate(std::string* why);
// Throws BackendError when the device does not exist or cannot be opened. `borrowed`: facts
// Vulkan does not report, from another API's view of the same GPU (the L2 size from CUDA).
std::unique_ptr<Device> open(int index, const BorrowedFacts& borrowed = {});
// The Vulkan instance version the loader offers ("1.3.239"), or why there is none.
std::string loader_version();

}  // namespace gd::vulkan
