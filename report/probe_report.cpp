#include "probe_report.hpp"

namespace gd::report {

void ProbeReports::add(const std::string& probe, std::unique_ptr<ProbeReport> r) {
  reports_[probe] = std::move(r);
}

const ProbeReport* ProbeReports::find(const std::string& probe) const {
  auto it = reports_.find(probe);
  return it == reports_.end() ? nullptr : it->second.get();
}

namespace {

class FunctionReport final : public ProbeReport {
 public:
  using Summary = std::function<void(std::ostream&, const RunResult&)>;
  using Csv = std::function<std::vector<std::filesystem::path>(const std::filesystem::path&,
                                                               const RunResult&)>;
  using Html = std::function<std::string(const RunResult&, SectionContext&)>;
  FunctionReport(Summary s, Csv c, Html h)
      : summary_(std::move(s)), csv_(std::move(c)), html_(std::move(h)) {}
  void print_summary(std::ostream& os, const RunResult& r) const override { summary_(os, r); }
  std::vector<std::filesystem::path> write_csv(const std::filesystem::path& dir,
                                               const RunResult& r) const override {
    return csv_(dir, r);
  }
  std::string html_section(const RunResult& r, SectionContext& ctx) const override {
    return html_(r, ctx);
  }

 private:
  Summary summary_;
  Csv csv_;
  Html html_;
};

}  // namespace

std::unique_ptr<ProbeReport> make_probe_report(FunctionReport::Summary summary,
                                               FunctionReport::Csv csv, FunctionReport::Html html) {
  return std::make_unique<FunctionReport>(std::move(summary), std::move(csv), std::move(html));
}

ProbeReports& probe_reports() {
  static ProbeReports reports;
  return reports;
}

}  // namespace gd::report
