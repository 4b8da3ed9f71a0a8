#include "gpudissect/units.hpp"

#include <cctype>
#include <cmath>
#include <cstdio>

namespace gd {

std::string format_bytes(double bytes) {
  static const char* kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int u = 0;
  while (std::fabs(bytes) >= 1024.0 && u < 4) {
    bytes /= 1024.0;
    ++u;
  }
  char buf[32];
  if (u == 0 || std::fabs(bytes - std::round(bytes)) < 0.005)
    std::snprintf(buf, sizeof buf, "%.0f %s", bytes, kUnits[u]);
  else if (bytes < 10)
    std::snprintf(buf, sizeof buf, "%.2f %s", bytes, kUnits[u]);
  else if (bytes < 100)
    std::snprintf(buf, sizeof buf, "%.1f %s", bytes, kUnits[u]);
  else
    std::snprintf(buf, sizeof buf, "%.0f %s", bytes, kUnits[u]);
  return buf;
}

std::string format_fixed(double v, int digits) {
  if (std::isnan(v)) return "-";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

std::string format_significant(double v, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*g", digits, v);
  return buf;
}

std::string slugify(const std::string& s) {
  std::string out;
  bool dash = false;
  for (unsigned char c : s) {
    if (std::isalnum(c)) {
      out.push_back(static_cast<char>(std::tolower(c)));
      dash = false;
    } else if (!out.empty() && !dash) {
      out.push_back('-');
      dash = true;
    }
  }
  while (!out.empty() && out.back() == '-') out.pop_back();
  return out.empty() ? "device" : out;
}

}  // namespace gd

namespace gd {

std::optional<uint64_t> parse_bytes(const std::string& s) {
  std::size_t used = 0;
  double v = 0;
  try {
    v = std::stod(s, &used);
  } catch (...) {
    return std::nullopt;
  }
  if (!(v > 0) || std::isinf(v)) return std::nullopt;
  std::string unit = s.substr(used);
  for (auto& c : unit) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  double mult = 1;
  if (unit.empty() || unit == "B")
    mult = 1;
  else if (unit == "K" || unit == "KB" || unit == "KIB")
    mult = 1024.0;
  else if (unit == "M" || unit == "MB" || unit == "MIB")
    mult = 1024.0 * 1024;
  else if (unit == "G" || unit == "GB" || unit == "GIB")
    mult = 1024.0 * 1024 * 1024;
  else
    return std::nullopt;
  const double bytes = v * mult;
  // 1 PiB: beyond any memory this tool measures; a size past it (1e19) is a typo, and would
  // overflow the sweeps' arithmetic.
  if (bytes < 1 || bytes > double(kMaxBytes)) return std::nullopt;
  return static_cast<uint64_t>(std::llround(bytes));
}

std::string hex_bytes(const void* data, std::size_t n) {
  static const char* kHex = "0123456789abcdef";
  const auto* b = static_cast<const unsigned char*>(data);
  std::string s;
  s.reserve(2 * n);
  for (std::size_t i = 0; i < n; ++i) {
    s += kHex[b[i] >> 4];
    s += kHex[b[i] & 15];
  }
  return s;
}

std::string trim(std::string s) {
  auto blank = [](char c) { return c == '\0' || std::isspace(static_cast<unsigned char>(c)) != 0; };
  while (!s.empty() && blank(s.back())) s.pop_back();
  std::size_t b = 0;
  while (b < s.size() && blank(s[b])) ++b;
  return s.substr(b);
}

}  // namespace gd
