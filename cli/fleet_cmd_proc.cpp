// gpudissect fleet's child processes, signals and profiles (see fleet_cmd_impl.hpp).
#include <fcntl.h>
#include <signal.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <stdexcept>
#include <thread>

#include "fleet_cmd_impl.hpp"
#include "registry.hpp"

namespace gd::cli::fleet {

std::atomic<bool> g_fleet_stop{false};
std::atomic<int> g_fleet_signal{0};
extern "C" void on_fleet_signal(int sig) {
  g_fleet_stop = true;
  g_fleet_signal = sig;
}

int stopped_status() { return 128 + (g_fleet_signal ? g_fleet_signal.load() : SIGTERM); }
std::string stop_reason() {
  return std::string("stopped by ") + (g_fleet_signal == SIGINT ? "SIGINT" : "SIGTERM") +
         " before it finished";
}

void die_with_parent(pid_t parent) {
#ifdef __linux__
  prctl(PR_SET_PDEATHSIG, SIGTERM);
#endif
  if (getppid() != parent) _exit(128 + SIGTERM);
}

std::string host_name() {
  char buf[256] = {};
  if (gethostname(buf, sizeof buf - 1) != 0) return "?";
  return buf;
}

std::string self_exe(const char* argv0) {
  std::error_code ec;
  const fs::path p = fs::read_symlink("/proc/self/exe", ec);
  return ec ? std::string(argv0) : p.string();
}

const char* env(const char* name) {
  const char* v = std::getenv(name);
  return v && *v ? v : nullptr;
}

std::string last_error_line(const fs::path& log) {
  std::ifstream f(log);
  std::string line, last, last_error;
  while (std::getline(f, line)) {
    if (line.empty()) continue;
    last = line;
    if (line.rfind("error", 0) == 0) last_error = line;
  }
  return last_error.empty() ? last : last_error;
}

ChildOutcome run_child(const std::vector<std::string>& argv, const fs::path& log, double timeout,
                       bool hang) {
  std::vector<char*> cargv;
  for (const auto& a : argv) cargv.push_back(const_cast<char*>(a.c_str()));
  cargv.push_back(nullptr);
  const pid_t self = getpid();
  const pid_t pid = fork();
  if (pid < 0) throw std::runtime_error("fork failed");
  if (pid == 0) {
    die_with_parent(self);
    const int fd = open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd >= 0) {
      dup2(fd, 1);
      dup2(fd, 2);
      close(fd);
    }
    std::signal(SIGTERM, SIG_DFL);  // (exec resets them too; a hang must die of SIGTERM)
    std::signal(SIGINT, SIG_DFL);
    if (hang)
      for (;;) pause();
    execv(cargv[0], cargv.data());
    _exit(127);
  }
  ChildOutcome out;
  const auto t0 = Clock::now();
  bool termed = false;
  double term_at = 0;
  for (;;) {
    int st = 0;
    const pid_t w = waitpid(pid, &st, WNOHANG);
    if (w == pid) {
      out.rc = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + (WIFSIGNALED(st) ? WTERMSIG(st) : 0);
      return out;
    }
    const double t = seconds_since(t0);
    if (!termed && (t > timeout || g_fleet_stop)) {
      out.timed_out = !g_fleet_stop;
      kill(pid, SIGTERM);
      termed = true;
      term_at = t;
    } else if (termed && t > term_at + kKillGrace) {
      kill(pid, SIGKILL);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

const std::vector<std::string> kQuickProbes = {"bandwidth", "compute"};
const std::vector<std::string> kQuickOptions = {"bandwidth.quick=1", "bandwidth.parts=footprint",
                                                "compute.quick=1", "compute.mixed=0",
                                                "compute.ops=fp32.fma,tensor"};

std::vector<std::string> full_probes() {
  std::vector<std::string> v;
  for (const std::string& n : probe_registry().names())
    if (n != "links") v.push_back(n);
  return v;
}

}  // namespace gd::cli::fleet
