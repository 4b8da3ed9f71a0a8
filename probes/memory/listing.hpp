// The memory probe's reading of an OpenCL program's machine code (NVIDIA: its PTX, and the
// SASS ptxas makes of it), GPU-free: which load each chase kernel times.
#pragma once

#include <cstdint>
#include <string>

namespace gd {

// The most frequent load opcode (with its modifiers, "ld.volatile.global.u64", or a texture
// fetch, "tex.1d.v4.u32.s32") in the PTX function `.entry <entry>(`, kernel-parameter reads
// (ld.param) left out; ties go to the first seen. Empty where the entry or a load is missing.
std::string ptx_entry_load(const std::string& ptx, const std::string& entry);

// The most frequent load instruction (LDG, LDC, LD, TLD, TEX with modifiers) in the function
// `fn` of a cuobjdump --dump-sass listing ("Function : <fn>"), constant-bank reads at an
// immediate offset of bank 0 (kernel parameters) left out. Empty where none.
std::string sass_function_load(const std::string& sass, const std::string& fn);

// A chase's end position back to its line: an address (ca, cg: `base` is the buffer's), a
// byte offset (nc, constant: base 0) or a 32-bit element index (texture: unit 4), each line
// `stride` bytes. kNotALine where the position is no line's start or past the last line.
inline constexpr uint32_t kNotALine = 0xffffffffu;
uint32_t chase_end_line(uint64_t end, uint64_t base, uint64_t stride, uint64_t unit,
                        uint64_t lines);

}  // namespace gd
