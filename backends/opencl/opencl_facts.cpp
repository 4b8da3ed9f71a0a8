// The OpenCL backend's error checks and device queries: what the API says about a device,
// read once, and what of each memory path it supports.
#include <CL/cl.h>

#include <algorithm>
#include <cstdio>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "compute/cl_vendor.hpp"
#include "compute/ptx_sass.hpp"
#include "gpudissect/units.hpp"
#include "opencl_internal.hpp"

namespace gd::opencl {

// ---- errors: the rule every file of the backend follows ----

const char* error_name(cl_int e) {
  switch (e) {
#define GD_CL_ERR(x) \
  case x:            \
    return #x;
    GD_CL_ERR(CL_SUCCESS)
    GD_CL_ERR(CL_DEVICE_NOT_FOUND)
    GD_CL_ERR(CL_DEVICE_NOT_AVAILABLE)
    GD_CL_ERR(CL_COMPILER_NOT_AVAILABLE)
    GD_CL_ERR(CL_MEM_OBJECT_ALLOCATION_FAILURE)
    GD_CL_ERR(CL_OUT_OF_RESOURCES)
    GD_CL_ERR(CL_OUT_OF_HOST_MEMORY)
    GD_CL_ERR(CL_PROFILING_INFO_NOT_AVAILABLE)
    GD_CL_ERR(CL_MEM_COPY_OVERLAP)
    GD_CL_ERR(CL_IMAGE_FORMAT_MISMATCH)
    GD_CL_ERR(CL_IMAGE_FORMAT_NOT_SUPPORTED)
    GD_CL_ERR(CL_BUILD_PROGRAM_FAILURE)
    GD_CL_ERR(CL_MAP_FAILURE)
    GD_CL_ERR(CL_MISALIGNED_SUB_BUFFER_OFFSET)
    GD_CL_ERR(CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST)
    GD_CL_ERR(CL_COMPILE_PROGRAM_FAILURE)
    GD_CL_ERR(CL_LINKER_NOT_AVAILABLE)
    GD_CL_ERR(CL_LINK_PROGRAM_FAILURE)
    GD_CL_ERR(CL_DEVICE_PARTITION_FAILED)
    GD_CL_ERR(CL_KERNEL_ARG_INFO_NOT_AVAILABLE)
    GD_CL_ERR(CL_INVALID_VALUE)
    GD_CL_ERR(CL_INVALID_DEVICE_TYPE)
    GD_CL_ERR(CL_INVALID_PLATFORM)
    GD_CL_ERR(CL_INVALID_DEVICE)
    GD_CL_ERR(CL_INVALID_CONTEXT)
    GD_CL_ERR(CL_INVALID_QUEUE_PROPERTIES)
    GD_CL_ERR(CL_INVALID_COMMAND_QUEUE)
    GD_CL_ERR(CL_INVALID_HOST_PTR)
    GD_CL_ERR(CL_INVALID_MEM_OBJECT)
    GD_CL_ERR(CL_INVALID_IMAGE_FORMAT_DESCRIPTOR)
    GD_CL_ERR(CL_INVALID_IMAGE_SIZE)
    GD_CL_ERR(CL_INVALID_SAMPLER)
    GD_CL_ERR(CL_INVALID_BINARY)
    GD_CL_ERR(CL_INVALID_BUILD_OPTIONS)
    GD_CL_ERR(CL_INVALID_PROGRAM)
    GD_CL_ERR(CL_INVALID_PROGRAM_EXECUTABLE)
    GD_CL_ERR(CL_INVALID_KERNEL_NAME)
    GD_CL_ERR(CL_INVALID_KERNEL_DEFINITION)
    GD_CL_ERR(CL_INVALID_KERNEL)
    GD_CL_ERR(CL_INVALID_ARG_INDEX)
    GD_CL_ERR(CL_INVALID_ARG_VALUE)
    GD_CL_ERR(CL_INVALID_ARG_SIZE)
    GD_CL_ERR(CL_INVALID_KERNEL_ARGS)
    GD_CL_ERR(CL_INVALID_WORK_DIMENSION)
    GD_CL_ERR(CL_INVALID_WORK_GROUP_SIZE)
    GD_CL_ERR(CL_INVALID_WORK_ITEM_SIZE)
    GD_CL_ERR(CL_INVALID_GLOBAL_OFFSET)
    GD_CL_ERR(CL_INVALID_EVENT_WAIT_LIST)
    GD_CL_ERR(CL_INVALID_EVENT)
    GD_CL_ERR(CL_INVALID_OPERATION)
    GD_CL_ERR(CL_INVALID_GL_OBJECT)
    GD_CL_ERR(CL_INVALID_BUFFER_SIZE)
    GD_CL_ERR(CL_INVALID_MIP_LEVEL)
    GD_CL_ERR(CL_INVALID_GLOBAL_WORK_SIZE)
    GD_CL_ERR(CL_INVALID_PROPERTY)
    GD_CL_ERR(CL_INVALID_IMAGE_DESCRIPTOR)
    GD_CL_ERR(CL_INVALID_COMPILER_OPTIONS)
    GD_CL_ERR(CL_INVALID_LINKER_OPTIONS)
    GD_CL_ERR(CL_INVALID_DEVICE_PARTITION_COUNT)
#undef GD_CL_ERR
    case -1001:
      return "CL_PLATFORM_NOT_FOUND_KHR";
    default:
      return "unknown OpenCL error";
  }
}

std::string describe(const std::string& call, cl_int err) {
  return call + " failed: " + error_name(err) + " (" + std::to_string(err) + ")";
}

bool is_allocation_error(cl_int err) {
  return err == CL_MEM_OBJECT_ALLOCATION_FAILURE || err == CL_OUT_OF_RESOURCES ||
         err == CL_INVALID_BUFFER_SIZE || err == CL_OUT_OF_HOST_MEMORY ||
         err == CL_INVALID_IMAGE_SIZE;
}

void check(cl_int err, const std::string& call) {
  if (err == CL_SUCCESS) return;
  if (is_allocation_error(err)) throw AllocationFailed(describe(call, err));
  throw BackendError(describe(call, err));
}

double event_seconds(cl_event e) {
  cl_ulong t0 = 0, t1 = 0;
  check(clGetEventProfilingInfo(e, CL_PROFILING_COMMAND_START, sizeof t0, &t0, nullptr),
        "clGetEventProfilingInfo(START)");
  check(clGetEventProfilingInfo(e, CL_PROFILING_COMMAND_END, sizeof t1, &t1, nullptr),
        "clGetEventProfilingInfo(END)");
  return t1 > t0 ? double(t1 - t0) * 1e-9 : 0.0;
}

double run_timed_ns(cl_command_queue queue, cl_kernel kernel, std::size_t global, std::size_t local,
                    const std::string& what) {
  cl_event ev = nullptr;
  check(clEnqueueNDRangeKernel(queue, kernel, 1, nullptr, &global, &local, 0, nullptr, &ev),
        "clEnqueueNDRangeKernel (" + what + ")");
  const cl_int waited = clWaitForEvents(1, &ev);
  cl_ulong t0 = 0, t1 = 0;
  if (waited == CL_SUCCESS) {
    clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_START, sizeof t0, &t0, nullptr);
    clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_END, sizeof t1, &t1, nullptr);
  }
  clReleaseEvent(ev);
  check(waited, "running " + what);
  return t1 > t0 ? static_cast<double>(t1 - t0) : 0;
}

