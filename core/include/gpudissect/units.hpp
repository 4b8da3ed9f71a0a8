// Human-readable units for bytes and times.
#pragma once

#include <cstdint>
#include <string>

namespace gd {

// "1 KiB", "1.5 MiB", "48 MiB", "8 GiB": binary prefixes, up to 3 significant digits.
std::string format_bytes(double bytes);
// Fixed-point with `digits` after the point, "-" for NaN.
std::string format_fixed(double v, int digits);
// A filesystem-friendly name: "NVIDIA H200" -> "nvidia-h200".
std::string slugify(const std::string& s);

}  // namespace gd
