// The vendor paths of the OpenCL kernels that no lent machine can run (AMD), compiled here:
// every compute op's OpenCL C with AMD's clock (model_clvendor.cpp), and the latency chase
// with -DGD_AMD_CLOCK=1, built by clang for amdgcn and checked in the assembly (the counter
// instructions are there where the target has them, absent where it has not).
//
//   vendor_cl_check dump <none|nvidia|amd> <dir>   writes <dir>/<op>.cl for every op
//   vendor_cl_check check <dir> <chase.cl>         dumps the AMD sources and compiles them
//
// clang is looked for in PATH (clang-20 down to clang-14, then clang) and run from an
// argument list, never a shell. Exit 0 passed, 1 failed, 2 bad usage, 77 skipped: no clang
// with the AMDGPU target (GD_REQUIRE_VENDOR_CL=1 makes that a failure, as CI sets it).
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "compute/cl_vendor.hpp"
#include "compute/compute.hpp"
#include "compute/ptx_sass.hpp"

namespace {

namespace fs = std::filesystem;
using gd::OpenCLClock;

constexpr int kSkip = 77;

std::string read_text(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

bool write_text(const fs::path& p, const std::string& text) {
  std::ofstream f(p, std::ios::binary);
  f << text;
  return static_cast<bool>(f);
}

// Every op with an OpenCL version, as the backend builds it (ILP 1 and 4: one kernel each).
std::vector<std::pair<const gd::ComputeOp*, fs::path>> dump(OpenCLClock clock,
                                                            const fs::path& dir) {
  std::vector<std::pair<const gd::ComputeOp*, fs::path>> out;
  fs::create_directories(dir);
  gd::OpenCLSourceOptions so;
  so.clock = clock;
  for (const gd::ComputeOp& op : gd::compute_ops()) {
    if (op.cl_step.empty()) continue;
    const fs::path p = dir / (op.name + ".cl");
    if (!write_text(p, gd::generate_opencl_source(op, {1, 4}, so)))
      throw std::runtime_error("cannot write " + p.string());
    out.emplace_back(&op, p);
  }
  return out;
}

std::vector<std::string> words(const std::string& s) {
  std::vector<std::string> w;
  std::istringstream in(s);
  for (std::string x; in >> x;) w.push_back(x);
  return w;
}

struct Clang {
  std::string path;
  // clang for amdgcn on `mcpu`: OpenCL C 2.0 with the standard built-in declarations, no
  // device library (nothing is linked: -S stops at the assembly).
  gd::ToolRun compile(const std::string& mcpu, const fs::path& src, const fs::path& asm_out,
                      const std::vector<std::string>& extra = {}) const {
    std::vector<std::string> argv = {path,
                                     "-x",
                                     "cl",
                                     "-cl-std=CL2.0",
                                     "-target",
                                     "amdgcn-amd-amdhsa",
                                     "-mcpu=" + mcpu,
                                     "-nogpulib",
                                     "-Xclang",
                                     "-finclude-default-header",
                                     "-O2",
                                     "-S",
                                     "-o",
                                     asm_out.string()};
    argv.insert(argv.end(), extra.begin(), extra.end());
    argv.push_back(src.string());
    return gd::run_tool(argv);
  }
};

// The first clang in PATH that builds a trivial kernel for `mcpu` (clang 14 knows no gfx11).
std::string find_clang(const std::string& mcpu, const fs::path& dir) {
  const fs::path probe = dir / "probe.cl", out = dir / "probe.s";
  write_text(probe, "__kernel void k(__global uint* o) { o[0] = (uint)get_global_id(0); }\n");
  const char* path = std::getenv("PATH");
  std::vector<std::string> names;
  for (int v = 20; v >= 14; --v) names.push_back("clang-" + std::to_string(v));
  names.push_back("clang");
  for (const std::string& n : names) {
    const std::string p = gd::find_tool(n, gd::cuda_tool_dirs(path, nullptr));
    if (!p.empty() && Clang{p}.compile(mcpu, probe, out).rc == 0) return p;
  }
  return {};
}

struct Target {
  const char* mcpu;
  bool clocked;        // the target has s_memtime and s_memrealtime
  const char* hw_reg;  // the register the compute unit's id comes from
};

int failures = 0;
void fail(const std::string& what) {
  std::cerr << "FAIL: " << what << "\n";
  ++failures;
}

bool holds(const std::string& text, const std::string& what) {
  return text.find(what) != std::string::npos;
}

// The op's build options, and the macros of a device reporting its extension: clang declares
// an extension's built-ins where its macro is defined, as a driver does for what it offers.
std::vector<std::string> op_flags(const gd::ComputeOp& op) {
  std::vector<std::string> f = words(op.cl_options);
  if (!op.cl_ext.empty()) f.push_back("-D" + op.cl_ext + "=1");
  if (op.cl_ext.rfind("cl_khr_subgroup", 0) == 0) f.push_back("-Dcl_khr_subgroups=1");
  return f;
}

// Every op's AMD source for one target: it builds, and its assembly reads the counters
// where the target has them and no s_memtime where it has not. An op whose extension's
// built-ins this clang's header does not declare at all (clang 15 has no
// cl_khr_integer_dot_product) is listed, not failed: the clock code is the
// same in every op's source.
void check_ops(const Clang& clang, const Target& t,
               const std::vector<std::pair<const gd::ComputeOp*, fs::path>>& ops,
               const fs::path& dir) {
  int built = 0;
  std::string undeclared;
  for (const auto& [op, src] : ops) {
    const fs::path out = dir / (op->name + "." + t.mcpu + ".s");
    const gd::ToolRun r = clang.compile(t.mcpu, src, out, op_flags(*op));
    if (r.rc != 0 && !op->cl_ext.empty() && holds(r.out, "undeclared identifier")) {
      undeclared += " " + op->name + " (" + op->cl_ext + ")";
      continue;
    }
    if (r.rc != 0) {
      fail(op->name + " for " + t.mcpu + ": " + gd::first_line(r.out));
      continue;
    }
    ++built;
    const std::string s = read_text(out);
    if (t.clocked) {
      for (const std::string want : {"s_memtime", "s_memrealtime", t.hw_reg})
        if (!holds(s, want))
          fail(op->name + " for " + t.mcpu + ": no " + want + " in " + out.string());
    } else if (holds(s, "s_memtime") || holds(s, "s_memrealtime")) {
      fail(op->name + " for " + t.mcpu + ": s_memtime on a target without it");
    }
  }
  std::cout << t.mcpu << ": " << built << " of " << ops.size() << " op sources built with "
            << clang.path << "\n";
  if (!undeclared.empty())
    std::cout << t.mcpu << ": not declared by this clang's opencl-c.h:" << undeclared << "\n";
}

// The chase with GD_AMD_CLOCK: the counters where the target has them, a build error
// (the backend's cue to chase in ns only) where it has not.
void check_chase(const Clang& clang, const Target& t, const fs::path& chase, const fs::path& dir) {
  const fs::path out = dir / (std::string("chase.") + t.mcpu + ".s");
  const gd::ToolRun r = clang.compile(t.mcpu, chase, out, {"-DGD_AMD_CLOCK=1", "-DGD_IMAGES=1"});
  if (!t.clocked) {
    if (r.rc == 0 || !holds(r.out, "no s_memtime"))
      fail(std::string("chase.cl for ") + t.mcpu + ": built with GD_AMD_CLOCK on a target " +
           "without s_memtime, or failed otherwise: " + gd::first_line(r.out));
    else
      std::cout << t.mcpu << ": chase.cl refuses GD_AMD_CLOCK (no s_memtime), as it should\n";
    return;
  }
  if (r.rc != 0) return fail(std::string("chase.cl for ") + t.mcpu + ": " + gd::first_line(r.out));
  const std::string s = read_text(out);
  for (const char* want : {"s_memtime", "s_memrealtime"})
    if (!holds(s, want)) fail(std::string("chase.cl for ") + t.mcpu + ": no " + want);
  std::cout << t.mcpu << ": chase.cl built with GD_AMD_CLOCK\n";
}

int check(const fs::path& dir, const fs::path& chase) {
  const bool required = [] {
    const char* v = std::getenv("GD_REQUIRE_VENDOR_CL");
    return v && std::string(v) == "1";
  }();
  const auto ops = dump(OpenCLClock::amd, dir / "amd");
  // CDNA2 (gfx9: HW_ID), RDNA2 (gfx10.3: HW_ID1), RDNA3 (gfx11: no s_memtime).
  const Target targets[] = {{"gfx90a", true, "hwreg(HW_REG_HW_ID)"},
                            {"gfx1030", true, "hwreg(HW_REG_HW_ID1)"},
                            {"gfx1100", false, ""}};
  int checked = 0;
  for (const Target& t : targets) {
    const Clang clang{find_clang(t.mcpu, dir)};
    if (clang.path.empty()) {
      const std::string why = std::string("no clang in PATH builds OpenCL C for amdgcn ") + t.mcpu;
      if (required)
        fail(why + " (GD_REQUIRE_VENDOR_CL=1)");
      else
        std::cout << "skipped: " << why << "\n";
      continue;
    }
    check_ops(clang, t, ops, dir / "amd");
    check_chase(clang, t, chase, dir / "amd");
    ++checked;
  }
  if (failures) return 1;
  return checked == 0 ? kSkip : 0;
}

}  // namespace

int main(int argc, char** argv) {
  const std::vector<std::string> a(argv + 1, argv + argc);
  try {
    if (a.size() == 3 && a[0] == "dump") {
      OpenCLClock c{};
      if (!gd::parse_opencl_clock(a[1], c)) {
        std::cerr << "vendor_cl_check: unknown clock '" << a[1] << "' (none, nvidia, amd)\n";
        return 2;
      }
      std::cout << dump(c, a[2]).size() << " sources written to " << a[2] << "\n";
      return 0;
    }
    if (a.size() == 3 && a[0] == "check") return check(a[1], a[2]);
  } catch (const std::exception& e) {
    std::cerr << "vendor_cl_check: " << e.what() << "\n";
    return 1;
  }
  std::cerr << "usage: vendor_cl_check dump <none|nvidia|amd> <dir>\n"
               "       vendor_cl_check check <dir> <chase.cl>\n";
  return 2;
}
