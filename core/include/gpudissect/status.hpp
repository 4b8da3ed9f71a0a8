// The status every result carries: ok, or why not.
#pragma once

#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

namespace gd {

// What a result is: measured (ok) or not, and in which way. The JSON files carry each as
// its word (to_string); the words are a file format, so a new code is a new word, never a
// changed one.
enum class StatusCode {
  ok,
  unsupported,  // the backend or device cannot measure it
  skipped,      // not measured by choice (options, budget, an earlier failure)
  error,        // the measurement failed or its check did
  interrupted,  // stopped by the user
  unstable,     // measured, but too noisy (or inconsistent) to be a result
  timeout,      // a fleet rank killed after its time
  busy,         // a fleet rank refused by run --require-idle
  missing,      // a fleet rank that sent no report
  absent,       // a comparison: the run has no figure with this id
};

inline constexpr StatusCode kAllStatusCodes[] = {
    StatusCode::ok,          StatusCode::unsupported, StatusCode::skipped, StatusCode::error,
    StatusCode::interrupted, StatusCode::unstable,    StatusCode::timeout, StatusCode::busy,
    StatusCode::missing,     StatusCode::absent};

// The code's JSON word: "ok", "unsupported" ...
inline const char* to_string(StatusCode c) {
  switch (c) {
    case StatusCode::ok:
      return "ok";
    case StatusCode::unsupported:
      return "unsupported";
    case StatusCode::skipped:
      return "skipped";
    case StatusCode::error:
      return "error";
    case StatusCode::interrupted:
      return "interrupted";
    case StatusCode::unstable:
      return "unstable";
    case StatusCode::timeout:
      return "timeout";
    case StatusCode::busy:
      return "busy";
    case StatusCode::missing:
      return "missing";
    case StatusCode::absent:
      return "absent";
  }
  return "error";  // (not reached: every code has its word above)
}

// The code a word names; nothing for a word that names none.
inline std::optional<StatusCode> status_code_from(std::string_view word) {
  for (StatusCode c : kAllStatusCodes)
    if (word == to_string(c)) return c;
  return std::nullopt;
}

// The code of a word the program itself wrote (a point's status string): an unknown word is
// a bug here, so std::invalid_argument, not a quiet default.
inline StatusCode parse_status(std::string_view word) {
  if (auto c = status_code_from(word)) return *c;
  throw std::invalid_argument("not a status: \"" + std::string(word) + "\"");
}

struct Status {
  StatusCode code = StatusCode::ok;
  std::string reason;  // why, for anything but ok
  bool ok() const { return code == StatusCode::ok; }
  // The JSON word of the code.
  std::string name() const { return to_string(code); }
  // "<status>" or "<status>: <reason>", an ok status's reason too (a note beside the word).
  std::string with_reason() const { return name() + (reason.empty() ? "" : ": " + reason); }
};

// "ok", or "<status>: <reason>" (the reason where there is one): how the terminal, HTML and
// the regression gate's verdicts show a status. An ok status shows no reason.
inline std::string status_text(const Status& s) {
  return s.ok() ? std::string("ok") : s.with_reason();
}

}  // namespace gd