std::string device_string_or_empty(cl_device_id d, cl_device_info what) {
  std::size_t n = 0;
  if (clGetDeviceInfo(d, what, 0, nullptr, &n) != CL_SUCCESS || n == 0) return {};
  std::string s(n, '\0');
  if (clGetDeviceInfo(d, what, n, s.data(), nullptr) != CL_SUCCESS) return {};
  return gd::trim(std::move(s));
}

bool has_extension(const std::string& extension_list, const std::string& extension) {
  std::istringstream in(extension_list);
  std::string e;
  while (in >> e)
    if (e == extension) return true;
  return false;
}

std::string platform_string_or_empty(cl_platform_id p, cl_platform_info what) {
  std::size_t n = 0;
  if (clGetPlatformInfo(p, what, 0, nullptr, &n) != CL_SUCCESS || n == 0) return {};
  std::string s(n, '\0');
  if (clGetPlatformInfo(p, what, n, s.data(), nullptr) != CL_SUCCESS) return {};
  return gd::trim(std::move(s));
}

std::pair<int, int> nv_compute_capability(cl_device_id d) {
  // CL_DEVICE_COMPUTE_CAPABILITY_MAJOR_NV and _MINOR_NV (cl_ext.h has them; CL/cl.h not).
  constexpr cl_device_info kMajor = 0x4000, kMinor = 0x4001;
  cl_uint major = 0, minor = 0;
  if (clGetDeviceInfo(d, kMajor, sizeof major, &major, nullptr) != CL_SUCCESS ||
      clGetDeviceInfo(d, kMinor, sizeof minor, &minor, nullptr) != CL_SUCCESS)
    return {0, 0};
  return {static_cast<int>(major), static_cast<int>(minor)};
}

