// The device's timestamps against the host's clock (VK_EXT_calibrated_timestamps): where the
// device offers both its own and the CLOCK_MONOTONIC time domain (steady_clock's on Linux),
// and its timestamps do not wrap, the launch figures can place a dispatch's start on the
// host's clock.
#include <algorithm>
#include <optional>
#include <vector>

#include "vulkan_context.hpp"

namespace gd::vulkan {

void Context::find_calibration(VkPhysicalDevice pd) {
  if (facts_.calibrated_timestamps && facts_.timestamp_valid_bits >= 64) {
    const auto domains = reinterpret_cast<PFN_vkGetPhysicalDeviceCalibrateableTimeDomainsEXT>(
        vkGetInstanceProcAddr(instance_->get(), "vkGetPhysicalDeviceCalibrateableTimeDomainsEXT"));
    uint32_t n = 0;
    std::vector<VkTimeDomainEXT> have;
    if (domains && domains(pd, &n, nullptr) == VK_SUCCESS && n > 0) {
      have.resize(n);
      if (domains(pd, &n, have.data()) != VK_SUCCESS) have.clear();
    }
    auto offers = [&](VkTimeDomainEXT d) {
      return std::find(have.begin(), have.end(), d) != have.end();
    };
    if (offers(VK_TIME_DOMAIN_DEVICE_EXT) && offers(VK_TIME_DOMAIN_CLOCK_MONOTONIC_EXT))
      get_calibrated_ = reinterpret_cast<PFN_vkGetCalibratedTimestampsEXT>(
          vkGetDeviceProcAddr(device_, "vkGetCalibratedTimestampsEXT"));
  }
}

std::optional<Context::Calibration> Context::calibrate(int tries) {
  if (!get_calibrated_) return std::nullopt;
  const VkCalibratedTimestampInfoEXT info[2] = {
      {VK_STRUCTURE_TYPE_CALIBRATED_TIMESTAMP_INFO_EXT, nullptr, VK_TIME_DOMAIN_DEVICE_EXT},
      {VK_STRUCTURE_TYPE_CALIBRATED_TIMESTAMP_INFO_EXT, nullptr,
       VK_TIME_DOMAIN_CLOCK_MONOTONIC_EXT}};
  std::optional<Calibration> best;
  for (int i = 0; i < tries; ++i) {
    uint64_t values[2] = {0, 0}, deviation = 0;
    if (get_calibrated_(device_, 2, info, values, &deviation) != VK_SUCCESS) return std::nullopt;
    // Device ticks in the timestamp period; CLOCK_MONOTONIC in ns (the extension's unit).
    const Calibration c{static_cast<double>(values[0]) * facts_.props.limits.timestampPeriod -
                            static_cast<double>(values[1]),
                        static_cast<double>(deviation)};
    if (!best || c.deviation_ns < best->deviation_ns) best = c;
  }
  return best;
}

}  // namespace gd::vulkan
