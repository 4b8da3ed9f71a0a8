// Reading `cuobjdump --dump-sass` text: each function's instructions, for the probes that
// check what a timed loop really holds (compute's instruction table, the front end's code
// regions).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace gd {

struct SassInstruction {
  uint64_t addr = 0;
  std::string opcode;    // with its modifiers: "FFMA", "LDG.E.128", "BRA"
  std::string operands;  // the rest up to the ';'
  // A branch back to an earlier address: the start of the loop it closes.
  std::optional<uint64_t> backward_target() const;
};

// Every "Function : name" of the listing and its instructions in order (predicates dropped).
std::map<std::string, std::vector<SassInstruction>> sass_functions(const std::string& sass);

// A loop's `n` most frequent opcodes from its opcode counts, most first (ties by name):
// "FFMA x512", "BRA x1".
std::vector<std::string> top_opcodes(const std::map<std::string, int>& counts, std::size_t n);

}  // namespace gd
