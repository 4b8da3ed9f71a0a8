// Standalone OpenCL bandwidth bench for PoCL investigations.
// usage: bench FILE.cl KERNEL OPTS MODE OP MiB GLOBAL LOCAL REPS
//  MODE tool: tool signature (buf[,dst], chunks, groups, cpb, passes[, sum]); groups=GLOBAL/LOCAL
//  MODE simple: (src, dst, ulong bytes, sum)
#include <CL/cl.h>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>
#define CK(x) do { cl_int e_ = (x); if (e_) { fprintf(stderr, "%s: %d\n", #x, e_); exit(1);} } while (0)
int main(int argc, char** argv) {
  if (argc < 10) { fprintf(stderr, "usage\n"); return 2; }
  std::string file = argv[1], kname = argv[2], opts = argv[3], mode = argv[4], op = argv[5];
  size_t bytes = size_t(atof(argv[6]) * 1048576.0);
  size_t global = atol(argv[7]), local = atol(argv[8]);
  int reps = atoi(argv[9]);
  std::ifstream in(file); std::stringstream ss; ss << in.rdbuf(); std::string src = ss.str();
  cl_platform_id pl; CK(clGetPlatformIDs(1, &pl, nullptr));
  cl_device_id dev; CK(clGetDeviceIDs(pl, CL_DEVICE_TYPE_ALL, 1, &dev, nullptr));
  cl_int err; cl_context ctx = clCreateContext(nullptr, 1, &dev, nullptr, nullptr, &err); CK(err);
  cl_command_queue q = clCreateCommandQueue(ctx, dev, CL_QUEUE_PROFILING_ENABLE, &err); CK(err);
  const char* s = src.c_str();
  cl_program p = clCreateProgramWithSource(ctx, 1, &s, nullptr, &err); CK(err);
  if (clBuildProgram(p, 1, &dev, opts.c_str(), nullptr, nullptr)) {
    size_t n; clGetProgramBuildInfo(p, dev, CL_PROGRAM_BUILD_LOG, 0, nullptr, &n);
    std::string log(n, 0); clGetProgramBuildInfo(p, dev, CL_PROGRAM_BUILD_LOG, n, log.data(), nullptr);
    fprintf(stderr, "build: %s\n", log.c_str()); return 1; }
  cl_kernel k = clCreateKernel(p, kname.c_str(), &err); CK(err);
  cl_mem a = clCreateBuffer(ctx, CL_MEM_READ_WRITE, bytes, nullptr, &err); CK(err);
  cl_mem b = clCreateBuffer(ctx, CL_MEM_READ_WRITE, op == "copy" ? bytes : 16, nullptr, &err); CK(err);
  cl_mem sum = clCreateBuffer(ctx, CL_MEM_READ_WRITE, 4, nullptr, &err); CK(err);
  { std::vector<unsigned> h(bytes / 4); for (size_t i = 0; i < h.size(); ++i) h[i] = i;
    CK(clEnqueueWriteBuffer(q, a, CL_TRUE, 0, bytes, h.data(), 0, nullptr, nullptr));
    if (op == "copy") CK(clEnqueueWriteBuffer(q, b, CL_TRUE, 0, bytes, h.data(), 0, nullptr, nullptr)); }
  int i = 0;
  double moved = double(bytes);  // bytes one pass moves (tool mode: groups x chunks per group)
  if (mode == "tool") {
    cl_ulong chunk = 16384, chunks = bytes / chunk, groups = global / local;
    if (chunks < 1) chunks = 1; if (chunks > groups) chunks -= chunks % groups; cl_ulong cpb = chunks > groups ? chunks / groups : 1, passes = getenv("PASSES") ? atol(getenv("PASSES")) : 1;
    moved = double(groups * cpb * chunk);
    CK(clSetKernelArg(k, i++, sizeof(cl_mem), &a));
    if (op == "copy") CK(clSetKernelArg(k, i++, sizeof(cl_mem), &b));
    for (cl_ulong* v : {&chunks, &groups, &cpb, &passes}) CK(clSetKernelArg(k, i++, 8, v));
    if (op == "read") CK(clSetKernelArg(k, i++, sizeof(cl_mem), &sum));
  } else {
    cl_ulong n = bytes;
    CK(clSetKernelArg(k, i++, sizeof(cl_mem), &a));
    CK(clSetKernelArg(k, i++, sizeof(cl_mem), &b));
    CK(clSetKernelArg(k, i++, 8, &n));
    CK(clSetKernelArg(k, i++, sizeof(cl_mem), &sum));
  }
  double mult = moved / double(bytes) * (op == "copy" ? 2.0 : 1.0) * (getenv("PASSES") ? atol(getenv("PASSES")) : 1);
  std::vector<double> ev, wall;
  for (int r = -1; r < reps; ++r) {
    cl_event e; auto t0 = std::chrono::steady_clock::now();
    CK(clEnqueueNDRangeKernel(q, k, 1, nullptr, &global, local ? &local : nullptr, 0, nullptr, &e));
    CK(clWaitForEvents(1, &e));
    double w = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    cl_ulong s0, s1; clGetEventProfilingInfo(e, CL_PROFILING_COMMAND_START, 8, &s0, nullptr);
    clGetEventProfilingInfo(e, CL_PROFILING_COMMAND_END, 8, &s1, nullptr);
    if (r >= 0) { ev.push_back(mult * bytes / ((s1 - s0) * 1e-9) / 1e9); wall.push_back(mult * bytes / w / 1e9); }
    clReleaseEvent(e);
  }
  std::sort(ev.begin(), ev.end()); std::sort(wall.begin(), wall.end());
  printf("%-14s %-5s %6.0fMiB g=%zu l=%zu  event med %6.2f GB/s (min %.2f max %.2f)  wall med %6.2f\n",
         kname.c_str(), op.c_str(), bytes / 1048576.0, global, local, ev[ev.size() / 2], ev.front(),
         ev.back(), wall[wall.size() / 2]);
}
