// Soak runs: the series of each headline figure over the repetitions, and its judgement.
#include "gpudissect/soak.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <vector>

#include "gpudissect/compare.hpp"
#include "gpudissect/stats.hpp"

namespace gd {

std::optional<double> parse_duration(const std::string& s) {
  if (s.empty() || !(std::isdigit(static_cast<unsigned char>(s[0])) || s[0] == '.'))
    return std::nullopt;
  char* end = nullptr;
  const double v = std::strtod(s.c_str(), &end);
  const std::string suffix(end);
  double scale = 0;
  if (suffix.empty() || suffix == "s")
    scale = 1;
  else if (suffix == "m")
    scale = 60;
  else if (suffix == "h")
    scale = 3600;
  else
    return std::nullopt;
  const double seconds = v * scale;
  if (!std::isfinite(seconds) || seconds <= 0 || seconds > 7 * 24 * 3600.0) return std::nullopt;
  return seconds;
}

std::optional<double> SoakSeries::first() const {
  return values.empty() ? std::nullopt : values.front();
}
std::optional<double> SoakSeries::last() const {
  return values.empty() ? std::nullopt : values.back();
}

std::optional<std::size_t> SoakSeries::worst_index() const {
  std::optional<std::size_t> w;
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (!values[i]) continue;
    if (!w || (higher_is_better ? *values[i] < *values[*w] : *values[i] > *values[*w])) w = i;
  }
  return w;
}

std::optional<double> SoakSeries::worst() const {
  const auto i = worst_index();
  return i ? values[*i] : std::nullopt;
}

namespace {
std::optional<double> change(std::optional<double> from, std::optional<double> to) {
  if (!from || !to || *from == 0) return std::nullopt;
  return (*to - *from) / *from;
}
}  // namespace

std::optional<double> SoakSeries::drift() const { return change(first(), last()); }
std::optional<double> SoakSeries::worst_change() const { return change(first(), worst()); }

namespace {
// The values of repetitions [from, to) that have one.
std::vector<double> present(const std::vector<std::optional<double>>& v, std::size_t from,
                            std::size_t to) {
  std::vector<double> out;
  for (std::size_t i = from; i < to && i < v.size(); ++i)
    if (v[i]) out.push_back(*v[i]);
  return out;
}
}  // namespace

std::optional<double> SoakSeries::sustained_change(double* spread) const {
  if (spread) *spread = 0;
  const std::size_t n = values.size();
  if (n < 3) return change(first(), last());
  // The first third against the last third, each by its median: one slow repetition (a
  // host hiccup) moves neither; a GPU that slows as it heats moves the last third.
  const std::size_t third = n / 3;
  const std::vector<double> early = present(values, 0, third), late = present(values, n - third, n);
  if (early.empty() || late.empty()) return std::nullopt;
  const Summary e = summarize(early), l = summarize(late);
  if (spread && e.median != 0) *spread = std::fabs(e.q3 - e.q1) / std::fabs(e.median);
  return change(e.median, l.median);
}

bool SoakSeries::regressed(double tolerance) const {
  if (!first()) return false;  // nothing to hold the later repetitions to
  // Ok in the first repetition, failed later. A figure missing from a repetition is not
  // judged (as compare --baseline treats a partial run): a level the sweep did not resolve
  // that time has no id to fail under.
  for (std::size_t i = 1; i < values.size(); ++i)
    if (!values[i] && (i >= statuses.size() || statuses[i] != "missing")) return true;
  double spread = 0;
  const auto c = sustained_change(&spread);
  if (!c) return false;
  const double allowed = std::max({tolerance, resolution.value_or(0), spread});
  return higher_is_better ? -*c > allowed : *c > allowed;
}

