// What opencl_device.cpp and opencl_facts.cpp share: the error checks, owning handles,
// the API queries and the facts of a device read through them.
#pragma once

#include <CL/cl.h>

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "gpudissect/device.hpp"
#include "gpudissect/units.hpp"
#include "opencl_check.hpp"

namespace gd::opencl::detail {

// ---- errors ----

using gd::opencl::check;
using gd::opencl::describe;
using gd::opencl::error_name;
using gd::opencl::is_allocation_error;
void check_alloc(cl_int err, const char* call, uint64_t bytes);

// ---- owning handles ----

template <class T, cl_int(CL_API_CALL* Release)(T)>
class Handle {
 public:
  Handle() = default;
  explicit Handle(T h) : h_(h) {}
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;
  Handle(Handle&& o) noexcept : h_(std::exchange(o.h_, nullptr)) {}
  Handle& operator=(Handle&& o) noexcept {
    if (this != &o) {
      reset();
      h_ = std::exchange(o.h_, nullptr);
    }
    return *this;
  }
  ~Handle() { reset(); }
  void reset() {
    if (h_) Release(h_);
    h_ = nullptr;
  }
  T get() const { return h_; }
  explicit operator bool() const { return h_ != nullptr; }

 private:
  T h_ = nullptr;
};

using Context = Handle<cl_context, clReleaseContext>;
using Queue = Handle<cl_command_queue, clReleaseCommandQueue>;
using Program = Handle<cl_program, clReleaseProgram>;
using Kernel = Handle<cl_kernel, clReleaseKernel>;
using Mem = Handle<cl_mem, clReleaseMemObject>;
using Event = Handle<cl_event, clReleaseEvent>;

// ---- queries ----

std::string platform_string(cl_platform_id p, cl_platform_info what, const char* call);
std::string device_string(cl_device_id d, cl_device_info what, const char* call);
std::pair<int, int> parse_version(const std::string& s);
bool at_least(std::pair<int, int> v, int major, int minor);
std::string short_version(const std::string& s);
std::string device_type_name(cl_device_type t);
std::vector<cl_platform_id> list_platforms(cl_int* err_out);
std::vector<cl_device_id> list_devices(cl_platform_id p);
Context make_context(cl_platform_id p, cl_device_id d);

template <class T>
T device_value(cl_device_id d, cl_device_info what, const char* call) {
  T v{};
  check(clGetDeviceInfo(d, what, sizeof(T), &v, nullptr), call);
  return v;
}

inline constexpr const char* kCudaOnly =
    "CUDA-only path: OpenCL C has no non-coherent (ld.global.nc) or texture-fetch load; "
    "OpenCL has global, l2 (volatile loads), constant, shared and local (both __local), image";

// What the API says about one device, read once; enumerate and the device share it.
struct Facts {
  int platform_index = 0, device_index = 0;
  std::string platform_name, platform_version;
  std::string name, vendor, version, c_version, driver;
  cl_device_type type = 0;
  cl_uint compute_units = 0, clock_mhz = 0;
  cl_ulong global_mem = 0, max_alloc = 0, cache_bytes = 0, local_mem = 0, constant_mem = 0;
  cl_uint cacheline = 0;
  cl_device_local_mem_type local_type = CL_GLOBAL;
  bool image_support = false;
  std::size_t image_max_buffer = 0;  // pixels of a 1D image from a buffer
  // CL_DEVICE_UUID_KHR as 32 lower-case hex digits (cl_khr_device_uuid), the 16 bytes CUDA
  // and Vulkan give for the same GPU; empty without the extension.
  std::string uuid;
  Support image_path;  // decided once: needs a context for the format list

  std::string id() const {
    return "opencl:" + std::to_string(platform_index) + "." + std::to_string(device_index);
  }
  bool local_is_local() const { return local_type == CL_LOCAL; }

  Support supports(MemPath p) const {
    switch (p) {
      case MemPath::global:
      case MemPath::constant:
      // l2: the global chase through a volatile pointer (chase.cl says why that is L2 on
      // NVIDIA; the probe names the levels from the curve wherever it is not).
      case MemPath::l2:
        return Support::yes();
      // shared: CUDA's name for __local, so that the figure has CUDA's id; the same kernel
      // as the local path.
      case MemPath::shared:
      case MemPath::local:
        // A device without dedicated local memory (PoCL on a CPU: CL_GLOBAL) still runs the
        // local path: the user asked for it, and it measures what __local costs there. The
        // fact is recorded in info().extra["local_mem_type"] and in the list summary.
        return Support::yes();
      case MemPath::image:
        return image_path;
      case MemPath::readonly:
      case MemPath::texture:
        return Support::no(kCudaOnly);
    }
    return Support::no("unknown memory path");
  }

  uint64_t max_footprint(MemPath p) const {
    switch (p) {
      case MemPath::global:
      case MemPath::l2:
        return std::min<uint64_t>(max_alloc, global_mem / 2);
      case MemPath::constant:
        return constant_mem;
      case MemPath::shared:
      case MemPath::local:
        return local_mem;
      case MemPath::image:
        if (!image_path.ok) return 0;
        return std::min<uint64_t>(static_cast<uint64_t>(image_max_buffer) * 4, max_alloc);
      default:
        return 0;
    }
  }

  std::string summary() const {
    std::string s = device_type_name(type) + ", " + std::to_string(compute_units) + " CUs, " +
                    format_bytes(static_cast<double>(global_mem)) + ", " + short_version(version);
    if (!local_is_local()) s += ", local memory emulated in global";
    if (!image_path.ok) s += ", no image path";
    return s;
  }
};

Support decide_image_path(const Facts& f, cl_context ctx);

// ---- the L2 of an NVIDIA GPU (opencl_nv_l2.cpp says why) ----

struct CudaDeviceL2 {
  int domain = 0, bus = 0, l2_bytes = 0;
};
// The L2 of the one device at PCI (domain, bus); none where no device or several match.
std::optional<uint64_t> l2_at_pci(const std::vector<CudaDeviceL2>& devices, int domain, int bus);
struct DriverL2 {
  std::optional<uint64_t> bytes;
  std::string source;  // where the size came from, or why there is none
};
// The CUDA driver's L2 size of the GPU behind an NVIDIA OpenCL device.
DriverL2 nvidia_l2_from_cuda_driver(cl_device_id d);

// The DeviceInfo the backend reports for a device (opencl_facts.cpp).
DeviceInfo device_info(const Facts& f, cl_device_id d);
Facts query_facts(cl_platform_id p, cl_device_id d, int pi, int di, cl_context ctx);

}  // namespace gd::opencl::detail
