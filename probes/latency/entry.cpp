// The latency probe as a registry entry: its options, its headline figures and their ids (its
// report pieces are report.cpp's). The measurement itself is probes/latency/run.cpp.
#include <algorithm>
#include <ostream>

#include "gpudissect/options.hpp"
#include "gpudissect/result.hpp"
#include "gpudissect/sweep.hpp"
#include "gpudissect/units.hpp"
#include "latency/latency.hpp"  // path_order
#include "latency/run.hpp"
#include "registry.hpp"

namespace gd {

namespace {

const char* kName = "latency";

// "L2 near" -> "L2_near", "device memory" -> "device_memory": ids keep the level's name.
std::string level_id(const std::string& level) {
  std::string s;
  for (char ch : level) s += (ch == ' ' || ch == '/' || ch == '.') ? '_' : ch;
  return s;
}

class LatencyProbe final : public TypedProbe<LatencyOptions, LatencyProbeResult> {
 public:
  std::string name() const override { return kName; }
  std::string description() const override {
    return "pointer-chase latency against footprint on every memory path: cache levels with "
           "capacity, latency and confidence; TLB sweep";
  }
  std::vector<OptionSpec> options() const override {
    return {
        {"paths", "",
         "memory paths, comma separated (default: all the device has; same as --path)"},
        {"min_footprint", "1K", "smallest footprint (--min-footprint)"},
        {"max_footprint", "",
         "largest footprint (default: 4x the largest reported cache, at "
         "least 256M; --max-footprint)"},
        {"stride", "", "bytes between chased lines (default 128; 64 for constant; --stride)"},
        {"points_per_doubling", "4", "footprints per factor of two before refinement"},
        {"secondary_points_per_doubling", "1",
         "the same inside the global path's plateaus, for the paths after it (l2, readonly, "
         "texture, image) on a GPU; all points near its edges"},
        {"repeats", "5", "timed repeats per point (--repeats)"},
        {"hops", "8192", "dependent loads per timed repeat (--hops)"},
        {"page", "",
         "chains visit every line of a group of pages before the next group (bytes; "
         "default 64K on CPU devices, to keep page walks out of the cache levels, 0 on "
         "GPUs; 0: fully random)"},
        {"quick", "0", "a first look: global path only, fewer points and repeats, no TLB sweep"},
        {"budget", "15", "seconds per path's sweep; larger footprints are skipped past it"},
        {"tlb", "", "run the TLB sweep: 1/0 (default: on CUDA and CPU devices; --tlb / --no-tlb)"},
        {"tlb_max_footprint", "",
         "largest TLB-sweep footprint, at most the free memory less 8G (default 160G, 64M "
         "on CPU devices; --tlb-max-footprint)"},
    };
  }

 protected:
  LatencyOptions parse(const OptionValues& kv) const override {
    LatencyOptions o;
    for (const auto& [k, v] : kv) {
      if (k == "paths") {
        for (const std::string& name : options::list(v)) {
          auto p = parse_mem_path(name);
          if (!p) {
            std::string valid;
            for (MemPath m : all_mem_paths()) valid += (valid.empty() ? "" : ", ") + to_string(m);
            throw std::invalid_argument("unknown path '" + name + "'; valid paths: " + valid);
          }
          if (std::find(o.paths.begin(), o.paths.end(), *p) != o.paths.end())
            throw std::invalid_argument("path '" + name + "' is given twice");
          o.paths.push_back(*p);
        }
      } else if (k == "min_footprint") {
        o.min_footprint = options::bytes(kName, k, v);
      } else if (k == "max_footprint") {
        o.max_footprint = options::bytes(kName, k, v);
      } else if (k == "stride") {
        o.stride = options::bytes(kName, k, v);
        if (*o.stride == 0 || *o.stride % 8 != 0)
          throw std::invalid_argument("--stride must be a multiple of 8 bytes");
      } else if (k == "points_per_doubling") {
        o.points_per_doubling = options::integer(kName, k, v, 1, 32);
      } else if (k == "secondary_points_per_doubling") {
        o.secondary_points_per_doubling = options::integer(kName, k, v, 1, 32);
      } else if (k == "repeats") {
        o.budget.repeats = options::integer(kName, k, v, 1, 100);
      } else if (k == "hops") {
        o.budget.hops_per_repeat = options::integer(kName, k, v, 16, 1 << 26);
      } else if (k == "page") {
        o.page_bytes = v == "0" ? 0 : options::bytes(kName, k, v);
      } else if (k == "tlb") {
        o.tlb = options::flag(kName, k, v);
      } else if (k == "quick") {
        o.quick = options::flag(kName, k, v);
      } else if (k == "budget") {
        o.path_budget_seconds = options::integer(kName, k, v, 1, 1000000);
      } else if (k == "tlb_max_footprint") {
        o.tlb_max_footprint = options::bytes(kName, k, v);
      } else {
        options::unknown_key(kName, k, options());
      }
    }
    if (o.quick) {
      if (!kv.count("paths")) o.paths = {MemPath::global};
      // As many points per doubling as the full run (with 2, or even 3, an H200's far L2
      // half, 27-59 MiB, gets too few points to be a level and merges into one "L2"), but
      // the sweep stops at twice the largest cache (64 MiB at least) instead of four times:
      // the largest chases are the expensive ones, and two doublings past the L2 still give
      // device memory a plateau.
      if (!kv.count("max_footprint")) {
        o.default_floor = 64ull << 20;
        o.cache_multiple = 2;
      }
      if (!kv.count("repeats")) o.budget.repeats = 3;
      if (!kv.count("tlb")) o.tlb = false;
      if (!kv.count("budget")) o.path_budget_seconds = 4;
      o.max_refine_rounds = 2;
    }
    o.secondary_points_per_doubling =
        std::min(o.secondary_points_per_doubling, o.points_per_doubling);
    if (o.max_footprint && *o.max_footprint < o.min_footprint)
      throw std::invalid_argument("--max-footprint is below --min-footprint");
    return o;
  }

