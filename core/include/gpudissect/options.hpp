// Reading `--option PROBE.KEY=VALUE` values: one parser per kind of value, shared by every
// probe, each throwing std::invalid_argument that names the probe, the key and what was
// expected.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "gpudissect/probe.hpp"

namespace gd::options {

// 1/true/yes/on or 0/false/no/off.
bool flag(const std::string& probe, const std::string& key, const std::string& v);
// An integer in [lo, hi].
int integer(const std::string& probe, const std::string& key, const std::string& v, int lo, int hi);
// A size: "4096", "64K", "256M", "8G".
uint64_t bytes(const std::string& probe, const std::string& key, const std::string& v);
// A comma-separated list.
std::vector<std::string> list(const std::string& v);
// The error for a key the probe does not have, listing the keys it has.
[[noreturn]] void unknown_key(const std::string& probe, const std::string& key,
                              const std::vector<OptionSpec>& specs);

}  // namespace gd::options
