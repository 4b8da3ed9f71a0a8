// Entry points of the OpenCL backend. Includes no OpenCL header.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "gpudissect/device.hpp"

namespace gd::opencl {

// Every device of every platform, ids "opencl:P.D". On failure (no ICD, no platform)
// returns an empty list and sets *why.
std::vector<DeviceEntry> enumerate(std::string* why);
// Throws BackendError when the device does not exist or cannot be opened.
std::unique_ptr<Device> open(int platform, int device);

}  // namespace gd::opencl
