// Running a program from an argument list, never a shell (no argument is ever parsed), and
// finding CUDA's tools: for the machine code the backends show (ptxas and cuobjdump for
// OpenCL's PTX, nvdisasm for NVIDIA's Vulkan pipelines).
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace gd {

// A program's exit status and its output (stdout and stderr together, at most 64 MiB), run
// from argv[0] as a path with no shell: no argument is ever parsed. rc 127: it could not
// be started; -1: no pipe, or it died of a signal.
struct ToolRun {
  int rc = -1;
  std::string out;
};
ToolRun run_tool(const std::vector<std::string>& argv);

// Where CUDA's tools are looked for, in order: each directory of `path_env` (PATH), then
// `cuda_home`/bin, then /usr/local/cuda/bin. Null or empty variables add nothing.
std::vector<std::string> cuda_tool_dirs(const char* path_env, const char* cuda_home);
// The first regular, executable file `name` in `dirs`; empty where there is none.
std::string find_tool(const std::string& name, const std::vector<std::string>& dirs);

// The first line of a tool's output naming an error (else its first line), at most 200
// characters, "no output" for none: for a figure's reason.
std::string first_line(const std::string& text);

// A private temporary directory (mkdtemp: mode 0700) for a tool's input and output files,
// removed with everything in it when the object goes; ok() is false where none was made.
class PrivateTempDir {
 public:
  explicit PrivateTempDir(const std::string& prefix);
  ~PrivateTempDir();
  PrivateTempDir(const PrivateTempDir&) = delete;
  PrivateTempDir& operator=(const PrivateTempDir&) = delete;
  bool ok() const { return !path_.empty(); }
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

}  // namespace gd
