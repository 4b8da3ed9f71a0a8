#include "gpudissect/sass.hpp"

#include <algorithm>
#include <regex>
#include <sstream>

namespace gd {

std::optional<uint64_t> SassInstruction::backward_target() const {
  if (opcode.rfind("BRA", 0) != 0) return std::nullopt;
  static const std::regex kTarget(R"(0x([0-9a-f]+))");
  std::smatch m;
  if (!std::regex_search(operands, m, kTarget)) return std::nullopt;
  const uint64_t target = std::stoull(m[1].str(), nullptr, 16);
  return target < addr ? std::optional<uint64_t>(target) : std::nullopt;
}

std::map<std::string, std::vector<SassInstruction>> sass_functions(const std::string& sass) {
  static const std::regex kFunction(R"(Function : (\S+))");
  // "/*0a30*/  @!P0 BRA 0x...;": address, optional predicate, opcode with modifiers, operands.
  static const std::regex kInst(
      R"(/\*([0-9a-f]{4,})\*/\s+(?:@!?U?P[T0-9]+\s+)?([A-Z][A-Z0-9_]*(?:\.[A-Z0-9_]+)*)\s*([^;]*);)");
  std::map<std::string, std::vector<SassInstruction>> out;
  std::vector<SassInstruction>* fn = nullptr;
  std::istringstream in(sass);
  std::string line;
  std::smatch m;
  while (std::getline(in, line)) {
    if (std::regex_search(line, m, kFunction)) {
      fn = &out[m[1]];
      fn->clear();
    } else if (fn && std::regex_search(line, m, kInst)) {
      fn->push_back({std::stoull(m[1].str(), nullptr, 16), m[2].str(), m[3].str()});
    }
  }
  return out;
}

std::vector<std::string> top_opcodes(const std::map<std::string, int>& counts, std::size_t n) {
  std::vector<std::pair<int, std::string>> v;
  for (const auto& [op, count] : counts) v.emplace_back(count, op);
  std::sort(v.begin(), v.end(), [](const auto& a, const auto& b) {
    return a.first != b.first ? a.first > b.first : a.second < b.second;
  });
  std::vector<std::string> out;
  for (std::size_t i = 0; i < v.size() && i < n; ++i)
    out.push_back(v[i].second + " x" + std::to_string(v[i].first));
  return out;
}

}  // namespace gd
