// Standalone check: refill and dispatch on CUDA and NVIDIA OpenCL with kernel-body variants.
#include <CL/cl.h>
#include <cuda_runtime.h>
#include <algorithm>
#include <cstdio>
#include <cstdint>
#include <map>
#include <string>
#include <vector>
typedef unsigned long long u64;
__device__ __forceinline__ u64 gt() { u64 t; asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t)); return t; }
__device__ __forceinline__ unsigned smid() { unsigned s; asm volatile("mov.u32 %0, %%smid;" : "=r"(s)); return s; }
__global__ void k_spin(u64* rec, u64 spin_ns) {
  __shared__ u64 start;
  if (threadIdx.x == 0) { start = gt(); rec[4 * blockIdx.x] = smid(); rec[4 * blockIdx.x + 1] = start; }
  __syncthreads();
  while (gt() - start < spin_ns) {}
  __syncthreads();
  if (threadIdx.x == 0) { rec[4 * blockIdx.x + 2] = gt(); rec[4 * blockIdx.x + 3] = 7; }
}
__global__ void k_disp(u64* rec) {
  if (threadIdx.x == 0) { u64 t = gt(); rec[4 * blockIdx.x] = smid(); rec[4 * blockIdx.x + 1] = t; rec[4 * blockIdx.x + 2] = gt(); rec[4 * blockIdx.x + 3] = 7; }
}
// thread 0 spins alone, no barrier: block ends when all warps exit
__global__ void k_spin_t0(u64* rec, u64 spin_ns) {
  if (threadIdx.x == 0) { u64 s = gt(); rec[4 * blockIdx.x] = smid(); rec[4 * blockIdx.x + 1] = s; while (gt() - s < spin_ns) {} rec[4 * blockIdx.x + 2] = gt(); rec[4 * blockIdx.x + 3] = 7; }
}
static const char* kCl =
"#define GT(v) __asm__ volatile(\"mov.u64 %0, %%globaltimer;\" : \"=l\"(v))\n"
"#define SM(v) __asm__ volatile(\"mov.u32 %0, %%smid;\" : \"=r\"(v))\n"
"__kernel void spin_local(__global ulong* rec, ulong spin_ns, __local uint* scratch) {\n"
"  __local ulong st; const size_t g = get_group_id(0);\n"
"  if (get_local_id(0) == 0) { ulong t; uint s; GT(t); SM(s); st = t; rec[4*g] = s; rec[4*g+1] = t; }\n"
"  barrier(CLK_LOCAL_MEM_FENCE); const ulong s0 = st; ulong now = s0;\n"
"  while (now - s0 < spin_ns) { GT(now); }\n"
"  if (spin_ns == ~0UL) scratch[0] = (uint)now;\n"
"  barrier(CLK_LOCAL_MEM_FENCE);\n"
"  if (get_local_id(0) == 0) { ulong t; GT(t); rec[4*g+2] = t; rec[4*g+3] = 7; } }\n"
"__kernel void spin_nolocal(__global ulong* rec, ulong spin_ns) {\n"
"  __local ulong st; const size_t g = get_group_id(0);\n"
"  if (get_local_id(0) == 0) { ulong t; uint s; GT(t); SM(s); st = t; rec[4*g] = s; rec[4*g+1] = t; }\n"
"  barrier(CLK_LOCAL_MEM_FENCE); const ulong s0 = st; ulong now = s0;\n"
"  while (now - s0 < spin_ns) { GT(now); }\n"
"  barrier(CLK_LOCAL_MEM_FENCE);\n"
"  if (get_local_id(0) == 0) { ulong t; GT(t); rec[4*g+2] = t; rec[4*g+3] = 7; } }\n"
"__kernel void disp(__global ulong* rec) { const size_t g = get_group_id(0);\n"
"  if (get_local_id(0) == 0) { ulong t, e; uint s; GT(t); SM(s); rec[4*g] = s; rec[4*g+1] = t; GT(e); rec[4*g+2] = e; rec[4*g+3] = 7; } }\n"
"__kernel void spin_t0(__global ulong* rec, ulong spin_ns) { const size_t g = get_group_id(0);\n"
"  if (get_local_id(0) == 0) { ulong t, e; uint s; GT(t); SM(s); rec[4*g] = s; rec[4*g+1] = t; e = t; while (e - t < spin_ns) { GT(e); } rec[4*g+2] = e; rec[4*g+3] = 7; } }\n";

