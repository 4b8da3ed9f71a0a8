// Reading JSON that came from outside (result files, baselines, reference files, fleet
// reports): bounded in size and nesting depth before anything walks it, and every error
// names the key path it is about ("figures[12].value: expected a number or a summary, got a
// string"), never the JSON library's own text.
#pragma once

#include <cstdint>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <string_view>

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
