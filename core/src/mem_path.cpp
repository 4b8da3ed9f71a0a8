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

}  // namespace gd
