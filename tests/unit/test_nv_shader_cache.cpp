// NVIDIA Vulkan machine code from pipeline-cache data: the NVuc object's code sections, the
// zstd frames around them, and the listing handed to the SASS readers, with a stand-in for
// nvdisasm (the real one runs on the GPU machines).
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <cstring>
#include <filesystem>
#include <fstream>

#include "compute/compute.hpp"
#include "gpudissect/nv_shader_cache.hpp"
#include "gpudissect/tools.hpp"

namespace {

void put32(std::vector<uint8_t>& b, std::size_t at, uint32_t v) {
  if (b.size() < at + 4) b.resize(at + 4);
  std::memcpy(b.data() + at, &v, 4);
}

// What the driver's decompressed entry looks like: 8 bytes of prefix, then the object:
// "NVuc", a 32-byte header, entries {type, size, offset} of 32 bytes, the sections.
std::vector<uint8_t> nvuc_blob(const std::vector<uint8_t>& code, uint32_t code_type = 1) {
  std::vector<uint8_t> b = {'N', 'V', 'D', 'A', 'N', 'V', 'V', 'M'};
  const std::size_t o = b.size();
  b.resize(o + 0x100, 0);
  std::memcpy(b.data() + o, "NVuc", 4);
  put32(b, o + 4, 1);
  // A name section first, then the code, as the driver orders them.
  put32(b, o + 0x20, 0x21);
  put32(b, o + 0x24, 8);
  put32(b, o + 0x28, 0x60);
  put32(b, o + 0x40, code_type);
  put32(b, o + 0x44, static_cast<uint32_t>(code.size()));
  put32(b, o + 0x48, 0x70);
  std::memcpy(b.data() + o + 0x60, "main_4\0\0", 8);
  b.resize(o + 0x70);
  b.insert(b.end(), code.begin(), code.end());
  return b;
}

std::vector<uint8_t> instructions(int n) {
  std::vector<uint8_t> c(static_cast<std::size_t>(n) * 16);
  for (std::size_t i = 0; i < c.size(); ++i) c[i] = static_cast<uint8_t>(i * 7 + 3);
  return c;
}

}  // namespace

TEST(NvShaderCache, CodeSectionIsFoundByItsEntry) {
  const auto code = instructions(5);
  const auto sections = gd::nvuc_code_sections(nvuc_blob(code));
  ASSERT_EQ(sections.size(), 1u);
  EXPECT_EQ(sections[0], code);
}

TEST(NvShaderCache, HostileEntriesGiveNoSection) {
  // Not whole instructions; another section type; past the end of the blob.
  EXPECT_TRUE(gd::nvuc_code_sections(nvuc_blob(std::vector<uint8_t>(40, 1))).empty());
  EXPECT_TRUE(gd::nvuc_code_sections(nvuc_blob(instructions(2), 3)).empty());
  auto cut = nvuc_blob(instructions(4));
  cut.resize(cut.size() - 16);
  EXPECT_TRUE(gd::nvuc_code_sections(cut).empty());
  auto huge = nvuc_blob(instructions(1));
  put32(huge, 8 + 0x44, 0xfffffff0u);
  EXPECT_TRUE(gd::nvuc_code_sections(huge).empty());
  EXPECT_TRUE(gd::nvuc_code_sections({'N', 'V', 'u', 'c'}).empty());
  EXPECT_TRUE(gd::nvuc_code_sections({}).empty());
}

TEST(NvShaderCache, ZstdFramesBehindAHeaderAreRead) {
  const auto blob = nvuc_blob(instructions(3));
  const auto frame = gd::zstd_frame(blob);
  ASSERT_FALSE(frame.empty()) << "libzstd.so.1 is missing";
  // A pipeline cache: its header, then the frame, then a second frame.
  std::vector<uint8_t> cache(100, 0x5a);
  cache.insert(cache.end(), frame.begin(), frame.end());
  cache.insert(cache.end(), frame.begin(), frame.end());
  const auto frames = gd::zstd_frames(cache);
  ASSERT_EQ(frames.size(), 2u);
  EXPECT_EQ(frames[0], blob);
  // A frame claiming more than the cap is skipped, not allocated.
  EXPECT_TRUE(gd::zstd_frames(cache, nullptr, 16).empty());
  std::string why;
  EXPECT_TRUE(gd::zstd_frames(std::vector<uint8_t>(64, 0x28), &why).empty());
  EXPECT_NE(why.find("no zstd frame"), std::string::npos) << why;
}

