// Where a run ran: the machine, its OS and drivers, the build of this tool and the command
// line, so that a result read months later, or collected from many nodes, says its origin.
// The run JSON's top-level "provenance" object (schema version 3); older files lack it.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "gpudissect/device.hpp"

namespace gd {

struct Provenance {
  std::string host;             // gethostname
  std::string os;               // /etc/os-release PRETTY_NAME
  std::string kernel;           // uname: sysname release version
  std::string machine;          // uname: x86_64, aarch64 ...
  std::string cpu_model;        // /proc/cpuinfo "model name" (or its ARM equivalents)
  std::string backend;          // the device's API
  std::string driver_version;   // what the backend reports (CUDA: NVML's release)
  std::string runtime_version;  // CUDA runtime, OpenCL platform version, Vulkan API
  std::string driver_name;      // Vulkan's driver name; "unknown" elsewhere
  std::string tool_version;
  std::string git_revision;               // at configure time; "unknown" outside a git checkout
  std::string build_type;                 // CMAKE_BUILD_TYPE
  std::vector<std::string> command_line;  // argv, one string each
};

// Every field said: what cannot be read is "unknown", never empty.
inline constexpr const char* kUnknown = "unknown";

// This machine, this build, this command line and the device's driver facts.
Provenance collect_provenance(const DeviceInfo& device, const std::vector<std::string>& argv);

// Parsers of the files collect_provenance reads, apart for tests: nullopt-like "" where the
// text has no such line.
std::string cpu_model_from_cpuinfo(const std::string& cpuinfo);
std::string os_from_os_release(const std::string& os_release);

void to_json(nlohmann::json& j, const Provenance& p);
// Lenient: a key a file lacks stays "unknown" (a newer writer may drop one); a key of the
// wrong type is an error.
void from_json(const nlohmann::json& j, Provenance& p);

}  // namespace gd
