// The memory probe as a registry entry: its options, headline figures and their ids.
// The measurement is probes/memory/run.cpp, the kernels probes/memory/cuda.cu.
#include <ostream>

#include "gpudissect/result.hpp"
#include "memory/run.hpp"
#include "registry.hpp"

namespace gd {

namespace {

class MemoryProbe final : public TypedProbe<MemoryOptions, MemoryProbeResult> {
 public:
  std::string name() const override { return MemoryProbeResult::kProbe; }
  std::string description() const override {
    return "L1 under each shared-memory carve-out, per-SM or per-partition caches, L1/L2 fetch "
           "granularity, constant memory past its first level, the TLB behind 2 MiB chunks";
  }
  std::vector<OptionSpec> options() const override { return memory_option_specs(); }
  std::vector<Figure> figures(const RunResult& r) const override {
    const MemoryProbeResult* m = r.get<MemoryProbeResult>();
    return m ? memory_figures(*m, r.device) : std::vector<Figure>{};
  }
  std::vector<std::string> figure_ids() const override { return memory_figure_ids(); }

 protected:
  MemoryOptions parse(const OptionValues& kv) const override {
    return parse_memory_options(kv, options());
  }
  void run_typed(Device& dev, const MemoryOptions& opt, const RunResult&, Progress& progress,
                 const std::atomic<bool>& stop, MemoryProbeResult& out) const override {
    run_memory(dev, opt, progress, stop, out);
  }
};

}  // namespace

std::unique_ptr<Probe> make_memory_probe() { return std::make_unique<MemoryProbe>(); }

}  // namespace gd
