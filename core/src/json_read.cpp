#include "gpudissect/json_read.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <fstream>
#include <sstream>

namespace gd {

using nlohmann::json;

JsonReadError::JsonReadError(std::string path, std::string detail)
    : std::runtime_error(path.empty() ? detail : path + ": " + detail),
      path_(std::move(path)),
      detail_(std::move(detail)) {}

JsonReadError JsonReadError::within(const std::string& segment) const {
  if (path_.empty()) return {segment, detail_};
  if (segment.empty()) return *this;
  return {segment + (path_.front() == '[' ? "" : ".") + path_, detail_};
}

std::string index_segment(std::size_t i) {
  std::string s = "[";  // (appended piece by piece: GCC 12's -Wrestrict misfires on a + chain)
  s += std::to_string(i);
  s += ']';
  return s;
}

std::string json_kind(const json& j) {
  switch (j.type()) {
    case json::value_t::null:
      return "null";
    case json::value_t::object:
      return "an object";
    case json::value_t::array:
      return "a list";
    case json::value_t::string:
      return "a string";
    case json::value_t::boolean:
      return "a boolean";
    case json::value_t::number_integer:
    case json::value_t::number_unsigned:
      return "an integer";
    case json::value_t::number_float:
      return "a number";
    default:
      return "an unreadable value";
  }
}

namespace {

// nlohmann's type names ("number", "array" ...) as this tool's messages say them.
std::string kind_words(std::string t) {
  while (!t.empty() && (t.back() == ' ' || t.back() == '.')) t.pop_back();
  if (t == "array") return "a list";
  if (t == "object") return "an object";
  if (t == "null") return "null";
  if (t == "number") return "a number";
  if (t == "string") return "a string";
  if (t == "boolean") return "a boolean";
  return t;
}

}  // namespace

std::string describe_json_error(const std::exception& e) {
  std::string m = e.what();
  // "[json.exception.type_error.302] type must be number, but is string"
  if (m.rfind("[json.exception.", 0) == 0)
    if (const auto close = m.find("] "); close != std::string::npos) m = m.substr(close + 2);
  static const std::string must = "type must be ", but = ", but is ";
  if (m.rfind(must, 0) == 0)
    if (const auto b = m.find(but); b != std::string::npos)
      return "expected " + kind_words(m.substr(must.size(), b - must.size())) + ", got " +
             kind_words(m.substr(b + but.size()));
  // "key 'median' not found"
  if (m.rfind("key '", 0) == 0 && m.size() > 16 && m.compare(m.size() - 11, 11, "' not found") == 0)
    return "missing key \"" + m.substr(5, m.size() - 16) + "\"";
  // "cannot use at() with string"
  static const std::string at = "cannot use at() with ";
  if (m.rfind(at, 0) == 0) return "expected an object, got " + kind_words(m.substr(at.size()));
  return m;
}

bool plain_name(const std::string& s) {
  if (s.empty() || s.size() > 64 || s.front() == '.') return false;
  for (const char c : s)
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
          c == '.' || c == '+' || c == '-'))
      return false;
  return true;
}

json parse_json_text(std::string_view text) {
  if (text.size() > kMaxJsonBytes)
    throw JsonReadError("", "larger than " + std::to_string(kMaxJsonBytes >> 20) + " MiB");
  // The nesting depth, counted before parsing (brackets inside strings do not count): a
  // document deeper than any this tool writes is refused whole.
  int depth = 0;
  bool in_string = false, escaped = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (escaped)
        escaped = false;
      else if (c == '\\')
        escaped = true;
      else if (c == '"')
        in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > kMaxJsonDepth)
        throw JsonReadError("", "nested deeper than " + std::to_string(kMaxJsonDepth) +
                                    " levels (at byte " + std::to_string(i) + ")");
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  try {
    return json::parse(text);
  } catch (const json::exception& e) {
    throw JsonReadError("", "not valid JSON: " + describe_json_error(e));
  }
}

namespace {

// A gzipped file's text through `gzip -dc` (argv, no shell: the name is never parsed), at
// most kMaxJsonBytes + 1 bytes (the parser refuses more).
std::string gunzip(const std::filesystem::path& file) {
  int fds[2];
  if (pipe(fds) != 0) throw JsonReadError("", "cannot read the file (pipe failed)");
  const pid_t pid = fork();
  if (pid < 0) {
    close(fds[0]);
    close(fds[1]);
    throw JsonReadError("", "cannot read the file (fork failed)");
  }
  if (pid == 0) {
    dup2(fds[1], 1);
    close(fds[0]);
    close(fds[1]);
    const int null = open("/dev/null", O_WRONLY);
    if (null >= 0) dup2(null, 2);
    execlp("gzip", "gzip", "-dc", "--", file.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  close(fds[1]);
  std::string text;
  char buf[1 << 16];
  ssize_t n;
  while (text.size() <= kMaxJsonBytes && (n = read(fds[0], buf, sizeof buf)) != 0) {
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) break;
    text.append(buf, static_cast<std::size_t>(n));
  }
  close(fds[0]);
  int st = 0;
  if (text.size() > kMaxJsonBytes) kill(pid, SIGKILL);
  waitpid(pid, &st, 0);
  if (text.size() > kMaxJsonBytes)
    throw JsonReadError("", "larger than " + std::to_string(kMaxJsonBytes >> 20) + " MiB");
  if (!(WIFEXITED(st) && WEXITSTATUS(st) == 0))
    throw JsonReadError("", "gzip -dc could not read it (not gzip data?)");
  return text;
}

}  // namespace

json read_json_file(const std::filesystem::path& file) {
  // A committed result may be gzipped (results/ keeps superseded runs so): read through gzip.
  if (file.extension() == ".gz") {
    std::error_code ec;
    if (!std::filesystem::is_regular_file(file, ec))
      throw JsonReadError("", "cannot read the file");
    return parse_json_text(gunzip(file));
  }
  std::ifstream f(file, std::ios::binary);
  if (!f) throw JsonReadError("", "cannot read the file");
  std::error_code ec;
  if (std::filesystem::is_regular_file(file, ec)) {
    const auto size = std::filesystem::file_size(file, ec);
    if (!ec && size > kMaxJsonBytes)
      throw JsonReadError("", "larger than " + std::to_string(kMaxJsonBytes >> 20) + " MiB");
  }
  // Read at most one byte past the cap: a pipe or a growing file is bounded too.
  std::string text;
  char buf[1 << 16];
  while (f.read(buf, sizeof buf) || f.gcount() > 0) {
    text.append(buf, static_cast<std::size_t>(f.gcount()));
    if (text.size() > kMaxJsonBytes)
      throw JsonReadError("", "larger than " + std::to_string(kMaxJsonBytes >> 20) + " MiB");
  }
  if (f.bad()) throw JsonReadError("", "cannot read the file");
  return parse_json_text(text);
}

}  // namespace gd
