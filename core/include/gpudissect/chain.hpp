// Pointer-chase chains: one random cycle through every line of a buffer.
#pragma once

#include <cstdint>
#include <vector>

namespace gd {

// Sattolo's algorithm: a uniformly random permutation with exactly one cycle, so a chase
// from any line visits every line before it returns. next[i] is the line after line i.
// Deterministic for a given seed. n must be >= 1 (n == 1 gives next[0] == 0).
std::vector<uint32_t> sattolo_cycle(uint32_t n, uint64_t seed = 0x9d15ec7ULL);

// A single random cycle that visits every line of a page before it moves to the next page
// (lines in random order inside a page, pages in random order): on a machine whose pages are
// small next to the footprint (a CPU's 4 KiB), a fully random chain misses the TLB on almost
// every load once the footprint passes the TLB's reach, and the page walks read as extra
// cache levels; here a page costs at most one miss per lines_per_page loads, so the curve
// shows the caches alone. The last page may be partial. Deterministic for a given seed.
std::vector<uint32_t> page_grouped_cycle(uint32_t n, uint32_t lines_per_page,
                                         uint64_t seed = 0x9d15ec7ULL);

// True when next is a permutation forming one cycle through all its entries.
bool is_single_cycle(const std::vector<uint32_t>& next);

// The line reached after `hops` steps from `start`.
uint32_t walk(const std::vector<uint32_t>& next, uint32_t start, uint64_t hops);

}  // namespace gd
