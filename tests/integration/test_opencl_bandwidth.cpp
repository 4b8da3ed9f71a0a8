// The bandwidth probe through the real OpenCL backend (PoCL in CI): the backend has no
// bandwidth kernels yet, and the probe must say so cleanly rather than fail.
#include <gtest/gtest.h>

#include <atomic>

#include "bandwidth.hpp"
#include "opencl_backend.hpp"

namespace gd {
namespace {

TEST(OpenCLBandwidth, ProbeRunsAndReportsItsStatus) {
  std::string why;
  auto list = opencl::enumerate(&why);
  if (list.empty()) GTEST_SKIP() << "no OpenCL device: " << why;
  auto dev = opencl::open(0, 0);
  NullProgress progress;
  std::atomic<bool> stop{false};
  BandwidthProbeResult out;
  BandwidthOptions opt = parse_bandwidth_options({{"quick", "1"}, {"max_footprint", "4M"}});
  run_bandwidth(*dev, opt, progress, stop, out);
  if (!dev->bandwidth()) {
    EXPECT_EQ(out.status.status, "unsupported");
    EXPECT_FALSE(out.status.reason.empty());
    return;
  }
  EXPECT_TRUE(out.status.ok()) << out.status.reason;
  for (const auto& [name, c] : out.footprint)
    for (const BandwidthPoint& p : c.points)
      if (p.status == "ok") {
        ASSERT_TRUE(p.gbps);
        EXPECT_GT(p.gbps->median, 0.01) << name;
        EXPECT_LT(p.gbps->median, 1e5) << name;
      }
}

}  // namespace
}  // namespace gd
