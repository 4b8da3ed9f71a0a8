// Reading JSON that came from outside (result files, baselines, reference files, fleet
// reports): bounded in size and nesting depth before anything walks it, and every error
// names the key path it is about ("figures[12].value: expected a number or a summary, got a
// string"), never the JSON library's own text.
#pragma once

#include <cmath>
#include <cstdint>
#include <filesystem>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

namespace gd {

// No file this tool writes nests deeper than about a dozen levels or comes near 256 MiB: a
// document beyond either is refused before it is parsed, so that nothing later (reading,
// writing it back, destroying it) recurses or allocates as deep or as much as the input says.
inline constexpr int kMaxJsonDepth = 64;
inline constexpr std::uintmax_t kMaxJsonBytes = std::uintmax_t{256} << 20;

// A document that cannot be read: not JSON, too large or too deep, or a value of the wrong
// kind at `path()` (empty for the document itself). what() is "path: detail".
class JsonReadError : public std::runtime_error {
 public:
  JsonReadError(std::string path, std::string detail);
  const std::string& path() const { return path_; }
  const std::string& detail() const { return detail_; }
  // The same error one level further out: `segment` is a key ("figures") or an index ("[3]").
  JsonReadError within(const std::string& segment) const;

 private:
  std::string path_, detail_;
};

// "a string", "an object", "a number" ...: what a reader says it got.
std::string json_kind(const nlohmann::json& j);
// A JSON library exception in words, without the library's "[json.exception...]" tag.
std::string describe_json_error(const std::exception& e);

// Whether a key read from a file may name a file, a chart or a table row: 1 to 64 letters,
// digits and "_.+-", not starting with '.' ("global", "stride_4096", "nt_write").
bool plain_name(const std::string& s);

// Parses `text`, refusing documents over kMaxJsonBytes or nested over kMaxJsonDepth.
nlohmann::json parse_json_text(std::string_view text);
// Reads and parses a file with the same bounds (a *.gz file through `gzip -dc`); errors
// name no file (the caller adds it).
nlohmann::json read_json_file(const std::filesystem::path& file);

// The whole number a JSON number holds, as T; nullopt for anything else: a fraction (1.5), a
// number outside T's range (4e97, -1 for an unsigned T) or not a number. nlohmann's get<T>()
// casts a double to T unchecked (undefined behaviour out of range) and wraps a negative into
// an unsigned type: every integer a reader takes from a file comes through here instead.
template <class T>
std::optional<T> json_to_integer(const nlohmann::json& j) {
  static_assert(std::is_integral_v<T> && !std::is_same_v<T, bool>);
  if (j.is_number_unsigned()) {
    const auto u = j.get<std::uint64_t>();
    if (std::in_range<T>(u)) return static_cast<T>(u);
  } else if (j.is_number_integer()) {
    const auto i = j.get<std::int64_t>();
    if (std::in_range<T>(i)) return static_cast<T>(i);
  } else if (j.is_number_float()) {
    // T's range as doubles, both exact: its lowest (0 or -2^k) and 2^digits, one past its max.
    const double d = j.get<double>();
    const double lo = static_cast<double>(std::numeric_limits<T>::lowest());
    const double past = std::ldexp(1.0, std::numeric_limits<T>::digits);
    if (std::isfinite(d) && d == std::trunc(d) && d >= lo && d < past) return static_cast<T>(d);
  }
  return std::nullopt;
}

// The same, or a JsonReadError here (the caller's read_at adds the key path): "expected a
// number, got a string", "expected an integer from 0 to 4294967295, got 4e+97".
template <class T>
T json_integer(const nlohmann::json& j) {
  if (auto v = json_to_integer<T>(j)) return *v;
  if (!j.is_number()) throw JsonReadError("", "expected a number, got " + json_kind(j));
  throw JsonReadError("", "expected an integer from " +
                              std::to_string(std::numeric_limits<T>::lowest()) + " to " +
                              std::to_string(std::numeric_limits<T>::max()) + ", got " + j.dump());
}

// "[i]": the path segment of a list element.
std::string index_segment(std::size_t i);

// Runs `read` (which reads the value under `segment`) and puts `segment` in front of the
// path of any error it throws; a JSON library error becomes a JsonReadError at `segment`.
template <class F>
void read_at(const std::string& segment, F&& read) {
  try {
    read();
  } catch (const JsonReadError& e) {
    throw e.within(segment);
  } catch (const nlohmann::json::exception& e) {
    throw JsonReadError(segment, describe_json_error(e));
  }
}

}  // namespace gd
