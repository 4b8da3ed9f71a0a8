#include "nvml.hpp"

#include <dlfcn.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
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
constexpr unsigned kMaxNvLinks = 18;        // NVML_NVLINK_MAX_LINKS
constexpr int kP2pCapsNvlink = 2;           // NVML_P2P_CAPS_INDEX_NVLINK
// nvmlPciInfo_t as NVML's API reference lays it out (the _v2 remote-PCI call fills it).
struct PciInfo {
  char bus_id_legacy[16];
  unsigned domain, bus, device, pci_device_id, pci_subsystem_id;
  char bus_id[32];
};

// nvmlProcessInfo_t as the _v2 and _v3 process-list calls fill it, and the first call's
// shorter nvmlProcessInfo_v1_t.
struct ProcessInfo {
  unsigned pid;
  unsigned long long used_gpu_memory;
  unsigned gpu_instance_id, compute_instance_id;
};
struct ProcessInfoV1 {
  unsigned pid;
  unsigned long long used_gpu_memory;
};
struct Utilization {  // nvmlUtilization_t
  unsigned gpu, memory;
};
constexpr int kErrorInsufficientSize = 7;  // NVML_ERROR_INSUFFICIENT_SIZE
constexpr unsigned long long kNotAvailable = ~0ull;  // NVML_VALUE_NOT_AVAILABLE

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
  // Links (the links probe); any may be absent from an old driver.
  nvmlReturn (*nvlink_state)(nvmlDevice, unsigned, int*) = nullptr;  // nvmlEnableState_t
  nvmlReturn (*nvlink_version)(nvmlDevice, unsigned, unsigned*) = nullptr;
  nvmlReturn (*nvlink_remote_pci)(nvmlDevice, unsigned, PciInfo*) = nullptr;
  nvmlReturn (*pcie_gen)(nvmlDevice, unsigned*) = nullptr;
  nvmlReturn (*pcie_width)(nvmlDevice, unsigned*) = nullptr;
  nvmlReturn (*pcie_gen_max)(nvmlDevice, unsigned*) = nullptr;
  nvmlReturn (*pcie_width_max)(nvmlDevice, unsigned*) = nullptr;
  nvmlReturn (*common_ancestor)(nvmlDevice, nvmlDevice, int*) = nullptr;
  nvmlReturn (*nvlink_remote_type)(nvmlDevice, unsigned, int*) = nullptr;
  nvmlReturn (*p2p_status)(nvmlDevice, nvmlDevice, int, int*) = nullptr;
  // Who else uses the GPU: [0] compute, [1] graphics, each the newest version the driver has
  // (process_v1 set where only the first, shorter-struct call exists).
  nvmlReturn (*processes[2])(nvmlDevice, unsigned*, void*) = {nullptr, nullptr};
  bool process_v1[2] = {false, false};
  nvmlReturn (*process_name)(unsigned, char*, unsigned) = nullptr;
  nvmlReturn (*utilization)(nvmlDevice, Utilization*) = nullptr;
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
    a.nvlink_state = reinterpret_cast<decltype(a.nvlink_state)>(sym("nvmlDeviceGetNvLinkState"));
    a.nvlink_version =
        reinterpret_cast<decltype(a.nvlink_version)>(sym("nvmlDeviceGetNvLinkVersion"));
    a.nvlink_remote_pci =
        reinterpret_cast<decltype(a.nvlink_remote_pci)>(sym("nvmlDeviceGetNvLinkRemotePciInfo_v2"));
    a.pcie_gen = reinterpret_cast<decltype(a.pcie_gen)>(sym("nvmlDeviceGetCurrPcieLinkGeneration"));
    a.pcie_width = reinterpret_cast<decltype(a.pcie_width)>(sym("nvmlDeviceGetCurrPcieLinkWidth"));
    a.pcie_gen_max =
        reinterpret_cast<decltype(a.pcie_gen_max)>(sym("nvmlDeviceGetMaxPcieLinkGeneration"));
    a.pcie_width_max =
        reinterpret_cast<decltype(a.pcie_width_max)>(sym("nvmlDeviceGetMaxPcieLinkWidth"));
    a.common_ancestor =
        reinterpret_cast<decltype(a.common_ancestor)>(sym("nvmlDeviceGetTopologyCommonAncestor"));
    a.nvlink_remote_type = reinterpret_cast<decltype(a.nvlink_remote_type)>(
        sym("nvmlDeviceGetNvLinkRemoteDeviceType"));
    a.p2p_status = reinterpret_cast<decltype(a.p2p_status)>(sym("nvmlDeviceGetP2PStatus"));
    const char* kLists[2] = {"nvmlDeviceGetComputeRunningProcesses",
                             "nvmlDeviceGetGraphicsRunningProcesses"};
    for (int k = 0; k < 2; ++k) {
      for (const char* suffix : {"_v3", "_v2"})
        if (!a.processes[k])
          a.processes[k] = reinterpret_cast<nvmlReturn (*)(nvmlDevice, unsigned*, void*)>(
              sym((std::string(kLists[k]) + suffix).c_str()));
      if (!a.processes[k]) {
        a.processes[k] =
            reinterpret_cast<nvmlReturn (*)(nvmlDevice, unsigned*, void*)>(sym(kLists[k]));
        a.process_v1[k] = a.processes[k] != nullptr;
      }
    }
    a.process_name = reinterpret_cast<decltype(a.process_name)>(sym("nvmlSystemGetProcessName"));
    a.utilization =
        reinterpret_cast<decltype(a.utilization)>(sym("nvmlDeviceGetUtilizationRates"));
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

