#include "gpudissect/progress.hpp"

#include <cstdio>
#include <ostream>

namespace gd {

ConsoleProgress::ConsoleProgress(std::ostream& os, bool tty)
    : os_(os), tty_(tty), start_(std::chrono::steady_clock::now()) {}

double ConsoleProgress::elapsed() const {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
}

void ConsoleProgress::step(const std::string& probe, const std::string& part, int n, int of,
                           const std::string& detail) {
  char left[64] = "";
  if (probe == left_probe_ && left_seconds_ >= 0) {
    const double since =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - left_at_).count();
    const double l = left_seconds_ > since ? left_seconds_ - since : 0;
    std::snprintf(left, sizeof left, ", ~%.0f s left by the plan", l);
  }
  char buf[300];
  std::snprintf(buf, sizeof buf, "[%6.1fs] %s %s: point %d of %d (%s)%s", elapsed(),
                probe.c_str(), part.c_str(), n, of, detail.c_str(), left);
  if (tty_) {
    os_ << "\r\033[K" << buf << std::flush;
    line_open_ = true;
  } else {
    os_ << buf << '\n' << std::flush;
  }
}

void ConsoleProgress::note(const std::string& line) {
  if (line_open_) os_ << "\r\033[K";
  line_open_ = false;
  char buf[32];
  std::snprintf(buf, sizeof buf, "[%6.1fs] ", elapsed());
  os_ << buf << line << '\n' << std::flush;
}

void ConsoleProgress::time_left(const std::string& probe, double seconds) {
  left_probe_ = probe;
  left_seconds_ = seconds;
  left_at_ = std::chrono::steady_clock::now();
}

void ConsoleProgress::finish() {
  if (line_open_) os_ << "\r\033[K" << std::flush;
  line_open_ = false;
}

}  // namespace gd
