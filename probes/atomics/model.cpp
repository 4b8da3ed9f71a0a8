#include "atomics/atomics.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <numeric>

#include "gpudissect/figure.hpp"
#include "gpudissect/json_fields.hpp"
#include "gpudissect/stats.hpp"

namespace gd {

using nlohmann::json;

// ---- names ----

std::string to_string(PingPong k) {
  switch (k) {
    case PingPong::shared_cas:
      return "shared.cas_pingpong";
    case PingPong::shared_exch:
      return "shared.exch_pingpong";
    case PingPong::global_cas:
      return "global.cas_pingpong";
    case PingPong::global_exch:
      return "global.exch_pingpong";
    case PingPong::global_release_acquire:
      return "global.release_acquire_pingpong";
    case PingPong::host:
      return "host.pingpong";
  }
  return "?";
}

const std::vector<PingPong>& all_ping_pongs() {
  static const std::vector<PingPong> all = {PingPong::shared_cas,
                                            PingPong::shared_exch,
                                            PingPong::global_cas,
                                            PingPong::global_exch,
                                            PingPong::global_release_acquire,
                                            PingPong::host};
  return all;
}

std::string to_string(AtomicSpace s) { return s == AtomicSpace::shared ? "shared" : "global"; }

std::string to_string(AtomicOp o) {
  switch (o) {
    case AtomicOp::add:
      return "add";
    case AtomicOp::min:
      return "min";
    case AtomicOp::max:
      return "max";
    case AtomicOp::cas:
      return "cas";
  }
  return "?";
}

std::string to_string(AtomicType t) {
  switch (t) {
    case AtomicType::i32:
      return "i32";
    case AtomicType::u64:
      return "u64";
    case AtomicType::f32:
      return "f32";
    case AtomicType::f64:
      return "f64";
    case AtomicType::f16x2:
      return "f16x2";
    case AtomicType::bf16x2:
      return "bf16x2";
  }
  return "?";
}

std::string to_string(Contention c) {
  switch (c) {
    case Contention::distinct:
      return "distinct";
    case Contention::bank_conflict:
      return "conflict";
    case Contention::same_per_warp:
      return "same_per_warp";
    case Contention::same_per_block:
      return "same_per_block";
    case Contention::same_gpu:
      return "same_gpu";
  }
  return "?";
}

std::string to_string(AtomicScope s) {
  switch (s) {
    case AtomicScope::cta:
      return "cta";
    case AtomicScope::gpu:
      return "gpu";
    case AtomicScope::sys:
      return "sys";
  }
  return "?";
}

int type_bytes(AtomicType t) { return t == AtomicType::u64 || t == AtomicType::f64 ? 8 : 4; }

std::string ThroughputRequest::key() const {
  // "red" names an add whose result is unused: the instruction the hardware has for it.
  const std::string verb = use_return            ? to_string(op)
                           : op == AtomicOp::add ? "red"
                                                 : "red_" + to_string(op);
  std::string k =
      to_string(space) + "." + verb + "_" + to_string(type) + "." + to_string(contention);
  if (contention == Contention::bank_conflict) k += std::to_string(ways);
  if (space == AtomicSpace::global && scope != AtomicScope::gpu) k += "." + to_string(scope);
  return k;
}

// ---- ping-pong ----

PingPongTiming time_pingpong_on_host(
    const PingPongRequest& r, const std::function<double(uint32_t, PingPongOutcome*)>& play) {
  PingPongTiming t;
  const uint32_t n = r.round_trips;
  bool failed = false;
  auto launch = [&](uint32_t rounds) {
    const double s = play(rounds, failed ? nullptr : &t.outcome);
    if (!failed && !pingpong_check(t.outcome, rounds).empty()) {
      failed = true;  // keep this launch's outcome: the probe reports it
      t.total_round_trips = rounds;
    }
    return s;
  };
  launch(std::max<uint32_t>(n / 8, 1));  // warm-up: pipeline or compile caches, wake workers
  for (int rep = 0; rep < r.repeats && !failed; ++rep) {
    const double one = launch(n);
    if (failed) break;
    const double two = launch(2 * n);
    if (failed) break;
    t.total_round_trips = 2 * n;
    const double per = two > one ? (two - one) / (2.0 * n) : two / (4.0 * n);
    t.ns_per_handoff.push_back(per * 1e9);
  }
  return t;
}

std::string pingpong_check(const PingPongOutcome& o, uint64_t total_round_trips) {
  const uint64_t want = 2 * total_round_trips;
  if (o.timeouts)
    return "a player's spin hit its bound " + std::to_string(o.timeouts) +
           " time(s): the other never answered (no forward progress between the two threads?)";
  if (o.final_value != want)
    return "flag ended at " + std::to_string(o.final_value) + ", expected " + std::to_string(want) +
           " (a hand-over was lost or made twice)";
  if (o.handoffs_a != total_round_trips || o.handoffs_b != total_round_trips)
    return "players counted " + std::to_string(o.handoffs_a) + " and " +
           std::to_string(o.handoffs_b) + " hand-overs, expected " +
           std::to_string(total_round_trips) + " each";
  if (o.payload_errors)
    return std::to_string(o.payload_errors) +
           " payload(s) read behind an acquired flag were stale: release/acquire ordering broken";
  return {};
}

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

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

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

std::string fmt(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.0f", v);
  return buf;
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
    s.structure = "no structure above the noise: every pair of SMs within " + fmt(s.all.min) +
                  ".." + fmt(s.all.max) + " (median " + fmt(s.all.median) + ")";
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
    s.structure += ": median within a group " + fmt(median(within)) + ", between groups " +
                   fmt(median(across));
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
      m.status = {"error", "the backend reported a pair outside the matrix"};
      continue;
    }
    const std::string err = pingpong_check(p.outcome, t.round_trips_per_pair);
    if (!err.empty()) {
      if (failed++ == 0)
        m.status = {"error",
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

// ---- throughput layouts and checks ----

namespace {
uint64_t region_per_warp(const ThroughputLayout& l) {
  return l.contention == Contention::bank_conflict ? 32ull * uint64_t(std::max(l.ways, 1)) : 32ull;
}

// Threads that share thread g's word (how many atomics hit it per iteration).
uint64_t sharers(const ThroughputLayout& l) {
  switch (l.contention) {
    case Contention::distinct:
    case Contention::bank_conflict:
      return 1;
    case Contention::same_per_warp:
      return 32;
    case Contention::same_per_block:
      return l.threads;
    case Contention::same_gpu:
      return l.space == AtomicSpace::shared ? l.threads : l.blocks * l.threads;
  }
  return 1;
}

uint32_t float_bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}
}  // namespace

uint64_t shared_words_per_block(const ThroughputLayout& l) {
  return (l.threads / 32) * region_per_warp(l);
}

uint64_t target_words(const ThroughputLayout& l) {
  if (l.space == AtomicSpace::shared) return l.blocks * shared_words_per_block(l);
  switch (l.contention) {
    case Contention::same_per_block:
      return l.blocks * 32;
    case Contention::same_gpu:
      return 1;
    default:
      return l.blocks * l.threads;
  }
}

uint64_t target_word(const ThroughputLayout& l, uint64_t g) {
  const uint64_t b = g / l.threads, t = g % l.threads, warp = t / 32, lane = t % 32;
  if (l.space == AtomicSpace::shared) {
    const uint64_t base = b * shared_words_per_block(l);
    switch (l.contention) {
      case Contention::distinct:
        return base + warp * 32 + lane;
      case Contention::bank_conflict: {
        // `ways` lanes per bank: lane's bank is lane mod (32/ways), its row lane / (32/ways);
        // rows are 32 words apart, so the lanes of one bank hit distinct words of that bank.
        const uint64_t banks = 32 / uint64_t(std::max(l.ways, 1));
        return base + warp * region_per_warp(l) + (lane % banks) + (lane / banks) * 32;
      }
      case Contention::same_per_warp:
        return base + warp * 32;
      case Contention::same_per_block:
      case Contention::same_gpu:
        return base;
    }
  }
  switch (l.contention) {
    case Contention::same_per_warp:
      return (g / 32) * 32;  // one word per warp, each on its own 128-byte line
    case Contention::same_per_block:
      return b * 32;
    case Contention::same_gpu:
      return 0;
    default:
      return g;
  }
}

uint64_t max_exact_count(AtomicType t) {
  switch (t) {
    case AtomicType::f32:
      return 1ull << 24;
    case AtomicType::f64:
      return 1ull << 53;
    case AtomicType::f16x2:
      return 2048;
    case AtomicType::bf16x2:
      return 256;
    default:
      return std::numeric_limits<uint64_t>::max();
  }
}

uint64_t max_exact_iterations(const ThroughputRequest& r, const ThroughputLayout& l) {
  if (r.op != AtomicOp::add) return std::numeric_limits<uint64_t>::max();
  return max_exact_count(r.type) / std::max<uint64_t>(sharers(l), 1);
}

uint64_t initial_word(const ThroughputRequest& r) {
  if (r.op == AtomicOp::min) return 0x7fffffffu;
  if (r.op == AtomicOp::max) return 0x80000000u;
  return 0;
}

int32_t minmax_operand(AtomicOp op, uint64_t g, uint64_t k, uint64_t /*iterations*/) {
  // Bounded well inside int32: (g mod 977) * 2048 + (k mod 2048) < 2^21.
  const int32_t v = int32_t((g % 977) * 2048 + (k % 2048));
  return op == AtomicOp::min ? -v : v;
}

float half_to_float(uint16_t h) {
  const uint32_t sign = (h >> 15) & 1, exp = (h >> 10) & 0x1f, man = h & 0x3ff;
  float v;
  if (exp == 0)
    v = std::ldexp(float(man), -24);
  else if (exp == 31)
    v = man ? std::numeric_limits<float>::quiet_NaN() : std::numeric_limits<float>::infinity();
  else
    v = std::ldexp(float(man | 0x400), int(exp) - 25);
  return sign ? -v : v;
}

float bf16_to_float(uint16_t b) {
  const uint32_t u = uint32_t(b) << 16;
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

std::string throughput_check(const ThroughputRequest& r, const ThroughputLayout& l,
                             const std::vector<uint64_t>& final_words,
                             const std::vector<uint32_t>& cas_successes) {
  const uint64_t words = target_words(l);
  if (final_words.size() != words)
    return "the backend returned " + std::to_string(final_words.size()) +
           " words, the layout has " + std::to_string(words);
  const uint64_t threads = l.blocks * l.threads;
  if (r.op == AtomicOp::cas && cas_successes.size() != threads)
    return "the backend returned no per-thread CAS success counts";
  // What each word must hold: adds and CAS count hits, min/max keep the extreme operand.
  std::vector<uint64_t> hits(words, 0);
  std::vector<int64_t> extreme(words, r.op == AtomicOp::min ? INT64_MAX : INT64_MIN);
  std::vector<uint8_t> touched(words, 0);
  const uint64_t last_k = l.iterations ? std::min<uint64_t>(l.iterations - 1, 2047) : 0;
  for (uint64_t g = 0; g < threads; ++g) {
    const uint64_t w = target_word(l, g);
    if (w >= words) return "layout maps thread " + std::to_string(g) + " outside the target";
    touched[w] = 1;
    if (r.op == AtomicOp::cas)
      hits[w] += cas_successes[g];
    else
      hits[w] += l.iterations;
    if (r.op == AtomicOp::min || r.op == AtomicOp::max) {
      const int64_t v = minmax_operand(r.op, g, last_k, l.iterations);
      extreme[w] = r.op == AtomicOp::min ? std::min(extreme[w], v) : std::max(extreme[w], v);
    }
    // A CAS loop on a word of its own never fails: every attempt must have succeeded.
    if (r.op == AtomicOp::cas && sharers(l) == 1 && cas_successes[g] != l.iterations)
      return "thread " + std::to_string(g) + " alone on its word counted " +
             std::to_string(cas_successes[g]) + " successful CAS of " +
             std::to_string(l.iterations);
  }
  auto wrong = [&](uint64_t w, const std::string& want, const std::string& got) {
    return "word " + std::to_string(w) + " holds " + got + ", expected " + want +
           " (an atomic was lost or counted twice)";
  };
  const uint64_t init = initial_word(r);
  for (uint64_t w = 0; w < words; ++w) {
    const uint64_t raw = final_words[w];
    if (!touched[w]) {
      if (raw != init) return wrong(w, std::to_string(init) + " (untouched)", std::to_string(raw));
      continue;
    }
    const uint64_t n = hits[w];
    switch (r.op) {
      case AtomicOp::min:
      case AtomicOp::max: {
        const int32_t got = int32_t(uint32_t(raw));
        if (got != extreme[w]) return wrong(w, std::to_string(extreme[w]), std::to_string(got));
        break;
      }
      case AtomicOp::cas:
        if (uint32_t(raw) != uint32_t(init + n))
          return wrong(w, std::to_string(uint32_t(init + n)), std::to_string(uint32_t(raw)));
        break;
      case AtomicOp::add:
        switch (r.type) {
          case AtomicType::i32:
            if (uint32_t(raw) != uint32_t(n))
              return wrong(w, std::to_string(uint32_t(n)), std::to_string(uint32_t(raw)));
            break;
          case AtomicType::u64:
            if (raw != n) return wrong(w, std::to_string(n), std::to_string(raw));
            break;
          case AtomicType::f32:
            if (uint32_t(raw) != float_bits(float(n))) {
              float got;
              const uint32_t bits = uint32_t(raw);
              std::memcpy(&got, &bits, 4);
              return wrong(w, std::to_string(n), std::to_string(got));
            }
            break;
          case AtomicType::f64: {
            double got;
            std::memcpy(&got, &raw, 8);
            if (got != double(n)) return wrong(w, std::to_string(n), std::to_string(got));
            break;
          }
          case AtomicType::f16x2:
          case AtomicType::bf16x2: {
            const bool half = r.type == AtomicType::f16x2;
            const uint16_t lo = uint16_t(raw & 0xffff), hi = uint16_t((raw >> 16) & 0xffff);
            const float flo = half ? half_to_float(lo) : bf16_to_float(lo);
            const float fhi = half ? half_to_float(hi) : bf16_to_float(hi);
            if (flo != float(n) || fhi != float(n))
              return wrong(w, std::to_string(n) + " in both halves",
                           std::to_string(flo) + ", " + std::to_string(fhi));
            break;
          }
        }
        break;
    }
  }
  return {};
}

// ---- JSON ----

using json_fields::get;
using json_fields::get_status;
using json_fields::put;
using json_fields::put_status;

namespace {
// NaN (not measured) is written as null and read back as NaN.
json matrix_json(const std::vector<std::vector<double>>& m) {
  json rows = json::array();
  for (const auto& row : m) {
    json r = json::array();
    for (double v : row) r.push_back(std::isfinite(v) ? json(v) : json(nullptr));
    rows.push_back(std::move(r));
  }
  return rows;
}
std::vector<std::vector<double>> matrix_from(const json& j) {
  std::vector<std::vector<double>> m;
  for (const json& row : j) {
    std::vector<double> r;
    for (const json& v : row) r.push_back(v.is_null() ? kNaN : v.get<double>());
    m.push_back(std::move(r));
  }
  return m;
}
}  // namespace

void to_json(json& j, const PlacementSpread& s) {
  j = json{{"values", s.values}, {"min", s.min},   {"median", s.median},
           {"max", s.max},       {"mean", s.mean}, {"repeat_spread", s.repeat_spread}};
}
void from_json(const json& j, PlacementSpread& s) {
  get(j, "values", s.values);
  get(j, "min", s.min);
  get(j, "median", s.median);
  get(j, "max", s.max);
  get(j, "mean", s.mean);
  get(j, "repeat_spread", s.repeat_spread);
}

void to_json(json& j, const MatrixSummary& s) {
  json clusters = json::array();
  for (const SmCluster& c : s.clusters)
    clusters.push_back({{"sms", c.sms}, {"median_within", c.median_within}});
  json between = json::array();
  for (double v : s.between) between.push_back(std::isfinite(v) ? json(v) : json(nullptr));
  j = json{{"all", s.all},
           {"clusters", clusters},
           {"between", between},
           {"noise", s.noise},
           {"structure", s.structure}};
}
void from_json(const json& j, MatrixSummary& s) {
  get(j, "all", s.all);
  if (auto it = j.find("clusters"); it != j.end())
    for (const json& c : *it) {
      SmCluster x;
      get(c, "sms", x.sms);
      get(c, "median_within", x.median_within);
      s.clusters.push_back(std::move(x));
    }
  if (auto it = j.find("between"); it != j.end())
    for (const json& v : *it) s.between.push_back(v.is_null() ? kNaN : v.get<double>());
  get(j, "noise", s.noise);
  get(j, "structure", s.structure);
}

void to_json(json& j, const SmMatrix& m) {
  j = json::object();
  put_status(j, m.status);
  j["sms"] = m.sms;
  j["unit"] = m.unit;
  j["values"] = matrix_json(m.values);
  j["ns"] = matrix_json(m.ns);
  j["round_trips_per_pair"] = m.round_trips_per_pair;
  put(j, "clock_mhz", m.clock_mhz);
  j["seconds"] = m.seconds;
  put(j, "instruction", m.instruction);
  j["summary"] = m.summary;
  j["placements"] = m.placements;
  if (!m.placement_summaries.empty()) j["placement_summaries"] = m.placement_summaries;
}
void from_json(const json& j, SmMatrix& m) {
  m.status = get_status(j);
  get(j, "sms", m.sms);
  get(j, "unit", m.unit);
  if (auto it = j.find("values"); it != j.end()) m.values = matrix_from(*it);
  if (auto it = j.find("ns"); it != j.end()) m.ns = matrix_from(*it);
  get(j, "round_trips_per_pair", m.round_trips_per_pair);
  get(j, "clock_mhz", m.clock_mhz);
  get(j, "seconds", m.seconds);
  get(j, "instruction", m.instruction);
  get(j, "summary", m.summary);
  get(j, "placements", m.placements);
  get(j, "placement_summaries", m.placement_summaries);
}

void to_json(json& j, const AtomicLatency& l) {
  j = json::object();
  put_status(j, l.status);
  put(j, "cycles", l.cycles);
  put(j, "ns", l.ns);
  put(j, "clock_mhz", l.clock_mhz);
  j["round_trips"] = l.round_trips;
  put(j, "sm_a", l.sm_a);
  put(j, "sm_b", l.sm_b);
  put(j, "instruction", l.instruction);
  if (!l.note.empty()) j["note"] = l.note;
  if (l.locations != 1) j["locations"] = l.locations;
  put(j, "placement_cycles", l.placement_cycles);
  put(j, "placement_ns", l.placement_ns);
}
void from_json(const json& j, AtomicLatency& l) {
  l.status = get_status(j);
  get(j, "cycles", l.cycles);
  get(j, "ns", l.ns);
  get(j, "clock_mhz", l.clock_mhz);
  get(j, "round_trips", l.round_trips);
  get(j, "sm_a", l.sm_a);
  get(j, "sm_b", l.sm_b);
  get(j, "instruction", l.instruction);
  get(j, "note", l.note);
  get(j, "locations", l.locations);
  get(j, "placement_cycles", l.placement_cycles);
  get(j, "placement_ns", l.placement_ns);
}

void to_json(json& j, const AtomicThroughput& t) {
  j = json::object();
  put_status(j, t.status);
  j["space"] = t.space;
  j["op"] = t.op;
  j["type"] = t.type;
  j["contention"] = t.contention;
  j["scope"] = t.scope;
  j["ways"] = t.ways;
  j["use_return"] = t.use_return;
  j["ops_per_launch"] = t.ops_per_launch;
  put(j, "gops", t.gops);
  put(j, "ops_per_clk_sm", t.ops_per_clk_sm);
  put(j, "clock_mhz", t.clock_mhz);
  if (t.sms) j["sms"] = t.sms;
  put(j, "instruction", t.instruction);
  if (!t.note.empty()) j["note"] = t.note;
  if (t.placements != 1) j["placements"] = t.placements;
  put(j, "placement_gops", t.placement_gops);
}
void from_json(const json& j, AtomicThroughput& t) {
  t.status = get_status(j);
  get(j, "space", t.space);
  get(j, "op", t.op);
  get(j, "type", t.type);
  get(j, "contention", t.contention);
  get(j, "scope", t.scope);
  get(j, "ways", t.ways);
  get(j, "use_return", t.use_return);
  get(j, "ops_per_launch", t.ops_per_launch);
  get(j, "gops", t.gops);
  get(j, "ops_per_clk_sm", t.ops_per_clk_sm);
  get(j, "clock_mhz", t.clock_mhz);
  get(j, "sms", t.sms);
  get(j, "instruction", t.instruction);
  get(j, "note", t.note);
  get(j, "placements", t.placements);
  get(j, "placement_gops", t.placement_gops);
}

void to_json(json& j, const AtomicsProbeResult& r) {
  j = json::object();
  put_status(j, r.status);
  j["wall_seconds"] = r.wall_seconds;
  put(j, "clock_mhz_measured", r.clock_mhz_measured);
  j["latency"] = r.latency;
  j["throughput"] = r.throughput;
  put(j, "matrix", r.matrix);
}
void from_json(const json& j, AtomicsProbeResult& r) {
  r.status = get_status(j);
  get(j, "wall_seconds", r.wall_seconds);
  get(j, "clock_mhz_measured", r.clock_mhz_measured);
  get(j, "latency", r.latency);
  get(j, "throughput", r.throughput);
  get(j, "matrix", r.matrix);
}

}  // namespace gd
