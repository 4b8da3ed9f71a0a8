// NVML, loaded at run time: present wherever the NVIDIA driver is, absent in CI and on
// other vendors' machines. Nothing links against it, so the binary runs everywhere.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "gpudissect/device.hpp"

namespace gd::cuda {

// Loads libnvidia-ml once. Returns false with the reason when it cannot.
bool nvml_load(std::string* why);
// The NVIDIA driver release ("580.159.04"), where NVML is present.
std::optional<std::string> nvml_driver_version();
// Clocks, temperature, power and active throttle reasons of the GPU at this PCI bus id.
std::optional<Telemetry> nvml_read(const std::string& pci_bus_id);
// What identifies the GPU at this PCI bus id and its memory's health, for DeviceInfo.extra
// (what `fleet` shows): "uuid", "serial", "ecc" (enabled | disabled),
// "ecc_uncorrected_volatile", "ecc_corrected_volatile" (error counts since the driver
// loaded). Keys NVML does not answer are absent; empty without NVML.
std::map<std::string, std::string> nvml_identity(const std::string& pci_bus_id);

// Other processes on the GPU at this PCI bus id (compute and graphics lists, NVML's _v3,
// _v2 or first calls, whichever the driver has) and its utilisation. Processes whose pid is
// in `own_pids` are left out. Nullopt without NVML or where NVML does not know the GPU.
std::optional<GpuActivity> nvml_activity(const std::string& pci_bus_id,
                                         const std::vector<unsigned>& own_pids);
// The pids NVML lists with a context on this GPU (compute and graphics), for telling this
// process's own entry apart where NVML reports the host's pids (a container): the pids
// that appear when our context is created are ours. Empty without NVML.
std::vector<unsigned> nvml_process_pids(const std::string& pci_bus_id);

// The links of the GPU at this PCI bus id, for the links probe: PCIe generation and width
// (current and max) and every active NVLink with its remote end's PCI bus id and NVML's
// nvmlNvlinkVersion_t value. Nullopt without NVML or where NVML does not know the GPU.
struct NvmlLinks {
  std::optional<int> pcie_gen_current, pcie_width_current, pcie_gen_max, pcie_width_max;
  struct NvLink {
    unsigned link = 0;
    std::string remote_pci_bus_id;  // NVML's spelling, "00000000:19:00.0"
    std::optional<unsigned> version;
    std::optional<int> remote_type;  // nvmlIntNvLinkDeviceType_t: 0 GPU, 1 IBM NPU, 2 NVSwitch
  };
  std::vector<NvLink> nvlinks;  // active ones only
};
std::optional<NvmlLinks> nvml_links(const std::string& pci_bus_id);
// (A link whose remote_type is 2 ends on an NVSwitch: its remote PCI id is the switch's.)
// nvmlGpuTopologyLevel_t of the closest common PCIe ancestor of two GPUs; nullopt where
// NVML cannot tell.
// nvmlDeviceGetP2PStatus for NVLink between two GPUs: true OK, false not; nullopt where NVML
// cannot tell.
std::optional<bool> nvml_nvlink_p2p(const std::string& pci_a, const std::string& pci_b);
std::optional<int> nvml_common_ancestor(const std::string& pci_a, const std::string& pci_b);

}  // namespace gd::cuda
