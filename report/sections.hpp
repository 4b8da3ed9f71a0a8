// Each probe's pieces of the terminal summary, the CSV files and the HTML report; its
// registry entry (probes/<name>/entry.cpp) hands them to the writers, which call them in
// registry order.
#pragma once

#include <filesystem>
#include <iosfwd>
#include <string>
#include <vector>

#include "gpudissect/result.hpp"

namespace gd::report {

// What a section may use to draw charts (see charts.hpp: ChartSpec, render_inline_svg,
// render_chart) and where it records what it wrote.
struct SectionContext {
  bool charts = false;  // gnuplot is available
  bool png = false;     // also write PNG files
  std::filesystem::path png_dir;
  std::vector<std::filesystem::path> pngs;  // PNG files written
  std::vector<std::string> notes;           // shown near the top of the page (chart failures)
};

// The latency probe's pieces (terminal.cpp, csv.cpp, html.cpp).
void print_latency_summary(std::ostream& os, const RunResult& r);
std::vector<std::filesystem::path> write_latency_csv(const std::filesystem::path& dir,
                                                     const RunResult& r);
std::string latency_html_section(const RunResult& r, SectionContext& ctx);

// The host memory probe's pieces (probes/host_memory/report.cpp).
void print_host_memory_summary(std::ostream& os, const RunResult& r);
std::vector<std::filesystem::path> write_host_memory_csv(const std::filesystem::path& dir,
                                                         const RunResult& r);
std::string host_memory_html_section(const RunResult& r, SectionContext& ctx);

void print_bandwidth_summary(std::ostream& os, const RunResult& r);
std::vector<std::filesystem::path> write_bandwidth_csv(const std::filesystem::path& dir,
                                                       const RunResult& r);
std::string bandwidth_html_section(const RunResult& r, SectionContext& ctx);

void print_compute_summary(std::ostream& os, const RunResult& r);
std::vector<std::filesystem::path> write_compute_csv(const std::filesystem::path& dir,
                                                     const RunResult& r);
std::string compute_html_section(const RunResult& r, SectionContext& ctx);

void print_frontend_summary(std::ostream& os, const RunResult& r);
std::vector<std::filesystem::path> write_frontend_csv(const std::filesystem::path& dir,
                                                      const RunResult& r);
std::string frontend_html_section(const RunResult& r, SectionContext& ctx);

}  // namespace gd::report
