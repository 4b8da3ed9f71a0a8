#include "gpudissect/sweep.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace gd {

namespace {
uint64_t round_to_stride(double bytes, uint64_t stride) {
  const double lines = std::max(1.0, std::round(bytes / static_cast<double>(stride)));
  return static_cast<uint64_t>(lines) * stride;
}
}  // namespace

std::vector<uint64_t> log_spaced_footprints(uint64_t lo, uint64_t hi, int per_doubling,
                                            uint64_t stride) {
  if (stride == 0 || per_doubling < 1) throw std::invalid_argument("bad sweep parameters");
  if (lo == 0 || hi < lo) throw std::invalid_argument("sweep needs 0 < lo <= hi");
  std::vector<uint64_t> out;
  const double steps = std::log2(static_cast<double>(hi) / static_cast<double>(lo)) * per_doubling;
  const auto n = static_cast<long>(std::floor(steps + 1e-9));
  for (long k = 0; k <= n; ++k) {
    const double fp = static_cast<double>(lo) * std::exp2(static_cast<double>(k) / per_doubling);
    const uint64_t r = round_to_stride(fp, stride);
    if (r > hi) break;
    if (out.empty() || r > out.back()) out.push_back(r);
  }
  const uint64_t top = std::max<uint64_t>(stride, hi / stride * stride);
  if (out.empty() || top > out.back()) out.push_back(top);
  return out;
}

std::optional<uint64_t> refine_between(uint64_t a, uint64_t b, uint64_t stride, double max_ratio) {
  if (a == 0 || b <= a) return std::nullopt;
  if (static_cast<double>(b) / static_cast<double>(a) <= max_ratio) return std::nullopt;
  const uint64_t mid =
      round_to_stride(std::sqrt(static_cast<double>(a) * static_cast<double>(b)), stride);
  if (mid <= a || mid >= b) return std::nullopt;
  return mid;
}

std::vector<uint64_t> thin_footprints(const std::vector<uint64_t>& grid, int keep_every,
                                      const std::vector<EdgeBracket>& edges, double guard) {
  if (keep_every <= 1 || edges.empty()) return grid;
  auto near_edge = [&](uint64_t fp) {
    return std::any_of(edges.begin(), edges.end(), [&](const EdgeBracket& e) {
      return double(fp) >= double(e.lo) / guard && double(fp) <= double(e.hi) * guard;
    });
  };
  std::vector<uint64_t> out;
  for (std::size_t i = 0; i < grid.size(); ++i)
    if (i % std::size_t(keep_every) == 0 || i + 1 == grid.size() || near_edge(grid[i]))
      out.push_back(grid[i]);
  return out;
}

ChasePlan plan_chase(uint64_t lines, uint64_t stride, const ChaseBudget& budget) {
  ChasePlan p;
  const uint64_t cache_lines = budget.largest_cache_bytes / std::max<uint64_t>(stride, 1);
  const uint64_t warm_cap = cache_lines + cache_lines / 4;
  p.warmup_hops = std::max(budget.min_warmup_hops, std::min(lines, warm_cap));
  p.hops_per_repeat = budget.hops_per_repeat;
  p.repeats = budget.repeats;
  return p;
}

uint64_t sweep_upper_bound(uint64_t largest_cache, uint64_t floor, uint64_t limit,
                           uint64_t cache_multiple) {
  uint64_t want = std::max(floor, largest_cache * cache_multiple);
  uint64_t p2 = 1;
  while (p2 < want) p2 <<= 1;
  return std::min(p2, limit);
}

}  // namespace gd
