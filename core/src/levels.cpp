// Level detection on a latency-vs-footprint curve.
//
// Approach (why): the curve is a staircase in log-latency with noise, single outliers,
// smeared edges and sometimes ramps. We
//  1. estimate the per-point noise sigma of log-latency from the data (robust sigma of
//     neighbour differences / sqrt 2, and the repeats' spread), floored at noise_floor;
//  2. segment log-latency optimally into constant pieces by dynamic programming, with a
//     cost per point of min((r/sigma)^2, 9) around the piece's median (a truncated square:
//     one or two points sticking out cost a fixed amount and do not pay for their own
//     pieces, so outliers do not split plateaus) plus a BIC-like penalty of
//     max(6, 2 ln n) per piece. n <= ~150, the O(n^2) pieces cost O(n log n) each;
//  3. trim each piece's ends to points within 3 sigma of its median (this strips edge
//     points of transitions that the DP lumped into a piece) and keep it as a candidate if
//     it still has min_points (min_edge_points at either end of the curve) and few
//     interior outliers;
//  4. merge candidates closer than min_relative_step (or than the noise) when their union
//     is flat, then drop ramp pieces: a piece whose own fitted rise is significant and
//     large (> 0.4) compared with the step to its neighbours, or that lies on a
//     significantly rising line through the 3 points beyond each of its ends (on a ramp
//     every piece rises about as much as the step to the next; a plateau's rise is noise
//     and the points beyond it are a step off any line through it; a ramp piece's longest
//     flat prefix is kept: a plateau whose hit rate starts to fall before the piece ends). Then
//     enforce increasing levels at least min_relative_step apart, merge sub-levels
//     (sublevel_ratio), and drop a level whose capacity is within min_capacity_ratio of a
//     neighbour's when its plateau is the narrower (a flat stretch of the ramp past a cache
//     whose hit rate falls gradually: no cache adds a few percent to the one below it);
//  5. extend each plateau over adjacent points within 3 sigma of its median, take the
//     median of its points as its latency and bracket its capacity.
#include "gpudissect/levels.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

#include "gpudissect/stats.hpp"

namespace gd {

namespace {

constexpr double kBand = 3.0;          // points within kBand sigma of a centre are "on" it
constexpr double kTruncSq = 9.0;       // truncation of the squared residual in the DP cost
constexpr double kRampRatio = 0.4;     // rise/step above which a piece is part of a ramp
constexpr double kRiseSignif = 2.0;    // rises below this many standard errors are noise
constexpr std::size_t kRampReach = 3;  // points beyond a piece that a ramp line must fit
constexpr double kRampFit = 2.5;       // ... within this many sigma
constexpr double kRampSignif = 3.0;    // ... and rise by this many standard errors

double ln_or_throw(double v) {
  if (!(v > 0) || !std::isfinite(v)) throw std::invalid_argument("latency must be > 0");
  return std::log(v);
}

// Noise of one point's log-latency.
double estimate_sigma(const std::vector<double>& y, const std::vector<CurvePoint>& c,
                      double floor) {
  double s = floor;
  if (y.size() >= 3) {
    std::vector<double> d;
    for (std::size_t i = 0; i + 1 < y.size(); ++i) d.push_back(y[i + 1] - y[i]);
    s = std::max(s, robust_sigma(d) / std::sqrt(2.0));
  }
  // The reported latency is a median of repeats whose IQR/median is `spread`; a single
  // repeat's sigma is spread/1.349 and the median of >= 3 repeats has at most ~0.7 of it.
  std::vector<double> sp;
  for (const auto& p : c) sp.push_back(std::max(0.0, p.spread));
  if (!sp.empty()) s = std::max(s, 0.5 * median(sp) / 1.349);
  return s;
}

struct Piece {
  std::size_t a = 0, b = 0;  // inclusive index range
};

class Analyzer {
 public:
  Analyzer(const std::vector<CurvePoint>& c, const LevelOptions& o) : curve_(c), opt_(o) {
    for (std::size_t i = 0; i < c.size(); ++i) {
      if (i > 0 && !(c[i].footprint_bytes > c[i - 1].footprint_bytes))
        throw std::invalid_argument("footprints must increase strictly");
      if (!(c[i].footprint_bytes > 0)) throw std::invalid_argument("footprint must be > 0");
      y_.push_back(ln_or_throw(c[i].latency));
      x_.push_back(std::log2(c[i].footprint_bytes));
    }
    n_ = y_.size();
    sigma_ = estimate_sigma(y_, c, opt_.noise_floor);
  }