TEST(NvShaderCache, ArchitectureNamesOnlyWhatNvdisasmTakes) {
  EXPECT_EQ(gd::nvdisasm_arch("sm_90"), "SM90");
  EXPECT_EQ(gd::nvdisasm_arch("sm_100"), "SM100");
  for (const char* bad : {"", "sm_", "sm_9;", "90", "sm_90a", "SM90", "sm_9 0", "sm_1000"})
    EXPECT_EQ(gd::nvdisasm_arch(bad), "") << bad;
}

// The whole path with a stand-in for nvdisasm that checks its arguments and prints a loop
// in nvdisasm's -c -raw form: the compute probe's reader finds the loop and its FFMAs.
TEST(NvShaderCache, ListingReachesTheLoopReader) {
  const auto dir = std::filesystem::temp_directory_path() / "gd_test_nvdisasm";
  std::filesystem::create_directories(dir);
  const std::string tool = (dir / "nvdisasm").string();
  {
    std::ofstream f(tool);
    f << "#!/bin/sh\n"
         "[ \"$1 $2 $3 $4\" = \"--binary SM90 -c -raw\" ] || { echo bad arguments; exit 1; }\n"
         "[ -s \"$5\" ] || { echo no input; exit 1; }\n"
         "echo '        /*0000*/                   MOV R1, c[0x0][0x28] ;'\n"
         "echo '        /*0010*/                   FFMA R2, R2, R3, R4 ;'\n"
         "echo '        /*0020*/                   FFMA R2, R2, R3, R4 ;'\n"
         "echo '        /*0030*/              @!P0 BRA 0x10 ;'\n"
         "echo '        /*0040*/                   EXIT ;'\n";
  }
  chmod(tool.c_str(), 0755);
  const auto frame = gd::zstd_frame(nvuc_blob(instructions(5)));
  ASSERT_FALSE(frame.empty());
  std::vector<uint8_t> cache(32, 0);
  cache.insert(cache.end(), frame.begin(), frame.end());
  const gd::NvCacheSass s = gd::nv_cache_sass(cache, "sm_90", tool);
  ASSERT_TRUE(s.why.empty()) << s.why;
  const auto loops = gd::parse_sass_loops(s.sass);
  ASSERT_EQ(loops.count("main"), 1u) << s.sass;
  EXPECT_EQ(loops.at("main").loop_instructions, 3);
  EXPECT_EQ(gd::count_opcodes(loops.at("main"), {"FFMA"}), 2);
  // The reasons where it cannot run.
  EXPECT_NE(gd::nv_cache_sass(cache, "", tool).why.find("no SM architecture"), std::string::npos);
  EXPECT_NE(gd::nv_cache_sass(cache, "sm_90", "").why.find("no nvdisasm"), std::string::npos);
  EXPECT_NE(gd::nv_cache_sass(cache, "sm_80", tool).why.find("nvdisasm failed: bad arguments"),
            std::string::npos);
  EXPECT_NE(gd::nv_cache_sass({1, 2, 3}, "sm_90", tool).why.find("no NVuc code section"),
            std::string::npos);
  std::filesystem::remove_all(dir);
}

// The data NVIDIA's driver gave for one pipeline on an H200: one frame, one code section of
// 72 instructions (nvdisasm read it as the shader's loop of REDUX.SUM and SHFL on the GPU
// machine).
TEST(NvShaderCache, DriverDataOfAnH200HoldsOneCodeSection) {
  std::ifstream f(std::string(GD_FIXTURES) + "/backends/nv_vulkan_pipeline_cache_h200.bin",
                  std::ios::binary);
  ASSERT_TRUE(f) << "fixture missing";
  const std::vector<uint8_t> cache((std::istreambuf_iterator<char>(f)), {});
  const auto frames = gd::zstd_frames(cache);
  ASSERT_EQ(frames.size(), 1u);
  const auto code = gd::nvuc_code_sections(frames[0]);
  ASSERT_EQ(code.size(), 1u);
  EXPECT_EQ(code[0].size(), 72u * 16);
  // The first instruction: S2R R0, SR_CTAID.X (opcode 0x919 in the low bits).
  EXPECT_EQ(code[0][0], 0x19);
  EXPECT_EQ(code[0][1], 0x79);
}

// The tools' working folder: private (0700) while it lives, gone with everything in it after.
TEST(NvShaderCache, ToolFolderIsPrivateAndRemoved) {
  std::filesystem::path kept;
  {
    const gd::PrivateTempDir d("gd_test_tools");
    ASSERT_TRUE(d.ok());
    kept = d.path();
    std::ofstream(kept / "file") << "x";
    struct stat st {};
    ASSERT_EQ(stat(kept.c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 0777, 0700u);
  }
  EXPECT_FALSE(std::filesystem::exists(kept));
}
