// The fleet's outputs: the terminal verdicts and the HTML page (every GPU x headline figures,
// each cell coloured by its distance from the median of the other GPUs, the unhealthy GPUs
// first with the figures that make them so).
#pragma once

#include <filesystem>
#include <iosfwd>
#include <string>

#include "gpudissect/fleet.hpp"

namespace gd::report {

// A figure's value in its unit with a fitting prefix, three significant digits, no
// exponent: (32010, "GB/s") -> "32.0 TB/s", (0.5, "TFLOP/s") -> "500 GFLOP/s", (1500, "ns")
// -> "1.50 us", (65536, "bytes") -> "64 KiB"; other units keep theirs ("812 cycles").
std::string fleet_quantity(double v, const std::string& unit);

void print_fleet(std::ostream& os, const FleetReport& rep);
// `title` heads the page ("gpudissect fleet, quick profile, 8 GPUs"). Throws
// std::runtime_error if it cannot write.
void write_fleet_html(const std::filesystem::path& file, const FleetReport& rep,
                      const std::string& title);
std::string fleet_html(const FleetReport& rep, const std::string& title);

}  // namespace gd::report
