// NVIDIA Vulkan machine code from a pipeline cache (nv_shader_cache.hpp says how).
#include "gpudissect/nv_shader_cache.hpp"

#include <dlfcn.h>
#include <stdlib.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "gpudissect/tools.hpp"

namespace gd {

namespace {

// zstd's stable API (zstd.h), declared here: the library is loaded at run time.
struct Zstd {
  unsigned long long (*content_size)(const void*, size_t) = nullptr;
  size_t (*compressed_size)(const void*, size_t) = nullptr;
  size_t (*decompress)(void*, size_t, const void*, size_t) = nullptr;
  size_t (*compress)(void*, size_t, const void*, size_t, int) = nullptr;
  size_t (*bound)(size_t) = nullptr;
  unsigned (*is_error)(size_t) = nullptr;
  bool ok() const {
    return content_size && compressed_size && decompress && compress && bound && is_error;
  }
};

const Zstd& zstd() {
  static const Zstd z = [] {
    Zstd r;
    // Kept loaded for the process's life.
    void* lib = dlopen("libzstd.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib) return r;
    r.content_size =
        reinterpret_cast<decltype(r.content_size)>(dlsym(lib, "ZSTD_getFrameContentSize"));
    r.compressed_size =
        reinterpret_cast<decltype(r.compressed_size)>(dlsym(lib, "ZSTD_findFrameCompressedSize"));
    r.decompress = reinterpret_cast<decltype(r.decompress)>(dlsym(lib, "ZSTD_decompress"));
    r.compress = reinterpret_cast<decltype(r.compress)>(dlsym(lib, "ZSTD_compress"));
    r.bound = reinterpret_cast<decltype(r.bound)>(dlsym(lib, "ZSTD_compressBound"));
    r.is_error = reinterpret_cast<decltype(r.is_error)>(dlsym(lib, "ZSTD_isError"));
    return r;
  }();
  return z;
}

constexpr unsigned char kZstdMagic[4] = {0x28, 0xb5, 0x2f, 0xfd};

uint32_t u32_at(const std::vector<uint8_t>& b, std::size_t at) {
  uint32_t v = 0;
  std::memcpy(&v, b.data() + at, 4);  // the driver's format is little-endian, as x86 is
  return v;
}

// nvdisasm's instruction lines, indented as cuobjdump's, under a function header.
void append_function(std::ostringstream& out, const std::string& name, const std::string& text) {
  out << "\t\tFunction : " << name << "\n";
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line))
    if (line.find("/*") != std::string::npos) out << line << "\n";
}

}  // namespace

std::vector<std::vector<uint8_t>> zstd_frames(const std::vector<uint8_t>& data, std::string* why,
                                              uint64_t max_bytes) {
  std::vector<std::vector<uint8_t>> out;
  const Zstd& z = zstd();
  if (!z.ok()) {
    if (why) *why = "no libzstd.so.1 to read the pipeline cache's compressed frames";
    return out;
  }
  std::size_t i = 0;
  while (i + 4 <= data.size()) {
    if (std::memcmp(data.data() + i, kZstdMagic, 4) != 0) {
      ++i;
      continue;
    }
    const void* at = data.data() + i;
    const std::size_t left = data.size() - i;
    const std::size_t frame = z.compressed_size(at, left);
    const unsigned long long n = z.content_size(at, left);
    // ZSTD_CONTENTSIZE_UNKNOWN and _ERROR are the two largest values: both above the cap.
    if (z.is_error(frame) || frame == 0 || n > max_bytes) {
      ++i;
      continue;
    }
    std::vector<uint8_t> content(static_cast<std::size_t>(n));
    const std::size_t got = z.decompress(content.data(), content.size(), at, frame);
    if (!z.is_error(got) && got == n) out.push_back(std::move(content));
    i += frame;
  }
  if (out.empty() && why) *why = "no zstd frame in the pipeline cache's data";
  return out;
}

std::vector<uint8_t> zstd_frame(const std::vector<uint8_t>& data) {
  const Zstd& z = zstd();
  if (!z.ok()) return {};
  std::vector<uint8_t> out(z.bound(data.size()));
  const std::size_t n = z.compress(out.data(), out.size(), data.data(), data.size(), 3);
  if (z.is_error(n)) return {};
  out.resize(n);
  return out;
}

