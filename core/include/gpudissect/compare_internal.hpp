// Helpers the compare sources share (reference database, normalisation, baseline, curves):
// the unit table and small string tests. Only those sources include it.
#pragma once

#include <cctype>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

namespace gd::compare_detail {

inline std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

inline bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}
inline bool starts_with(const std::string& s, const std::string& prefix) {
  return s.rfind(prefix, 0) == 0;
}

// Units of one dimension and their factor to the first (the canonical one).
struct Dim {
  std::vector<std::pair<std::string, double>> units;
};
inline const std::vector<Dim>& dims() {
  static const std::vector<Dim> d = {
      {{{"GB/s", 1}, {"TB/s", 1e3}, {"MB/s", 1e-3}}},
      {{{"TFLOP/s", 1}, {"GFLOP/s", 1e-3}}},
      {{{"TOP/s", 1}, {"GOP/s", 1e-3}}},
      // Plain instructions (moves, warp ops, FP32 add): counted as thread-instructions.
      {{{"Tinst/s", 1}, {"Ginst/s", 1e-3}}},
      {{{"ns", 1}, {"us", 1e3}}},
      {{{"cycles", 1}}},
      {{{"bytes", 1}}},
      {{{"B/clk/SM", 1}}},
      {{{"ops/clk/SM", 1}}},
      {{{"FLOP/clk/SM", 1}}},
      {{{"OP/clk/SM", 1}}},
      // The front end's figures (frontend.*): each its own dimension.
      {{{"inst/clk/warp", 1}}},
      {{{"ratio", 1}}},
      {{{"kernels/s", 1}}},
      {{{"blocks/us", 1}}},
      {{{"blocks/clk (GPU-wide)", 1}}},
      {{{"warps", 1}}},
      {{{"blocks", 1}}},
      {{{"registers", 1}}},
  };
  return d;
}
inline const Dim* dim_of(const std::string& unit, double* factor) {
  for (const Dim& d : dims())
    for (const auto& [u, f] : d.units)
      if (u == unit) {
        if (factor) *factor = f;
        return &d;
      }
  return nullptr;
}

inline bool per_clock_unit_name(const std::string& u) {
  return u == "B/clk/SM" || u == "ops/clk/SM" || u == "FLOP/clk/SM" || u == "OP/clk/SM";
}

inline std::string fmt(double v, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

}  // namespace gd::compare_detail
