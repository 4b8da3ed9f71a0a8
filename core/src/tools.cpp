// Running CUDA's tools (ptxas, cuobjdump, nvdisasm) from an argument list, never a shell
// (tools.hpp).
#include "gpudissect/tools.hpp"

#include <fcntl.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <sstream>

namespace gd {

ToolRun run_tool(const std::vector<std::string>& argv) {
  ToolRun r;
  if (argv.empty()) return r;
  std::vector<char*> cargv;
  for (const auto& a : argv) cargv.push_back(const_cast<char*>(a.c_str()));
  cargv.push_back(nullptr);
  // Close-on-exec: a tool another thread starts meanwhile must not inherit this pipe (its
  // reader would wait for that tool's end too). posix_spawn, not fork: a process that maps
  // a GPU driver's memory need not have its page tables copied for each tool.
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) return r;
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&fa, fds[1], 1);
  posix_spawn_file_actions_adddup2(&fa, fds[1], 2);
  pid_t pid = -1;
  const int started = posix_spawn(&pid, cargv[0], &fa, nullptr, cargv.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  close(fds[1]);
  if (started != 0) {
    close(fds[0]);
    r.rc = 127;  // as a shell says of a program it could not run
    return r;
  }
  constexpr std::size_t kMax = std::size_t(64) << 20;
  char buf[1 << 16];
  for (;;) {
    const ssize_t n = read(fds[0], buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    if (r.out.size() < kMax) r.out.append(buf, static_cast<std::size_t>(n));
  }
  close(fds[0]);
  int st = 0;
  while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {
  }
  r.rc = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  return r;
}

std::vector<std::string> cuda_tool_dirs(const char* path_env, const char* cuda_home) {
  std::vector<std::string> dirs;
  if (path_env) {
    std::stringstream s(path_env);
    std::string d;
    while (std::getline(s, d, ':'))
      if (!d.empty()) dirs.push_back(d);
  }
  if (cuda_home && *cuda_home) dirs.push_back(std::string(cuda_home) + "/bin");
  dirs.push_back("/usr/local/cuda/bin");
  return dirs;
}

std::string find_tool(const std::string& name, const std::vector<std::string>& dirs) {
  for (const auto& d : dirs) {
    const std::string p = d + "/" + name;
    struct stat st {};
    if (stat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode) && access(p.c_str(), X_OK) == 0) return p;
  }
  return {};
}

std::string first_line(const std::string& text) {
  // The first line naming an error where one does (a warning may come first).
  std::size_t at = 0;
  for (const char* w : {"fatal", "error"})
    if (const std::size_t p = text.find(w); p != std::string::npos) {
      at = text.rfind('\n', p);
      at = at == std::string::npos ? 0 : at + 1;
      break;
    }
  std::string s = text.substr(at, text.find('\n', at) - at);
  if (s.empty()) return "no output";
  if (s.size() > 200) s = s.substr(0, 200) + "...";
  return s;
}

PrivateTempDir::PrivateTempDir(const std::string& prefix) {
  std::string tmpl = (std::filesystem::temp_directory_path() / (prefix + "_XXXXXX")).string();
  if (mkdtemp(tmpl.data())) path_ = tmpl;
}

PrivateTempDir::~PrivateTempDir() {
  std::error_code ec;
  if (!path_.empty()) std::filesystem::remove_all(path_, ec);
}

}  // namespace gd
