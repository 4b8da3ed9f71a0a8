// The memory probe's headline figures (GPU-free, part of the core library) and the ids
// figure_ids() declares for them.
#include <string>

#include "gpudissect/units.hpp"
#include "memory/memory.hpp"

namespace gd {

namespace {

std::string carveout_id(const CarveoutResult& c) { return c.point.key(); }

Figure make(const std::string& id, const std::string& label, double v, const std::string& unit,
            const std::string& instruction, const std::string& where, std::optional<double> mhz,
            bool higher_is_better) {
  Figure f;
  f.id = id;
  f.label = label;
  f.value = single_value(v);
  f.unit = unit;
  f.instruction = instruction;
  f.where = where;
  f.clock_mhz = mhz;
  f.higher_is_better = higher_is_better;
  return f;
}

// Why a carve-out point's L1 is not the split it asked for, or "" when it is (or nothing
// says otherwise): CarveoutResult::agreement "differs: the L1 implies ...".
std::string split_not_honoured(const CarveoutResult& c) {
  const std::string& a = c.agreement;
  const std::size_t l1 = a.find("the L1 implies ");
  if (a.rfind("differs:", 0) != 0 || l1 == std::string::npos) return "";
  std::string detail = a.substr(l1);
  while (!detail.empty() && (detail.back() == ';' || detail.back() == ' ')) detail.pop_back();
  return "the driver did not apply the split asked for (" + c.point.label() + "): " + detail;
}

// The relative step between a capacity and the first footprint past it (Figure::resolution).
std::optional<double> edge_step(const CapacityEstimate& c) {
  if (!c.capacity_bytes || !c.next_bytes || *c.capacity_bytes == 0) return std::nullopt;
  return double(*c.next_bytes) / double(*c.capacity_bytes) - 1;
}

// Where the constant chase ran: CUDA's own bank and then the kernel parameters; elsewhere one
// constant buffer of the API's largest size.
std::string constant_where(const MemoryProbeResult& m, const DeviceInfo& device) {
  if (device.backend == "cuda" || !m.constant_bank_bytes)
    return "64 KiB __constant__ bank, then 31 KiB of kernel parameters";
  return "one constant buffer of up to " + format_bytes(double(*m.constant_bank_bytes)) +
         " (the API's limit)";
}

}  // namespace

// One short block per figure family (carve-outs, partitions, granularity, constant, TLB).
// shape: read top to bottom; a split would only pass the same vector around.
std::vector<Figure> memory_figures(const MemoryProbeResult& m, const DeviceInfo& device) {
  std::vector<Figure> f;
  for (const auto& c : m.carveouts) {
    const std::string id = "memory.carveout." + carveout_id(c);
    if (c.point.key() == "default" && c.curve.capacity.capacity_bytes) {
      const auto fits =
          splits_for_l1(device.compute_capability, *c.curve.capacity.capacity_bytes,
                        c.curve.capacity.next_bytes.value_or(*c.curve.capacity.capacity_bytes));
      if (fits.size() == 1)
        f.push_back(make(id + ".shared_bytes", "shared-memory split the driver chose by default",
                         fits.front() * 1024.0, "bytes", c.curve.instruction,
                         "read back from the L1 found (unified L1/shared less the L1)",
                         c.curve.clock_mhz, true));
    }
    std::string where = c.point.label();
    if (c.api_shared_bytes)
      where += "; occupancy API: " + format_bytes(*c.api_shared_bytes) + " shared";
    if (c.curve.capacity.capacity_bytes) {
      f.push_back(make(id + ".l1_capacity", "L1 capacity, " + c.point.label(),
                       static_cast<double>(*c.curve.capacity.capacity_bytes), "bytes",
                       c.curve.instruction, where, c.curve.clock_mhz, true));
      f.back().resolution = edge_step(c.curve.capacity);
    }
    if (c.curve.capacity.plateau_cycles)
      f.push_back(make(id + ".l1_latency", "L1 latency, " + c.point.label(),
                       *c.curve.capacity.plateau_cycles, c.curve.unit, c.curve.instruction, where,
                       c.curve.clock_mhz, false));
    // A split the driver did not apply (the L1 found implies another one): the row measured
    // some other split's L1, so it is not a figure of the split it names.
    if (const std::string why = split_not_honoured(c); !why.empty())
      for (Figure& x : f)
        if (x.id == id + ".l1_capacity" || x.id == id + ".l1_latency") {
          x.status = {StatusCode::unsupported, why};
          x.value.reset();
          x.resolution.reset();
        }
  }
  for (const auto& p : m.partitions) {
    for (const auto& c : p.by_warps)
      if (c.capacity.capacity_bytes) {
        f.push_back(make(
            "memory.partition." + p.path + ".capacity_" + std::to_string(c.warps) + "warps",
            p.path + " cache capacity per warp, " + std::to_string(c.warps) + " warps of one block",
            static_cast<double>(*c.capacity.capacity_bytes), "bytes", c.instruction,
            std::to_string(c.warps) + " disjoint chains, one per warp", c.clock_mhz, true));
        f.back().resolution = edge_step(c.capacity);
      }
  }
  for (const auto& g : m.granularity)
    if (g.estimate.bytes) {
      f.push_back(make("memory." + g.level + ".sector_bytes",
                       (g.level == "l1" ? std::string("L1") : std::string("L2")) +
                           " fetch granularity (bytes per miss)",
                       static_cast<double>(*g.estimate.bytes), "bytes", g.curve.instruction,
                       "sequential walk, stride sweep", g.curve.clock_mhz, true));
      // The L1's was marked unstable while its walk's misses went to L2 or device memory by
      // where the chain sat (256, 32 and 64 B in three H200 runs); with the chain read through
      // L2 first and 256 KiB per repeat at every stride, five H200 runs over two leases read
      // 32 B (2026-11-23, results/NOTES-memory.md).
    }
  if (m.l1_line.estimate.bytes && !m.l1_line.by_stride.empty())
    f.push_back(make("memory.l1.line_bytes", "L1 line (tag) size",
                     static_cast<double>(*m.l1_line.estimate.bytes), "bytes",
                     m.l1_line.by_stride.front().instruction,
                     "capacity seen at strides of 32 to 512 bytes",
                     m.l1_line.by_stride.front().clock_mhz, true));
  if (m.l2_line.estimate.bytes && !m.l2_line.by_stride.empty())
    f.push_back(make("memory.l2.line_bytes", "L2 line (tag) size",
                     static_cast<double>(*m.l2_line.estimate.bytes), "bytes",
                     m.l2_line.by_stride.front().instruction,
                     "capacity seen through L2 only at strides of 64 to 256 bytes, " +
                         std::to_string(m.l2_line.by_stride.front().warps) +
                         " warps of one block on disjoint chains",
                     m.l2_line.by_stride.front().clock_mhz, true));
  if (m.constant) {
    const MemCurve& c = *m.constant;
    const std::string bank = constant_where(m, device);
    if (c.capacity.capacity_bytes) {
      f.push_back(make("memory.constant.L1.capacity", "constant L1 capacity",
                       static_cast<double>(*c.capacity.capacity_bytes), "bytes", c.instruction,
                       bank, c.clock_mhz, true));
      f.back().resolution = edge_step(c.capacity);
    }
    const CapacityEstimate n = next_level(c.points, c.capacity);
    if (n.capacity_bytes) {
      f.push_back(make("memory.constant.L1_5.capacity", "constant L1.5 capacity",
                       static_cast<double>(*n.capacity_bytes), "bytes", c.instruction, bank,
                       c.clock_mhz, true));
      f.back().resolution = edge_step(n);
    } else if (n.plateau_cycles && !c.points.empty())
      f.push_back(make("memory.constant.L1_5.capacity_min",
                       "constant L1.5 capacity, lower bound (no step up to the bank's end)",
                       static_cast<double>(c.points.back().footprint_bytes), "bytes", c.instruction,
                       bank, c.clock_mhz, true));
    if (n.plateau_cycles)
      f.push_back(make("memory.constant.L1_5.latency", "constant L1.5 latency", *n.plateau_cycles,
                       c.unit, c.instruction, bank, c.clock_mhz, false));
  }
  // TLB levels behind chunk-mapped memory: the reach of each (where it ends) and the cost of
  // missing it (the next level's step). The last level is past every TLB (page walks).
  for (const auto& t : m.tlb) {
    if (t.mapping != "chunks" || !t.status.ok()) continue;
    for (std::size_t i = 0; i + 1 < t.levels.size(); ++i) {
      const TlbLevel& l = t.levels[i];
      const std::string id = "memory.tlb.L" + std::to_string(i + 1);
      const std::string where = "one line per 2 MiB chunk, chunk-mapped memory, L2-resident";
      if (l.reach_lo_bytes) {
        f.push_back(make(id + ".reach", "L" + std::to_string(i + 1) + " TLB reach (2 MiB pages)",
                         double(*l.reach_lo_bytes), "bytes", t.curve.instruction, where,
                         t.curve.clock_mhz, true));
        if (l.reach_hi_bytes && *l.reach_lo_bytes > 0)
          f.back().resolution = double(*l.reach_hi_bytes) / double(*l.reach_lo_bytes) - 1;
      }
      // The id says cycles: a curve timed in ns (no cycle counter) gives no miss cost here.
      if (t.levels[i + 1].step_cycles && t.curve.unit == "cycles")
        f.push_back(make(id + ".miss_cycles",
                         "L" + std::to_string(i + 1) + " TLB miss cost (cycles added)",
                         *t.levels[i + 1].step_cycles, t.curve.unit, t.curve.instruction, where,
                         t.curve.clock_mhz, false));
    }
  }
  return f;
}

std::vector<std::string> memory_figure_ids() {
  // {carveout}: the point's key (shared KiB, "default", <p>pct); ".hint" where it was a hint.
  return {"memory.carveout.{carveout}.l1_capacity",
          "memory.carveout.{carveout}.l1_latency",
          "memory.carveout.{carveout}.hint.l1_capacity",
          "memory.carveout.{carveout}.hint.l1_latency",
          "memory.carveout.default.shared_bytes",
          "memory.partition.{path}.capacity_{warps}warps",
          "memory.{cache}.sector_bytes",
          "memory.l1.line_bytes",
          "memory.l2.line_bytes",
          "memory.constant.L1.capacity",
          "memory.constant.L1_5.capacity",
          "memory.constant.L1_5.capacity_min",
          "memory.constant.L1_5.latency",
          "memory.tlb.L{n}.reach",
          "memory.tlb.L{n}.miss_cycles"};
}

}  // namespace gd
