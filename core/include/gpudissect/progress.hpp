// Progress of a running probe: a self-rewriting line on a terminal, plain lines otherwise.
#pragma once

#include <chrono>
#include <iosfwd>
#include <string>

namespace gd {

class Progress {
 public:
  virtual ~Progress() = default;
  // e.g. ("latency", "global", 12, 40, "64 KiB")
  virtual void step(const std::string& probe, const std::string& part, int n, int of,
                    const std::string& detail) = 0;
  // A line that stays (a path finished, a warning).
  virtual void note(const std::string& line) = 0;
  // The time the probe's plan has left (its budget less what it spent, or the estimate of
  // its remaining points): shown with the following steps of that probe.
  virtual void time_left(const std::string& /*probe*/, double /*seconds*/) {}
  virtual void finish() {}
};

class NullProgress final : public Progress {
 public:
  void step(const std::string&, const std::string&, int, int, const std::string&) override {}
  void note(const std::string&) override {}
};

class ConsoleProgress final : public Progress {
 public:
  // tty: rewrite one line in place; otherwise print one line per step.
  ConsoleProgress(std::ostream& os, bool tty);
  void step(const std::string& probe, const std::string& part, int n, int of,
            const std::string& detail) override;
  void note(const std::string& line) override;
  void time_left(const std::string& probe, double seconds) override;
  void finish() override;

 private:
  std::string left_probe_;
  double left_seconds_ = -1;
  std::chrono::steady_clock::time_point left_at_;
  double elapsed() const;
  std::ostream& os_;
  bool tty_;
  bool line_open_ = false;
  std::chrono::steady_clock::time_point start_;
};

}  // namespace gd
