#include "gpudissect/stats.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace gd {

double quantile(std::vector<double> v, double q) {
  if (v.empty()) throw std::invalid_argument("quantile of no samples");
  std::sort(v.begin(), v.end());
  const double pos = q * static_cast<double>(v.size() - 1);
  const auto lo = static_cast<std::size_t>(std::floor(pos));
  const auto hi = std::min(lo + 1, v.size() - 1);
  return v[lo] + (pos - static_cast<double>(lo)) * (v[hi] - v[lo]);
}

double median(std::vector<double> v) { return quantile(std::move(v), 0.5); }

Summary summarize(const std::vector<double>& v) {
  if (v.empty()) throw std::invalid_argument("summary of no samples");
  Summary s;
  s.median = quantile(v, 0.5);
  s.q1 = quantile(v, 0.25);
  s.q3 = quantile(v, 0.75);
  auto [mn, mx] = std::minmax_element(v.begin(), v.end());
  s.min = *mn;
  s.max = *mx;
  s.n = v.size();
  return s;
}

double Summary::relative_spread() const { return median != 0 ? iqr() / std::fabs(median) : 0.0; }

double robust_sigma(const std::vector<double>& v) {
  if (v.empty()) return 0;
  const double m = median(v);
  std::vector<double> dev;
  dev.reserve(v.size());
  for (double x : v) dev.push_back(std::fabs(x - m));
  return 1.4826 * median(dev);
}

double student_t95(int dof) {
  static const double kTable[] = {12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306,
                                  2.262,  2.228, 2.201, 2.179, 2.160, 2.145, 2.131, 2.120,
                                  2.110,  2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064,
                                  2.060,  2.056, 2.052, 2.048, 2.045, 2.042};
  if (dof < 1) dof = 1;
  if (dof <= 30) return kTable[dof - 1];
  return 1.96 + 2.4 / dof;
}

bool StoppingRule::done(const std::vector<double>& samples) const {
  if (samples.size() >= max_samples) return true;
  if (samples.size() < min_samples) return false;
  return summarize(samples).relative_spread() <= target_relative_spread;
}

}  // namespace gd
