// Comparing GPUs: the inputs (results and references), the curves drawn from them for the
// overlaid charts.
#include <algorithm>
#include <map>

#include "bandwidth/bandwidth.hpp"
#include "compute/compute.hpp"
#include "gpudissect/compare.hpp"
#include "gpudissect/compare_internal.hpp"

namespace gd {

using namespace compare_detail;

std::vector<CurveSeries> latency_series(const std::vector<CompareInput>& inputs,
                                        const std::string& path, bool cycles) {
  std::vector<CurveSeries> out;
  int index = -1;
  for (const CompareInput& in : inputs) {
    ++index;
    if (!in.run) continue;
    const auto* lat = in.run->get<LatencyProbeResult>();
    if (!lat) continue;
    auto it = lat->paths.find(path);
    if (it == lat->paths.end()) continue;
    CurveSeries s;
    s.input = in.label;
    s.input_index = index;
    for (const LatencyPoint& p : it->second.points) {
      const auto& v = cycles ? p.cycles : p.ns;
      if (!p.status.ok() || !v || p.footprint_bytes == 0) continue;
      s.points.emplace_back(static_cast<double>(p.footprint_bytes), v->median);
    }
    std::sort(s.points.begin(), s.points.end());
    if (!s.points.empty()) out.push_back(std::move(s));
  }
  return out;
}

std::vector<LevelMark> latency_marks(const std::vector<CompareInput>& inputs,
                                     const std::string& path, bool cycles) {
  std::vector<LevelMark> out;
  const std::string prefix = "latency." + path + ".";
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    const CompareInput& in = inputs[i];
    if (in.run) continue;  // results have their curves
    for (const Figure& f : in.figures) {
      if (!starts_with(f.id, prefix) || !f.value || !f.status.ok()) continue;
      std::string level = f.id.substr(prefix.size());
      if (cycles) {
        if (!ends_with(level, ".cycles") || f.unit != "cycles") continue;
        level.resize(level.size() - 7);
      } else if (f.unit != "ns" && f.unit != "us") {
        continue;
      }
      if (level.find('.') != std::string::npos || level == "dram_minus_last_cache") continue;
      LevelMark m;
      m.input = in.label;
      m.input_index = static_cast<int>(i);
      m.level = level;
      m.value = cycles ? f.value->median : *convert_unit(f.value->median, f.unit, "ns");
      if (auto q = in.qualifiers.find(f.id); q != in.qualifiers.end()) m.qualifier = q->second;
      out.push_back(std::move(m));
    }
  }
  return out;
}

std::vector<LevelMark> bandwidth_marks(const std::vector<CompareInput>& inputs,
                                       const std::string& op, bool per_clk) {
  std::vector<LevelMark> out;
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    const CompareInput& in = inputs[i];
    if (in.run) continue;
    for (const Figure& f : in.figures) {
      if (!f.status.ok()) continue;
      std::string level;
      for (const char* l : {"l1", "l2", "dram"})
        if (f.id == std::string("bandwidth.") + l + "." + op) level = l;
      if (level.empty()) continue;
      std::optional<double> v;
      bool derived = false;
      if (per_clk) {
        if (f.per_sm_per_clk && f.per_sm_per_clk_unit == "B/clk/SM") {
          v = f.per_sm_per_clk;
        } else if (f.value) {
          v = per_sm_per_clock(f.value->median, f.unit, in.units,
                               f.clock_mhz ? f.clock_mhz : in.clock_mhz);
          derived = true;
        }
      } else if (f.value) {
        v = convert_unit(f.value->median, f.unit, "GB/s");
      }
      if (!v) continue;
      LevelMark m;
      m.input = in.label;
      m.input_index = static_cast<int>(i);
      m.level = level == "dram" ? "device memory" : level == "l1" ? "L1" : "L2";
      m.value = *v;
      m.derived = derived;
      // The qualifier is the value's: a per-clock figure stated beside it is exact.
      const bool qualified = !per_clk || derived || !f.value;
      if (auto q = in.qualifiers.find(f.id); q != in.qualifiers.end() && qualified)
        m.qualifier = q->second;
      out.push_back(std::move(m));
    }
  }
  return out;
}

std::vector<CurveSeries> bandwidth_series(const std::vector<CompareInput>& inputs,
                                          const std::string& op, bool per_clk) {
  std::vector<CurveSeries> out;
  int index = -1;
  for (const CompareInput& in : inputs) {
    ++index;
    if (!in.run) continue;
    const auto* bw = in.run->get<BandwidthProbeResult>();
    if (!bw) continue;
    auto it = bw->footprint.find(op);
    if (it == bw->footprint.end()) continue;
    CurveSeries s;
    s.input = in.label;
    s.input_index = index;
    for (const BandwidthPoint& p : it->second.points) {
      const auto& v = per_clk ? p.bytes_per_clk_sm : p.gbps;
      if (!p.status.ok() || !v || p.x <= 0) continue;
      s.points.emplace_back(p.x, v->median);
    }
    std::sort(s.points.begin(), s.points.end());
    if (!s.points.empty()) out.push_back(std::move(s));
  }
  return out;
}

std::vector<std::string> sweep_ops(const std::vector<CompareInput>& inputs) {
  std::vector<std::string> ops;
  for (const CompareInput& in : inputs) {
    if (!in.run) continue;
    const auto* c = in.run->get<ComputeProbeResult>();
    if (!c) continue;
    for (const ComputeFigure& f : c->sweep)
      if (f.status.ok() && f.ops_per_clk_sm && std::find(ops.begin(), ops.end(), f.op) == ops.end())
        ops.push_back(f.op);
  }
  return ops;
}

std::vector<CurveSeries> sweep_series(const std::vector<CompareInput>& inputs,
                                      const std::string& op) {
  std::vector<CurveSeries> out;
  int index = -1;
  for (const CompareInput& in : inputs) {
    ++index;
    if (!in.run) continue;
    const auto* c = in.run->get<ComputeProbeResult>();
    if (!c) continue;
    std::map<int, CurveSeries> by_ilp;
    for (const ComputeFigure& f : c->sweep) {
      if (f.op != op || !f.status.ok() || !f.ops_per_clk_sm || f.warps_per_sm <= 0 ||
          !f.mix.empty())
        continue;
      CurveSeries& s = by_ilp[f.ilp];
      s.input = in.label + ", ILP " + std::to_string(f.ilp);
      s.points.emplace_back(static_cast<double>(f.warps_per_sm), f.ops_per_clk_sm->median);
    }
    int variant = 0;
    for (auto& [ilp, s] : by_ilp) {
      std::sort(s.points.begin(), s.points.end());
      s.input_index = index;
      s.variant = variant++;
      out.push_back(std::move(s));
    }
  }
  return out;
}

}  // namespace gd
