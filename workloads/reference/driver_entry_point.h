#ifndef PTXBENCH_WORKLOADS_REFERENCE_DRIVER_ENTRY_POINT_H_
#define PTXBENCH_WORKLOADS_REFERENCE_DRIVER_ENTRY_POINT_H_

// A CUDA driver function reached through the runtime's entry points, so that
// binaries using it link no libcuda and still start where there is no driver
// (device_memory.h, worker/gpu/stream_memops.h).

#include <cuda_runtime_api.h>

namespace ptxbench::reference {

// Sets `fn` to the driver's `name` (its CUDA 12 version); false when the
// driver has none.
template <typename Fn>
bool LoadDriverFunction(Fn& fn, const char* name) {
  void* p = nullptr;
  cudaDriverEntryPointQueryResult found = cudaDriverEntryPointSymbolNotFound;
  if (cudaGetDriverEntryPointByVersion(name, &p, 12000, cudaEnableDefault, &found) != cudaSuccess ||
      found != cudaDriverEntryPointSuccess) {
    return false;
  }
  fn = reinterpret_cast<Fn>(p);
  return true;
}

}  // namespace ptxbench::reference

#endif  // PTXBENCH_WORKLOADS_REFERENCE_DRIVER_ENTRY_POINT_H_
