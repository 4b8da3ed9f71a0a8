// A device for probe tests: no memory paths, no clock, and one probe's kernel set (a fake
// backend the test defines). A test derives from it where its device needs more.
#pragma once

#include <optional>
#include <string>
#include <utility>

#include "gpudissect/device.hpp"

namespace gd::fakes {

template <class Kernels>
class OneKernelSetDevice : public Device {
 public:
  OneKernelSetDevice(Kernels* k, DeviceInfo info) : k_(k), info_(std::move(info)) {}
  const DeviceInfo& info() const override { return info_; }
  Support supports(MemPath) const override { return Support::no("fake"); }
  uint64_t max_footprint(MemPath) const override { return 0; }
  ChaseTiming chase(const ChaseRequest&) override { throw BackendError("no chase"); }
  std::optional<ClockSample> sample_clock() override { return std::nullopt; }
  KernelSet* kernel_set(const std::string& p) override {
    return p == Kernels::kProbe ? k_ : nullptr;
  }

 private:
  Kernels* k_;
  DeviceInfo info_;
};

}  // namespace gd::fakes
