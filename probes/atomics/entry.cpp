// The atomics probe as a registry entry: its options, headline figures and their ids.
// The measurement is probes/atomics/run.cpp, the kernels cuda.cu, opencl.cpp + atomics.cl, vulkan.cpp + *.comp beside it.
#include <ostream>

#include "atomics/run.hpp"
#include "gpudissect/result.hpp"
#include "registry.hpp"

namespace gd {

namespace {

class AtomicsProbe final : public TypedProbe<AtomicsOptions, AtomicsProbeResult> {
 public:
  std::string name() const override { return AtomicsProbeResult::kProbe; }
  std::string description() const override {
    return "values handed back and forth (shared, global, SM-to-SM matrix, GPU to "
           "host) and atomic throughput by space, type, contention and scope";
  }
  std::vector<OptionSpec> options() const override { return atomics_option_specs(); }
  std::vector<Figure> figures(const RunResult& r) const override {
    const AtomicsProbeResult* a = r.get<AtomicsProbeResult>();
    return a ? atomics_figures(*a, r.device) : std::vector<Figure>{};
  }
  std::vector<std::string> figure_ids() const override { return atomics_figure_ids(); }

 protected:
  AtomicsOptions parse(const OptionValues& kv) const override { return parse_atomics_options(kv); }
  void run_typed(Device& dev, const AtomicsOptions& opt, const RunResult&, Progress& progress,
                 const std::atomic<bool>& stop, AtomicsProbeResult& out) const override {
    run_atomics(dev, opt, progress, stop, out);
  }
};

}  // namespace

std::unique_ptr<Probe> make_atomics_probe() { return std::make_unique<AtomicsProbe>(); }

}  // namespace gd
