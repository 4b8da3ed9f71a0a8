// What every backend does with the kernel sets of the probes: a table from probe name to the
// factory of its set, and the sets its device makes on first use from that table.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <utility>

#include "gpudissect/device.hpp"

namespace gd {

namespace detail {
// A backend's make_<probe>_kernels returns its own kernel type; a table entry returns the
// KernelSet, and is named by that type's kProbe.
template <auto Make>
struct KernelFactoryOf;
template <class Kernels, class... Args, std::unique_ptr<Kernels> (*Make)(Args...)>
struct KernelFactoryOf<Make> {
  static std::unique_ptr<KernelSet> make(Args... args) { return Make(args...); }
  static std::string probe() { return Kernels::kProbe; }
};
}  // namespace detail

// The table of a backend: one make_<probe>_kernels per probe that has kernels there. Every
// factory takes the same arguments (the backend's handles and the DeviceInfo).
template <class Factory, auto... Makes>
std::map<std::string, Factory> kernel_table() {
  return {{detail::KernelFactoryOf<Makes>::probe(), &detail::KernelFactoryOf<Makes>::make}...};
}

// The kernel set of `probe` in `sets`, made from `table` with `args` on first use; null where
// the table has no entry for it (the probe has no kernels on this backend).
template <class Factory, class... Args>
KernelSet* kernel_set_of(std::map<std::string, std::unique_ptr<KernelSet>>& sets,
                         const std::map<std::string, Factory>& table, const std::string& probe,
                         Args&&... args) {
  auto have = sets.find(probe);
  if (have != sets.end()) return have->second.get();
  auto f = table.find(probe);
  if (f == table.end()) return nullptr;
  return (sets[probe] = f->second(std::forward<Args>(args)...)).get();
}

}  // namespace gd
