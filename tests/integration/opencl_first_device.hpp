// The first OpenCL device (PoCL on the CPU in CI) for the tests of opencl_tests: skipped with
// the reason where there is none. The chase tests share one device for the whole program
// (inline functions have one static); a probe test opens its own, so that no buffer or kernel
// of another test is left on it.
#pragma once

#include <gtest/gtest.h>

#include <exception>
#include <memory>
#include <string>

#include "gpudissect/device.hpp"
#include "opencl_backend.hpp"

namespace gd::test {

// Null with the reason when there is no device or it does not open.
inline gd::Device* first_opencl_device(std::string* why) {
  static std::string reason;
  static std::unique_ptr<gd::Device> dev = [] {
    std::unique_ptr<gd::Device> d;
    const auto entries = gd::opencl::enumerate(&reason);
    if (entries.empty()) {
      if (reason.empty()) reason = "no OpenCL device";
      return d;
    }
    try {
      d = gd::opencl::open(0, 0);
    } catch (const std::exception& e) {
      reason = std::string("cannot open opencl:0.0: ") + e.what();
    }
    return d;
  }();
  *why = reason;
  return dev.get();
}

// A fresh handle on device 0 of platform 0; null with the reason when there is no device.
inline std::unique_ptr<gd::Device> open_opencl_device(std::string* why) {
  if (gd::opencl::enumerate(why).empty()) return nullptr;
  return gd::opencl::open(0, 0);
}

}  // namespace gd::test

// Declares `dev`, the shared first OpenCL device, or skips the test.
#define GD_REQUIRE_DEVICE(dev)                            \
  std::string why_;                                       \
  gd::Device* dev = gd::test::first_opencl_device(&why_); \
  if (!dev) GTEST_SKIP() << "no OpenCL device: " << why_;

// Declares `dev`, a fresh handle on the first OpenCL device, or skips the test.
#define GD_OPEN_OPENCL_DEVICE(dev)                                       \
  std::string why_;                                                      \
  std::unique_ptr<gd::Device> dev = gd::test::open_opencl_device(&why_); \
  if (!dev) GTEST_SKIP() << "no OpenCL device: " << why_;
