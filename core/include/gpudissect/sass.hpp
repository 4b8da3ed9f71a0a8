// Reading `cuobjdump --dump-sass` text: each function's instructions, for the probes that
// check what a timed loop really holds (compute's instruction table, the front end's code
// regions, the memory instruction each bandwidth, atomics and links kernel executes).
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

// The memory instructions one kernel executes, as its SASS shows them: the instruction a
// figure was really timed with.
struct KernelMemoryOps {
  std::string load;      // most frequent load that is not a kernel-parameter read
  std::string store;     // most frequent store
  std::string bulk;      // most frequent copy-engine instruction (UBLKCP...), if any
  std::string bulk_all;  // every distinct copy-engine instruction, " + " between
  // Atomics and warp reductions (ATOMS.*, ATOMG.*, ATOM.*, RED.*, REDG.*, REDUX.*): every
  // distinct one in order of first appearance, " + " between; a REDUX beside an atomic
  // means the compiler folded a warp's operations into one.
  std::string atomic_all;
};

// Per kernel (mangled name) of a cuobjdump --dump-sass listing.
std::map<std::string, KernelMemoryOps> kernel_memory_ops(const std::string& sass);

// A loop's `n` most frequent opcodes from its opcode counts, most first (ties by name):
// "FFMA x512", "BRA x1".
std::vector<std::string> top_opcodes(const std::map<std::string, int>& counts, std::size_t n);

}  // namespace gd
