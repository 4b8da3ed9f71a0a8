#include "compute/cl_vendor.hpp"

namespace gd {

namespace {

bool has(const std::string& s, const char* word) { return s.find(word) != std::string::npos; }

// AMD, for clang's amdgcn target (ROCm's OpenCL compiler). The cycle counter is s_memtime,
// a 64-bit counter, not __builtin_readcyclecounter: on gfx10.3 and gfx11 that lowers to the
// SHADER_CYCLES register, 20 bits, which wraps within a millisecond (LLVM itself went back
// to s_memtime where the target has it). The wall clock is s_memrealtime, which AMD's ISA
// manuals give a constant 100 MHz (10 ns a tick) from gfx8 on. Targets that lack either
// (gfx11 and later have no s_memtime) write zeros, which the host reads as no clock. The
// compute unit's id: HW_ID on gfx9 (CU_ID, SH_ID, SE_ID in bits 8 to 15), HW_ID1 on gfx10
// (WGP_ID in bits 10 to 13, SA_ID 16, SE_ID 18 to 20: a WGP, two CUs). s_getreg's operand is
// register | offset << 6 | (bits - 1) << 11. __has_builtin follows the target's features
// in clang 15 and later; clang 14 knows no target beyond gfx10.3, where both builtins exist.
constexpr const char* kAmdDefs =
    "#if defined(__AMDGCN__) && defined(__has_builtin)\n"
    "#if __has_builtin(__builtin_amdgcn_s_memtime) && "
    "__has_builtin(__builtin_amdgcn_s_memrealtime)\n"
    "#define GD_AMD_CLOCKED 1\n"
    "#endif\n"
    "#endif\n"
    "#if defined(GD_AMD_CLOCKED)\n"
    "#define GD_AMD_CYCLES() ((ulong)__builtin_amdgcn_s_memtime())\n"
    "#define GD_AMD_NS() ((ulong)__builtin_amdgcn_s_memrealtime() * 10UL)\n"
    "#if defined(__GFX10__) || defined(__gfx1010__) || defined(__gfx1011__) || "
    "defined(__gfx1012__) || defined(__gfx1013__) || defined(__gfx1030__) || "
    "defined(__gfx1031__) || defined(__gfx1032__) || defined(__gfx1033__) || "
    "defined(__gfx1034__) || defined(__gfx1035__) || defined(__gfx1036__)\n"
    "#define GD_AMD_HW_ID() ((uint)__builtin_amdgcn_s_getreg(23 | (31 << 11)))\n"
    "#define GD_AMD_CU(h) ((((h) >> 10) & 0xFu) | (((h) >> 12) & 0x10u) | (((h) >> 13) & "
    "0xE0u))\n"
    "#else\n"
    "#define GD_AMD_HW_ID() ((uint)__builtin_amdgcn_s_getreg(4 | (31 << 11)))\n"
    "#define GD_AMD_CU(h) (((h) >> 8) & 0xFFu)\n"
    "#endif\n"
    "#else\n"
    "#define GD_AMD_CYCLES() 0UL\n"
    "#define GD_AMD_NS() 0UL\n"
    "#define GD_AMD_HW_ID() 0u\n"
    "#define GD_AMD_CU(h) (h)\n"
    "#endif\n";

}  // namespace

OpenCLClock opencl_clock_for(const std::string& platform_name, const std::string& platform_vendor,
                             bool gpu) {
  if (has(platform_name, "NVIDIA") || has(platform_vendor, "NVIDIA")) return OpenCLClock::nvidia;
  // ROCm's platform name; its vendor is "Advanced Micro Devices, Inc.". Mesa's clover names
  // AMD GPUs too, but its platform is "Clover" and its vendor "Mesa".
  if (gpu && has(platform_name, "AMD Accelerated Parallel Processing")) return OpenCLClock::amd;
  return OpenCLClock::none;
}

OpenCLClockCode opencl_clock_code(OpenCLClock clock) {
  OpenCLClockCode c;
  switch (clock) {
    case OpenCLClock::nvidia:
      c.start =
          "  ulong gd_t0, gd_t1, gd_c0, gd_c1;\n"
          "  __asm__ volatile(\"mov.u64 %0, %%globaltimer;\" : \"=l\"(gd_t0));\n"
          "  __asm__ volatile(\"mov.u64 %0, %%clock64;\" : \"=l\"(gd_c0));\n";
      c.end =
          "  __asm__ volatile(\"mov.u64 %0, %%clock64;\" : \"=l\"(gd_c1));\n"
          "  __asm__ volatile(\"mov.u64 %0, %%globaltimer;\" : \"=l\"(gd_t1));\n";
      c.sm =
          "    uint gd_sm;\n"
          "    __asm__ volatile(\"mov.u32 %0, %%smid;\" : \"=r\"(gd_sm));\n";
      break;
    case OpenCLClock::amd:
      c.defs = kAmdDefs;
      c.start =
          "  ulong gd_t0, gd_t1, gd_c0, gd_c1;\n"
          "  gd_t0 = GD_AMD_NS();\n"
          "  gd_c0 = GD_AMD_CYCLES();\n";
      c.end =
          "  gd_c1 = GD_AMD_CYCLES();\n"
          "  gd_t1 = GD_AMD_NS();\n";
      c.sm =
          "    const uint gd_hw = GD_AMD_HW_ID();\n"
          "    const uint gd_sm = GD_AMD_CU(gd_hw);\n";
      break;
    case OpenCLClock::none:
      break;
  }
  return c;
}

std::string opencl_clock_note(OpenCLClock clock) {
  if (clock != OpenCLClock::amd) return {};
  return "cycle counter: __builtin_amdgcn_s_memtime (wall clock __builtin_amdgcn_s_memrealtime "
         "at 100 MHz, compute unit from HW_ID), not validated on AMD hardware by this project";
}

const char* to_string(OpenCLClock clock) {
  switch (clock) {
    case OpenCLClock::nvidia:
      return "nvidia";
    case OpenCLClock::amd:
      return "amd";
    case OpenCLClock::none:
      break;
  }
  return "none";
}

bool parse_opencl_clock(const std::string& word, OpenCLClock& out) {
  for (OpenCLClock c : {OpenCLClock::none, OpenCLClock::nvidia, OpenCLClock::amd})
    if (word == to_string(c)) {
      out = c;
      return true;
    }
  return false;
}

}  // namespace gd
