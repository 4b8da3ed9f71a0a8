// The one OpenCL error rule of this backend, for the device code and every probe's kernels,
// and the small queries they share.
#pragma once

#include <CL/cl.h>

#include <cstddef>
#include <string>
#include <utility>

namespace gd::opencl {

// "CL_OUT_OF_RESOURCES" for -5; "unknown OpenCL error" for a code this list lacks.
const char* error_name(cl_int e);
// "<call> failed: CL_OUT_OF_RESOURCES (-5)".
std::string describe(const std::string& call, cl_int err);
// The codes that mean memory (device, host or a size limit) ran out.
bool is_allocation_error(cl_int err);
// CL_SUCCESS passes. A memory error throws AllocationFailed, so that a probe marks the point
// skipped and goes on; any other code throws BackendError. Both messages come from describe().
void check(cl_int err, const std::string& call);
// Start to end of a command enqueued with profiling on, in seconds (0 if the clock ran back).
double event_seconds(cl_event e);
// Runs a 1-D range of `kernel` (its arguments set) on the in-order, profiling `queue`,
// waits for it and returns its profiled duration in ns (0 if the clock ran back). `what`
// names the kernel in errors ("a compute kernel").
double run_timed_ns(cl_command_queue queue, cl_kernel kernel, std::size_t global, std::size_t local,
                    const std::string& what);
// A device's string query, trimmed; empty when the query fails (for optional facts).
std::string device_string_or_empty(cl_device_id d, cl_device_info what);
// Whether a space-separated extension list (CL_DEVICE_EXTENSIONS) names `extension`.
bool has_extension(const std::string& extension_list, const std::string& extension);
// A platform's string query, trimmed; empty when the query fails.
std::string platform_string_or_empty(cl_platform_id p, cl_platform_info what);
// An NVIDIA device's compute capability (cl_nv_device_attribute_query), e.g. {9, 0}; {0, 0}
// where the device does not answer.
std::pair<int, int> nv_compute_capability(cl_device_id d);
// A program's build log for `d` as the driver wrote it (its size includes the closing NUL);
// empty where the query fails.
std::string program_build_log(cl_program program, cl_device_id d);
// The binary of a built program for `d` (NVIDIA: PTX text), trailing NULs dropped; empty
// where the query fails.
std::string program_binary(cl_program program, cl_device_id d);
// NVIDIA: a built program's PTX (its binary) and the SASS ptxas makes of it for d's compute
// capability, or why there is none ("the program binary is not PTX", "the device gives no
// compute capability", or ptx_to_sass's reason). `ptx` is empty where the binary is no PTX.
struct ProgramSass {
  std::string ptx, sass, why;
};
ProgramSass program_sass(cl_program program, cl_device_id d);

}  // namespace gd::opencl
