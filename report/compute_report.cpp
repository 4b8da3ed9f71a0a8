// The compute probe's part of every report. (Scaffold.)
#include <ostream>

#include "sections.hpp"

namespace gd::report {

void print_compute_summary(std::ostream& os, const RunResult& r) {
  if (!r.compute) return;
  os << "\nCompute probe: " << r.compute->status.status;
  if (!r.compute->status.reason.empty()) os << " (" << r.compute->status.reason << ")";
  os << "\n";
}

std::vector<std::filesystem::path> write_compute_csv(const std::filesystem::path&, const RunResult&) {
  return {};
}

std::string compute_html_section(const RunResult& r, SectionContext&) {
  if (!r.compute) return {};
  return "<h2 id=\"compute\">Compute</h2>\n<p>" + r.compute->status.status + "</p>\n";
}

}  // namespace gd::report
