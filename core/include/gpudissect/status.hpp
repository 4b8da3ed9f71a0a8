// The status every result carries: ok, or why not.
#pragma once

#include <string>

namespace gd {

// "ok" | "unsupported" | "skipped" | "error" | "interrupted"
struct Status {
  std::string status = "ok";
  std::string reason;  // why, for anything but ok
  bool ok() const { return status == "ok"; }
};

}  // namespace gd