std::string program_build_log(cl_program program, cl_device_id d) {
  std::size_t n = 0;
  if (clGetProgramBuildInfo(program, d, CL_PROGRAM_BUILD_LOG, 0, nullptr, &n) != CL_SUCCESS)
    return "";
  std::string log(n, '\0');
  if (n &&
      clGetProgramBuildInfo(program, d, CL_PROGRAM_BUILD_LOG, n, log.data(), nullptr) != CL_SUCCESS)
    return "";
  return log;
}

std::string program_binary(cl_program program, cl_device_id d) {
  cl_uint n = 0;
  if (clGetProgramInfo(program, CL_PROGRAM_NUM_DEVICES, sizeof n, &n, nullptr) != CL_SUCCESS ||
      n == 0)
    return {};
  std::vector<cl_device_id> devices(n);
  std::vector<std::size_t> sizes(n);
  if (clGetProgramInfo(program, CL_PROGRAM_DEVICES, n * sizeof(cl_device_id), devices.data(),
                       nullptr) != CL_SUCCESS ||
      clGetProgramInfo(program, CL_PROGRAM_BINARY_SIZES, n * sizeof(std::size_t), sizes.data(),
                       nullptr) != CL_SUCCESS)
    return {};
  // Every device's buffer must be given; only d's is kept.
  std::vector<std::string> bins(n);
  std::vector<unsigned char*> ptrs(n);
  for (cl_uint i = 0; i < n; ++i) {
    bins[i].assign(sizes[i], '\0');
    ptrs[i] = reinterpret_cast<unsigned char*>(bins[i].data());
  }
  if (clGetProgramInfo(program, CL_PROGRAM_BINARIES, n * sizeof(unsigned char*), ptrs.data(),
                       nullptr) != CL_SUCCESS)
    return {};
  for (cl_uint i = 0; i < n; ++i)
    if (devices[i] == d) {
      std::string b = std::move(bins[i]);
      while (!b.empty() && b.back() == '\0') b.pop_back();
      return b;
    }
  return {};
}

ProgramSass program_sass(cl_program program, cl_device_id d) {
  ProgramSass out;
  out.ptx = program_binary(program, d);
  if (out.ptx.find(".entry") == std::string::npos) {
    out.ptx.clear();
    out.why = "the program binary is not PTX";
    return out;
  }
  const auto cc = nv_compute_capability(d);
  if (cc.first <= 0) {
    out.why = "the device gives no compute capability";
    return out;
  }
  PtxSass ps = ptx_to_sass(out.ptx, sm_target(cc.first, cc.second), sass_tools());
  out.sass = std::move(ps.sass);
  out.why = std::move(ps.why);
  return out;
}

}  // namespace gd::opencl

