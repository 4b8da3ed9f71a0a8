#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "compute/ptx_sass.hpp"
#include "gpudissect/stats.hpp"

namespace gd {

bool is_nvidia_opencl(const std::string& platform_name, const std::string& platform_vendor) {
  auto has = [](const std::string& s) { return s.find("NVIDIA") != std::string::npos; };
  return has(platform_name) || has(platform_vendor);
}

std::string nv_cl_read_sreg(const std::string& reg, const std::string& var) {
  const bool wide = reg == "globaltimer" || reg == "clock64";
  return std::string("__asm__ volatile(\"mov.") + (wide ? "u64" : "u32") + " %0, %%" + reg +
         ";\" : \"=" + (wide ? "l" : "r") + "\"(" + var + "));";
}

void apply_block_clocks(ComputeTiming& t, const std::vector<uint64_t>& tim, std::size_t groups,
                        bool latency) {
  groups = std::min(groups, tim.size() / 4);
  uint64_t lo = ~uint64_t(0), hi = 0;
  std::vector<double> cyc, mhz;
  std::vector<BlockClock> blocks;
  for (std::size_t g = 0; g < groups; ++g) {
    const uint64_t c = tim[4 * g], t0 = tim[4 * g + 1], t1 = tim[4 * g + 2], w = tim[4 * g + 3];
    lo = std::min(lo, t0);
    hi = std::max(hi, t1);
    cyc.push_back(static_cast<double>(c));
    if (t1 > t0) mhz.push_back(static_cast<double>(c) / static_cast<double>(t1 - t0) * 1000.0);
    blocks.push_back({static_cast<int>(w >> 48), w & ((uint64_t(1) << 48) - 1), c, t0, t1});
  }
  // The kernel's own span where its timer ran (the event's holds the launch's overhead).
  if (hi > lo) t.span_ns = static_cast<double>(hi - lo);
  if (!cyc.empty()) t.cycles_per_block = median(cyc);
  if (!mhz.empty()) t.clock_mhz = median(mhz);
  const SmWindows win = sm_windows(blocks);
  if (!latency && win.cycles > 0 && win.ns > 0) {
    t.sm_cycles = win.cycles;
    t.sm_ns = win.ns;
    t.clock_mhz = win.cycles / win.ns * 1000.0;
  }
}

namespace {

std::vector<std::string> dot_parts(const std::string& opcode) {
  std::vector<std::string> parts;
  std::stringstream s(opcode);
  std::string p;
  while (std::getline(s, p, '.')) {
    // Integer types by width only: a compiler may write add.s32 for CUDA's add.u32.
    if (p.size() >= 2 && (p[0] == 's' || p[0] == 'u') &&
        p.find_first_not_of("0123456789", 1) == std::string::npos)
      p[0] = 'i';
    parts.push_back(p);
  }
  return parts;
}

}  // namespace

bool ptx_holds(const std::string& ptx, const std::string& expect) {
  const std::vector<std::string> want = dot_parts(expect);
  if (want.empty()) return false;
  std::istringstream in(ptx);
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream words(line);
    std::string w;
    if (!(words >> w)) continue;
    if (w[0] == '@' && !(words >> w)) continue;  // a predicate guards the instruction
    const std::vector<std::string> have = dot_parts(w);
    if (have.empty() || have[0] != want[0]) continue;
    // The expected modifiers in order, others (.ftz, .approx, a type) between them allowed.
    std::size_t k = 1;
    for (std::size_t i = 1; i < have.size() && k < want.size(); ++i)
      if (have[i] == want[k]) ++k;
    if (k == want.size()) return true;
  }
  return false;
}

std::string sm_target(int major, int minor) {
  return "sm_" + std::to_string(major) + std::to_string(minor);
}

