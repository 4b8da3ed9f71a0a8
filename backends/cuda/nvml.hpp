// NVML, loaded at run time: present wherever the NVIDIA driver is, absent in CI and on
// other vendors' machines. Nothing links against it, so the binary runs everywhere.
#pragma once

#include <optional>
#include <string>

#include "gpudissect/device.hpp"

namespace gd::cuda {

// Loads libnvidia-ml once. Returns false with the reason when it cannot.
bool nvml_load(std::string* why);
// The NVIDIA driver release ("580.159.04"), where NVML is present.
std::optional<std::string> nvml_driver_version();
// Clocks, temperature, power and active throttle reasons of the GPU at this PCI bus id.
std::optional<Telemetry> nvml_read(const std::string& pci_bus_id);

}  // namespace gd::cuda
