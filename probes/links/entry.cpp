// The links probe as a registry entry: its options, headline figures and their ids.
// The measurement is probes/links/run.cpp, the kernels probes/links/cuda.cu.
#include <ostream>

#include "gpudissect/result.hpp"
#include "links/run.hpp"
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
  // links_figures (model.cpp): the worst pair per P2P curve and latency, host links per
  // direction, each NCCL collective at its largest size.
  std::vector<std::string> figure_ids() const override {
    return {"links.p2p.{engine}.{dir}",          "links.p2p.latency.{method}",
            "links.p2p.latency.{method}.cycles", "links.p2p.latency.chase.best_sm",
            "links.p2p.latency.chase.mean_sm",   "links.host.{dir}.all",
            "links.host.{dir}.single",           "links.nccl.{collective}.busbw",
            "links.nccl.{collective}.algbw",     "links.nccl.{collective}.latency"};
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
