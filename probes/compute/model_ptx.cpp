#include <unistd.h>

#include <algorithm>
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

const SassTools& sass_tools() {
  static const SassTools tools = [] {
    const auto dirs = cuda_tool_dirs(std::getenv("PATH"), std::getenv("CUDA_HOME"));
    return SassTools{find_tool("ptxas", dirs), find_tool("cuobjdump", dirs)};
  }();
  return tools;
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
  const PrivateTempDir tmp("gd_ptx");
  if (!tmp.ok()) {
    r.why = "no temporary directory for ptxas";
    return r;
  }
  const std::filesystem::path& dir = tmp.path();
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
  return r;
}

}  // namespace gd
