# Writes the compiled SPIR-V modules (SPV_FILES, each <name>.spv) into one header of uint32_t
# arrays, so the binary carries its shaders and needs no file next to it at run time.
# Run by cmake -P from cmake/probes.cmake.
separate_arguments(SPV_FILES)
set(content "// Generated from the probes' .comp shaders by glslangValidator; do not edit.\n")
string(APPEND content "#pragma once\n\n#include <cstdint>\n#include <cstddef>\n\n")
string(APPEND content "namespace gd::vulkan::shaders {\n\n")
set(table "")
foreach(spv IN LISTS SPV_FILES)
  get_filename_component(name ${spv} NAME_WE)
  file(READ ${spv} hex HEX)
  string(LENGTH "${hex}" hex_chars)
  math(EXPR rem "${hex_chars} % 8")
  if(hex_chars EQUAL 0 OR NOT rem EQUAL 0)
    message(FATAL_ERROR "${spv} is not a whole number of 32-bit words")
  endif()
  # SPIR-V words are little-endian in the file: bytes b0 b1 b2 b3 -> 0xb3b2b1b0.
  string(REGEX REPLACE "(..)(..)(..)(..)" "0x\\4\\3\\2\\1u," words "${hex}")
  string(APPEND content "inline constexpr uint32_t ${name}[] = {${words}};\n")
  string(APPEND table "    {\"${name}\", ${name}, sizeof(${name}) / 4},\n")
endforeach()
string(APPEND content "\nstruct Module {\n  const char* name;\n  const uint32_t* words;\n  std::size_t count;\n};\n")
string(APPEND content "inline constexpr Module all[] = {\n${table}};\n\n}  // namespace gd::vulkan::shaders\n")
file(WRITE ${OUT} "${content}")
