// The bandwidth probe as a registry entry: its options, its headline figures, and its
// report pieces. The measurement itself is probes/bandwidth/run.cpp.
#include <ostream>

#include "bandwidth/run.hpp"
#include "gpudissect/result.hpp"
#include "gpudissect/units.hpp"
#include "registry.hpp"
#include "sections.hpp"

namespace gd {

namespace {

// The probe's figure names -> stable ids. A name not listed gets "bandwidth.<slug>".
std::string figure_id(const std::string& name) {
  static const std::map<std::string, std::string> ids = {
      {"L1 read", "bandwidth.l1.read"},
      {"L2 read", "bandwidth.l2.read"},
      {"L2 read, plateau median", "bandwidth.l2.read_plateau"},
      {"L2 read, best footprint", "bandwidth.l2.read_best"},
      {"device memory read", "bandwidth.dram.read"},
      {"device memory write", "bandwidth.dram.write"},
      {"device memory copy", "bandwidth.dram.copy"},
      {"shared 128-bit", "bandwidth.shared.read_128"},
      {"shared 64-bit", "bandwidth.shared.read_64"},
      {"shared 32-bit", "bandwidth.shared.read_32"},
      {"local 128-bit", "bandwidth.shared.read_128"},
      {"constant broadcast", "bandwidth.constant.broadcast"},
      {"host->device pinned", "bandwidth.host.h2d_pinned"},
      {"device->host pinned", "bandwidth.host.d2h_pinned"},
      {"both ways pinned", "bandwidth.host.both_pinned"},
      {"host->device pageable", "bandwidth.host.h2d_pageable"},
      {"device->host pageable", "bandwidth.host.d2h_pageable"},
  };
  auto it = ids.find(name);
  if (it != ids.end()) return it->second;
  std::string s = "bandwidth.";
  for (char ch : slugify(name)) s += ch == '-' ? '_' : ch;
  return s;
}

class BandwidthProbe final : public TypedProbe<BandwidthOptions, BandwidthProbeResult> {
 public:
  std::string name() const override { return "bandwidth"; }
  std::string description() const override {
    return "read/write/copy bandwidth against footprint (L1, L2, device memory), SM scaling, "
           "shared memory widths and strides, constant broadcast, host link";
  }
  std::vector<OptionSpec> options() const override {
    return {
        {"quick", "0", "fewer points and smaller sizes (a first look)"},
        {"points_per_doubling", "2", "footprints per factor of two"},
        {"repeats", "5", "timed launches per point (3 with quick)"},
        {"min_footprint", "", "smallest footprint (default: one chunk)"},
        {"max_footprint", "", "largest footprint (default: max(8x L2, 512M))"},
        {"large", "4G", "the one large point per buffer (0: none; none with quick)"},
        {"host_max", "1G", "largest host-link transfer"},
        {"budget", "75", "seconds for the probe (20 with quick): footprint sweeps 60 %, shared "
                         "15 %, host 25 %; larger points are skipped, with the estimate"},
        {"parts", "footprint,scaling,shared,constant,host", "parts to run, comma separated"},
    };
  }

 protected:
  BandwidthOptions parse(const OptionValues& kv) const override {
    return parse_bandwidth_options(kv);
  }
  void run_typed(Device& dev, const BandwidthOptions& opt, const RunResult& earlier,
                 Progress& progress, const std::atomic<bool>& stop,
                 BandwidthProbeResult& out) const override {
    BandwidthOptions o = opt;
    o.latency = earlier.get<LatencyProbeResult>();  // plateaus named after its levels
    run_bandwidth(dev, o, progress, stop, out);
  }

 public:
  std::vector<Figure> figures(const RunResult& r) const override {
    std::vector<Figure> out;
    const BandwidthProbeResult* p = r.get<BandwidthProbeResult>();
    if (!p) return out;
    for (const BandwidthFigure& b : p->figures) {
      Figure f;
      f.id = figure_id(b.name);
      f.label = b.name;
      f.value = b.gbps;
      f.unit = "GB/s";
      if (b.bytes_per_clk_sm) {
        f.per_sm_per_clk = b.bytes_per_clk_sm->median;
        f.per_sm_per_clk_unit = "B/clk/SM";
      }
      f.instruction = b.timed_instruction.value_or("");
      f.where = b.where;
      f.clock_mhz = b.clock_mhz;
      out.push_back(std::move(f));
    }
    return out;
  }
  void print_summary(std::ostream& os, const RunResult& r) const override {
    report::print_bandwidth_summary(os, r);
  }
  std::vector<std::filesystem::path> write_csv(const std::filesystem::path& dir,
                                               const RunResult& r) const override {
    return report::write_bandwidth_csv(dir, r);
  }
  std::string html_section(const RunResult& r, report::SectionContext& ctx) const override {
    return report::bandwidth_html_section(r, ctx);
  }
};

}  // namespace

std::unique_ptr<Probe> make_bandwidth_probe() { return std::make_unique<BandwidthProbe>(); }

}  // namespace gd
