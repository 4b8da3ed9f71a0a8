// NVML, loaded at run time: present wherever the NVIDIA driver is, absent in CI and on
// other vendors' machines. Nothing links against it, so the binary runs everywhere.
#pragma once

#include <map>
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
// What identifies the GPU at this PCI bus id and its memory's health, for DeviceInfo.extra
// (what `fleet` shows): "uuid", "serial", "ecc" (enabled | disabled),
// "ecc_uncorrected_volatile", "ecc_corrected_volatile" (error counts since the driver
// loaded). Keys NVML does not answer are absent; empty without NVML.
std::map<std::string, std::string> nvml_identity(const std::string& pci_bus_id);

}  // namespace gd::cuda
