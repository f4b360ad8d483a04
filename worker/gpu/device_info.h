#ifndef PTXBENCH_WORKER_GPU_DEVICE_INFO_H_
#define PTXBENCH_WORKER_GPU_DEVICE_INFO_H_

// GPU discovery through the CUDA driver API, loaded at run time with
// dlopen("libcuda.so.1"): binaries that use it start and report "no GPU" on
// machines without an NVIDIA driver instead of failing to load.

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace ptxbench::gpu {

// One visible CUDA device, as the driver reports it.
struct GpuInfo {
  int index = 0;     // CUDA device ordinal
  std::string name;  // e.g. "NVIDIA H200"
  int cc_major = 0;  // compute capability
  int cc_minor = 0;
  std::string sm_arch;  // "sm_90" for compute capability 9.0
  uint64_t total_memory_bytes = 0;
  int64_t l2_cache_bytes = 0;
  int sm_count = 0;  // multiprocessors
  std::string pci_bus_id;  // "0000:3b:00.0"; empty if unknown
  // N of its /dev/nvidiaN node (from /proc/driver/nvidia); -1 if unknown.
  int device_minor = -1;
};

// The minor number of the /dev/nvidiaN node of the GPU at `pci_bus_id`
// (lower case, "0000:3b:00.0"), from the driver's /proc entry; -1 if unknown.
int DeviceMinor(const std::string& pci_bus_id);

// What discovery found. `gpus` is empty when the machine has no usable GPU;
// then `why_none` says why in words (driver library missing, no device).
struct GpuInventory {
  std::vector<GpuInfo> gpus;
  std::string why_none;
};

// Lists the CUDA devices. A missing driver library or a driver that reports
// no device gives an empty inventory, not an error. Errors: kUnavailable when
// the driver is present but fails to initialise or to answer a query (with
// the driver's error name). Thread-safe; loads the library once per process.
absl::StatusOr<GpuInventory> DiscoverGpus();

// "sm_<major><minor>", e.g. SmArch(9, 0) == "sm_90".
std::string SmArch(int cc_major, int cc_minor);

}  // namespace ptxbench::gpu

#endif  // PTXBENCH_WORKER_GPU_DEVICE_INFO_H_
