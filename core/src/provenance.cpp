// Provenance of a run: read from the system at run time, from CMake at configure time.
#include "gpudissect/provenance.hpp"

#include <sys/utsname.h>
#include <unistd.h>

#include <fstream>
#include <sstream>

#include "gpudissect/json_fields.hpp"
#include "gpudissect/units.hpp"

#ifndef GD_GIT_REVISION
#define GD_GIT_REVISION "unknown"
#endif
#ifndef GD_BUILD_TYPE
#define GD_BUILD_TYPE "unknown"
#endif

namespace gd {
namespace {

std::string or_unknown(const std::string& s) { return s.empty() ? kUnknown : s; }

std::string read_text(const char* path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace

std::string cpu_model_from_cpuinfo(const std::string& cpuinfo) {
  // x86 says "model name"; ARM kernels say "Hardware" or only "CPU part"; POWER "cpu".
  for (const char* key : {"model name", "Hardware", "cpu model", "cpu"}) {
    std::istringstream in(cpuinfo);
    std::string line;
    while (std::getline(in, line)) {
      const auto colon = line.find(':');
      if (colon == std::string::npos || trim(line.substr(0, colon)) != key) continue;
      const std::string v = trim(line.substr(colon + 1));
      if (!v.empty()) return v;
    }
  }
  return "";
}

std::string os_from_os_release(const std::string& os_release) {
  std::istringstream in(os_release);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("PRETTY_NAME=", 0) != 0) continue;
    std::string v = trim(line.substr(12));
    if (v.size() >= 2 && (v.front() == '"' || v.front() == '\'') && v.back() == v.front())
      v = v.substr(1, v.size() - 2);
    return v;
  }
  return "";
}

Provenance collect_provenance(const DeviceInfo& device, const std::vector<std::string>& argv) {
  Provenance p;
  char host[256] = {};
  if (gethostname(host, sizeof host - 1) == 0) p.host = host;
  struct utsname u {};
  if (uname(&u) == 0) {
    p.kernel = std::string(u.sysname) + " " + u.release + " " + u.version;
    p.machine = u.machine;
  }
  p.os = os_from_os_release(read_text("/etc/os-release"));
  p.cpu_model = cpu_model_from_cpuinfo(read_text("/proc/cpuinfo"));
  p.backend = device.backend;
  p.driver_version = device.driver_version;
  // Vulkan has no runtime apart from its loader: its API version stands for it.
  p.runtime_version =
      device.toolkit_version.empty() ? device.compute_capability : device.toolkit_version;
  if (auto it = device.extra.find("driver_name"); it != device.extra.end())
    p.driver_name = it->second;
  p.tool_version = GD_VERSION;
  p.git_revision = GD_GIT_REVISION;
  p.build_type = GD_BUILD_TYPE;
  p.command_line = argv;
  for (std::string* s :
       {&p.host, &p.os, &p.kernel, &p.machine, &p.cpu_model, &p.backend, &p.driver_version,
        &p.runtime_version, &p.driver_name, &p.tool_version, &p.git_revision, &p.build_type})
    *s = or_unknown(*s);
  return p;
}

void to_json(nlohmann::json& j, const Provenance& p) {
  j = nlohmann::json{{"host", p.host},
                     {"os", p.os},
                     {"kernel", p.kernel},
                     {"machine", p.machine},
                     {"cpu_model", p.cpu_model},
                     {"backend", p.backend},
                     {"driver_version", p.driver_version},
                     {"runtime_version", p.runtime_version},
                     {"driver_name", p.driver_name},
                     {"tool_version", p.tool_version},
                     {"git_revision", p.git_revision},
                     {"build_type", p.build_type},
                     {"command_line", p.command_line}};
}

void from_json(const nlohmann::json& j, Provenance& p) {
  using json_fields::get;
  if (!j.is_object()) throw JsonReadError("", "expected an object, got " + json_kind(j));
  p = Provenance{};
  std::pair<const char*, std::string*> fields[] = {{"host", &p.host},
                                                   {"os", &p.os},
                                                   {"kernel", &p.kernel},
                                                   {"machine", &p.machine},
                                                   {"cpu_model", &p.cpu_model},
                                                   {"backend", &p.backend},
                                                   {"driver_version", &p.driver_version},
                                                   {"runtime_version", &p.runtime_version},
                                                   {"driver_name", &p.driver_name},
                                                   {"tool_version", &p.tool_version},
                                                   {"git_revision", &p.git_revision},
                                                   {"build_type", &p.build_type}};
  for (auto& [key, field] : fields) {
    *field = kUnknown;
    get(j, key, *field);
  }
  get(j, "command_line", p.command_line);
}

}  // namespace gd
