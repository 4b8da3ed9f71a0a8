// Pointer-chase chains: one random cycle through every line of a buffer.
#pragma once

#include <cstdint>
#include <vector>

namespace gd {

// Sattolo's algorithm: a uniformly random permutation with exactly one cycle, so a chase
// from any line visits every line before it returns. next[i] is the line after line i.
// Deterministic for a given seed. n must be >= 1 (n == 1 gives next[0] == 0).
std::vector<uint32_t> sattolo_cycle(uint32_t n, uint64_t seed = 0x9d15ec7ULL);

// True when next is a permutation forming one cycle through all its entries.
bool is_single_cycle(const std::vector<uint32_t>& next);

// The line reached after `hops` steps from `start`.
uint32_t walk(const std::vector<uint32_t>& next, uint32_t start, uint64_t hops);

}  // namespace gd
