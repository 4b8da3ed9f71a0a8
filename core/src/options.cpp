#include "gpudissect/options.hpp"

#include <charconv>
#include <sstream>
#include <stdexcept>

#include "gpudissect/units.hpp"

namespace gd::options {

namespace {
std::string name(const std::string& probe, const std::string& key) {
  return "option " + probe + "." + key;
}
}  // namespace

bool flag(const std::string& probe, const std::string& key, const std::string& v) {
  if (v == "1" || v == "true" || v == "yes" || v == "on") return true;
  if (v == "0" || v == "false" || v == "no" || v == "off") return false;
  throw std::invalid_argument(name(probe, key) + ": '" + v + "' is not 0/1 (or true/false)");
}

int integer(const std::string& probe, const std::string& key, const std::string& v, int lo,
            int hi) {
  int x = 0;
  auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), x);
  if (ec != std::errc() || end != v.data() + v.size() || x < lo || x > hi)
    throw std::invalid_argument(name(probe, key) + ": '" + v + "' is not an integer in " +
                                std::to_string(lo) + ".." + std::to_string(hi));
  return x;
}

uint64_t bytes(const std::string& probe, const std::string& key, const std::string& v) {
  auto b = parse_bytes(v);
  if (!b)
    throw std::invalid_argument(name(probe, key) + ": '" + v +
                                "' is not a size up to 1 PiB (e.g. 4096, 64K, 256M, 8G)");
  return *b;
}

std::vector<std::string> list(const std::string& v) {
  std::vector<std::string> out;
  std::stringstream ss(v);
  std::string item;
  while (std::getline(ss, item, ','))
    if (!item.empty()) out.push_back(item);
  return out;
}

void unknown_key(const std::string& probe, const std::string& key,
                 const std::vector<OptionSpec>& specs) {
  std::string keys;
  for (const OptionSpec& s : specs) keys += (keys.empty() ? "" : ", ") + s.key;
  throw std::invalid_argument("unknown " + probe + " option '" + key + "' (valid: " + keys + ")");
}

}  // namespace gd::options