namespace {

// One process list (k: 0 compute, 1 graphics); nullopt where the call is missing or fails.
std::optional<std::vector<GpuProcess>> list_processes(Api& a, nvmlDevice dev, int k) {
  if (!a.processes[k]) return std::nullopt;
  // Room for twice the entries asked for: a driver whose entries are longer than the struct
  // declared here writes past `count` of ours, never past the buffer.
  for (unsigned capacity = 64; capacity <= 4096; capacity *= 4) {
    std::vector<ProcessInfo> buf(2 * capacity);
    unsigned count = capacity;
    const int rc = a.processes[k](dev, &count, buf.data());
    if (rc == kErrorInsufficientSize) continue;
    if (rc != 0) return std::nullopt;
    std::vector<GpuProcess> out;
    for (unsigned i = 0; i < std::min(count, capacity); ++i) {
      GpuProcess p;
      unsigned long long mem = 0;
      if (a.process_v1[k]) {
        const auto* v1 = reinterpret_cast<const ProcessInfoV1*>(buf.data()) + i;
        p.pid = v1->pid;
        mem = v1->used_gpu_memory;
      } else {
        p.pid = buf[i].pid;
        mem = buf[i].used_gpu_memory;
      }
      if (mem != kNotAvailable) p.used_memory_bytes = mem;
      p.kind = k == 0 ? "compute" : "graphics";
      out.push_back(p);
    }
    return out;
  }
  return std::nullopt;
}

// NVML's name for the process, else /proc's (the same pid namespace), else empty.
std::string process_name(Api& a, unsigned pid) {
  char buf[256] = {};
  if (a.process_name && a.process_name(pid, buf, sizeof buf) == 0 && buf[0]) {
    std::string s = buf;
    return s.substr(s.find_last_of('/') == std::string::npos ? 0 : s.find_last_of('/') + 1);
  }
  std::ifstream comm("/proc/" + std::to_string(pid) + "/comm");
  std::string s;
  std::getline(comm, s);
  return s;
}

}  // namespace

std::vector<unsigned> nvml_process_pids(const std::string& pci_bus_id) {
  std::vector<unsigned> out;
  Api& a = api();
  if (!a.ok) return out;
  nvmlDevice dev = nullptr;
  if (a.by_pci(pci_bus_id.c_str(), &dev) != 0) return out;
  for (int k = 0; k < 2; ++k)
    if (auto ps = list_processes(a, dev, k))
      for (const GpuProcess& p : *ps) out.push_back(p.pid);
  return out;
}

