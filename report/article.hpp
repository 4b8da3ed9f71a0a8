// The opening of the run report, read first: a diagram of the memory hierarchy with the
// measured capacity, latency and bandwidth of each level, the per-SM-per-clock rates of the
// main instruction classes, and the five figures that set this GPU apart from the reference
// GPUs. Built from the run's headline figures and device facts only: a figure the run does
// not have is shown as "-", never filled in.
#pragma once

#include <string>
#include <vector>

#include "gpudissect/compare.hpp"
#include "gpudissect/result.hpp"

namespace gd::report::detail {

// The hierarchy as an inline SVG (boxes and text, drawn here; no script).
std::string hierarchy_svg(const RunResult& r);

struct Standout {
  std::string id, label;
  std::string basis;      // "per SM per clock", "per SM", "whole GPU"
  std::string unit;       // of the compared values
  double value = 0;       // this run's
  double nearest = 0;     // the nearest reference's
  std::string against;    // that reference's name
  std::string qualifier;  // the reference value's ("approx", "at least" ...)
  int references = 0;     // how many references state the figure
  double ratio = 0;       // value / nearest: above every reference (>1) or below (<1)
  bool better = true;     // whether the distance is in the figure's better direction
};

// The figures of `r` furthest outside the range of the references (other GPUs: a reference
// of the same GPU, "NVIDIA H200 (peer tools)" for an NVIDIA H200, is left out): per SM per
// clock where both sides have it, else per SM, else as stated; at most `n`, furthest first.
std::vector<Standout> standouts(const RunResult& r, const std::vector<ReferenceGpu>& refs,
                                std::size_t n = 5);

// The "At a glance" section. `refs_note` says why there is no reference database, if none.
std::string article_summary(const RunResult& r, const std::vector<ReferenceGpu>* refs,
                            const std::string& refs_note);

// A table of contents from the <h2 id="..."> headings of `html`, in order.
std::string table_of_contents(const std::string& html);

}  // namespace gd::report::detail
