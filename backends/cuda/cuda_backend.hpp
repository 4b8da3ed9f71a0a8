// Entry points of the CUDA backend. Includes no CUDA header.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "gpudissect/device.hpp"

namespace gd::cuda {

// Every CUDA device, ids "cuda:N". Without a driver or a GPU: empty, *why says so.
std::vector<DeviceEntry> enumerate(std::string* why);
// Throws BackendError when the device does not exist or cannot be opened.
std::unique_ptr<Device> open(int index);
// "13.0"-style version of the runtime this was built with.
std::string runtime_version();
// Whether NVML could be loaded on this machine, with the reason when not.
bool nvml_available(std::string* why);

}  // namespace gd::cuda
