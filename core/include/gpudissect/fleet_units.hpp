// Figures as an operator reads them on the fleet's page and in its verdicts: in their unit
// with a fitting prefix, never in exponent notation. GPU-free.
#pragma once

#include <string>

namespace gd {

// A figure's value in its unit with a fitting prefix, three significant digits, no
// exponent: (32010, "GB/s") -> "32.0 TB/s", (0.5, "TFLOP/s") -> "500 GFLOP/s", (1500, "ns")
// -> "1.50 us", (65536, "bytes") -> "64 KiB"; other units keep theirs ("812 cycles").
std::string fleet_quantity(double v, const std::string& unit);

}  // namespace gd
