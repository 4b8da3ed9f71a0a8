// The memory probe's part of every report: terminal summary, CSV and the HTML section with
// its charts (probes/memory/report.cpp); the headline figures are the model's (figures.cpp).
#pragma once

#include <filesystem>
#include <iosfwd>
#include <string>
#include <vector>

#include "gpudissect/figure.hpp"
#include "memory/memory.hpp"
#include "sections.hpp"

namespace gd::report {

void print_memory_summary(std::ostream& os, const MemoryProbeResult& m);
std::vector<std::filesystem::path> write_memory_csv(const std::filesystem::path& dir,
                                                    const MemoryProbeResult& m);
std::string memory_html_section(const MemoryProbeResult& m, SectionContext& ctx);

}  // namespace gd::report