  std::vector<DetectedLevel> run();

 private:
  double centre(std::size_t a, std::size_t b) const {
    return median(std::vector<double>(y_.begin() + a, y_.begin() + b + 1));
  }
  bool on(std::size_t i, double c) const { return std::fabs(y_[i] - c) <= kBand * sigma_; }
  std::size_t need(std::size_t a, std::size_t b) const {
    return (a == 0 || b + 1 == n_) ? opt_.min_edge_points : opt_.min_points;
  }
  std::size_t outliers(std::size_t a, std::size_t b, double c) const {
    std::size_t k = 0;
    for (std::size_t i = a; i <= b; ++i) k += on(i, c) ? 0 : 1;
    return k;
  }
  static std::size_t allowed_outliers(std::size_t len) { return len / 4; }

  // Least-squares rise of the on-centre points across the span, with its standard error.
  void rise(std::size_t a, std::size_t b, double* r, double* se) const {
    const double c = centre(a, b);
    double sx = 0, sy = 0, m = 0;
    for (std::size_t i = a; i <= b; ++i)
      if (on(i, c)) sx += x_[i], sy += y_[i], ++m;
    *r = 0;
    *se = std::numeric_limits<double>::infinity();
    if (m < 2) return;
    const double mx = sx / m, my = sy / m;
    double sxx = 0, sxy = 0;
    for (std::size_t i = a; i <= b; ++i)
      if (on(i, c)) sxx += (x_[i] - mx) * (x_[i] - mx), sxy += (x_[i] - mx) * (y_[i] - my);
    if (sxx <= 0) return;
    const double span = x_[b] - x_[a];
    *r = sxy / sxx * span;
    *se = sigma_ * span / std::sqrt(sxx);
  }

  std::vector<Piece> segment() const;
  bool trim(Piece* p) const;
  double step(const Piece& lo, const Piece& hi) const {
    return centre(hi.a, hi.b) - centre(lo.a, lo.b);
  }
  // Whether a..b may be one plateau whose outer neighbours are `outer_step` away (<= 0: none).
  bool flat_union(std::size_t a, std::size_t b, double outer_step) const {
    if (outliers(a, b, centre(a, b)) > allowed_outliers(b - a + 1)) return false;
    double r, se;
    rise(a, b, &r, &se);
    if (std::fabs(r) <= kRiseSignif * se + 0.5 * sigma_) return true;
    return outer_step > 0 && std::fabs(r) <= kRampRatio * outer_step;
  }
  void merge_close(std::vector<Piece>* ps) const;
  bool is_ramp(const Piece& p, double adj_step) const;
  void drop_ramps(std::vector<Piece>* ps) const;
  void enforce_order(std::vector<Piece>* ps) const;
  void merge_sublevels(std::vector<Piece>* ps) const;
  void drop_close_capacities(std::vector<Piece>* ps) const;
  double min_step() const { return std::log1p(opt_.min_relative_step); }
  double close_step(const Piece& a, const Piece& b) const {
    const double na = static_cast<double>(a.b - a.a + 1), nb = static_cast<double>(b.b - b.a + 1);
    return std::max(min_step(), kBand * sigma_ * std::sqrt(1 / na + 1 / nb));
  }
  double outer_step(const std::vector<Piece>& ps, std::size_t i, std::size_t j) const {
    double s = std::numeric_limits<double>::infinity();
    if (i > 0) s = std::min(s, std::fabs(step(ps[i - 1], ps[i])));
    if (j + 1 < ps.size()) s = std::min(s, std::fabs(step(ps[j], ps[j + 1])));
    return std::isfinite(s) ? s : 0.0;
  }

