#include "gpudissect/figure_ids.hpp"

namespace gd {

namespace {

bool segment_char(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
}

// Backtracking over the placeholder's length: ids and patterns are a few dozen characters.
bool match(std::string_view p, std::string_view id) {
  if (p.empty()) return id.empty();
  if (p.front() != '{')
    return !id.empty() && id.front() == p.front() && match(p.substr(1), id.substr(1));
  const std::size_t close = p.find('}');
  if (close == std::string_view::npos) return false;
  const std::string_view rest = p.substr(close + 1);
  for (std::size_t n = 1; n <= id.size() && segment_char(id[n - 1]); ++n)
    if (match(rest, id.substr(n))) return true;
  return false;
}

}  // namespace

bool figure_id_matches(std::string_view pattern, std::string_view id) {
  return match(pattern, id);
}

bool figure_id_declared(const std::vector<std::string>& declared, std::string_view id) {
  for (const std::string& p : declared)
    if (match(p, id)) return true;
  return false;
}

}  // namespace gd
