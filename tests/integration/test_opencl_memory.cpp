// The memory probe through the OpenCL backend (PoCL on the CPU in CI): OpenCL has no
// carve-out, no cache operators and no per-warp placement, so every part is unsupported with
// the reason, nothing is measured, no figure is published and every writer copes.
#include <gtest/gtest.h>

#include <atomic>
#include <sstream>

#include "../unit/figure_ids_check.hpp"
#include "gpudissect/result.hpp"
#include "memory/run.hpp"
#include "opencl_backend.hpp"
#include "probe_report.hpp"
#include "registry.hpp"
#include "sections.hpp"

namespace gd {
namespace {

TEST(OpenCLMemory, EveryPartUnsupportedWithAReason) {
  std::string why;
  auto list = opencl::enumerate(&why);
  if (list.empty()) GTEST_SKIP() << "no OpenCL device: " << why;
  auto dev = opencl::open(0, 0);
  NullProgress progress;
  std::atomic<bool> stop{false};
  MemoryProbeResult out;
  run_memory(*dev, MemoryOptions{}, progress, stop, out);
  EXPECT_EQ(out.status.name(), "unsupported");
  EXPECT_NE(out.status.reason.find("opencl"), std::string::npos) << out.status.reason;
  for (const Status* s : {&out.carveout_status, &out.partition_status, &out.granularity_status,
                          &out.constant_status}) {
    EXPECT_EQ(s->name(), "unsupported");
    EXPECT_FALSE(s->reason.empty());
  }
  EXPECT_TRUE(out.carveouts.empty());
  RunResult rr;
  rr.put(out);
  const Probe* p = probe_registry().find("memory");
  EXPECT_TRUE(p->figures(rr).empty());
  expect_figure_ids_declared(rr);
  const report::ProbeReport* rep = report::probe_reports().find("memory");
  ASSERT_NE(rep, nullptr);
  std::ostringstream os;
  rep->print_summary(os, rr);
  EXPECT_NE(os.str().find("unsupported"), std::string::npos);
  report::SectionContext ctx;
  EXPECT_NE(rep->html_section(rr, ctx).find("unsupported"), std::string::npos);
}

}  // namespace
}  // namespace gd
