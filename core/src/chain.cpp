#include "gpudissect/chain.hpp"

#include <algorithm>
#include <numeric>
#include <random>
#include <stdexcept>

namespace gd {

std::vector<uint32_t> sattolo_cycle(uint32_t n, uint64_t seed) {
  if (n == 0) throw std::invalid_argument("a chain needs at least one line");
  // order[k] is the k-th line visited; shuffling with j < i (never j == i) leaves a single
  // cycle when the visit order is closed back on itself.
  std::vector<uint32_t> order(n);
  std::iota(order.begin(), order.end(), 0u);
  std::mt19937_64 rng(seed);
  for (uint32_t i = n - 1; i > 0; --i) {
    std::uniform_int_distribution<uint32_t> pick(0, i - 1);
    std::swap(order[i], order[pick(rng)]);
  }
  std::vector<uint32_t> next(n);
  for (uint32_t k = 0; k < n; ++k) next[order[k]] = order[(k + 1) % n];
  return next;
}

std::vector<uint32_t> page_grouped_cycle(uint32_t n, uint32_t lines_per_page, uint64_t seed) {
  if (n == 0) throw std::invalid_argument("a chain needs at least one line");
  if (lines_per_page == 0) throw std::invalid_argument("a page needs at least one line");
  std::mt19937_64 rng(seed);
  const uint32_t pages = (n + lines_per_page - 1) / lines_per_page;
  std::vector<uint32_t> page_order(pages);
  std::iota(page_order.begin(), page_order.end(), 0u);
  std::shuffle(page_order.begin(), page_order.end(), rng);
  // order[k] is the k-th line visited: every line of one page, in random order, then the
  // next page. Closing the list on itself makes one cycle whatever the order.
  std::vector<uint32_t> order;
  order.reserve(n);
  std::vector<uint32_t> lines;
  for (uint32_t page : page_order) {
    const uint32_t first = page * lines_per_page;
    const uint32_t last = std::min<uint64_t>(uint64_t(first) + lines_per_page, n);
    lines.resize(last - first);
    std::iota(lines.begin(), lines.end(), first);
    std::shuffle(lines.begin(), lines.end(), rng);
    order.insert(order.end(), lines.begin(), lines.end());
  }
  std::vector<uint32_t> next(n);
  for (uint32_t k = 0; k < n; ++k) next[order[k]] = order[(k + 1) % n];
  return next;
}

bool is_single_cycle(const std::vector<uint32_t>& next) {
  const std::size_t n = next.size();
  if (n == 0) return false;
  std::vector<bool> seen(n, false);
  uint32_t at = 0;
  for (std::size_t k = 0; k < n; ++k) {
    if (at >= n || seen[at]) return false;
    seen[at] = true;
    at = next[at];
  }
  return at == 0;
}

uint32_t walk(const std::vector<uint32_t>& next, uint32_t start, uint64_t hops) {
  if (next.empty()) throw std::invalid_argument("walk on an empty chain");
  // A single cycle returns to start every n hops.
  hops %= next.size();
  uint32_t at = start;
  for (uint64_t h = 0; h < hops; ++h) at = next[at];
  return at;
}

}  // namespace gd
