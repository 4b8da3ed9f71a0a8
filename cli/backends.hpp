// Which backends this binary has, the devices they see, and opening one by its id.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "gpudissect/device.hpp"

namespace gd::cli {

// Bad input from the user: exit 2 with this message.
struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct Listing {
  std::vector<DeviceEntry> devices;  // CUDA first, then OpenCL
  std::vector<std::string> notes;    // why a backend found nothing
};

std::string backends_built();  // "cuda, opencl"
std::string version_text();    // the --version text
Listing list_devices();
// "" picks the default (first CUDA GPU, else first OpenCL device). A malformed or unknown
// id throws UsageError naming the valid ids; no device at all throws std::runtime_error.
std::unique_ptr<Device> open_device(const std::string& id);

// NVML's volatile memory ECC counts of a CUDA device (corrected, uncorrected) read now;
// nullopt without NVML, with ECC off, or for another backend.
std::optional<std::pair<uint64_t, uint64_t>> ecc_counts(const DeviceInfo& device);

}  // namespace gd::cli
