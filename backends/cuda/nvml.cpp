#include "nvml.hpp"

#include <dlfcn.h>

#include <algorithm>
#include <iterator>
#include <mutex>

namespace gd::cuda {

namespace {

// The handful of NVML entry points used, declared from NVML's public API reference;
// nvml.h is not part of every CUDA toolkit install.
using nvmlReturn = int;  // 0 == NVML_SUCCESS
using nvmlDevice = void*;
constexpr int kClockSm = 1, kClockMem = 2;  // nvmlClockType_t
constexpr int kTemperatureGpu = 0;          // nvmlTemperatureSensors_t

struct Api {
  void* lib = nullptr;
  nvmlReturn (*init)() = nullptr;
  nvmlReturn (*by_pci)(const char*, nvmlDevice*) = nullptr;
  nvmlReturn (*clock)(nvmlDevice, int, unsigned*) = nullptr;
  nvmlReturn (*reasons)(nvmlDevice, unsigned long long*) = nullptr;
  nvmlReturn (*temperature)(nvmlDevice, int, unsigned*) = nullptr;
  nvmlReturn (*power)(nvmlDevice, unsigned*) = nullptr;
  nvmlReturn (*driver)(char*, unsigned) = nullptr;
  nvmlReturn (*uuid)(nvmlDevice, char*, unsigned) = nullptr;
  nvmlReturn (*serial)(nvmlDevice, char*, unsigned) = nullptr;
  nvmlReturn (*ecc_mode)(nvmlDevice, int*, int*) = nullptr;  // current, pending
  nvmlReturn (*ecc_errors)(nvmlDevice, int, int, unsigned long long*) = nullptr;
  bool ok = false;
  std::string why;
};

Api& api() {
  static Api a;
  static std::once_flag once;
  std::call_once(once, [] {
    a.lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!a.lib) {
      a.why = std::string("libnvidia-ml.so.1 not loadable: ") + dlerror();
      return;
    }
    // Not api(): re-entering the call_once being run would deadlock.
    auto sym = [](const char* n) { return dlsym(a.lib, n); };
    a.init = reinterpret_cast<decltype(a.init)>(sym("nvmlInit_v2"));
    a.by_pci = reinterpret_cast<decltype(a.by_pci)>(sym("nvmlDeviceGetHandleByPciBusId_v2"));
    a.clock = reinterpret_cast<decltype(a.clock)>(sym("nvmlDeviceGetClockInfo"));
    // Renamed in newer drivers; the bits are the same.
    a.reasons =
        reinterpret_cast<decltype(a.reasons)>(sym("nvmlDeviceGetCurrentClocksEventReasons"));
    if (!a.reasons)
      a.reasons =
          reinterpret_cast<decltype(a.reasons)>(sym("nvmlDeviceGetCurrentClocksThrottleReasons"));
    a.temperature = reinterpret_cast<decltype(a.temperature)>(sym("nvmlDeviceGetTemperature"));
    a.power = reinterpret_cast<decltype(a.power)>(sym("nvmlDeviceGetPowerUsage"));
    a.driver = reinterpret_cast<decltype(a.driver)>(sym("nvmlSystemGetDriverVersion"));
    a.uuid = reinterpret_cast<decltype(a.uuid)>(sym("nvmlDeviceGetUUID"));
    a.serial = reinterpret_cast<decltype(a.serial)>(sym("nvmlDeviceGetSerial"));
    a.ecc_mode = reinterpret_cast<decltype(a.ecc_mode)>(sym("nvmlDeviceGetEccMode"));
    a.ecc_errors = reinterpret_cast<decltype(a.ecc_errors)>(sym("nvmlDeviceGetTotalEccErrors"));
    if (!a.init || !a.by_pci || !a.clock) {
      a.why = "libnvidia-ml.so.1 lacks nvmlInit_v2/nvmlDeviceGetClockInfo";
      return;
    }
    if (int rc = a.init(); rc != 0) {
      a.why = "nvmlInit_v2 failed with NVML error " + std::to_string(rc);
      return;
    }
    a.ok = true;
  });
  return a;
}

}  // namespace

bool nvml_load(std::string* why) {
  const Api& a = api();
  if (!a.ok && why) *why = a.why;
  return a.ok;
}

std::optional<std::string> nvml_driver_version() {
  Api& a = api();
  char buf[96] = {};
  if (!a.ok || !a.driver || a.driver(buf, sizeof buf) != 0) return std::nullopt;
  return std::string(buf);
}

std::optional<Telemetry> nvml_read(const std::string& pci_bus_id) {
  Api& a = api();
  if (!a.ok) return std::nullopt;
  nvmlDevice dev = nullptr;
  if (a.by_pci(pci_bus_id.c_str(), &dev) != 0) return std::nullopt;
  Telemetry t;
  unsigned v = 0;
  if (a.clock(dev, kClockSm, &v) == 0) t.sm_clock_mhz = v;
  if (a.clock(dev, kClockMem, &v) == 0) t.memory_clock_mhz = v;
  if (a.temperature && a.temperature(dev, kTemperatureGpu, &v) == 0) t.temperature_c = v;
  if (a.power && a.power(dev, &v) == 0) t.power_w = v / 1000.0;
  unsigned long long bits = 0;
  if (a.reasons && a.reasons(dev, &bits) == 0) {
    // nvmlClocksEventReason* bit values from NVML's API reference.
    static const std::pair<unsigned long long, const char*> kReasons[] = {
        {0x1, "gpu_idle"},
        {0x2, "applications_clocks_setting"},
        {0x4, "sw_power_cap"},
        {0x8, "hw_slowdown"},
        {0x10, "sync_boost"},
        {0x20, "sw_thermal_slowdown"},
        {0x40, "hw_thermal_slowdown"},
        {0x80, "hw_power_brake_slowdown"},
        {0x100, "display_clock_setting"}};
    for (auto [bit, name] : kReasons)
      if (bits & bit) t.throttle_reasons.push_back(name);
  }
  return t;
}

std::map<std::string, std::string> nvml_identity(const std::string& pci_bus_id) {
  std::map<std::string, std::string> out;
  Api& a = api();
  if (!a.ok) return out;
  nvmlDevice dev = nullptr;
  if (a.by_pci(pci_bus_id.c_str(), &dev) != 0) return out;
  char buf[128] = {};
  if (a.uuid && a.uuid(dev, buf, sizeof buf) == 0) out["uuid"] = buf;
  std::fill(std::begin(buf), std::end(buf), '\0');
  if (a.serial && a.serial(dev, buf, sizeof buf) == 0) out["serial"] = buf;
  int current = 0, pending = 0;
  if (a.ecc_mode && a.ecc_mode(dev, &current, &pending) == 0) {
    out["ecc"] = current ? "enabled" : "disabled";
    // nvmlMemoryErrorType_t: 0 corrected, 1 uncorrected; nvmlEccCounterType_t: 0 volatile.
    unsigned long long n = 0;
    if (current && a.ecc_errors && a.ecc_errors(dev, 1, 0, &n) == 0)
      out["ecc_uncorrected_volatile"] = std::to_string(n);
    if (current && a.ecc_errors && a.ecc_errors(dev, 0, 0, &n) == 0)
      out["ecc_corrected_volatile"] = std::to_string(n);
  }
  return out;
}

}  // namespace gd::cuda
