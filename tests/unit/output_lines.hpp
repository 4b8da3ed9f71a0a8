// Line-by-line output checks in the manner of google/benchmark's output tests: a table of
// expected lines, one pattern per line of output. A pattern is the line's text with
// `{{regex}}` where a part may vary; the rest is literal. A missing, extra or mismatched
// line is a failure that names the line's number, the line and the pattern.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

namespace gd::output_lines {

// The lines of `text`; a final newline does not start another line.
inline std::vector<std::string> split(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

inline std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// The regular expression (ECMAScript) of one pattern line.
inline std::string to_regex(const std::string& pattern) {
  static const std::string special = R"(\^$.|?*+()[]{}/)";
  std::string re;
  for (std::size_t i = 0; i < pattern.size();) {
    if (pattern.compare(i, 2, "{{") == 0) {
      const std::size_t end = pattern.find("}}", i + 2);
      if (end != std::string::npos) {
        re += "(?:" + pattern.substr(i + 2, end - i - 2) + ")";
        i = end + 2;
        continue;
      }
    }
    if (special.find(pattern[i]) != std::string::npos) re += '\\';
    re += pattern[i++];
  }
  return re;
}

// The pattern that matches `line` exactly.
inline std::string literal(const std::string& line) {
  std::string p;
  for (std::size_t i = 0; i < line.size(); ++i) {
    if (line.compare(i, 2, "{{") == 0) {
      p += "{{\\{\\{}}";
      ++i;
      continue;
    }
    p += line[i];
  }
  return p;
}

// `output` (named `what` in failures) against `patterns`, line by line.
inline ::testing::AssertionResult lines_match(const std::string& what, const std::string& output,
                                              const std::vector<std::string>& patterns) {
  const std::vector<std::string> lines = split(output);
  std::ostringstream why;
  int failures = 0;
  const std::size_t n = std::max(lines.size(), patterns.size());
  for (std::size_t i = 0; i < n && failures < 10; ++i) {
    if (i >= lines.size()) {
      why << "\n  " << what << ":" << i + 1 << ": missing line, expected: " << patterns[i];
    } else if (i >= patterns.size()) {
      why << "\n  " << what << ":" << i + 1 << ": extra line: " << lines[i];
    } else {
      std::regex re;
      try {
        re = std::regex(to_regex(patterns[i]));
      } catch (const std::regex_error& e) {
        why << "\n  " << what << ":" << i + 1 << ": bad pattern (" << e.what()
            << "): " << patterns[i];
        ++failures;
        continue;
      }
      if (std::regex_match(lines[i], re)) continue;
      why << "\n  " << what << ":" << i + 1 << ": line:    " << lines[i] << "\n  "
          << std::string(what.size() + std::to_string(i + 1).size() + 2, ' ')
          << "pattern: " << patterns[i];
    }
    ++failures;
  }
  if (failures == 0) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << what << ": " << lines.size() << " lines against "
                                       << patterns.size() << " patterns" << why.str();
}

}  // namespace gd::output_lines
