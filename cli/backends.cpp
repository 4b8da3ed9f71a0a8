#include "backends.hpp"

#include <regex>

#ifdef GD_HAVE_CUDA
#include "cuda_backend.hpp"
#include "nvml.hpp"
#endif
#ifdef GD_HAVE_OPENCL
#include "opencl_backend.hpp"
#endif
#ifdef GD_HAVE_VULKAN
#include "vulkan_backend.hpp"
#endif

namespace gd::cli {

std::string backends_built() {
  std::string s;
#ifdef GD_HAVE_CUDA
  s += "cuda";
#endif
#ifdef GD_HAVE_OPENCL
  s += s.empty() ? "opencl" : ", opencl";
#endif
#ifdef GD_HAVE_VULKAN
  s += s.empty() ? "vulkan" : ", vulkan";
#endif
  return s.empty() ? "none" : s;
}

std::string version_text() {
  std::string s =
      std::string("gpudissect ") + GD_VERSION + "\nbackends: " + backends_built() + "\n";
#ifdef GD_HAVE_CUDA
  s += "CUDA runtime: " + cuda::runtime_version() + " (built in)\n";
  std::string why;
  s += cuda::nvml_available(&why) ? "NVML: available\n" : "NVML: not available (" + why + ")\n";
#else
  s += "CUDA: not built (no CUDA compiler at configure time)\nNVML: not built\n";
#endif
#ifndef GD_HAVE_OPENCL
  s += "OpenCL: not built (no OpenCL at configure time)\n";
#endif
#ifdef GD_HAVE_VULKAN
  s += "Vulkan loader: " + vulkan::loader_version() + " (shaders embedded as SPIR-V)\n";
#else
  s += "Vulkan: not built (no Vulkan loader or glslangValidator at configure time)\n";
#endif
  return s;
}

Listing list_devices() {
  Listing l;
#ifdef GD_HAVE_CUDA
  {
    std::string why;
    auto v = cuda::enumerate(&why);
    if (v.empty()) l.notes.push_back(why.empty() ? "CUDA: no device" : why);
    l.devices.insert(l.devices.end(), v.begin(), v.end());
  }
#else
  l.notes.push_back("CUDA: backend not built");
#endif
#ifdef GD_HAVE_OPENCL
  {
    std::string why;
    auto v = opencl::enumerate(&why);
    if (v.empty()) l.notes.push_back(why.empty() ? "OpenCL: no device" : why);
    l.devices.insert(l.devices.end(), v.begin(), v.end());
  }
#else
  l.notes.push_back("OpenCL: backend not built");
#endif
#ifdef GD_HAVE_VULKAN
  {
    std::string why;
    auto v = vulkan::enumerate(&why);
    if (v.empty()) l.notes.push_back(why.empty() ? "Vulkan: no device" : why);
    l.devices.insert(l.devices.end(), v.begin(), v.end());
  }
#else
  l.notes.push_back("Vulkan: backend not built");
#endif
  return l;
}

namespace {
std::string valid_ids(const Listing& l) {
  std::string s;
  for (const auto& d : l.devices) s += (s.empty() ? "" : ", ") + d.id;
  return s.empty() ? "none on this machine" : s;
}
}  // namespace

std::unique_ptr<Device> open_device(const std::string& id) {
  if (id.empty()) {
    const Listing l = list_devices();
    if (l.devices.empty()) {
      std::string why;
      for (const auto& n : l.notes) why += "\n  " + n;
      throw std::runtime_error("no device to measure:" + why);
    }
    return open_device(l.devices.front().id);
  }
  static const std::regex kCuda(R"(cuda:(\d+))"), kOpenCL(R"(opencl:(\d+)(?:\.(\d+))?)"),
      kVulkan(R"(vulkan:(\d+))");
  std::smatch m;
  if (std::regex_match(id, m, kCuda)) {
#ifdef GD_HAVE_CUDA
    const Listing l = list_devices();
    for (const auto& d : l.devices)
      if (d.id == id) return cuda::open(std::stoi(m[1]));
    throw UsageError("unknown device '" + id + "'; valid devices: " + valid_ids(l));
#else
    throw UsageError("cannot open '" + id +
                     "': this gpudissect was built without the CUDA backend");
#endif
  }
  if (std::regex_match(id, m, kOpenCL)) {
#ifdef GD_HAVE_OPENCL
    const std::string full = m[2].matched ? id : id + ".0";
    const Listing l = list_devices();
    for (const auto& d : l.devices)
      if (d.id == full) return opencl::open(std::stoi(m[1]), m[2].matched ? std::stoi(m[2]) : 0);
    throw UsageError("unknown device '" + id + "'; valid devices: " + valid_ids(l));
#else
    throw UsageError("this gpudissect was built without the OpenCL backend");
#endif
  }
  if (std::regex_match(id, m, kVulkan)) {
#ifdef GD_HAVE_VULKAN
    const Listing l = list_devices();
    for (const auto& d : l.devices)
      if (d.id == id) return vulkan::open(std::stoi(m[1]), borrow_facts(d, l.devices));
    throw UsageError("unknown device '" + id + "'; valid devices: " + valid_ids(l));
#else
    throw UsageError("this gpudissect was built without the Vulkan backend");
#endif
  }
  throw UsageError(
      "malformed device '" + id +
      "': use cuda:N, opencl:P.D or vulkan:N (valid devices: " + valid_ids(list_devices()) + ")");
}

std::optional<std::pair<uint64_t, uint64_t>> ecc_counts(const DeviceInfo& device) {
#ifdef GD_HAVE_CUDA
  const auto bus = device.extra.find("pci_bus_id");
  if (device.backend != "cuda" || bus == device.extra.end()) return std::nullopt;
  const auto id = cuda::nvml_identity(bus->second);
  const auto c = id.find("ecc_corrected_volatile"), u = id.find("ecc_uncorrected_volatile");
  if (c == id.end() || u == id.end()) return std::nullopt;
  try {
    return std::pair<uint64_t, uint64_t>{std::stoull(c->second), std::stoull(u->second)};
  } catch (const std::exception&) {  // not a count: said as not available
    return std::nullopt;
  }
#else
  (void)device;
  return std::nullopt;
#endif
}

}  // namespace gd::cli
