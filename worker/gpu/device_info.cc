#include "worker/gpu/device_info.h"

#include <dlfcn.h>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

#include <fstream>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/strip.h"

namespace ptxbench::gpu {
namespace {

// The few driver API entry points discovery needs, declared here so this file
// builds without the CUDA headers. Values from cuda.h (stable ABI).
using CUresult = int;
using CUdevice = int;
constexpr CUresult kCudaSuccess = 0;
constexpr CUresult kCudaErrorNoDevice = 100;
constexpr int kAttrMultiprocessorCount = 16;
constexpr int kAttrL2CacheSize = 38;
constexpr int kAttrComputeCapabilityMajor = 75;
constexpr int kAttrComputeCapabilityMinor = 76;

struct DriverApi {
  CUresult (*cuInit)(unsigned int) = nullptr;
  CUresult (*cuDeviceGetCount)(int*) = nullptr;
  CUresult (*cuDeviceGet)(CUdevice*, int) = nullptr;
  CUresult (*cuDeviceGetName)(char*, int, CUdevice) = nullptr;
  CUresult (*cuDeviceGetAttribute)(int*, int, CUdevice) = nullptr;
  CUresult (*cuDeviceTotalMem)(size_t*, CUdevice) = nullptr;
  CUresult (*cuDeviceGetPCIBusId)(char*, int, CUdevice) = nullptr;  // optional
  CUresult (*cuGetErrorName)(CUresult, const char**) = nullptr;
  std::string load_error;  // non-empty when the library or a symbol is missing
};

template <typename Fn>
bool LoadSymbol(void* lib, const char* name, Fn* fn) {
  *fn = reinterpret_cast<Fn>(dlsym(lib, name));
  return *fn != nullptr;
}

// Loaded once; the handle stays open for the life of the process.
const DriverApi& Driver() {
  static const DriverApi* api = [] {
    auto* d = new DriverApi;
    void* lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (lib == nullptr) {
      const char* err = dlerror();
      d->load_error = absl::StrCat("CUDA driver library libcuda.so.1 not loadable: ",
                                   err != nullptr ? err : "unknown dlopen error");
      return d;
    }
    bool ok = LoadSymbol(lib, "cuInit", &d->cuInit) &&
              LoadSymbol(lib, "cuDeviceGetCount", &d->cuDeviceGetCount) &&
              LoadSymbol(lib, "cuDeviceGet", &d->cuDeviceGet) &&
              LoadSymbol(lib, "cuDeviceGetName", &d->cuDeviceGetName) &&
              LoadSymbol(lib, "cuDeviceGetAttribute", &d->cuDeviceGetAttribute) &&
              LoadSymbol(lib, "cuDeviceTotalMem_v2", &d->cuDeviceTotalMem) &&
              LoadSymbol(lib, "cuGetErrorName", &d->cuGetErrorName);
    LoadSymbol(lib, "cuDeviceGetPCIBusId", &d->cuDeviceGetPCIBusId);  // optional
    if (!ok) d->load_error = "libcuda.so.1 lacks a driver API symbol discovery needs";
    return d;
  }();
  return *api;
}

std::string ErrorName(const DriverApi& api, CUresult r) {
  const char* name = nullptr;
  if (api.cuGetErrorName != nullptr && api.cuGetErrorName(r, &name) == kCudaSuccess &&
      name != nullptr) {
    return absl::StrFormat("%s (%d)", name, r);
  }
  return absl::StrCat("CUresult ", r);
}

absl::Status DriverError(const DriverApi& api, const char* call, CUresult r) {
  return absl::UnavailableError(
      absl::StrCat("CUDA driver call ", call, " failed: ", ErrorName(api, r)));
}

}  // namespace

int DeviceMinor(const std::string& pci_bus_id) {
  std::ifstream in("/proc/driver/nvidia/gpus/" + pci_bus_id + "/information");
  std::string line;
  while (std::getline(in, line)) {
    int minor = -1;
    if (absl::StartsWith(line, "Device Minor:") &&
        absl::SimpleAtoi(absl::StripAsciiWhitespace(line.substr(13)), &minor)) {
      return minor;
    }
  }
  return -1;
}

std::string SmArch(int cc_major, int cc_minor) { return absl::StrCat("sm_", cc_major, cc_minor); }

absl::StatusOr<GpuInventory> DiscoverGpus() {
  const DriverApi& api = Driver();
  GpuInventory inv;
  if (!api.load_error.empty()) {
    inv.why_none = api.load_error;
    return inv;
  }
  CUresult r = api.cuInit(0);
  if (r == kCudaErrorNoDevice) {
    inv.why_none = "the CUDA driver reports no device (CUDA_ERROR_NO_DEVICE)";
    return inv;
  }
  if (r != kCudaSuccess) return DriverError(api, "cuInit", r);
  int count = 0;
  if ((r = api.cuDeviceGetCount(&count)) != kCudaSuccess) {
    return DriverError(api, "cuDeviceGetCount", r);
  }
  if (count == 0) {
    inv.why_none = "the CUDA driver lists 0 devices";
    return inv;
  }
  for (int i = 0; i < count; ++i) {
    CUdevice dev = 0;
    if ((r = api.cuDeviceGet(&dev, i)) != kCudaSuccess) return DriverError(api, "cuDeviceGet", r);
    GpuInfo info;
    info.index = i;
    char name[256] = {};
    if ((r = api.cuDeviceGetName(name, sizeof(name) - 1, dev)) != kCudaSuccess) {
      return DriverError(api, "cuDeviceGetName", r);
    }
    info.name = name;
    int l2 = 0;
    struct {
      int attr;
      int* out;
    } attrs[] = {{kAttrComputeCapabilityMajor, &info.cc_major},
                 {kAttrComputeCapabilityMinor, &info.cc_minor},
                 {kAttrMultiprocessorCount, &info.sm_count},
                 {kAttrL2CacheSize, &l2}};
    for (const auto& a : attrs) {
      if ((r = api.cuDeviceGetAttribute(a.out, a.attr, dev)) != kCudaSuccess) {
        return DriverError(api, "cuDeviceGetAttribute", r);
      }
    }
    info.l2_cache_bytes = l2;
    size_t mem = 0;
    if ((r = api.cuDeviceTotalMem(&mem, dev)) != kCudaSuccess) {
      return DriverError(api, "cuDeviceTotalMem_v2", r);
    }
    info.total_memory_bytes = mem;
    info.sm_arch = SmArch(info.cc_major, info.cc_minor);
    char bus[64] = {};
    if (api.cuDeviceGetPCIBusId != nullptr &&
        api.cuDeviceGetPCIBusId(bus, sizeof(bus) - 1, dev) == kCudaSuccess) {
      info.pci_bus_id = absl::AsciiStrToLower(bus);
      info.device_minor = DeviceMinor(info.pci_bus_id);
    }
    inv.gpus.push_back(std::move(info));
  }
  return inv;
}

}  // namespace ptxbench::gpu
