#include <algorithm>

#include "gpudissect/device.hpp"

namespace gd {

namespace {
struct PathName {
  MemPath path;
  const char* name;
};
constexpr PathName kNames[] = {
    {MemPath::global, "global"},     {MemPath::l2, "l2"},
    {MemPath::readonly, "readonly"}, {MemPath::texture, "texture"},
    {MemPath::constant, "constant"}, {MemPath::shared, "shared"},
    {MemPath::local, "local"},       {MemPath::image, "image"},
};
}  // namespace

std::string to_string(MemPath p) {
  for (const auto& n : kNames)
    if (n.path == p) return n.name;
  return "unknown";
}

std::optional<MemPath> parse_mem_path(std::string_view s) {
  for (const auto& n : kNames)
    if (s == n.name) return n.path;
  return std::nullopt;
}

const std::vector<MemPath>& all_mem_paths() {
  static const std::vector<MemPath> all = [] {
    std::vector<MemPath> v;
    for (const auto& n : kNames) v.push_back(n.path);
    return v;
  }();
  return all;
}

BorrowedFacts borrow_facts(const DeviceEntry& target, const std::vector<DeviceEntry>& all) {
  BorrowedFacts b;
  if (target.uuid.empty() || target.l2_bytes) return b;
  for (const DeviceEntry& e : all)
    if (e.id != target.id && e.uuid == target.uuid && e.l2_bytes) {
      b.l2_bytes = e.l2_bytes;
      b.source = "L2 size of " + e.id + " (the same UUID)";
      break;
    }
  return b;
}

}  // namespace gd
