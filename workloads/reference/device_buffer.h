#ifndef PTXBENCH_WORKLOADS_REFERENCE_DEVICE_BUFFER_H_
#define PTXBENCH_WORKLOADS_REFERENCE_DEVICE_BUFFER_H_

// An owned cudaMalloc allocation of `count` elements of T (move-only).

#include <cuda_runtime_api.h>

#include <cstddef>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"

namespace ptxbench::reference {

template <typename T>
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  // kResourceExhausted when the device has no room.
  static absl::StatusOr<DeviceBuffer> Allocate(size_t count) {
    DeviceBuffer b;
    cudaError_t err = cudaMalloc(reinterpret_cast<void**>(&b.data_), count * sizeof(T));
    if (err != cudaSuccess) {
      return absl::ResourceExhaustedError(
          absl::StrCat("cudaMalloc of ", count * sizeof(T), " bytes: ", cudaGetErrorString(err)));
    }
    b.count_ = count;
    return b;
  }
  DeviceBuffer(DeviceBuffer&& o) noexcept
      : data_(std::exchange(o.data_, nullptr)), count_(std::exchange(o.count_, 0)) {}
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept {
    std::swap(data_, o.data_);
    std::swap(count_, o.count_);
    return *this;
  }
  ~DeviceBuffer() {
    if (data_ != nullptr) cudaFree(data_);
  }

  T* get() const { return data_; }
  size_t size() const { return count_; }
  size_t bytes() const { return count_ * sizeof(T); }

 private:
  T* data_ = nullptr;
  size_t count_ = 0;
};

}  // namespace ptxbench::reference

#endif  // PTXBENCH_WORKLOADS_REFERENCE_DEVICE_BUFFER_H_
