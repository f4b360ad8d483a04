#ifndef PTXBENCH_WORKLOADS_REFERENCE_DEVICE_MEMORY_H_
#define PTXBENCH_WORKLOADS_REFERENCE_DEVICE_MEMORY_H_

// GPU memory that no other process can open unless it is handed a file
// descriptor for it (docs/SECURITY.md, "The memory model").
//
// A legacy CUDA IPC handle (cudaIpcGetMemHandle) names a driver object of the
// exporting process; whoever guesses one opens it, read-write, across uids
// and PID namespaces. So every buffer of ptxbench's evaluation processes is
// made with CUDA's virtual memory API instead (cuMemCreate, mapped into the
// current context's address space):
//  - kPrivate: no shareable handle type at all; nothing can export it;
//  - kByDescriptor: exportable only as a POSIX file descriptor
//    (ExportDescriptor), which travels over a Unix socket (SCM_RIGHTS) to the
//    one process that needs it; a descriptor cannot be guessed or forged.
// The size is rounded up to the allocation granularity (2 MiB on Hopper) and
// the whole allocation is zero-filled, so a kernel that reads past the end
// of a tensor it was given finds zeros, and past the allocation a fault —
// never another buffer.
//
// Move-only. The driver API is reached through the CUDA runtime's entry
// points, so binaries that link this still start where there is no driver.
// Every call works on the current device of the calling thread.

#include <cstddef>
#include <cstdint>

#include "absl/status/statusor.h"

namespace ptxbench::reference {

class DeviceMemory {
 public:
  enum class Sharing { kPrivate, kByDescriptor };

  DeviceMemory() = default;
  // At least `bytes` (at least one granule), zero-filled, mapped read-write
  // on the current device. kResourceExhausted when the device has no room.
  static absl::StatusOr<DeviceMemory> Allocate(size_t bytes, Sharing sharing = Sharing::kPrivate);
  // Maps the allocation behind `fd` (from ExportDescriptor in another
  // process), `size` bytes, read-write on the current device. Takes `fd`:
  // it is closed whatever happens.
  static absl::StatusOr<DeviceMemory> Import(int fd, size_t size);

  DeviceMemory(DeviceMemory&& other) noexcept { *this = static_cast<DeviceMemory&&>(other); }
  DeviceMemory& operator=(DeviceMemory&& other) noexcept;
  DeviceMemory(const DeviceMemory&) = delete;
  DeviceMemory& operator=(const DeviceMemory&) = delete;
  ~DeviceMemory();

  void* data() const { return reinterpret_cast<void*>(static_cast<uintptr_t>(ptr_)); }
  // The mapped size (a multiple of the granularity).
  size_t size() const { return size_; }
  bool empty() const { return ptr_ == 0; }

  // A new descriptor for this allocation; the caller owns (and closes) it.
  // kFailedPrecondition for a kPrivate or imported allocation.
  absl::StatusOr<int> ExportDescriptor() const;

 private:
  // Maps `handle` (`size` bytes) read-write on `device`; releases it on
  // failure.
  static absl::StatusOr<DeviceMemory> Map(unsigned long long handle, size_t size, int device);
  void Release();

  unsigned long long ptr_ = 0;  // CUdeviceptr
  size_t size_ = 0;
  unsigned long long handle_ = 0;  // CUmemGenericAllocationHandle
  bool exportable_ = false;
};

// The allocation granularity of the current device for `sharing`, bytes.
absl::StatusOr<size_t> AllocationGranularity(DeviceMemory::Sharing sharing);

}  // namespace ptxbench::reference

#endif  // PTXBENCH_WORKLOADS_REFERENCE_DEVICE_MEMORY_H_
