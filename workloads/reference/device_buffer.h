#ifndef PTXBENCH_WORKLOADS_REFERENCE_DEVICE_BUFFER_H_
#define PTXBENCH_WORKLOADS_REFERENCE_DEVICE_BUFFER_H_

// An owned device allocation of `count` elements of T (move-only), private to
// this process (device_memory.h: no other process can open it).

#include <cstddef>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "workloads/reference/device_memory.h"

namespace ptxbench::reference {

template <typename T>
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  // kResourceExhausted when the device has no room.
  static absl::StatusOr<DeviceBuffer> Allocate(size_t count) {
    absl::StatusOr<DeviceMemory> memory = DeviceMemory::Allocate(count * sizeof(T));
    if (!memory.ok()) return memory.status();
    DeviceBuffer b;
    b.memory_ = *std::move(memory);
    b.count_ = count;
    return b;
  }

  T* get() const { return static_cast<T*>(memory_.data()); }
  size_t size() const { return count_; }
  size_t bytes() const { return count_ * sizeof(T); }

 private:
  DeviceMemory memory_;
  size_t count_ = 0;
};

}  // namespace ptxbench::reference

#endif  // PTXBENCH_WORKLOADS_REFERENCE_DEVICE_BUFFER_H_
