// Headline figures: the flat list every probe exports, with ids that stay the same from
// release to release. Comparisons, baselines and fleet runs read this list and nothing
// else, so an id, once published (docs/probes/<probe>.md), is never renamed.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "gpudissect/stats.hpp"
#include "gpudissect/status.hpp"

namespace gd {

struct Figure {
  std::string id;                        // "latency.global.L1", "bandwidth.dram.read" ...
  std::string label;                     // "global L1 latency"
  std::optional<Summary> value;          // absent when status is not ok
  std::string unit;                      // "cycles", "ns", "GB/s", "TFLOP/s", "TOP/s", "bytes" ...
  std::optional<double> per_sm_per_clk;  // value normalised per SM per clock, where it means
  std::string per_sm_per_clk_unit;       // "B/clk/SM", "ops/clk/SM"
  std::string instruction;               // SASS/ISA timed ("ATOMS.CAS"), where known
  std::string where;                     // curve and point it was taken from
  std::optional<double> clock_mhz;       // SM clock while it was measured
  bool higher_is_better = true;          // bandwidths and rates; false for latencies
  // The measurement's own step, relative, where it is coarser than its noise: a capacity is
  // found between two footprints of a sweep (2^(1/8) apart on the latency map), so 0.09 says
  // that two runs finding it one point apart measured the same thing. compare --baseline
  // never flags a change within it. Absent: no step beyond the repeats' spread.
  std::optional<double> resolution;
  Status status;
  // Why the figure may not be what the GPU does alone (it was measured while another process
  // used the GPU, or while the clock was throttled); empty: nothing known against it. Kept
  // apart from `status` so that ids and status strings stay what comparisons expect.
  std::string suspect;
};

// (Summary's JSON is defined with the result model, result.cpp.)
void to_json(nlohmann::json& j, const Summary& s);
void from_json(const nlohmann::json& j, Summary& s);
void to_json(nlohmann::json& j, const Figure& f);
void from_json(const nlohmann::json& j, Figure& f);

// A figure from a single value (no repeats), as a Summary of one sample.
Summary single_value(double v);

}  // namespace gd