std::optional<GpuActivity> nvml_activity(const std::string& pci_bus_id,
                                         const std::vector<unsigned>& own_pids) {
  Api& a = api();
  if (!a.ok) return std::nullopt;
  nvmlDevice dev = nullptr;
  if (a.by_pci(pci_bus_id.c_str(), &dev) != 0) return std::nullopt;
  GpuActivity out;
  Utilization u{};
  if (a.utilization && a.utilization(dev, &u) == 0) out.utilization_percent = u.gpu;
  const unsigned self = static_cast<unsigned>(getpid());
  bool any_list = false;
  for (int k = 0; k < 2; ++k) {
    auto ps = list_processes(a, dev, k);
    if (!ps) continue;
    any_list = true;
    for (GpuProcess& p : *ps) {
      if (p.pid == self ||
          std::find(own_pids.begin(), own_pids.end(), p.pid) != own_pids.end())
        continue;
      // A process with a compute and a graphics context is listed once.
      if (std::any_of(out.processes.begin(), out.processes.end(),
                      [&](const GpuProcess& q) { return q.pid == p.pid; }))
        continue;
      p.name = process_name(a, p.pid);
      out.processes.push_back(std::move(p));
    }
  }
  out.processes_known = any_list;
  return out;
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

std::optional<NvmlLinks> nvml_links(const std::string& pci_bus_id) {
  Api& a = api();
  if (!a.ok) return std::nullopt;
  nvmlDevice dev = nullptr;
  if (a.by_pci(pci_bus_id.c_str(), &dev) != 0) return std::nullopt;
  NvmlLinks out;
  unsigned v = 0;
  if (a.pcie_gen && a.pcie_gen(dev, &v) == 0) out.pcie_gen_current = int(v);
  if (a.pcie_width && a.pcie_width(dev, &v) == 0) out.pcie_width_current = int(v);
  if (a.pcie_gen_max && a.pcie_gen_max(dev, &v) == 0) out.pcie_gen_max = int(v);
  if (a.pcie_width_max && a.pcie_width_max(dev, &v) == 0) out.pcie_width_max = int(v);
  if (a.nvlink_state && a.nvlink_remote_pci)
    for (unsigned link = 0; link < kMaxNvLinks; ++link) {
      int active = 0;  // NVML_FEATURE_ENABLED == 1
      if (a.nvlink_state(dev, link, &active) != 0 || active != 1) continue;
      PciInfo pci{};
      if (a.nvlink_remote_pci(dev, link, &pci) != 0) continue;
      NvmlLinks::NvLink l;
      l.link = link;
      l.remote_pci_bus_id = pci.bus_id;
      if (a.nvlink_version && a.nvlink_version(dev, link, &v) == 0) l.version = v;
      int type = 0;
      if (a.nvlink_remote_type && a.nvlink_remote_type(dev, link, &type) == 0) l.remote_type = type;
      out.nvlinks.push_back(l);
    }
  return out;
}

std::optional<bool> nvml_nvlink_p2p(const std::string& pci_a, const std::string& pci_b) {
  Api& a = api();
  if (!a.ok || !a.p2p_status) return std::nullopt;
  nvmlDevice da = nullptr, db = nullptr;
  if (a.by_pci(pci_a.c_str(), &da) != 0 || a.by_pci(pci_b.c_str(), &db) != 0) return std::nullopt;
  int status = 0;  // nvmlGpuP2PStatus_t: 0 OK
  if (a.p2p_status(da, db, kP2pCapsNvlink, &status) != 0) return std::nullopt;
  return status == 0;
}

std::optional<int> nvml_common_ancestor(const std::string& pci_a, const std::string& pci_b) {
  Api& a = api();
  if (!a.ok || !a.common_ancestor) return std::nullopt;
  nvmlDevice da = nullptr, db = nullptr;
  if (a.by_pci(pci_a.c_str(), &da) != 0 || a.by_pci(pci_b.c_str(), &db) != 0) return std::nullopt;
  int level = 0;
  if (a.common_ancestor(da, db, &level) != 0) return std::nullopt;
  return level;
}

}  // namespace gd::cuda