void Soak::add(const SoakRepetition& rep, const std::vector<Figure>& figures,
               const std::optional<GpuState>& state) {
  const std::size_t n = reps_.size();  // the index of this repetition
  reps_.push_back(rep);
  std::vector<bool> seen(series_.size(), false);
  for (const Figure& f : figures) {
    auto it = std::find_if(series_.begin(), series_.end(),
                           [&](const SoakSeries& s) { return s.id == f.id; });
    if (it == series_.end()) {  // new: absent from every earlier repetition
      SoakSeries s;
      s.id = f.id;
      s.label = f.label;
      s.unit = f.unit;
      s.higher_is_better = f.higher_is_better;
      s.resolution = f.resolution;
      s.values.assign(n, std::nullopt);
      s.statuses.assign(n, "missing");
      series_.push_back(std::move(s));
      seen.push_back(false);
      it = series_.end() - 1;
    }
    seen[it - series_.begin()] = true;
    // An unstable figure still has a value: the soak follows it, its status says the rest.
    const bool has_value = f.value && (f.status.ok() || f.status.code == StatusCode::unstable);
    it->values.push_back(has_value ? std::optional<double>(f.value->median) : std::nullopt);
    it->statuses.push_back(f.status.name());
  }
  for (std::size_t i = 0; i < series_.size(); ++i)
    if (!seen[i]) {
      series_[i].values.push_back(std::nullopt);
      series_[i].statuses.push_back("missing");
    }
  if (state)
    for (const GpuStateSample& s : state->samples) {
      if (!s.known) continue;
      ++state_samples_known_;
      for (const std::string& why : s.throttle_reasons) ++throttle_[why];
    }
}

std::vector<std::string> Soak::regressions() const {
  std::vector<std::string> ids;
  for (const SoakSeries& s : series_)
    if (!is_host_figure(s.id) && s.regressed(tolerance_)) ids.push_back(s.id);
  return ids;
}

std::optional<std::map<std::string, int>> Soak::throttle_events() const {
  if (state_samples_known_ == 0) return std::nullopt;
  return throttle_;
}

namespace {
nlohmann::json opt(std::optional<double> v) { return v ? nlohmann::json(*v) : nlohmann::json(); }
nlohmann::json ecc_json(const std::optional<EccCounts>& e) {
  if (!e) return "not available";
  return {{"corrected", e->corrected}, {"uncorrected", e->uncorrected}};
}
}  // namespace

nlohmann::json Soak::to_json() const {
  using nlohmann::json;
  json j;
  j["duration_s"] = duration_s_;
  j["elapsed_s"] = elapsed_s_;
  j["complete"] = complete_;
  j["tolerance_percent"] = 100 * tolerance_;
  j["repetitions"] = json::array();
  for (const SoakRepetition& r : reps_)
    j["repetitions"].push_back(
        {{"started_s", r.started_s}, {"wall_s", r.wall_s}, {"exit_status", r.exit_status}});
  j["figures"] = json::array();
  for (const SoakSeries& s : series_) {
    json f{{"id", s.id},
           {"label", s.label},
           {"unit", s.unit},
           {"higher_is_better", s.higher_is_better},
           {"regressed", s.regressed(tolerance_)},
           {"statuses", s.statuses}};
    // An absent value is an absent key (the JSON's convention); the per-repetition list
    // keeps its places with null.
    if (s.first()) f["first"] = *s.first();
    if (s.last()) f["last"] = *s.last();
    if (s.worst_index()) {
      f["worst"] = *s.worst();
      f["worst_repetition"] = *s.worst_index();
    }
    if (s.drift()) f["drift_percent"] = 100 * *s.drift();
    if (s.worst_change()) f["worst_change_percent"] = 100 * *s.worst_change();
    f["values"] = json::array();
    for (const auto& v : s.values) f["values"].push_back(opt(v));
    j["figures"].push_back(std::move(f));
  }
  j["regressions"] = regressions();
  if (const auto t = throttle_events())
    j["throttle_events"] = *t;
  else
    j["throttle_events"] = "not available";
  j["ecc_before"] = ecc_json(ecc_before_);
  j["ecc_after"] = ecc_json(ecc_after_);
  return j;
}

}  // namespace gd
