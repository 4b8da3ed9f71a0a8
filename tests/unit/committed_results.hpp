// The run results committed under results/, plain (*.json) or gzipped (*.json.gz, superseded
// runs kept small), read for tests that check every committed document.
#pragma once

#include <algorithm>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "gpudissect/json_read.hpp"

namespace gd::testing {

// The committed result files under `root`, sorted: *.json and *.json.gz.
inline std::vector<std::filesystem::path> committed_json_files(const std::filesystem::path& root) {
  std::vector<std::filesystem::path> out;
  for (const auto& e : std::filesystem::recursive_directory_iterator(root)) {
    if (!e.is_regular_file()) continue;
    const std::string name = e.path().filename().string();
    const auto ends = [&](const std::string& s) {
      return name.size() >= s.size() && name.compare(name.size() - s.size(), s.size(), s) == 0;
    };
    if (ends(".json") || ends(".json.gz")) out.push_back(e.path());
  }
  std::sort(out.begin(), out.end());
  return out;
}

// The document in `path`, read as the tool reads it (gd::read_json_file: a .gz through
// gzip -dc, no shell); nullopt when it is not JSON.
inline std::optional<nlohmann::json> read_committed_json(const std::filesystem::path& path) {
  try {
    return gd::read_json_file(path);
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

}  // namespace gd::testing
