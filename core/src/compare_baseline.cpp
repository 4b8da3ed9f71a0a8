// The regression gate: a new run's figures against a baseline's, within the larger of the
// tolerance, the baseline's own sweep step and the baseline's own spread.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <map>
#include <set>

#include "gpudissect/compare.hpp"
#include "gpudissect/compare_internal.hpp"

namespace gd {

using namespace compare_detail;

std::optional<double> parse_tolerance(const std::string& s) {
  std::string t;
  for (char c : s)
    if (!std::isspace(static_cast<unsigned char>(c))) t += c;
  if (!t.empty() && t.back() == '%') t.pop_back();
  if (t.empty()) return std::nullopt;
  char* end = nullptr;
  const double v = std::strtod(t.c_str(), &end);
  if (!end || *end != '\0' || !std::isfinite(v) || v < 0) return std::nullopt;
  return v / 100.0;
}

std::string to_string(Verdict v) {
  switch (v) {
    case Verdict::within:
      return "within tolerance";
    case Verdict::improved:
      return "improved";
    case Verdict::regressed:
      return "regressed";
    case Verdict::failed:
      return "failed (ok in baseline)";
    case Verdict::recovered:
      return "ok again (failed in baseline)";
    case Verdict::failed_both:
      return "failed in both";
    case Verdict::only_new:
      return "new (not in baseline)";
    case Verdict::only_baseline:
      return "missing (only in baseline)";
    case Verdict::not_comparable:
      return "not comparable";
    case Verdict::not_gated:
      return "not gated (host)";
  }
  return "?";
}

bool is_regression(Verdict v) { return v == Verdict::regressed || v == Verdict::failed; }

int BaselineReport::regressions() const {
  return static_cast<int>(std::count_if(
      items.begin(), items.end(), [](const BaselineItem& i) { return is_regression(i.verdict); }));
}
int BaselineReport::improvements() const {
  return static_cast<int>(std::count_if(items.begin(), items.end(), [](const BaselineItem& i) {
    return i.verdict == Verdict::improved || i.verdict == Verdict::recovered;
  }));
}

int BaselineReport::not_gated() const {
  return static_cast<int>(std::count_if(items.begin(), items.end(), [](const BaselineItem& i) {
    return i.verdict == Verdict::not_gated;
  }));
}

bool is_host_figure(const std::string& id) {
  // Launch figures are timed by the host's clock around driver calls, and the host ping-pong
  // waits on a host thread's wake-up: the host CPU's speed and load move them as much as the
  // GPU does.
  return starts_with(id, "host.") || starts_with(id, "frontend.launch.") ||
         starts_with(id, "atomics.host.") ||
         (starts_with(id, "bandwidth.host.") && ends_with(id, "_pageable"));
}

double measured_spread(const Figure& f) {
  if (!f.value || f.value->n < 2) return 0;
  const Summary& v = *f.value;
  // Quartiles that do not bracket the median (absent from the JSON, or written by hand) say
  // nothing about the spread.
  if (!(v.q1 <= v.median && v.median <= v.q3) || v.median == 0) return 0;
  const double s = v.relative_spread();
  return std::isfinite(s) && s > 0 ? s : 0;
}

namespace {

// The comparable number of a figure: its value, else its per-clock value.
std::optional<double> number(const Figure& f, std::string* unit) {
  if (f.value) {
    *unit = f.unit;
    return f.value->median;
  }
  if (f.per_sm_per_clk) {
    *unit = f.per_sm_per_clk_unit;
    return f.per_sm_per_clk;
  }
  return std::nullopt;
}

// A relative margin so that a change of exactly the tolerance (e.g. 100 -> 97 at 3 %) counts
// as within despite rounding.
constexpr double kEps = 1e-9;

// Two numbers of one figure, both ok: the change against what the baseline allows.
void judge_change(BaselineItem& it, const Figure& bf, double cv, const std::string& cu, double bv,
                  const std::string& bu, double tolerance) {
  const auto c2 = convert_unit(cv, cu, bu);
  if (!c2) {
    // An id keeps its unit from release to release: a new run stating another one has not
    // measured what the baseline did, and must not pass by saying so.
    it.verdict = Verdict::failed;
    it.reason = "units differ: " + cu + " against " + bu;
    return;
  }
  if (bv == 0) {
    it.verdict = *c2 == 0 ? Verdict::within : Verdict::not_comparable;
    if (*c2 != 0) it.reason = "baseline is 0";
    return;
  }
  it.current = c2;
  it.unit = bu;
  const double change = (*c2 - bv) / std::fabs(bv);
  it.change = change;
  const double better = it.higher_is_better ? change : -change;
  // A figure found between two points of a sweep (a capacity) cannot be told apart from one a
  // step away: the baseline's step widens the tolerance. Only the baseline's: the file under
  // judgement could otherwise claim a step wide enough to excuse anything.
  const double step =
      bf.resolution && std::isfinite(*bf.resolution) && *bf.resolution > 0 ? *bf.resolution : 0;
  // Likewise the spread the baseline measured over its repeats: a change the baseline's own
  // samples would show is noise, not a regression. Again the baseline's alone: the new file's
  // quartiles are what is judged, not what judges.
  const double spread = measured_spread(bf);
  it.spread = spread;
  const double allowed = std::max({tolerance, step, spread});
  if (better < -allowed - kEps)
    it.verdict = Verdict::regressed;
  else if (better > allowed + kEps)
    it.verdict = Verdict::improved;
  else
    it.verdict = Verdict::within;
  if (it.verdict != Verdict::within || std::fabs(better) <= tolerance + kEps) return;
  // Past the tolerance, inside the band: say what widened it.
  if (step >= std::fabs(better) - kEps || step >= spread)
    it.reason = "within the measurement's step (" + fmt(100 * step, 1) + " %)";
  else
    it.reason = "within the baseline's spread (IQR " + fmt(100 * spread, 1) + " % of median)";
}

// A value that counts: ok, or "unstable" (measured, its repeats spread past the probe's
// limit). An unstable figure is judged by its median like any other: the file under judgement
// can only make a figure fail by its status, never widen the band it is judged in.
bool judged_by_value(const Status& s) { return s.ok() || s.code == StatusCode::unstable; }

// A figure of the new run against the baseline's figure of the same id.
void judge(BaselineItem& it, const Figure& f, const Figure& bf, double tolerance) {
  it.higher_is_better = bf.higher_is_better;
  std::string cu, bu;
  const auto cv = judged_by_value(f.status) ? number(f, &cu) : std::nullopt;
  const auto bv = judged_by_value(bf.status) ? number(bf, &bu) : std::nullopt;
  it.baseline = bv;
  const bool cur_ok = cv.has_value(), base_ok = bv.has_value();
  if (!cur_ok && base_ok) {
    it.verdict = Verdict::failed;
    it.reason = judged_by_value(f.status) ? "no value" : status_text(f.status);
  } else if (cur_ok && !base_ok) {
    it.verdict = Verdict::recovered;
    it.reason = "baseline: " + status_text(bf.status);
  } else if (!cur_ok && !base_ok) {
    it.verdict = Verdict::failed_both;
    it.reason = status_text(f.status);
  } else {
    judge_change(it, bf, *cv, cu, *bv, bu, tolerance);
    if (!f.status.ok()) it.reason += (it.reason.empty() ? "" : "; ") + std::string("unstable here");
  }
}

BaselineItem item_of(const Figure& f) {
  BaselineItem it;
  it.id = f.id;
  it.label = f.label;
  it.unit = f.unit;
  it.higher_is_better = f.higher_is_better;
  return it;
}

// A host-side figure's verdict, kept in its reason: shown, never gated.
void leave_out_host(BaselineItem& it) {
  std::string would = to_string(it.verdict) + (it.reason.empty() ? "" : ": " + it.reason);
  it.verdict = Verdict::not_gated;
  it.reason = "would be " + would;
}

}  // namespace

BaselineReport compare_baseline(const CompareInput& baseline, const CompareInput& current,
                                double tolerance, bool allow_missing, bool include_host) {
  BaselineReport rep;
  rep.baseline = baseline;
  rep.current = current;
  rep.tolerance = tolerance;
  rep.include_host = include_host;
  std::map<std::string, const Figure*> base;
  for (const Figure& f : baseline.figures) base.emplace(f.id, &f);
  std::set<std::string> seen;
  for (const Figure& f : current.figures) {
    if (!seen.insert(f.id).second) continue;
    BaselineItem it = item_of(f);
    std::string cu;
    it.current = judged_by_value(f.status) ? number(f, &cu) : std::nullopt;
    auto b = base.find(f.id);
    if (b == base.end()) {
      it.verdict = Verdict::only_new;
    } else if (allow_missing && f.status.code == StatusCode::skipped) {
      // Not measured by choice (a partial run such as --quick skips it): as if absent.
      std::string bu;
      it.baseline = judged_by_value(b->second->status) ? number(*b->second, &bu) : std::nullopt;
      it.verdict = Verdict::only_baseline;
      it.reason = "skipped in the new run: " + f.status.reason;
    } else {
      judge(it, f, *b->second, tolerance);
    }
    rep.items.push_back(std::move(it));
  }
  for (const Figure& f : baseline.figures) {
    if (!seen.insert(f.id).second) continue;
    BaselineItem it = item_of(f);
    std::string bu;
    it.baseline = judged_by_value(f.status) ? number(f, &bu) : std::nullopt;
    it.verdict = Verdict::only_baseline;
    // A figure the baseline measured and the new run lacks (dropped, renamed, or a run with
    // no figures at all) fails the gate, unless partial runs were asked for.
    if (it.baseline && !allow_missing) {
      it.verdict = Verdict::failed;
      it.reason = "missing from the new run (ok in the baseline)";
    }
    rep.items.push_back(std::move(it));
  }
  if (!include_host)
    for (BaselineItem& it : rep.items)
      if (is_host_figure(it.id)) leave_out_host(it);
  return rep;
}

}  // namespace gd
