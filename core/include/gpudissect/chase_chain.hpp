// What the OpenCL and Vulkan chase chains hold in each line, and how the host turns what a
// chase reached back into the element index the probe checks. CUDA's chase keeps in the chain
// exactly what the load consumes (an address, a byte offset), so that a hop is the load alone;
// the portable backends do the same where the API and the layout let them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

#include "gpudissect/device.hpp"

namespace gd {

enum class ChainKind {
  index,    // the next line's 32-bit element index: every hop scales it (the fallback)
  bytes,    // the next line's 32-bit byte offset from the chain's start
  address,  // the next line's 64-bit device address, in the line's first 8 bytes
};

inline const char* to_string(ChainKind k) {
  switch (k) {
    case ChainKind::bytes:
      return "byte offsets";
    case ChainKind::address:
      return "addresses";
    default:
      return "element indices";
  }
}

// A 64-bit address fits a line's start only where every line start is 8-byte aligned and the
// line holds 8 bytes.
inline bool address_chain_fits(uint64_t stride_bytes) {
  return stride_bytes >= 8 && stride_bytes % 8 == 0;
}

// GD_TEST_INDEX_CHASE=1 forces the index chains where addresses would fit: for the tests of
// the fallback only, never set in a measured run.
inline bool index_chase_forced() {
  const char* v = std::getenv("GD_TEST_INDEX_CHASE");
  return v && std::string(v) == "1";
}

// The OpenCL chain of a path: addresses for global and l2 (where they fit, not forced off),
// byte offsets for constant and local memory, indices for the image path (read_imageui
// takes a coordinate).
inline ChainKind opencl_chain_kind(MemPath p, uint64_t stride_bytes, bool index_forced) {
  switch (p) {
    case MemPath::global:
    case MemPath::l2:
      return address_chain_fits(stride_bytes) && !index_forced ? ChainKind::address
                                                               : ChainKind::index;
    case MemPath::constant:
    case MemPath::local:
    case MemPath::shared:
      return ChainKind::bytes;
    default:
      return ChainKind::index;
  }
}

// The element index (4-byte word) a chase of `kind` reached, from the value it wrote:
// `reached` is an index, a byte offset, or an address in the chain starting at `base`.
// nullopt where it cannot be one (below the base, not word-aligned).
inline std::optional<uint64_t> chase_end_element(ChainKind kind, uint64_t reached, uint64_t base) {
  switch (kind) {
    case ChainKind::index:
      return reached;
    case ChainKind::bytes:
      if (reached % 4) return std::nullopt;
      return reached / 4;
    default:
      if (reached < base || (reached - base) % 4) return std::nullopt;
      return (reached - base) / 4;
  }
}

// The chain as an address chase walks it, for a chain whose buffer starts at device address
// `base`: the first 8 bytes of line i hold base + next[i] * stride (little-endian, as the
// GPUs the backends run on), the other words are 0. Call validate_index_chase first and
// check address_chain_fits(stride).
inline std::vector<uint32_t> address_chase_image(const ChaseRequest& req, uint64_t base) {
  const uint64_t words_per_line = req.stride_bytes / 4;
  std::vector<uint32_t> image(req.footprint_bytes() / 4, 0);
  for (std::size_t i = 0; i < req.next->size(); ++i) {
    const uint64_t a = base + uint64_t{(*req.next)[i]} * req.stride_bytes;
    image[i * words_per_line] = static_cast<uint32_t>(a);
    image[i * words_per_line + 1] = static_cast<uint32_t>(a >> 32);
  }
  return image;
}

}  // namespace gd