  void run_typed(Device& dev, const LatencyOptions& opt, const RunResult&, Progress& progress,
                 const std::atomic<bool>& stop, LatencyProbeResult& out) const override {
    run_latency(dev, opt, progress, stop, out);
  }

 public:
  // latency.<path>.<level> in ns (every backend has them), .cycles where the device has a
  // clock, .capacity in bytes where the level ends within the sweep; and
  // latency.<path>.dram_minus_last_cache.
  std::vector<Figure> figures(const RunResult& r) const override {
    std::vector<Figure> out;
    const LatencyProbeResult* p = r.get<LatencyProbeResult>();
    if (!p) return out;
    for (const std::string& path : path_order(*p)) {
      const CurveResult& c = p->paths.at(path);
      if (!c.status.ok()) continue;
      for (const Level& l : c.levels) {
        const std::string id = "latency." + path + "." + level_id(l.name);
        // "constant constant L1" reads badly: the level name alone where it names the path.
        const std::string label = l.name.rfind(path, 0) == 0 ? l.name : path + " " + l.name;
        Figure base;
        base.instruction = c.timed_instruction.value_or("");
        base.clock_mhz = p->clock_mhz_measured;
        base.where = l.capacity_bytes ? "plateau up to " + format_bytes(double(*l.capacity_bytes))
                                      : "last plateau of the sweep";
        base.higher_is_better = false;
        if (l.latency_ns) {
          Figure f = base;
          f.id = id;
          f.label = label + " latency";
          f.unit = "ns";
          f.value = single_value(*l.latency_ns);
          out.push_back(f);
        }
        if (l.latency_cycles) {
          Figure f = base;
          f.id = id + ".cycles";
          f.label = label + " latency";
          f.unit = "cycles";
          f.value = single_value(*l.latency_cycles);
          out.push_back(f);
        }
        if (l.capacity_bytes) {
          Figure f = base;
          f.id = id + ".capacity";
          f.label = label + " capacity";
          f.unit = "bytes";
          f.value = single_value(double(*l.capacity_bytes));
          f.higher_is_better = true;
          // The edge lies between the last point on the plateau and the first past it. Refined,
          // that bracket is narrower than the grid's step, but a cache's edge is soft (address
          // hashing and replacement make the last points partly miss), so two runs put it a
          // grid step apart (the far L2 of one H200: 58.7 MiB in a full run, 53.8 with
          // --quick): never less than one step.
          if (l.capacity_lo_bytes && l.capacity_hi_bytes && *l.capacity_lo_bytes > 0)
            f.resolution = std::max(double(*l.capacity_hi_bytes) / double(*l.capacity_lo_bytes) - 1,
                                    kCapacityResolution - 1);
          out.push_back(f);
        }
      }
      if (c.dram_minus_last_cache_ns) {
        Figure f;
        f.id = "latency." + path + ".dram_minus_last_cache";
        f.label = path + " device memory minus last cache";
        f.unit = "ns";
        f.value = single_value(*c.dram_minus_last_cache_ns);
        f.higher_is_better = false;
        f.clock_mhz = p->clock_mhz_measured;
        out.push_back(f);
      }
    }
    return out;
  }
  std::vector<std::string> figure_ids() const override {
    return {"latency.{path}.{level}", "latency.{path}.{level}.cycles",
            "latency.{path}.{level}.capacity", "latency.{path}.dram_minus_last_cache"};
  }
};

}  // namespace

std::unique_ptr<Probe> make_latency_probe() { return std::make_unique<LatencyProbe>(); }

}  // namespace gd