namespace gd::opencl::detail {

// For calls that allocate, or that may be where a lazy allocation finally happens (writes,
// launches): memory errors become AllocationFailed, so the probe skips the point.
void check_alloc(cl_int err, const char* call, uint64_t bytes) {
  if (err == CL_SUCCESS) return;
  if (is_allocation_error(err))
    throw AllocationFailed("cannot allocate " + format_bytes(static_cast<double>(bytes)) + " (" +
                           std::to_string(bytes) + " bytes): " + describe(call, err));
  throw BackendError(describe(call, err));
}

// ---- queries ----

std::string platform_string(cl_platform_id p, cl_platform_info what, const char* call) {
  std::size_t n = 0;
  check(clGetPlatformInfo(p, what, 0, nullptr, &n), call);
  std::string s(n, '\0');
  if (n) check(clGetPlatformInfo(p, what, n, s.data(), nullptr), call);
  return trim(std::move(s));
}

std::string device_string(cl_device_id d, cl_device_info what, const char* call) {
  std::size_t n = 0;
  check(clGetDeviceInfo(d, what, 0, nullptr, &n), call);
  std::string s(n, '\0');
  if (n) check(clGetDeviceInfo(d, what, n, s.data(), nullptr), call);
  return trim(std::move(s));
}

// "OpenCL 3.0 PoCL ..." or "OpenCL C 1.2 ..." -> {3, 0} / {1, 2}; {0, 0} when unreadable.
std::pair<int, int> parse_version(const std::string& s) {
  const auto at = s.find_first_of("0123456789");
  int major = 0, minor = 0;
  if (at != std::string::npos && std::sscanf(s.c_str() + at, "%d.%d", &major, &minor) == 2)
    return {major, minor};
  return {0, 0};
}

bool at_least(std::pair<int, int> v, int major, int minor) {
  return v.first > major || (v.first == major && v.second >= minor);
}

// "OpenCL 3.0 PoCL HSTR: ..." -> "OpenCL 3.0"
std::string short_version(const std::string& s) {
  const auto v = parse_version(s);
  if (v.first == 0) return s;
  return "OpenCL " + std::to_string(v.first) + "." + std::to_string(v.second);
}

std::string device_type_name(cl_device_type t) {
  std::string out;
  auto add = [&](cl_device_type bit, const char* name) {
    if (t & bit) out += (out.empty() ? "" : "+") + std::string(name);
  };
  add(CL_DEVICE_TYPE_CPU, "CPU");
  add(CL_DEVICE_TYPE_GPU, "GPU");
  add(CL_DEVICE_TYPE_ACCELERATOR, "accelerator");
  add(CL_DEVICE_TYPE_DEFAULT, "default");
#ifdef CL_DEVICE_TYPE_CUSTOM
  add(CL_DEVICE_TYPE_CUSTOM, "custom");
#endif
  return out.empty() ? "unknown" : out;
}

std::vector<cl_platform_id> list_platforms(cl_int* err_out) {
  cl_uint n = 0;
  cl_int err = clGetPlatformIDs(0, nullptr, &n);
  *err_out = err;
  if (err != CL_SUCCESS || n == 0) return {};
  std::vector<cl_platform_id> ps(n);
  err = clGetPlatformIDs(n, ps.data(), nullptr);
  *err_out = err;
  if (err != CL_SUCCESS) return {};
  return ps;
}

std::vector<cl_device_id> list_devices(cl_platform_id p) {
  cl_uint n = 0;
  cl_int err = clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 0, nullptr, &n);
  if (err == CL_DEVICE_NOT_FOUND || (err == CL_SUCCESS && n == 0)) return {};
  check(err, "clGetDeviceIDs");
  std::vector<cl_device_id> ds(n);
  check(clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, n, ds.data(), nullptr), "clGetDeviceIDs");
  return ds;
}

Context make_context(cl_platform_id p, cl_device_id d) {
  const cl_context_properties props[] = {CL_CONTEXT_PLATFORM,
                                         reinterpret_cast<cl_context_properties>(p), 0};
  cl_int err = CL_SUCCESS;
  cl_context c = clCreateContext(props, 1, &d, nullptr, nullptr, &err);
  check(err, "clCreateContext");
  return Context(c);
}