  const std::vector<CurvePoint>& curve_;
  LevelOptions opt_;
  std::vector<double> x_, y_;
  std::size_t n_ = 0;
  double sigma_ = 0;
};

std::vector<Piece> Analyzer::segment() const {
  const double beta = std::max(6.0, 2.0 * std::log(static_cast<double>(n_)));
  const double inv_var = 1.0 / (sigma_ * sigma_);
  // cost[a][b] for the piece a..b
  std::vector<std::vector<double>> cost(n_, std::vector<double>(n_, 0.0));
  for (std::size_t a = 0; a < n_; ++a)
    for (std::size_t b = a; b < n_; ++b) {
      const double c = centre(a, b);
      double s = 0;
      for (std::size_t i = a; i <= b; ++i)
        s += std::min((y_[i] - c) * (y_[i] - c) * inv_var, kTruncSq);
      cost[a][b] = s;
    }
  std::vector<double> best(n_ + 1, std::numeric_limits<double>::infinity());
  std::vector<std::size_t> from(n_ + 1, 0);
  best[0] = 0;
  for (std::size_t e = 1; e <= n_; ++e)
    for (std::size_t s = 0; s < e; ++s) {
      const double v = best[s] + cost[s][e - 1] + beta;
      if (v < best[e]) best[e] = v, from[e] = s;
    }
  std::vector<Piece> out;
  for (std::size_t e = n_; e > 0; e = from[e]) out.push_back({from[e], e - 1});
  std::reverse(out.begin(), out.end());
  return out;
}

bool Analyzer::trim(Piece* p) const {
  for (int it = 0; it < 5; ++it) {
    const double c = centre(p->a, p->b);
    Piece q = *p;
    while (q.a < q.b && !on(q.a, c)) ++q.a;
    while (q.b > q.a && !on(q.b, c)) --q.b;
    if (!on(q.a, c)) return false;
    const bool same = q.a == p->a && q.b == p->b;
    *p = q;
    if (same) break;
  }
  const std::size_t len = p->b - p->a + 1;
  return len >= need(p->a, p->b) &&
         outliers(p->a, p->b, centre(p->a, p->b)) <= allowed_outliers(len);
}

// Merge neighbouring candidates that are not a real step apart, when their union is flat.
void Analyzer::merge_close(std::vector<Piece>* ps) const {
  for (;;) {
    std::size_t best = ps->size();
    double best_s = std::numeric_limits<double>::infinity();
    for (std::size_t i = 0; i + 1 < ps->size(); ++i) {
      const double s = std::fabs(step((*ps)[i], (*ps)[i + 1]));
      if (s >= close_step((*ps)[i], (*ps)[i + 1]) || s >= best_s) continue;
      if (!flat_union((*ps)[i].a, (*ps)[i + 1].b, outer_step(*ps, i, i + 1))) continue;
      best = i, best_s = s;
    }
    if (best == ps->size()) return;
    (*ps)[best].b = (*ps)[best + 1].b;
    ps->erase(ps->begin() + static_cast<long>(best) + 1);
  }
}

// A piece of a smooth ramp either rises significantly across its own span by much of the
// step to the neighbouring candidates (adj_step), or lies on a significantly rising line
// that continues through the points beyond its ends (needed when the neighbours are far
// because the ramp between them made no candidates, and for short noisy pieces). A
// plateau's own rise is noise, and points beyond it that are not on it are a step off any
// line through it.
bool Analyzer::is_ramp(const Piece& p, double adj_step) const {
  const std::size_t len = p.b - p.a + 1;
  double r, se;
  rise(p.a, p.b, &r, &se);
  if (len > opt_.min_edge_points && std::fabs(r) > kRiseSignif * se && adj_step > 0 &&
      std::fabs(r) > kRampRatio * adj_step)
    return true;
  const std::size_t a = p.a >= kRampReach ? p.a - kRampReach : 0;
  const std::size_t b = std::min(n_ - 1, p.b + kRampReach);
  if (b - a + 1 <= len) return false;
  double sx = 0, sy = 0;
  for (std::size_t i = a; i <= b; ++i) sx += x_[i], sy += y_[i];
  const double m = static_cast<double>(b - a + 1), mx = sx / m, my = sy / m;
  double sxx = 0, sxy = 0;
  for (std::size_t i = a; i <= b; ++i)
    sxx += (x_[i] - mx) * (x_[i] - mx), sxy += (x_[i] - mx) * (y_[i] - my);
  const double slope = sxy / sxx;
  for (std::size_t i = a; i <= b; ++i)
    if (std::fabs(y_[i] - my - slope * (x_[i] - mx)) > kRampFit * sigma_) return false;
  const double span = x_[b] - x_[a];
  if (std::fabs(slope * span) <= kRampSignif * sigma_ * span / std::sqrt(sxx)) return false;
  // With the line on both sides the piece is inside a ramp, however flat it looks. At an
  // end of the curve the piece itself must follow the line, its own slope within 2
  // standard errors of it (a flat plateau followed by a gentle tail is not a ramp).
  if (a < p.a && b > p.b) return true;
  const double own_span = x_[p.b] - x_[p.a];
  if (!(own_span > 0) || !std::isfinite(se)) return true;
  return std::fabs(r / own_span - slope) <= kRiseSignif * se / own_span;
}

// A piece that rises like a ramp may be a plateau whose cache's hit rate starts to fall
// before the segmentation ended it (the far L2 of a Hopper through Vulkan: 523, 521, 525
// cycles, then 532, 543, 547 on the way to 577): its longest prefix of at least min_points
// that is no ramp is kept as the plateau, the rest left to the ramp.
void Analyzer::drop_ramps(std::vector<Piece>* ps) const {
  std::vector<Piece> keep;
  for (std::size_t i = 0; i < ps->size(); ++i) {
    const Piece p = (*ps)[i];
    const double adj = outer_step(*ps, i, i);
    if (!is_ramp(p, adj)) {
      keep.push_back(p);
      continue;
    }
    for (std::size_t b = p.b; b > p.a; --b) {
      const Piece q{p.a, b - 1};
      if (q.b - q.a + 1 < need(q.a, q.b)) break;
      if (!is_ramp(q, adj)) {
        keep.push_back(q);
        break;
      }
    }
  }
  *ps = keep;
}

// Successive levels must rise by at least min_relative_step: merge the closest pair when
// the union is flat, else drop the smaller of the two.
void Analyzer::enforce_order(std::vector<Piece>* ps) const {
  for (;;) {
    std::size_t worst = ps->size();
    double worst_s = std::numeric_limits<double>::infinity();
    for (std::size_t i = 0; i + 1 < ps->size(); ++i) {
      const double s = step((*ps)[i], (*ps)[i + 1]);
      if (s < close_step((*ps)[i], (*ps)[i + 1]) && s < worst_s) worst = i, worst_s = s;
    }
    if (worst == ps->size()) return;
    Piece& a = (*ps)[worst];
    const Piece& b = (*ps)[worst + 1];
    if (worst_s > -min_step() && flat_union(a.a, b.b, outer_step(*ps, worst, worst + 1))) {
      a.b = b.b;
      ps->erase(ps->begin() + static_cast<long>(worst) + 1);
    } else {
      const bool drop_a = (a.b - a.a) < (b.b - b.a);
      ps->erase(ps->begin() + static_cast<long>(drop_a ? worst : worst + 1));
    }
  }
}

void Analyzer::merge_sublevels(std::vector<Piece>* ps) const {
  if (opt_.sublevel_ratio <= 0) return;
  for (bool changed = true; changed;) {
    changed = false;
    for (std::size_t i = 1; i + 2 < ps->size(); ++i) {
      const double s = step((*ps)[i], (*ps)[i + 1]);
      const double below = step((*ps)[i - 1], (*ps)[i]);
      const double above = step((*ps)[i + 1], (*ps)[i + 2]);
      if (s < opt_.sublevel_ratio * std::min(below, above)) {
        (*ps)[i].b = (*ps)[i + 1].b;
        ps->erase(ps->begin() + static_cast<long>(i) + 1);
        changed = true;
        break;
      }
    }
  }
}

// Capacities are the pieces' last footprints; the last piece has none (the curve never
// leaves it), so only pairs below it are judged.
void Analyzer::drop_close_capacities(std::vector<Piece>* ps) const {
  if (opt_.min_capacity_ratio <= 1) return;
  const double min_doublings = std::log2(opt_.min_capacity_ratio);
  for (bool changed = true; changed;) {
    changed = false;
    for (std::size_t i = 0; i + 2 < ps->size(); ++i) {
      const Piece& lo = (*ps)[i];
      const Piece& hi = (*ps)[i + 1];
      if (x_[hi.b] - x_[lo.b] >= min_doublings) continue;
      const bool drop_lo = x_[lo.b] - x_[lo.a] < x_[hi.b] - x_[hi.a];
      ps->erase(ps->begin() + static_cast<long>(drop_lo ? i : i + 1));
      changed = true;
      break;
    }
  }
}

std::vector<DetectedLevel> Analyzer::run() {
  std::vector<DetectedLevel> out;
  if (n_ == 0) return out;
  if (n_ == 1) {
    DetectedLevel l;
    l.latency = curve_[0].latency;
    l.confidence = 0.25;  // one point says nothing about flatness or edges
    out.push_back(l);
    return out;
  }

  std::vector<Piece> ps;
  for (Piece p : segment())
    if (trim(&p)) ps.push_back(p);
  merge_close(&ps);
  drop_ramps(&ps);
  merge_close(&ps);
  enforce_order(&ps);
  merge_sublevels(&ps);
  drop_close_capacities(&ps);

  // Grow each plateau over neighbouring points that are on its centre (not past the next).
  for (std::size_t i = 0; i < ps.size(); ++i) {
    const std::size_t lo = i == 0 ? 0 : ps[i - 1].b + 1;
    const std::size_t hi = i + 1 == ps.size() ? n_ - 1 : ps[i + 1].a - 1;
    const double c = centre(ps[i].a, ps[i].b);
    while (ps[i].a > lo && on(ps[i].a - 1, c)) --ps[i].a;
    while (ps[i].b < hi && on(ps[i].b + 1, c)) ++ps[i].b;
  }

  // Confidence = f_snr * f_points * f_edge, each in [0,1]:
  //  f_snr    = 1 - exp(-(s / (4 sigma))^2), s = smallest log step to an adjacent level
  //             (1 when there is no other level): 10% over 1.5% noise ~0.94, over 3% ~0.5;
  //  f_points = 1 - 0.5^(m-1), m points on the plateau: 2 -> 0.5, 3 -> 0.75, 6 -> 0.97;
  //  f_edge   = 1 / (1 + max(0, w - 0.5)), w = width in doublings between the plateau's
  //             last point and the next level's first (for the last level: its edge from
  //             the level below): a sharp edge (w <= 0.5) -> 1, smeared over 2.5 -> 0.33.
  for (std::size_t i = 0; i < ps.size(); ++i) {
    const Piece& p = ps[i];
    DetectedLevel l;
    l.first = p.a;
    l.last = p.b;
    l.latency = median([&] {
      std::vector<double> v;
      for (std::size_t k = p.a; k <= p.b; ++k) v.push_back(curve_[k].latency);
      return v;
    }());
    const double c = std::log(l.latency);
    if (i + 1 < ps.size()) {
      l.capacity_lo = curve_[p.b].footprint_bytes;
      std::size_t k = p.b + 1;
      while (k < n_ && y_[k] <= c + kBand * sigma_) ++k;
      l.capacity_hi = curve_[std::min(k, n_ - 1)].footprint_bytes;
    }
    double s = std::numeric_limits<double>::infinity();
    if (i > 0) s = std::min(s, std::fabs(step(ps[i - 1], p)));
    if (i + 1 < ps.size()) s = std::min(s, std::fabs(step(p, ps[i + 1])));
    const double f_snr = std::isfinite(s) ? 1 - std::exp(-std::pow(s / (4 * sigma_), 2)) : 1.0;
    const double m = static_cast<double>(p.b - p.a + 1);
    const double f_points = 1 - std::pow(0.5, m - 1);
    double w = 0;
    if (i + 1 < ps.size())
      w = x_[ps[i + 1].a] - x_[p.b];
    else if (i > 0)
      w = x_[p.a] - x_[ps[i - 1].b];
    const double f_edge = 1 / (1 + std::max(0.0, w - 0.5));
    l.confidence = std::clamp(f_snr * f_points * f_edge, 0.0, 1.0);
    out.push_back(l);
  }
  return out;
}

}  // namespace

std::vector<DetectedLevel> detect_levels(const std::vector<CurvePoint>& curve,
                                         const LevelOptions& opt) {
  return Analyzer(curve, opt).run();
}

std::vector<std::size_t> steps_to_refine(const std::vector<CurvePoint>& curve,
                                         double min_relative_rise) {
  std::vector<std::size_t> out;
  if (curve.size() < 2) return out;
  std::vector<double> y;
  for (const auto& p : curve) y.push_back(ln_or_throw(p.latency));
  // A lower floor than detect_levels: refining a clean curve's small steps is cheap.
  const double sigma = estimate_sigma(y, curve, 0.005);
  // A rise must persist: the lower of the two points after the step must exceed the higher
  // of the two before it (so one outlier or one dip is no step), by min_relative_rise and
  // by 3.5 sigma of a difference of two points.
  const double thr = std::max(std::log1p(min_relative_rise), 3.5 * std::sqrt(2.0) * sigma);
  const std::size_t n = y.size();
  for (std::size_t i = 0; i + 1 < n; ++i) {
    const double before = i > 0 ? std::max(y[i - 1], y[i]) : y[i];
    const double after = i + 2 < n ? std::min(y[i + 1], y[i + 2]) : y[i + 1];
    if (y[i + 1] - y[i] > thr && after - before > thr) out.push_back(i);
  }
  return out;
}

}  // namespace gd
