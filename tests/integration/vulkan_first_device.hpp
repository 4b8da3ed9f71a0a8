// The first Vulkan device, opened once for the whole test program (every test file of
// vulkan_tests shares it: inline functions have one static), and the check that starts each
// test: skipped with the reason where there is none, a failure with GD_REQUIRE_VULKAN=1 (CI),
// so that a driver that silently went missing shows.
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <exception>
#include <memory>
#include <string>

#include "gpudissect/device.hpp"
#include "vulkan_backend.hpp"

namespace gd::test {

inline bool vulkan_required() {
  const char* v = std::getenv("GD_REQUIRE_VULKAN");
  return v && std::string(v) == "1";
}

// Null with the reason when there is no device or it does not open.
inline gd::Device* first_vulkan_device(std::string* why) {
  static std::string reason;
  static std::unique_ptr<gd::Device> dev = [] {
    std::unique_ptr<gd::Device> d;
    if (gd::vulkan::enumerate(&reason).empty()) {
      if (reason.empty()) reason = "no Vulkan device";
      return d;
    }
    try {
      d = gd::vulkan::open(0);
    } catch (const std::exception& e) {
      reason = std::string("cannot open vulkan:0: ") + e.what();
    }
    return d;
  }();
  *why = reason;
  return dev.get();
}

}  // namespace gd::test

// Declares `dev`, the first Vulkan device, or ends the test (skipped, or failed under
// GD_REQUIRE_VULKAN=1).
#define GD_REQUIRE_DEVICE(dev)                                                          \
  std::string why_;                                                                     \
  gd::Device* dev = gd::test::first_vulkan_device(&why_);                               \
  if (!dev && gd::test::vulkan_required())                                              \
    FAIL() << "GD_REQUIRE_VULKAN=1 but no Vulkan device: " << why_                      \
           << " (scripts/install-deps.sh installs mesa-vulkan-drivers, i.e. lavapipe)"; \
  if (!dev) GTEST_SKIP() << "no Vulkan device: " << why_;
