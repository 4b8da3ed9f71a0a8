// The atomics probe's SM-to-SM matrix: the tournament that pairs SMs, the matrix's
// assembly and summary, and the figures of a placement's samples.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <numeric>

#include "atomics/atomics.hpp"
#include "gpudissect/figure.hpp"
#include "gpudissect/json_fields.hpp"
#include "gpudissect/stats.hpp"
#include "gpudissect/units.hpp"

namespace gd {

using nlohmann::json;

// ---- tournament ----

std::vector<std::vector<std::pair<int, int>>> round_robin_rounds(int n) {
  std::vector<std::vector<std::pair<int, int>>> rounds;
  if (n < 2) return rounds;
  // Circle method: players 0..m-2 sit on a circle, player m-1 stays put; each round the
  // circle turns by one. With n odd, player m-1 == n is a bye.
  const int m = n % 2 ? n + 1 : n;
  const int c = m - 1;
  for (int r = 0; r < c; ++r) {
    std::vector<std::pair<int, int>> round;
    auto add = [&](int a, int b) {
      if (a >= n || b >= n) return;  // the bye
      round.emplace_back(std::min(a, b), std::max(a, b));
    };
    add(m - 1, r);
    for (int i = 1; i < m / 2; ++i) add((r + i) % c, (r - i + c) % c);
    rounds.push_back(std::move(round));
  }
  return rounds;
}

// ---- the matrix ----

namespace {

// Mean absolute difference of two rows over the columns both have.
double row_distance(const std::vector<double>& a, const std::vector<double>& b) {
  double s = 0;
  int n = 0;
  for (std::size_t c = 0; c < a.size() && c < b.size(); ++c)
    if (std::isfinite(a[c]) && std::isfinite(b[c])) {
      s += std::fabs(a[c] - b[c]);
      ++n;
    }
  return n ? s / n : 0;
}

std::vector<double> centroid(const std::vector<std::vector<double>>& m, const std::vector<int>& g) {
  const std::size_t cols = m.empty() ? 0 : m[0].size();
  std::vector<double> sum(cols, 0), cnt(cols, 0);
  for (int i : g)
    for (std::size_t c = 0; c < cols; ++c)
      if (std::isfinite(m[i][c])) {
        sum[c] += m[i][c];
        cnt[c] += 1;
      }
  for (std::size_t c = 0; c < cols; ++c) sum[c] = cnt[c] ? sum[c] / cnt[c] : kNaN;
  return sum;
}

// 2-means on the rows of `g`, seeded by the two rows farthest apart. Returns the halves
// (the first holding the smallest SM id) and the distance between their centroids.
std::pair<std::vector<int>, std::vector<int>> split_two(const std::vector<std::vector<double>>& m,
                                                        const std::vector<int>& g,
                                                        double* centroid_gap) {
  int sa = g[0], sb = g[1];
  double far = -1;
  for (std::size_t i = 0; i < g.size(); ++i)
    for (std::size_t j = i + 1; j < g.size(); ++j) {
      const double d = row_distance(m[g[i]], m[g[j]]);
      if (d > far) {
        far = d;
        sa = g[i];
        sb = g[j];
      }
    }
  std::vector<double> ca = m[sa], cb = m[sb];
  std::vector<int> a, b;
  for (int it = 0; it < 20; ++it) {
    std::vector<int> na, nb;
    for (int i : g) (row_distance(m[i], ca) <= row_distance(m[i], cb) ? na : nb).push_back(i);
    if (na.empty() || nb.empty()) break;
    const bool same = na == a && nb == b;
    a = std::move(na);
    b = std::move(nb);
    if (same) break;
    ca = centroid(m, a);
    cb = centroid(m, b);
  }
  if (a.empty() || b.empty()) {
    *centroid_gap = 0;
    return {g, {}};
  }
  *centroid_gap = row_distance(ca, cb);
  if (b.front() < a.front()) std::swap(a, b);
  return {a, b};
}

void split_recursive(const std::vector<std::vector<double>>& m, const std::vector<int>& g,
                     double threshold, int depth, std::vector<std::vector<int>>& out) {
  if (depth <= 0 || g.size() < 4) {
    out.push_back(g);
    return;
  }
  double gap = 0;
  auto [a, b] = split_two(m, g, &gap);
  if (b.empty() || a.size() < 2 || b.size() < 2 || gap <= threshold) {
    out.push_back(g);
    return;
  }
  split_recursive(m, a, threshold, depth - 1, out);
  split_recursive(m, b, threshold, depth - 1, out);
}

double median_between(const std::vector<std::vector<double>>& m, const std::vector<int>& a,
                      const std::vector<int>& b) {
  std::vector<double> v;
  for (int i : a)
    for (int j : b)
      if (i != j && std::isfinite(m[i][j])) v.push_back(m[i][j]);
  return v.empty() ? kNaN : median(v);
}

}  // namespace

MatrixSummary summarize_matrix(const std::vector<std::vector<double>>& m, double noise,
                               int max_depth) {
  MatrixSummary s;
  s.noise = noise;
  const int n = static_cast<int>(m.size());
  std::vector<double> all;
  for (int i = 0; i < n; ++i)
    for (int j = i + 1; j < n && j < int(m[i].size()); ++j)
      if (std::isfinite(m[i][j])) all.push_back(m[i][j]);
  if (all.empty()) {
    s.structure = "no pair measured";
    return s;
  }
  s.all = summarize(all);
  // A split counts when the two groups' row profiles differ by clearly more than a pair's
  // measurement noise, and by at least 2% of the median (a clock-jitter floor).
  const double threshold = std::max(3 * noise, 0.02 * s.all.median);
  std::vector<int> everyone(n);
  std::iota(everyone.begin(), everyone.end(), 0);
  std::vector<std::vector<int>> groups;
  split_recursive(m, everyone, threshold, max_depth, groups);
  std::sort(groups.begin(), groups.end(),
            [](const auto& x, const auto& y) { return x.front() < y.front(); });
  const std::size_t k = groups.size();
  s.between.assign(k * k, kNaN);
  for (std::size_t i = 0; i < k; ++i)
    for (std::size_t j = 0; j < k; ++j)
      s.between[i * k + j] = median_between(m, groups[i], groups[j]);
  for (std::size_t i = 0; i < k; ++i) {
    SmCluster c;
    c.sms = groups[i];
    c.median_within = s.between[i * k + i];
    s.clusters.push_back(std::move(c));
  }
  if (k == 1) {
    s.structure = "no structure above the noise: every pair of SMs within " +
                  format_fixed(s.all.min, 0) + ".." + format_fixed(s.all.max, 0) + " (median " +
                  format_fixed(s.all.median, 0) + ")";
    return s;
  }
  std::vector<double> within, across;
  for (std::size_t i = 0; i < k; ++i)
    for (std::size_t j = 0; j < k; ++j)
      if (std::isfinite(s.between[i * k + j]))
        (i == j ? within : across).push_back(s.between[i * k + j]);
  std::string sizes;
  for (const SmCluster& c : s.clusters)
    sizes += (sizes.empty() ? "" : ", ") + std::to_string(c.sms.size());
  s.structure = std::to_string(k) + " groups of SMs (" + sizes + " SMs) with distinct latency rows";
  if (!within.empty() && !across.empty())
    s.structure += ": median within a group " + format_fixed(median(within), 0) +
                   ", between groups " + format_fixed(median(across), 0);
  return s;
}

SmMatrix assemble_matrix(const MatrixTiming& t, bool have_cycles) {
  SmMatrix m;
  m.sms = t.sms;
  m.unit = have_cycles ? "cycles" : "ns";
  m.round_trips_per_pair = t.round_trips_per_pair;
  m.clock_mhz = t.clock_mhz;
  m.seconds = t.seconds;
  const std::size_t n = static_cast<std::size_t>(std::max(t.sms, 0));
  m.values.assign(n, std::vector<double>(n, kNaN));
  m.ns.assign(n, std::vector<double>(n, kNaN));
  std::vector<double> noises;
  int failed = 0;
  for (const PairSample& p : t.pairs) {
    if (p.a < 0 || p.b < 0 || std::size_t(p.a) >= n || std::size_t(p.b) >= n || p.a == p.b) {
      m.status = {StatusCode::error, "the backend reported a pair outside the matrix"};
      continue;
    }
    const std::string err = pingpong_check(p.outcome, t.round_trips_per_pair);
    if (!err.empty()) {
      if (failed++ == 0)
        m.status = {StatusCode::error,
                    "SMs " + std::to_string(p.a) + " and " + std::to_string(p.b) + ": " + err};
      continue;
    }
    const std::vector<double>& v = have_cycles ? p.cycles_per_handoff : p.ns_per_handoff;
    if (v.empty()) continue;
    m.values[p.a][p.b] = m.values[p.b][p.a] = median(v);
    if (!p.ns_per_handoff.empty()) m.ns[p.a][p.b] = m.ns[p.b][p.a] = median(p.ns_per_handoff);
    if (v.size() > 1) noises.push_back(robust_sigma(v));
  }
  if (failed > 1) m.status.reason += " (and " + std::to_string(failed - 1) + " more pairs)";
  m.summary = summarize_matrix(m.values, noises.empty() ? 0 : median(noises));
  return m;
}

SmMatrix average_placements(const std::vector<SmMatrix>& placements) {
  if (placements.empty()) return {};
  SmMatrix m = placements.front();
  m.placements = int(placements.size());
  m.placement_summaries.clear();
  double seconds = 0;
  std::vector<double> noises;
  for (const SmMatrix& p : placements) {
    m.placement_summaries.push_back(p.summary);
    seconds += p.seconds;
    if (m.status.ok() && !p.status.ok()) m.status = p.status;
    if (p.summary.noise > 0) noises.push_back(p.summary.noise);
  }
  m.seconds = seconds;
  const int n = m.sms;
  for (auto* grid : {&m.values, &m.ns}) {
    const bool is_ns = grid == &m.ns;
    for (int a = 0; a < n && a < int(grid->size()); ++a)
      for (int b = 0; b < n && b < int((*grid)[a].size()); ++b) {
        double sum = 0;
        bool all = true;
        for (const SmMatrix& p : placements) {
          const auto& g = is_ns ? p.ns : p.values;
          const double v = a < int(g.size()) && b < int(g[a].size()) ? g[a][b] : NAN;
          if (!std::isfinite(v)) all = false;
          sum += v;
        }
        (*grid)[a][b] = all ? sum / double(placements.size()) : NAN;
      }
  }
  // The noise of a mean of k placements is the per-placement noise over sqrt(k).
  const double noise = noises.empty() ? 0 : median(noises) / std::sqrt(double(placements.size()));
  m.summary = summarize_matrix(m.values, noise);
  return m;
}

// ---- placements ----

uint64_t placement_stride(uint64_t target_bytes) {
  return (target_bytes + kPlacementRegion - 1) / kPlacementRegion * kPlacementRegion +
         2 * kPlacementRegion + 65536;
}

uint64_t placements_bytes(uint64_t target_bytes, int places) {
  return placement_stride(target_bytes) * uint64_t(std::max(places, 1) - 1) + target_bytes;
}

uint64_t locations_bytes(int locations) {
  return kLocationStride * uint64_t(std::max(locations, 1) - 1) + kLocationBytes;
}

std::optional<PlacedFigure> summarize_placed(const std::vector<std::vector<double>>& samples) {
  std::vector<const std::vector<double>*> used;
  for (const auto& v : samples)
    if (!v.empty()) used.push_back(&v);
  if (used.empty()) return std::nullopt;
  PlacedFigure f;
  if (used.size() == 1) {
    f.summary = summarize(*used[0]);
    return f;
  }
  PlacementSpread s;
  std::vector<double> spreads;
  std::size_t repeats = 0;
  for (const auto* v : used) {
    const Summary one = summarize(*v);
    s.values.push_back(one.median);
    spreads.push_back(one.relative_spread());
    repeats = std::max(repeats, v->size());
  }
  // Repeat k's mean over the placements (every repeat visits every placement).
  std::vector<double> per_repeat;
  for (std::size_t k = 0; k < repeats; ++k) {
    double sum = 0;
    int n = 0;
    for (const auto* v : used)
      if (k < v->size()) {
        sum += (*v)[k];
        ++n;
      }
    per_repeat.push_back(sum / n);
  }
  f.summary = summarize(per_repeat);
  const Summary over = summarize(s.values);
  s.min = over.min;
  s.max = over.max;
  s.median = over.median;
  s.mean = std::accumulate(s.values.begin(), s.values.end(), 0.0) / double(s.values.size());
  s.repeat_spread = median(spreads);
  f.spread = std::move(s);
  return f;
}

}  // namespace gd
