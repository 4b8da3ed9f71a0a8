// The L2 size of an NVIDIA GPU seen through OpenCL. NVIDIA's OpenCL reports as
// CL_DEVICE_GLOBAL_MEM_CACHE_SIZE 32 KiB per SM (4.12 MiB on an H200 of 132 SMs, whose L2
// holds 60 MiB): sized on that, the latency probe warms a chase over 5 MiB only and names
// no L2 partitions, and the bandwidth and memory probes look for an L2 of the wrong size.
// The CUDA driver of the same installation (libcuda, which NVIDIA's OpenCL runs on) reports
// the L2 of the GPU at the PCI location cl_nv_device_attribute_query gives; it is loaded at
// run time, so a build without CUDA still has it wherever the driver is installed.
#include <CL/cl.h>
#include <dlfcn.h>

#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "opencl_internal.hpp"

namespace gd::opencl::detail {

namespace {

// cl_nv_device_attribute_query (not in every cl_ext.h).
constexpr cl_device_info kPciBusIdNv = 0x4008;
constexpr cl_device_info kPciDomainIdNv = 0x400A;

// The CUDA driver API's names, declared here: no CUDA header is needed to build this.
using CuResult = int;
using CuInit = CuResult (*)(unsigned);
using CuDeviceGetCount = CuResult (*)(int*);
using CuDeviceGet = CuResult (*)(int*, int);
using CuDeviceGetAttribute = CuResult (*)(int*, int, int);
constexpr int kCuL2CacheSize = 38;  // CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE
constexpr int kCuPciBusId = 33;     // CU_DEVICE_ATTRIBUTE_PCI_BUS_ID
constexpr int kCuPciDomainId = 50;  // CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID

// Every CUDA device's PCI location and L2, or why there is none.
std::vector<CudaDeviceL2> cuda_devices(std::string* why) {
  // Kept loaded: unloading the driver after cuInit is not supported.
  void* lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    *why = "no libcuda.so.1";
    return {};
  }
  const auto init = reinterpret_cast<CuInit>(dlsym(lib, "cuInit"));
  const auto count = reinterpret_cast<CuDeviceGetCount>(dlsym(lib, "cuDeviceGetCount"));
  const auto get = reinterpret_cast<CuDeviceGet>(dlsym(lib, "cuDeviceGet"));
  const auto attr = reinterpret_cast<CuDeviceGetAttribute>(dlsym(lib, "cuDeviceGetAttribute"));
  int n = 0;
  if (!init || !count || !get || !attr) {
    *why = "libcuda.so.1 lacks the device queries";
    return {};
  }
  if (init(0) != 0 || count(&n) != 0) {
    *why = "the CUDA driver did not initialise";
    return {};
  }
  std::vector<CudaDeviceL2> out;
  for (int i = 0; i < n; ++i) {
    int dev = 0;
    CudaDeviceL2 d;
    if (get(&dev, i) != 0 || attr(&d.bus, kCuPciBusId, dev) != 0 ||
        attr(&d.domain, kCuPciDomainId, dev) != 0 || attr(&d.l2_bytes, kCuL2CacheSize, dev) != 0)
      continue;
    out.push_back(d);
  }
  if (out.empty()) *why = "the CUDA driver lists no device";
  return out;
}

}  // namespace

std::optional<uint64_t> l2_at_pci(const std::vector<CudaDeviceL2>& devices, int domain, int bus) {
  std::optional<uint64_t> found;
  int matches = 0;
  for (const CudaDeviceL2& d : devices)
    if (d.domain == domain && d.bus == bus && d.l2_bytes > 0) {
      found = static_cast<uint64_t>(d.l2_bytes);
      ++matches;
    }
  return matches == 1 ? found : std::nullopt;
}

DriverL2 nvidia_l2_from_cuda_driver(cl_device_id d) {
  DriverL2 r;
  cl_uint bus = 0, domain = 0;
  if (clGetDeviceInfo(d, kPciBusIdNv, sizeof bus, &bus, nullptr) != CL_SUCCESS) {
    r.source = "the device gives no PCI bus (cl_nv_device_attribute_query)";
    return r;
  }
  // Older drivers have no domain query: domain 0, where single-domain machines put GPUs.
  if (clGetDeviceInfo(d, kPciDomainIdNv, sizeof domain, &domain, nullptr) != CL_SUCCESS) domain = 0;
  std::string why;
  const std::vector<CudaDeviceL2> devs = cuda_devices(&why);
  char where[32];
  std::snprintf(where, sizeof where, "%04x:%02x", domain, bus);
  if (devs.empty()) {
    r.source = why;
    return r;
  }
  r.bytes = l2_at_pci(devs, static_cast<int>(domain), static_cast<int>(bus));
  r.source = r.bytes ? std::string("the CUDA driver's L2 size of the GPU at PCI ") + where
                     : std::string("no single CUDA device at PCI ") + where;
  return r;
}

}  // namespace gd::opencl::detail
