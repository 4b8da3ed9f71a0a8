#include <algorithm>
#include <limits>
#include <stdexcept>
#include <string>

#include "gpudissect/device.hpp"
#include "gpudissect/units.hpp"

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
  if (target.uuid.empty()) return b;
  for (const DeviceEntry& e : all) {
    if (e.id == target.id || e.uuid != target.uuid) continue;
    if (!target.l2_bytes && !b.l2_bytes && e.l2_bytes) {
      b.l2_bytes = e.l2_bytes;
      b.source = "L2 size of " + e.id + " (the same UUID)";
    }
    if (target.sm_arch.empty() && b.sm_arch.empty() && !e.sm_arch.empty()) {
      b.sm_arch = e.sm_arch;
      b.sm_arch_source = "SM architecture of " + e.id + " (the same UUID)";
    }
  }
  return b;
}

void validate_index_chase(const ChaseRequest& req) {
  if (!req.next || req.next->empty())
    throw std::invalid_argument("chase: the request has no chain");
  if (req.stride_bytes < 4 || req.stride_bytes % 4 != 0)
    throw std::invalid_argument("chase: stride must be a positive multiple of 4 bytes, not " +
                                std::to_string(req.stride_bytes));
  if (req.hops_per_repeat == 0) throw std::invalid_argument("chase: hops_per_repeat is 0");
  if (req.repeats < 1) throw std::invalid_argument("chase: repeats must be at least 1");
  if (req.footprint_bytes() / 4 > std::numeric_limits<uint32_t>::max())
    throw std::invalid_argument("chase: footprint too large for 32-bit element indices");
  const std::size_t n = req.next->size();
  for (uint32_t v : *req.next)
    if (v >= n) throw std::invalid_argument("chase: chain entry out of range");
}

void check_chase_footprint(const ChaseRequest& req, uint64_t limit_bytes,
                           const std::string& device_name) {
  const uint64_t bytes = req.footprint_bytes();
  if (bytes <= limit_bytes) return;
  throw AllocationFailed("a " + format_bytes(static_cast<double>(bytes)) + " chain (" +
                         std::to_string(bytes) + " bytes) exceeds the " + to_string(req.path) +
                         " limit of " + format_bytes(static_cast<double>(limit_bytes)) + " on " +
                         device_name);
}

std::vector<uint32_t> index_chase_image(const ChaseRequest& req) {
  const uint64_t words_per_line = req.stride_bytes / 4;
  std::vector<uint32_t> image(req.footprint_bytes() / 4, 0);
  for (std::size_t i = 0; i < req.next->size(); ++i)
    image[i * words_per_line] = static_cast<uint32_t>((*req.next)[i] * words_per_line);
  return image;
}

}  // namespace gd
