// The links probe as a registry entry: its options, headline figures and report pieces.
// The measurement is probes/links/run.cpp, the kernels probes/links/cuda.cu.
#include <ostream>

#include "gpudissect/result.hpp"
#include "links/run.hpp"
#include "links/report.hpp"
#include "registry.hpp"

namespace gd {

namespace {

class LinksProbe final : public TypedProbe<LinksOptions, LinksProbeResult> {
 public:
  std::string name() const override { return LinksProbeResult::kProbe; }
  std::string description() const override {
    return "every GPU pair (copy engine and SM bandwidth, read/write/both ways, "
           "latency), every GPU to and from the host, NCCL collectives, beside the NVLink/PCIe "
           "limit NVML's topology implies";
  }
  std::vector<OptionSpec> options() const override { return links_option_specs(); }
  std::vector<Figure> figures(const RunResult& r) const override {
    const LinksProbeResult* l = r.get<LinksProbeResult>();
    return l ? links_figures(*l) : std::vector<Figure>{};
  }
  void print_summary(std::ostream& os, const RunResult& r) const override {
    if (const LinksProbeResult* l = r.get<LinksProbeResult>()) report::print_links_summary(os, *l);
  }
  std::vector<std::filesystem::path> write_csv(const std::filesystem::path& dir,
                                               const RunResult& r) const override {
    const LinksProbeResult* l = r.get<LinksProbeResult>();
    return l ? report::write_links_csv(dir, *l) : std::vector<std::filesystem::path>{};
  }
  std::string html_section(const RunResult& r, report::SectionContext& ctx) const override {
    const LinksProbeResult* l = r.get<LinksProbeResult>();
    return l ? report::links_html_section(*l, ctx) : std::string();
  }

 protected:
  LinksOptions parse(const OptionValues& kv) const override { return parse_links_options(kv); }
  void run_typed(Device& dev, const LinksOptions& opt, const RunResult&, Progress& progress,
                 const std::atomic<bool>& stop, LinksProbeResult& out) const override {
    run_links(dev, opt, progress, stop, out);
  }
};

}  // namespace

std::unique_ptr<Probe> make_links_probe() { return std::make_unique<LinksProbe>(); }

}  // namespace gd
