// The latency probe's report half: its pieces live with the writers they shaped
// (report/terminal.cpp, csv.cpp, html.cpp; declared in sections.hpp).
#include "probe_report.hpp"
#include "sections.hpp"

namespace gd {

// The probe's report half (report/probe_report.hpp), registered by probes/registry.cpp.
std::unique_ptr<report::ProbeReport> make_latency_report() {
  return report::make_probe_report(report::print_latency_summary, report::write_latency_csv,
                                   report::latency_html_section);
}

}  // namespace gd
