// The memory probe's part of every report: headline figures, terminal summary, CSV and the
// HTML section with its charts (probes/memory/report.cpp).
#pragma once

#include <filesystem>
#include <iosfwd>
#include <string>
#include <vector>

#include "gpudissect/figure.hpp"
#include "memory/memory.hpp"
#include "sections.hpp"

namespace gd::report {

// Ids: memory.carveout.<shared KiB|default|<p>pct>.{l1_capacity,l1_latency},
// memory.partition.<path>.capacity_<n>warps (bytes per warp), memory.partition.<path>.l1_latency,
// memory.{l1,l2}.sector_bytes (fetch granularity), memory.{l1,l2}.line_bytes,
// memory.constant.L1.capacity, memory.constant.L1_5.{capacity | capacity_min, latency}.
// memory.carveout.default.shared_bytes: the split the driver chose by itself, where the L1 found
// fits exactly one split of the device's compute capability.
std::vector<Figure> memory_figures(const MemoryProbeResult& m, const DeviceInfo& device);
void print_memory_summary(std::ostream& os, const MemoryProbeResult& m);
std::vector<std::filesystem::path> write_memory_csv(const std::filesystem::path& dir,
                                                    const MemoryProbeResult& m);
std::string memory_html_section(const MemoryProbeResult& m, SectionContext& ctx);

}  // namespace gd::report
