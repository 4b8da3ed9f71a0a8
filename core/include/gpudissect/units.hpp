// Human-readable units for bytes and times.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>

namespace gd {

// "1 KiB", "1.5 MiB", "48 MiB", "8 GiB": binary prefixes, up to 3 significant digits.
std::string format_bytes(double bytes);

// `n` bytes as 2n lower-case hex digits, in memory order: how a device UUID is written, the
// same from every API (DeviceEntry::uuid), so two views of one GPU compare equal.
std::string hex_bytes(const void* data, std::size_t n);
// Fixed-point with `digits` after the point, "-" for NaN.
std::string format_fixed(double v, int digits);
// printf's %g with `digits` significant digits ("1.5", "2e+03"): a number in a sentence.
std::string format_significant(double v, int digits);
// A figure not measured, in the places that hold it as a number.
inline constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
// A filesystem-friendly name: "NVIDIA H200" -> "nvidia-h200".
std::string slugify(const std::string& s);
// The text without the white space and NUL bytes at either end: a driver's string (OpenCL's
// come with their terminating NUL), a line of /proc, a tool's message.
std::string trim(std::string s);

}  // namespace gd

namespace gd {
// The largest size parse_bytes accepts: 1 PiB.
inline constexpr uint64_t kMaxBytes = uint64_t{1} << 50;
// "4096", "64K", "64KiB", "1.5M", "8G" (binary multiples) -> bytes; nullopt if malformed or
// over kMaxBytes.
std::optional<uint64_t> parse_bytes(const std::string& s);
}  // namespace gd
