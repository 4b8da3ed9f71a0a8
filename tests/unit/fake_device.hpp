// The one fake device of the probe tests: a DeviceInfo, no memory paths and no clock, and
// the kernel sets it serves (fake backends the tests define). A test derives from it where
// its device needs more (the latency tests' chase device: every path and a chase).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <utility>

#include "gpudissect/device.hpp"

namespace gd::fakes {

class FakeDevice : public Device {
 public:
  explicit FakeDevice(DeviceInfo info = {}) : info_(std::move(info)) {}
  // Serves `k` as `probe`'s kernel set (nullptr: the probe finds none, as on a backend
  // without its kernels).
  FakeDevice& serve(const std::string& probe, KernelSet* k) {
    sets_[probe] = k;
    return *this;
  }
  const DeviceInfo& info() const override { return info_; }
  Support supports(MemPath) const override { return Support::no("fake"); }
  uint64_t max_footprint(MemPath) const override { return 0; }
  ChaseTiming chase(const ChaseRequest&) override { throw BackendError("no chase"); }
  std::optional<ClockSample> sample_clock() override { return std::nullopt; }
  KernelSet* kernel_set(const std::string& p) override {
    auto it = sets_.find(p);
    return it == sets_.end() ? nullptr : it->second;
  }

 protected:
  DeviceInfo info_;

 private:
  std::map<std::string, KernelSet*> sets_;
};

// The fake device serving one probe's kernel set.
template <class Kernels>
class OneKernelSetDevice : public FakeDevice {
 public:
  OneKernelSetDevice(Kernels* k, DeviceInfo info) : FakeDevice(std::move(info)) {
    serve(Kernels::kProbe, k);
  }
};

}  // namespace gd::fakes
