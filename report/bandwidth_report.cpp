// The bandwidth probe's part of every report. (Scaffold.)
#include <ostream>

#include "sections.hpp"

namespace gd::report {

void print_bandwidth_summary(std::ostream& os, const RunResult& r) {
  if (!r.bandwidth) return;
  os << "\nBandwidth probe: " << r.bandwidth->status.status;
  if (!r.bandwidth->status.reason.empty()) os << " (" << r.bandwidth->status.reason << ")";
  os << "\n";
}

std::vector<std::filesystem::path> write_bandwidth_csv(const std::filesystem::path&, const RunResult&) {
  return {};
}

std::string bandwidth_html_section(const RunResult& r, SectionContext&) {
  if (!r.bandwidth) return {};
  return "<h2 id=\"bandwidth\">Bandwidth</h2>\n<p>" + r.bandwidth->status.status + "</p>\n";
}

}  // namespace gd::report
