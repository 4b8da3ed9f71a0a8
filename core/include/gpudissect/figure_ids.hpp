// The ids a probe declares (Probe::figure_ids): exact ids and patterns for the families
// whose ids vary by path, level, op, carve-out or warp count. An id a probe publishes must
// match one of its declarations, so none is ever derived from a display name.
//
// Pattern syntax: `{name}` stands for one or more of [A-Za-z0-9_] (never a '.', so it stays
// within one dot-separated segment, and may sit beside literal text in it, as in
// "capacity_{n}warps"); every other character matches itself. "latency.{path}.{level}"
// matches "latency.global.L2_near" but neither "latency.global" nor "latency.global.L2.x".
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace gd {

// Whether `id` matches `pattern` (the syntax above). A malformed pattern (an unclosed '{')
// matches nothing.
bool figure_id_matches(std::string_view pattern, std::string_view id);

// Whether `id` matches any of `declared`.
bool figure_id_declared(const std::vector<std::string>& declared, std::string_view id);

}  // namespace gd
