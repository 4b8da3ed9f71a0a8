// Reading cuobjdump listings by hand, not with std::regex: this binary's own listing has
// about 40,000 lines, and std::regex over all of them took 1.3 s, once per reader.
#include "gpudissect/sass.hpp"

#include <algorithm>
#include <array>
#include <regex>
#include <sstream>
#include <string_view>

namespace gd {

std::optional<uint64_t> SassInstruction::backward_target() const {
  if (opcode.rfind("BRA", 0) != 0) return std::nullopt;
  static const std::regex kTarget(R"(0x([0-9a-f]+))");
  std::smatch m;
  if (!std::regex_search(operands, m, kTarget)) return std::nullopt;
  const uint64_t target = std::stoull(m[1].str(), nullptr, 16);
  return target < addr ? std::optional<uint64_t>(target) : std::nullopt;
}

namespace {

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\r'; }
bool is_upper(char c) { return c >= 'A' && c <= 'Z'; }
bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_lower_hex(char c) { return is_digit(c) || (c >= 'a' && c <= 'f'); }
bool is_word(char c) { return is_upper(c) || is_digit(c) || c == '_' || (c >= 'a' && c <= 'z'); }

// "Function : name": the name, or empty.
std::string_view function_name(std::string_view line) {
  const std::size_t p = line.find("Function : ");
  if (p == std::string_view::npos) return {};
  std::size_t a = p + 11, b = a;
  while (b < line.size() && !is_space(line[b])) ++b;
  return line.substr(a, b - a);
}

// "/*0a30*/  @!P0 BRA 0x...;": address (4 or more lower-case hex digits), an optional
// predicate, the opcode with its modifiers (which may hold lower case: F16x2), and the
// operands up to the ';'. The encoding lines ("/* 0x000fe2... */") start with a space.
bool parse_instruction_at(std::string_view line, std::size_t p, SassInstruction* out) {
  std::size_t i = p + 2, a = i;
  while (i < line.size() && is_lower_hex(line[i])) ++i;
  if (i - a < 4 || line.substr(i, 2) != "*/") return false;
  const std::string_view address = line.substr(a, i - a);
  i += 2;
  const std::size_t gap = i;
  while (i < line.size() && is_space(line[i])) ++i;
  if (i == gap) return false;
  if (i < line.size() && line[i] == '@') {  // @P0, @!P0, @UP1, @!PT
    std::size_t k = i + 1;
    if (k < line.size() && line[k] == '!') ++k;
    if (k < line.size() && line[k] == 'U') ++k;
    if (k >= line.size() || line[k] != 'P') return false;
    const std::size_t d = ++k;
    while (k < line.size() && (is_digit(line[k]) || line[k] == 'T')) ++k;
    if (k == d || k >= line.size() || !is_space(line[k])) return false;
    i = k;
    while (i < line.size() && is_space(line[i])) ++i;
  }
  if (i >= line.size() || !is_upper(line[i])) return false;
  const std::size_t op = i;
  ++i;
  while (i < line.size() && (is_upper(line[i]) || is_digit(line[i]) || line[i] == '_')) ++i;
  while (i + 1 < line.size() && line[i] == '.' && is_word(line[i + 1])) {
    ++i;
    while (i < line.size() && is_word(line[i])) ++i;
  }
  const std::size_t op_end = i;
  while (i < line.size() && is_space(line[i])) ++i;
  const std::size_t semi = line.find(';', i);
  if (semi == std::string_view::npos) return false;
  out->addr = std::stoull(std::string(address), nullptr, 16);
  out->opcode = std::string(line.substr(op, op_end - op));
  out->operands = std::string(line.substr(i, semi - i));
  return true;
}

bool parse_instruction(std::string_view line, SassInstruction* out) {
  for (std::size_t p = line.find("/*"); p != std::string_view::npos; p = line.find("/*", p + 2))
    if (parse_instruction_at(line, p, out)) return true;
  return false;
}

std::string_view base_of(const std::string& opcode) {
  return std::string_view(opcode).substr(0, opcode.find('.'));
}

template <std::size_t N>
bool one_of(std::string_view v, const std::array<std::string_view, N>& set) {
  return std::find(set.begin(), set.end(), v) != set.end();
}

// A load's operands start with its destination register ("R2, desc[UR6][R2.64]").
bool starts_with_destination(std::string_view ops, std::string_view* rest) {
  std::size_t k = 0;
  if (ops.substr(0, 2) == "RZ" || ops.substr(0, 2) == "PT") {
    k = 2;
  } else if (!ops.empty() && ops[0] == 'R') {
    k = 1;
    while (k < ops.size() && is_digit(ops[k])) ++k;
    if (k == 1) return false;
  } else {
    return false;
  }
  if (ops.substr(k, 2) != ", ") return false;
  *rest = ops.substr(k + 2);
  return true;
}

}  // namespace

std::map<std::string, std::vector<SassInstruction>> sass_functions(const std::string& sass) {
  std::map<std::string, std::vector<SassInstruction>> out;
  std::vector<SassInstruction>* fn = nullptr;
  std::istringstream in(sass);
  std::string line;
  SassInstruction inst;
  while (std::getline(in, line)) {
    if (const std::string_view name = function_name(line); !name.empty()) {
      fn = &out[std::string(name)];
      fn->clear();
    } else if (fn && parse_instruction(line, &inst)) {
      fn->push_back(inst);
    }
  }
  return out;
}

std::map<std::string, KernelMemoryOps> kernel_memory_ops(const std::string& sass) {
  static constexpr std::array<std::string_view, 6> kLoads = {"LDG", "LDS", "LDC",
                                                             "TLD", "TEX", "LD"};
  static constexpr std::array<std::string_view, 3> kStores = {"STG", "STS", "ST"};
  static constexpr std::array<std::string_view, 2> kBulk = {"UBLKCP", "UTMALDG"};
  static constexpr std::array<std::string_view, 6> kAtomics = {"ATOMS", "ATOMG", "ATOM",
                                                               "REDUX", "REDG",  "RED"};
  auto most = [](const std::map<std::string, int>& m) {
    if (m.empty()) return std::string();
    return std::max_element(m.begin(), m.end(),
                            [](auto& a, auto& b) { return a.second < b.second; })
        ->first;
  };
  auto add_distinct = [](std::string& all, const std::string& op) {
    const std::string padded = " + " + all + " + ";
    if (padded.find(" + " + op + " + ") != std::string::npos) return;
    all += (all.empty() ? "" : " + ") + op;
  };
  std::map<std::string, KernelMemoryOps> out;
  for (const auto& [fn, insts] : sass_functions(sass)) {
    std::map<std::string, int> loads, stores, bulks;
    KernelMemoryOps& k = out[fn];
    for (const SassInstruction& in : insts) {
      const std::string_view base = base_of(in.opcode);
      std::string_view rest;
      if (one_of(base, kAtomics)) {
        add_distinct(k.atomic_all, in.opcode);
      } else if (one_of(base, kLoads)) {
        // Kernel-parameter reads (LDC R1, c[0x0][0x28]) are no load of the measurement.
        if (starts_with_destination(in.operands, &rest) &&
            rest.find("c[0x0]") == std::string_view::npos)
          ++loads[in.opcode];
      } else if (one_of(base, kStores)) {
        const std::string_view ops(in.operands);
        if (!ops.empty() && (ops[0] == '[' || ops.substr(0, 5) == "desc[")) ++stores[in.opcode];
      } else if (one_of(base, kBulk)) {
        if (++bulks[in.opcode] == 1) add_distinct(k.bulk_all, in.opcode);
      }
    }
    k.load = most(loads);
    k.store = most(stores);
    k.bulk = most(bulks);
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
