#include "format.hpp"

#include <cmath>
#include <cstdint>
#include <cstdio>

#include "gpudissect/budget.hpp"  // is_unstable
#include "gpudissect/units.hpp"

namespace gd::report::detail {

namespace {

bool is_control(unsigned char c) { return c < 0x20 || c == 0x7f; }

bool is_alnum(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

// FNV-1a, 32 bits, as 8 hex digits: a short tag that tells mapped names apart.
std::string hash_tag(const std::string& s) {
  uint32_t h = 2166136261u;
  for (unsigned char c : s) {
    h ^= c;
    h *= 16777619u;
  }
  char buf[9];
  std::snprintf(buf, sizeof buf, "%08x", h);
  return buf;
}

// s with every character outside `keep` mapped to '_', and a hash tag where that changed
// anything (or where s was empty or too long).
template <class Keep>
std::string map_name(const std::string& s, Keep keep, std::size_t max_len) {
  std::string out;
  bool changed = s.empty() || s.size() > max_len;
  for (char c : s) {
    if (out.size() >= max_len) break;
    if (keep(c)) {
      out += c;
    } else {
      out += '_';
      changed = true;
    }
  }
  if (changed) out += (out.empty() ? "x" : "_") + hash_tag(s);
  return out;
}

}  // namespace

std::string html_escape(const std::string& s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      case '\t':
      case '\n':
      case '\r':
        out += c;
        break;
      default:
        out += is_control(static_cast<unsigned char>(c)) ? ' ' : c;
    }
  }
  return out;
}

std::string gnuplot_quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) {
    if (c == '\'') out += '\'';
    out += is_control(static_cast<unsigned char>(c)) ? ' ' : c;
  }
  return out + "'";
}

std::string gnuplot_datum(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"')
      out += '\'';
    else
      out += is_control(static_cast<unsigned char>(c)) ? ' ' : c;
  }
  return out + "\"";
}

std::string svg_id(const std::string& s) {
  const bool starts_with_letter =
      !s.empty() && ((s[0] >= 'a' && s[0] <= 'z') || (s[0] >= 'A' && s[0] <= 'Z'));
  std::string out = map_name(
      s, [](char c) { return is_alnum(c) || c == '_' || c == '-'; }, 120);
  return starts_with_letter ? out : "i" + out;
}

std::string file_stem(const std::string& s) {
  std::string out = map_name(
      s, [](char c) { return is_alnum(c) || c == '_' || c == '-' || c == '.'; }, 80);
  if (out[0] == '.') out[0] = '_';
  return out;
}

std::string csv_field(const std::string& s) {
  std::string v = s;
  if (!v.empty() && (v[0] == '=' || v[0] == '+' || v[0] == '@')) v = "'" + v;
  const bool quote = v.find_first_of(",\"\n\r") != std::string::npos ||
                     (!v.empty() && (v.front() == ' ' || v.back() == ' '));
  if (!quote) return v;
  std::string out = "\"";
  for (char c : v) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

std::string script_num(double v) {
  if (!std::isfinite(v)) return "NaN";
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.9g", v);
  return buf;
}

std::string opt_fixed(const std::optional<double>& v, int digits) {
  if (!v || !std::isfinite(*v)) return "-";
  return format_fixed(*v, digits);
}

std::string opt_bytes(const std::optional<uint64_t>& v) {
  return v ? format_bytes(static_cast<double>(*v)) : std::string("-");
}

std::string mhz(const std::optional<double>& v) {
  return v ? format_fixed(*v, 0) + " MHz" : std::string("-");
}

std::string median_spread(const std::optional<Summary>& s, int digits) {
  if (!s) return "-";
  std::string r = format_fixed(s->median, digits);
  if (s->n > 1 && s->median != 0)
    r += " ±" + format_fixed(100.0 * s->iqr() / s->median / 2, 1) + "%";
  if (is_unstable(*s)) r += " UNSTABLE";  // a spread over 10 %: not a result
  return r;
}

}  // namespace gd::report::detail
