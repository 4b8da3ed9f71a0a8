// One word for `sh -c`: whatever a path or name holds (spaces, quotes, `$(...)`) reaches the
// program as that one argument, never as shell syntax.
#pragma once

#include <string>

namespace gd {

// Single quotes around the text; a single quote inside closes them, adds \' and reopens.
inline std::string shell_quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) {
    if (c == '\'')
      out += "'\\''";
    else
      out += c;
  }
  return out + "'";
}

}  // namespace gd