// The image path needs 1D images from buffers (OpenCL 1.2 API and OpenCL C 1.2) with the
// CL_R / CL_UNSIGNED_INT32 format; the format list needs a context.
Support decide_image_path(const Facts& f, cl_context ctx) {
  if (!f.image_support) return Support::no("device has no image support (CL_DEVICE_IMAGE_SUPPORT)");
  if (!at_least(parse_version(f.version), 1, 2))
    return Support::no("1D image buffers need OpenCL 1.2; device is " + f.version);
  if (!at_least(parse_version(f.c_version), 1, 2))
    return Support::no("image1d_buffer_t needs OpenCL C 1.2; device has " + f.c_version);
  if (!at_least(parse_version(f.platform_version), 1, 2))
    return Support::no("1D image buffers need OpenCL 1.2; platform is " + f.platform_version);
  if (f.image_max_buffer == 0) return Support::no("device reports no 1D image buffer size");
  cl_uint n = 0;
  cl_int err = clGetSupportedImageFormats(ctx, CL_MEM_READ_ONLY, CL_MEM_OBJECT_IMAGE1D_BUFFER, 0,
                                          nullptr, &n);
  if (err != CL_SUCCESS) return Support::no(describe("clGetSupportedImageFormats", err));
  std::vector<cl_image_format> formats(n);
  if (n) {
    err = clGetSupportedImageFormats(ctx, CL_MEM_READ_ONLY, CL_MEM_OBJECT_IMAGE1D_BUFFER, n,
                                     formats.data(), nullptr);
    if (err != CL_SUCCESS) return Support::no(describe("clGetSupportedImageFormats", err));
  }
  for (const auto& fmt : formats)
    if (fmt.image_channel_order == CL_R && fmt.image_channel_data_type == CL_UNSIGNED_INT32)
      return Support::yes();
  return Support::no("device has no CL_R / CL_UNSIGNED_INT32 format for 1D image buffers");
}

// ctx may be null: a context is then made for the image-format query only.
Facts query_facts(cl_platform_id p, cl_device_id d, int pi, int di, cl_context ctx) {
  Facts f;
  f.platform_index = pi;
  f.device_index = di;
  f.platform_name = platform_string(p, CL_PLATFORM_NAME, "clGetPlatformInfo(NAME)");
  f.platform_version = platform_string(p, CL_PLATFORM_VERSION, "clGetPlatformInfo(VERSION)");
  f.name = device_string(d, CL_DEVICE_NAME, "clGetDeviceInfo(NAME)");
  f.vendor = device_string(d, CL_DEVICE_VENDOR, "clGetDeviceInfo(VENDOR)");
  f.version = device_string(d, CL_DEVICE_VERSION, "clGetDeviceInfo(VERSION)");
  f.c_version = device_string(d, CL_DEVICE_OPENCL_C_VERSION, "clGetDeviceInfo(OPENCL_C_VERSION)");
  f.driver = device_string(d, CL_DRIVER_VERSION, "clGetDeviceInfo(DRIVER_VERSION)");
  f.type = device_value<cl_device_type>(d, CL_DEVICE_TYPE, "clGetDeviceInfo(TYPE)");
  f.compute_units =
      device_value<cl_uint>(d, CL_DEVICE_MAX_COMPUTE_UNITS, "clGetDeviceInfo(MAX_COMPUTE_UNITS)");
  f.clock_mhz = device_value<cl_uint>(d, CL_DEVICE_MAX_CLOCK_FREQUENCY,
                                      "clGetDeviceInfo(MAX_CLOCK_FREQUENCY)");
  f.global_mem =
      device_value<cl_ulong>(d, CL_DEVICE_GLOBAL_MEM_SIZE, "clGetDeviceInfo(GLOBAL_MEM_SIZE)");
  f.max_alloc = device_value<cl_ulong>(d, CL_DEVICE_MAX_MEM_ALLOC_SIZE,
                                       "clGetDeviceInfo(MAX_MEM_ALLOC_SIZE)");
  f.cache_bytes = device_value<cl_ulong>(d, CL_DEVICE_GLOBAL_MEM_CACHE_SIZE,
                                         "clGetDeviceInfo(GLOBAL_MEM_CACHE_SIZE)");
  f.cacheline = device_value<cl_uint>(d, CL_DEVICE_GLOBAL_MEM_CACHELINE_SIZE,
                                      "clGetDeviceInfo(GLOBAL_MEM_CACHELINE_SIZE)");
  f.local_mem =
      device_value<cl_ulong>(d, CL_DEVICE_LOCAL_MEM_SIZE, "clGetDeviceInfo(LOCAL_MEM_SIZE)");
  f.local_type = device_value<cl_device_local_mem_type>(d, CL_DEVICE_LOCAL_MEM_TYPE,
                                                        "clGetDeviceInfo(LOCAL_MEM_TYPE)");
  f.constant_mem = device_value<cl_ulong>(d, CL_DEVICE_MAX_CONSTANT_BUFFER_SIZE,
                                          "clGetDeviceInfo(MAX_CONSTANT_BUFFER_SIZE)");
  f.image_support = device_value<cl_bool>(d, CL_DEVICE_IMAGE_SUPPORT,
                                          "clGetDeviceInfo(IMAGE_SUPPORT)") == CL_TRUE;
  if (f.image_support && at_least(parse_version(f.version), 1, 2))
    f.image_max_buffer = device_value<std::size_t>(d, CL_DEVICE_IMAGE_MAX_BUFFER_SIZE,
                                                   "clGetDeviceInfo(IMAGE_MAX_BUFFER_SIZE)");
  // cl_khr_device_uuid's CL_DEVICE_UUID_KHR, 16 bytes (cl_ext.h has it; CL/cl.h not); a
  // driver without the extension says nothing.
  constexpr cl_device_info kUuid = 0x106A;
  const std::string extensions = device_string_or_empty(d, CL_DEVICE_EXTENSIONS);
  if (has_extension(extensions, "cl_khr_device_uuid")) {
    cl_uchar uuid[16] = {};
    if (clGetDeviceInfo(d, kUuid, sizeof uuid, uuid, nullptr) == CL_SUCCESS)
      f.uuid = hex_bytes(uuid, sizeof uuid);
  }
  if (f.image_support) {
    Context own;
    if (!ctx) {
      own = make_context(p, d);
      ctx = own.get();
    }
    f.image_path = decide_image_path(f, ctx);
  } else {
    f.image_path = decide_image_path(f, nullptr);
  }
  return f;
}

