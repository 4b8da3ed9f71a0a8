// Robust summaries of repeated measurements, and the rule that says when to stop repeating.
#pragma once

#include <cstddef>
#include <vector>

namespace gd {

// median with its spread; every reported figure carries one.
struct Summary {
  double median = 0;
  double q1 = 0, q3 = 0;  // quartiles (linear interpolation)
  double min = 0, max = 0;
  std::size_t n = 0;
  double iqr() const { return q3 - q1; }
  // Interquartile range over the median: the spread figure used throughout.
  double relative_spread() const;
};

double quantile(std::vector<double> v, double q);  // q in [0,1]; v must not be empty
double median(std::vector<double> v);
Summary summarize(const std::vector<double>& v);  // v must not be empty
// Median absolute deviation scaled to a normal sigma (1.4826 * MAD).
double robust_sigma(const std::vector<double>& v);
// Student's t two-sided 95 % quantile (t at 0.975) for `dof` degrees of freedom (>= 1): how
// many standard errors a mean of dof + 1 samples may lie from the true mean. Tabulated to
// 30, then 1.96 + 2.4 / dof (within 0.1 % of the exact value).
double student_t95(int dof);

// Stop when at least min_samples exist and the relative IQR is below target,
// or when max_samples is reached.
struct StoppingRule {
  std::size_t min_samples = 3;
  std::size_t max_samples = 15;
  double target_relative_spread = 0.01;
  bool done(const std::vector<double>& samples) const;
};

}  // namespace gd
