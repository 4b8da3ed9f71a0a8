// What a Vulkan driver says it compiled a compute pipeline to
// (VK_KHR_pipeline_executable_properties: statistics and internal representations, ISA text
// on Mesa's hardware drivers), and what the SPIR-V module's loop holds, each reduced to an
// opcode histogram for the line beside a compute figure.
#pragma once

#include <vulkan/vulkan.h>

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace gd::vulkan {

struct ExecutableListing {
  std::string name;  // the executable's, e.g. "Compute shader"
  std::vector<std::pair<std::string, std::string>> statistics;       // name, value as text
  std::vector<std::pair<std::string, std::string>> representations;  // name, text
};

// Every executable of a pipeline created with the capture flags
// (VK_PIPELINE_CREATE_CAPTURE_STATISTICS_BIT_KHR and ..._INTERNAL_REPRESENTATIONS_BIT_KHR)
// on a device with pipelineExecutableInfo enabled. Throws BackendError where a call fails.
std::vector<ExecutableListing> read_executables(VkDevice device, VkPipeline pipeline);

// Opcode -> count over an internal representation's text: the mnemonic of each instruction
// line of an ISA listing ("v_fma_f32 v1, ...", "mad(8) g10<1>F ...", "FFMA R1, ..."), or the
// operation after '=' of an SSA line ("%5 = fadd %3, %4", "vec1 32 ssa_5 = ffma ...").
std::map<std::string, int> ir_opcodes(const std::string& text);

// The most frequent opcodes first, "NAME xN" (the LoopSass form), at most `top`.
std::vector<std::string> top_counts(const std::map<std::string, int>& counts, std::size_t top);

// One line for a figure: per executable, the representation nearest the machine code (one
// named assembly, ISA or disassembly, else the last listed) as its 6 most frequent opcodes,
// then its first statistics; empty where there are none. At most max_chars characters (the
// terminal table shows it).
std::string summarize_executables(const std::vector<ExecutableListing>& e,
                                  std::size_t max_chars = 300);

// "; " and summarize_executables(read_executables(device, pipeline), max_chars) where the
// pipeline was created capturing them (`captured`: the device's pipelineExecutableInfo);
// empty otherwise, or where reading them fails: a listing is an aid beside a figure, and the
// measurement never depends on it.
std::string executables_suffix(VkDevice device, VkPipeline pipeline, bool captured,
                               std::size_t max_chars = 200);

// Opcode -> count between the first OpLoopMerge of a SPIR-V module and its merge block (the
// timed loop of compute.comp), named as spirv-dis names them ("OpFAdd"; extended
// instructions of GLSL.std.450 as "GLSL.std.450 Fma"); opcodes without a name here as
// "Op#<number>". Empty when the words hold no loop or are not SPIR-V.
std::map<std::string, int> spirv_loop_opcodes(const std::vector<uint32_t>& words);

}  // namespace gd::vulkan
