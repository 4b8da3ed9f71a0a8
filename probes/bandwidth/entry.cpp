// The bandwidth probe as a registry entry: its options, its headline figures and their ids (its
// report pieces are report.cpp's). The measurement itself is probes/bandwidth/run.cpp.
#include <algorithm>
#include <ostream>

#include "bandwidth/run.hpp"
#include "gpudissect/result.hpp"
#include "gpudissect/units.hpp"
#include "registry.hpp"

namespace gd {

namespace {

// The probe's figure names -> stable ids: every id it publishes, each declared here. A name
// not listed (such as "read, best footprint (no L1 plateau found)", a finding rather than a
// level) gives no headline figure: its id would carry the name.
const std::map<std::string, std::string>& figure_ids_by_name() {
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
  return ids;
}

// The best point of a jagged curve (L2 reads at footprints the SMs share: 9-18 TB/s from
// point to point on an H200) is one point's luck: between processes it moved by about its
// lead over the curve's next-best point (18105 GB/s, 15 % ahead of the next, then 16397 in
// the next process). That lead, relative, is the figure's resolution, so that a regression
// gate does not read it as a change. None where the figure is not its curve's best point.
std::optional<double> lead_over_next_point(const BandwidthProbeResult& p,
                                           const BandwidthFigure& b) {
  const std::string curve = b.where.substr(0, b.where.find(" at "));
  const auto c = p.footprint.find(curve);
  if (c == p.footprint.end() || b.gbps.median <= 0) return std::nullopt;
  std::vector<double> rates;
  for (const BandwidthPoint& q : c->second.points)
    if (q.status.ok() && q.gbps) rates.push_back(q.gbps->median);
  if (rates.size() < 2) return std::nullopt;
  std::sort(rates.rbegin(), rates.rend());
  if (rates[0] != b.gbps.median) return std::nullopt;
  return (rates[0] - rates[1]) / rates[0];
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
        {"budget", "75",
         "seconds for the probe (20 with quick): footprint sweeps 60 %, shared "
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
  std::vector<std::string> figure_ids() const override {
    std::vector<std::string> out;
    for (const auto& [name, id] : figure_ids_by_name())
      if (std::find(out.begin(), out.end(), id) == out.end()) out.push_back(id);
    return out;
  }
  std::vector<Figure> figures(const RunResult& r) const override {
    std::vector<Figure> out;
    const BandwidthProbeResult* p = r.get<BandwidthProbeResult>();
    if (!p) return out;
    for (const BandwidthFigure& b : p->figures) {
      auto id = figure_ids_by_name().find(b.name);
      if (id == figure_ids_by_name().end()) continue;
      Figure f;
      f.id = id->second;
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
      if (f.id == "bandwidth.l2.read_best") f.resolution = lead_over_next_point(*p, b);
      out.push_back(std::move(f));
    }
    return out;
  }
};

}  // namespace

std::unique_ptr<Probe> make_bandwidth_probe() { return std::make_unique<BandwidthProbe>(); }

}  // namespace gd
