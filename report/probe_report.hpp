// A probe's report half: its terminal summary, CSV files and HTML section. The probe's
// measurement half (gd::Probe, core) knows nothing of reports; each probe folder's
// report.cpp implements this one, and the composition root (probes/registry.cpp) registers
// both halves under the probe's name in one line. The writers (terminal.cpp, csv.cpp,
// html.cpp) walk the ProbeRegistry's order and look each probe's half up here by name.
#pragma once

#include <filesystem>
#include <functional>
#include <iosfwd>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "gpudissect/result.hpp"

namespace gd::report {

struct SectionContext;  // sections.hpp

class ProbeReport {
 public:
  virtual ~ProbeReport() = default;
  virtual void print_summary(std::ostream& os, const RunResult& r) const = 0;
  virtual std::vector<std::filesystem::path> write_csv(const std::filesystem::path& dir,
                                                       const RunResult& r) const = 0;
  virtual std::string html_section(const RunResult& r, SectionContext& ctx) const = 0;
};

// A ProbeReport from its three functions: the usual shape of a probe folder's report.cpp.
std::unique_ptr<ProbeReport> make_probe_report(
    std::function<void(std::ostream&, const RunResult&)> summary,
    std::function<std::vector<std::filesystem::path>(const std::filesystem::path&,
                                                     const RunResult&)>
        csv,
    std::function<std::string(const RunResult&, SectionContext&)> html);

// The report halves by probe name.
class ProbeReports {
 public:
  void add(const std::string& probe, std::unique_ptr<ProbeReport> r);  // replaces an earlier one
  const ProbeReport* find(const std::string& probe) const;             // nullptr if none

 private:
  std::map<std::string, std::unique_ptr<ProbeReport>> reports_;
};

// The ones the writers use; probe_registry() (the composition root) fills it before it
// returns the registry, a test adds its own probe's.
ProbeReports& probe_reports();

}  // namespace gd::report