struct Rec { unsigned sm; u64 s, e; };
static std::vector<Rec> parse(const std::vector<u64>& w, int n) {
  std::vector<Rec> r; int bad = 0;
  for (int b = 0; b < n; ++b) { if (w[4*b+3] != 7) { ++bad; continue; } r.push_back({(unsigned)w[4*b], w[4*b+1], w[4*b+2]}); }
  if (bad) printf("  (%d blocks without record)\n", bad);
  return r;
}
static double med(std::vector<double> v) { if (v.empty()) return 0; std::sort(v.begin(), v.end()); return v[v.size()/2]; }
static void refill(const char* name, const std::vector<Rec>& r) {
  std::map<unsigned, std::vector<Rec>> by;
  for (auto& x : r) by[x.sm].push_back(x);
  std::vector<double> res, lat, rate, dur;
  for (auto& x : r) dur.push_back((x.e - x.s) / 1000.0);
  double gpu = 0;
  for (auto& [sm, v] : by) {
    std::vector<std::pair<u64,int>> ev;
    for (auto& x : v) { ev.push_back({x.s, 1}); ev.push_back({x.e, -1}); }
    std::sort(ev.begin(), ev.end(), [](auto a, auto b){ return a.first != b.first ? a.first < b.first : a.second < b.second; });
    int c = 0, m = 0; for (auto& e : ev) { c += e.second; m = std::max(m, c); }
    std::vector<u64> s, e; for (auto& x : v) { s.push_back(x.s); e.push_back(x.e); }
    std::sort(s.begin(), s.end()); std::sort(e.begin(), e.end());
    size_t R = m; if (s.size() <= R) continue;
    double sum = 0; for (size_t k = R; k < s.size(); ++k) sum += (s[k] - std::min(s[k], e[k-R])) / 1000.0;
    lat.push_back(sum / (s.size() - R)); res.push_back(m);
    double win = (s.back() - s[R-1]) / 1000.0; double rt = (s.size() - R) / win; rate.push_back(rt); gpu += rt;
  }
  printf("  %-28s resident %4.1f  latency %5.3f us  sm rate %5.3f /us  gpu %6.1f /us  block %5.3f us\n", name, med(res), med(lat), med(rate), gpu, med(dur));
}
static void dispatch(const char* name, const std::vector<Rec>& r) {
  u64 lo = ~0ull, hi = 0; for (auto& x : r) { lo = std::min(lo, x.s); hi = std::max(hi, x.s); }
  printf("  %-28s span %6.3f us  blocks/us %6.0f\n", name, (hi - lo) / 1000.0, (r.size() - 1) / ((hi - lo) / 1000.0));
}
#define CK(x) do { cl_int e_ = (x); if (e_) { printf("CL error %d at %s\n", e_, #x); return 1; } } while (0)
int main() {
  const int SMS = 132, REF = SMS * 32 * 8, DISP = SMS * 32, T = 64;
  u64* d; cudaMalloc(&d, REF * 32); std::vector<u64> h(REF * 4);
  cl_platform_id pl[8]; cl_uint np; clGetPlatformIDs(8, pl, &np);
  cl_platform_id P = 0; for (cl_uint i = 0; i < np; ++i) { char n[256]; clGetPlatformInfo(pl[i], CL_PLATFORM_NAME, 256, n, 0); if (std::string(n).find("NVIDIA") != std::string::npos) P = pl[i]; }
  cl_device_id dev; CK(clGetDeviceIDs(P, CL_DEVICE_TYPE_GPU, 1, &dev, 0));
  cl_int err; cl_context ctx = clCreateContext(0, 1, &dev, 0, 0, &err); CK(err);
  cl_command_queue q = clCreateCommandQueue(ctx, dev, 0, &err); CK(err);
  cl_program prog = clCreateProgramWithSource(ctx, 1, &kCl, 0, &err); CK(err);
  if (clBuildProgram(prog, 1, &dev, "", 0, 0)) { char log[8000]; clGetProgramBuildInfo(prog, dev, CL_PROGRAM_BUILD_LOG, 8000, log, 0); printf("%s\n", log); return 1; }
  cl_kernel kl = clCreateKernel(prog, "spin_local", &err), kn = clCreateKernel(prog, "spin_nolocal", &err), kd = clCreateKernel(prog, "disp", &err), kt = clCreateKernel(prog, "spin_t0", &err);
  cl_mem m = clCreateBuffer(ctx, CL_MEM_READ_WRITE, REF * 32, 0, &err); CK(err);
  auto cl_run = [&](cl_kernel k, int blocks, u64 spin, int nargs, size_t localb) {
    u64 z = 0; clEnqueueFillBuffer(q, m, &z, 8, 0, (size_t)blocks * 32, 0, 0, 0);
    clSetKernelArg(k, 0, sizeof m, &m); if (nargs > 1) clSetKernelArg(k, 1, 8, &spin); if (nargs > 2) clSetKernelArg(k, 2, localb, 0);
    size_t l = T, g = (size_t)T * blocks; clEnqueueNDRangeKernel(q, k, 1, 0, &g, &l, 0, 0, 0); clFinish(q);
    clEnqueueReadBuffer(q, m, CL_TRUE, 0, (size_t)blocks * 32, h.data(), 0, 0, 0); return parse(h, blocks); };
  auto cu_get = [&](int blocks) { cudaDeviceSynchronize(); cudaMemcpy(h.data(), d, (size_t)blocks * 32, cudaMemcpyDeviceToHost); return parse(h, blocks); };
  for (int rep = 0; rep < 4; ++rep) {
    printf("rep %d refill (%d blocks x %d, spin 5 us)\n", rep, REF, T);
    cudaMemset(d, 0, REF * 32); k_spin<<<REF, T>>>(d, 5000); refill("cuda spin dyn0", cu_get(REF));
    cudaMemset(d, 0, REF * 32); k_spin<<<REF, T, 4>>>(d, 5000); refill("cuda spin dyn4", cu_get(REF));
    cudaMemset(d, 0, REF * 32); k_spin_t0<<<REF, T>>>(d, 5000); refill("cuda t0 spin", cu_get(REF));
    refill("opencl spin local4", cl_run(kl, REF, 5000, 3, 4));
    refill("opencl spin nolocal", cl_run(kn, REF, 5000, 2, 0));
    refill("opencl t0 spin", cl_run(kt, REF, 5000, 2, 0));
    printf("rep %d dispatch (%d blocks x %d)\n", rep, DISP, T);
    cudaMemset(d, 0, REF * 32); k_disp<<<DISP, T>>>(d); dispatch("cuda disp", cu_get(DISP));
    cudaMemset(d, 0, REF * 32); k_spin<<<DISP, T>>>(d, 0); dispatch("cuda spin0", cu_get(DISP));
    dispatch("opencl disp", cl_run(kd, DISP, 0, 1, 0));
    dispatch("opencl spin0 local4", cl_run(kl, DISP, 0, 3, 4));
    dispatch("opencl spin0 nolocal", cl_run(kn, DISP, 0, 2, 0));
  }
  return 0;
}