std::vector<std::vector<uint8_t>> nvuc_code_sections(const std::vector<uint8_t>& blob) {
  std::vector<std::vector<uint8_t>> out;
  constexpr std::size_t kHeader = 0x20, kEntry = 0x20;
  std::size_t o = 0;
  while (o + kHeader <= blob.size()) {
    if (std::memcmp(blob.data() + o, "NVuc", 4) != 0) {
      ++o;
      continue;
    }
    const std::size_t size = blob.size() - o;
    // Entries until the first section begins (or the blob ends).
    std::size_t first_section = size;
    for (std::size_t e = kHeader; e + kEntry <= first_section; e += kEntry) {
      const uint32_t type = u32_at(blob, o + e), bytes = u32_at(blob, o + e + 4),
                     offset = u32_at(blob, o + e + 8);
      if (offset >= kHeader && offset < first_section) first_section = offset;
      const bool inside = offset >= e + kEntry && uint64_t(offset) + bytes <= size;
      if (type == 1 && bytes > 0 && bytes % 16 == 0 && inside)
        out.emplace_back(blob.begin() + static_cast<std::ptrdiff_t>(o + offset),
                         blob.begin() + static_cast<std::ptrdiff_t>(o + offset + bytes));
    }
    o += 4;
  }
  return out;
}

std::string nvdisasm_arch(const std::string& sm_arch) {
  if (sm_arch.size() < 5 || sm_arch.size() > 6 || sm_arch.rfind("sm_", 0) != 0) return {};
  for (std::size_t i = 3; i < sm_arch.size(); ++i)
    if (sm_arch[i] < '0' || sm_arch[i] > '9') return {};
  return "SM" + sm_arch.substr(3);
}

NvCacheSass nv_cache_sass(const std::vector<uint8_t>& cache_data, const std::string& sm_arch,
                          const std::string& nvdisasm) {
  NvCacheSass r;
  const std::string arch = nvdisasm_arch(sm_arch);
  if (arch.empty()) {
    r.why = "no SM architecture for nvdisasm (" + (sm_arch.empty() ? "none" : sm_arch) + ")";
    return r;
  }
  if (nvdisasm.empty()) {
    r.why = "no nvdisasm found (CUDA's tools)";
    return r;
  }
  std::vector<std::vector<uint8_t>> code;
  for (const auto& frame : zstd_frames(cache_data, &r.why))
    for (auto& c : nvuc_code_sections(frame)) code.push_back(std::move(c));
  // A driver that stores the object uncompressed.
  for (auto& c : nvuc_code_sections(cache_data)) code.push_back(std::move(c));
  if (code.empty()) {
    if (r.why.empty() || r.why.rfind("no zstd", 0) == 0)
      r.why = "no NVuc code section in the pipeline cache's data (" +
              std::to_string(cache_data.size()) + " bytes)";
    return r;
  }
  const PrivateTempDir tmp("gd_nvuc");
  if (!tmp.ok()) {
    r.why = "no temporary directory for nvdisasm";
    return r;
  }
  const std::filesystem::path& dir = tmp.path();
  std::ostringstream out;
  for (std::size_t k = 0; k < code.size() && r.why.rfind("nvdisasm", 0) != 0; ++k) {
    const std::string file = (dir / ("code" + std::to_string(k) + ".bin")).string();
    std::ofstream(file, std::ios::binary)
        .write(reinterpret_cast<const char*>(code[k].data()),
               static_cast<std::streamsize>(code[k].size()));
    const ToolRun dis = run_tool({nvdisasm, "--binary", arch, "-c", "-raw", file});
    if (dis.rc != 0 || dis.out.find("/*0000*/") == std::string::npos)
      r.why = "nvdisasm failed: " + first_line(dis.out);
    else
      append_function(out, k == 0 ? "main" : "main_" + std::to_string(k), dis.out);
  }
  if (r.why.rfind("nvdisasm", 0) == 0) return r;
  r.why.clear();
  r.sass = out.str();
  return r;
}

const std::string& nvdisasm_tool() {
  static const std::string path =
      find_tool("nvdisasm", cuda_tool_dirs(std::getenv("PATH"), std::getenv("CUDA_HOME")));
  return path;
}

}  // namespace gd