ToolRun run_tool(const std::vector<std::string>& argv) {
  ToolRun r;
  if (argv.empty()) return r;
  // Built before fork: the child only calls what is safe after it in a threaded process.
  std::vector<char*> cargv;
  for (const auto& a : argv) cargv.push_back(const_cast<char*>(a.c_str()));
  cargv.push_back(nullptr);
  int fds[2];
  if (pipe(fds) != 0) return r;
  const pid_t pid = fork();
  if (pid < 0) {
    close(fds[0]);
    close(fds[1]);
    return r;
  }
  if (pid == 0) {
    dup2(fds[1], 1);
    dup2(fds[1], 2);
    close(fds[0]);
    close(fds[1]);
    const int null = open("/dev/null", O_RDONLY);
    if (null >= 0) dup2(null, 0);
    execv(cargv[0], cargv.data());
    _exit(127);
  }
  close(fds[1]);
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

const SassTools& sass_tools() {
  static const SassTools tools = [] {
    const auto dirs = cuda_tool_dirs(std::getenv("PATH"), std::getenv("CUDA_HOME"));
    return SassTools{find_tool("ptxas", dirs), find_tool("cuobjdump", dirs)};
  }();
  return tools;
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

std::string ptxas_current_version(const std::string& ptxas_output) {
  const std::string key = "current version is '";
  const std::size_t at = ptxas_output.find(key);
  if (ptxas_output.find("Unsupported .version") == std::string::npos || at == std::string::npos)
    return {};
  const std::size_t b = at + key.size(), e = ptxas_output.find('\'', b);
  if (e == std::string::npos) return {};
  const std::string v = ptxas_output.substr(b, e - b);
  const bool ok = !v.empty() && v.size() <= 8 &&
                  v.find_first_not_of("0123456789.") == std::string::npos && v.front() != '.';
  return ok ? v : std::string();
}

std::string ptx_with_version(const std::string& ptx, const std::string& version) {
  std::size_t at = ptx.find(".version ");
  // Only a directive at the start of a line (comments may name versions too).
  while (at != std::string::npos && at > 0 && ptx[at - 1] != '\n')
    at = ptx.find(".version ", at + 1);
  if (at == std::string::npos) return ptx;
  const std::size_t end = ptx.find('\n', at);
  return ptx.substr(0, at) + ".version " + version +
         (end == std::string::npos ? std::string() : ptx.substr(end));
}

PtxSass ptx_to_sass(const std::string& ptx, const std::string& sm, const SassTools& tools) {
  PtxSass r;
  if (!tools.found()) {
    r.why = "no ptxas/cuobjdump found";
    return r;
  }
  std::string tmpl = (std::filesystem::temp_directory_path() / "gd_ptx_XXXXXX").string();
  if (!mkdtemp(tmpl.data())) {
    r.why = "no temporary directory for ptxas";
    return r;
  }
  const std::filesystem::path dir = tmpl;
  const std::string in = (dir / "kernel.ptx").string(), out = (dir / "kernel.cubin").string();
  {
    std::ofstream f(in, std::ios::binary);
    f << ptx;
  }
  ToolRun as = run_tool({tools.ptxas, "-arch=" + sm, "-o", out, in});
  // A driver newer than the toolkit writes a PTX ISA version its ptxas does not know; the
  // instructions of these kernels are older than either, so the file is retried under the
  // version ptxas names as its own.
  const std::string current = ptxas_current_version(as.out);
  if (as.rc != 0 && !current.empty()) {
    std::ofstream(in, std::ios::binary) << ptx_with_version(ptx, current);
    as = run_tool({tools.ptxas, "-arch=" + sm, "-o", out, in});
  }
  if (as.rc != 0) {
    r.why = "ptxas failed: " + first_line(as.out);
  } else {
    const ToolRun dis = run_tool({tools.cuobjdump, "--dump-sass", out});
    if (dis.rc != 0 || dis.out.empty())
      r.why = "cuobjdump failed: " + first_line(dis.out);
    else
      r.sass = dis.out;
  }
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);
  return r;
}

}  // namespace gd
