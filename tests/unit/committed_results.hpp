// The run results committed under results/, plain (*.json) or gzipped (*.json.gz, superseded
// runs kept small), read for tests that check every committed document.
#pragma once

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

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

// The document in `path` (a .gz through gzip -dc); nullopt when it is not JSON.
inline std::optional<nlohmann::json> read_committed_json(const std::filesystem::path& path) {
  std::string text;
  if (path.extension() == ".gz") {
    const std::string cmd = "gzip -dc '" + path.string() + "'";  // test-owned paths, no quote
    FILE* p = popen(cmd.c_str(), "r");
    if (!p) return std::nullopt;
    char buf[65536];
    std::size_t n;
    while ((n = fread(buf, 1, sizeof buf, p)) > 0) text.append(buf, n);
    if (pclose(p) != 0) return std::nullopt;
  } else {
    FILE* f = std::fopen(path.c_str(), "rb");
    if (!f) return std::nullopt;
    char buf[65536];
    std::size_t n;
    while ((n = fread(buf, 1, sizeof buf, f)) > 0) text.append(buf, n);
    std::fclose(f);
  }
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception&) {
    return std::nullopt;
  }
}

}  // namespace gd::testing
