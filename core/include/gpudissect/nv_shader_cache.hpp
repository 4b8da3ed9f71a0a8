// The machine code NVIDIA's Vulkan driver compiled a pipeline to, read from its pipeline
// cache. The driver offers VK_KHR_pipeline_executable_properties with statistics only (no
// ISA text), but vkGetPipelineCacheData of a cache that saw one pipeline holds the compiled
// shader: behind the cache header, zstd frames whose content is an "NVuc" object (drivers
// 550 and later) with a table of sections, one of which is the SM code. The format is not
// documented: it is read by its magic numbers and bounds only, and the code is believed only
// where CUDA's nvdisasm disassembles it. GPU-free; the zstd library is loaded at run time
// (libzstd.so.1), as libcuda is, so a build needs no zstd headers.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace gd {

// The content of every zstd frame in `data`, in order, each at most `max_bytes` (a frame
// that claims more, or does not decompress, is skipped). *why says why there are none
// where the library is missing.
std::vector<std::vector<uint8_t>> zstd_frames(const std::vector<uint8_t>& data,
                                              std::string* why = nullptr,
                                              uint64_t max_bytes = 64ull << 20);
// One zstd frame holding `data` (tests and tools; empty where libzstd is missing).
std::vector<uint8_t> zstd_frame(const std::vector<uint8_t>& data);

// The code sections of the NVuc objects in `blob`. An object: "NVuc", then a 32-byte header,
// then 32-byte entries {type, size, offset (from the object's start), ...} up to the first
// section; type 1 is SM code, kept where its size is a whole number of 16-byte instructions
// and it lies inside the blob.
std::vector<std::vector<uint8_t>> nvuc_code_sections(const std::vector<uint8_t>& blob);

// "SM90" for "sm_90" (nvdisasm's --binary names); empty for anything else.
std::string nvdisasm_arch(const std::string& sm_arch);

struct NvCacheSass {
  std::string sass;  // cuobjdump's form: "Function : <name>" and one line per instruction
  std::string why;   // where sass is empty: why
};
// A pipeline cache's data to SASS: every code section disassembled by `nvdisasm` (a path;
// run from an argument list, never a shell) for `sm_arch`, under "Function : main" (the
// first) and "Function : main_<k>" (others), so parse_sass_loops and sass_functions read it.
NvCacheSass nv_cache_sass(const std::vector<uint8_t>& cache_data, const std::string& sm_arch,
                          const std::string& nvdisasm);

// nvdisasm from this process's PATH and CUDA_HOME (as ptxas is found), looked up once;
// empty where there is none.
const std::string& nvdisasm_tool();

}  // namespace gd
