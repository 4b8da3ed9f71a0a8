// The fleet's outputs: the terminal verdicts and the HTML page (every GPU x headline figures,
// each cell coloured by its distance from the median of the other GPUs, the unhealthy GPUs
// first with the figures that make them so).
#pragma once

#include <filesystem>
#include <iosfwd>
#include <string>

#include "gpudissect/fleet.hpp"

namespace gd::report {

void print_fleet(std::ostream& os, const FleetReport& rep);
// `title` heads the page ("gpudissect fleet, quick profile, 8 GPUs"). Throws
// std::runtime_error if it cannot write.
void write_fleet_html(const std::filesystem::path& file, const FleetReport& rep,
                      const std::string& title);
std::string fleet_html(const FleetReport& rep, const std::string& title);

}  // namespace gd::report
