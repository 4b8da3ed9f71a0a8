#include "gpudissect/fleet_units.hpp"

#include <cmath>
#include <cstdio>
#include <utility>

#include "gpudissect/units.hpp"

namespace gd {

namespace {

// Three significant digits without an exponent: 32.0, 3.20, 320, 32000.
std::string digits3(double v) {
  char buf[64];
  const double a = std::fabs(v);
  std::snprintf(buf, sizeof buf, "%.*f", a >= 100 ? 0 : a >= 10 ? 1 : 2, v);
  return buf;
}

// The unit's decimal prefix and the rest: "GB/s" -> 1e9, "B/s"; {1, unit} for a unit without
// one of the bases below (a "kernels/s" is no kilo-"ernels/s").
std::pair<double, std::string> split_prefix(const std::string& unit) {
  static const char* const bases[] = {"B/s", "FLOP/s", "OP/s", "inst/s", "Hz"};
  static const std::pair<char, double> prefixes[] = {
      {'k', 1e3}, {'M', 1e6}, {'G', 1e9}, {'T', 1e12}, {'P', 1e15}};
  for (const char* b : bases) {
    if (unit == b) return {1, unit};
    for (const auto& [c, f] : prefixes)
      if (unit.size() > 1 && unit[0] == c && unit.compare(1, std::string::npos, b) == 0)
        return {f, b};
  }
  return {0, unit};
}

}  // namespace

std::string fleet_quantity(double v, const std::string& unit) {
  if (!std::isfinite(v)) return (std::isnan(v) ? "NaN " : v > 0 ? "inf " : "-inf ") + unit;
  if (unit == "bytes") return format_bytes(v);
  if (unit == "ns" || unit == "us" || unit == "ms" || unit == "s") {
    const double scale = unit == "ns" ? 1e-9 : unit == "us" ? 1e-6 : unit == "ms" ? 1e-3 : 1;
    const double sec = v * scale, a = std::fabs(sec);
    if (a >= 1 || a == 0) return digits3(sec) + " s";
    if (a >= 1e-3) return digits3(sec * 1e3) + " ms";
    if (a >= 1e-6) return digits3(sec * 1e6) + " us";
    return digits3(sec * 1e9) + " ns";
  }
  const auto [factor, base] = split_prefix(unit);
  if (factor == 0) return digits3(v) + (unit.empty() ? "" : " " + unit);
  static const std::pair<const char*, double> steps[] = {{"P", 1e15}, {"T", 1e12}, {"G", 1e9},
                                                         {"M", 1e6},  {"k", 1e3},  {"", 1}};
  const double x = v * factor;
  for (const auto& [p, f] : steps)
    if (std::fabs(x) >= f || f == 1) return digits3(x / f) + " " + p + base;
  return digits3(v) + " " + unit;
}

}  // namespace gd