// The DeviceInfo of a device from its facts (NVIDIA: the L2 from the CUDA driver).
DeviceInfo device_info(const Facts& f, cl_device_id d) {
  DeviceInfo info;
  info.backend = "opencl";
  info.id = f.id();
  info.name = f.name;
  info.vendor = f.vendor;
  info.compute_units = static_cast<int>(f.compute_units);
  if (f.clock_mhz) info.clock_mhz_reported = f.clock_mhz;
  if (f.global_mem) info.memory_bytes = f.global_mem;
  if (f.cache_bytes) info.l2_bytes = f.cache_bytes;
  if (f.cacheline) info.l1_or_cacheline_bytes = f.cacheline;
  if (f.local_is_local()) info.shared_per_block_bytes = f.local_mem;
  if (f.constant_mem) info.constant_bytes = f.constant_mem;
  info.compute_capability = f.version;
  info.driver_version = f.driver;
  info.toolkit_version = f.platform_version;
  info.extra["device_type"] = device_type_name(f.type);
  info.extra["max_alloc_bytes"] = std::to_string(f.max_alloc);
  info.extra["image_support"] = f.image_support ? "yes" : "no";
  info.extra["image_path"] = f.image_path.ok ? "yes" : "no: " + f.image_path.reason;
  info.extra["platform"] = f.platform_name;
  if (!f.uuid.empty()) info.extra["uuid"] = f.uuid;
  info.extra["opencl_c_version"] = f.c_version;
  info.extra["local_mem_bytes"] = std::to_string(f.local_mem);
  info.extra["local_mem_type"] =
      f.local_is_local() ? "local"
                         : "global (local memory is emulated in global memory on this device)";
  // NVIDIA's global memory cache is not its L2 (opencl_nv_l2.cpp): the CUDA driver's L2 size
  // of the same GPU sizes the probes, and what OpenCL said stays beside it.
  if (opencl_clock_for(f.platform_name, f.vendor, (f.type & CL_DEVICE_TYPE_GPU) != 0) ==
      OpenCLClock::nvidia) {
    info.extra["global_mem_cache_bytes"] = std::to_string(f.cache_bytes);
    const DriverL2 l2 = nvidia_l2_from_cuda_driver(d);
    if (l2.bytes) info.l2_bytes = l2.bytes;
    info.extra["l2_bytes"] =
        l2.bytes ? l2.source
                 : "CL_DEVICE_GLOBAL_MEM_CACHE_SIZE, not the L2 on NVIDIA (" + l2.source + ")";
  }
  return info;
}

}  // namespace gd::opencl::detail
