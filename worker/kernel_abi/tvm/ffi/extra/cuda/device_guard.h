// CUDADeviceGuard: selects a device for a scope and restores the previous one.
#ifndef TVM_FFI_EXTRA_CUDA_DEVICE_GUARD_H_
#define TVM_FFI_EXTRA_CUDA_DEVICE_GUARD_H_

#include <tvm/ffi/extra/cuda/base.h>

namespace tvm {
namespace ffi {

struct CUDADeviceGuard {
  explicit CUDADeviceGuard(int device_index) {
    TVM_FFI_CHECK_CUDA_ERROR(cudaGetDevice(&previous_));
    if (previous_ != device_index) TVM_FFI_CHECK_CUDA_ERROR(cudaSetDevice(device_index));
  }
  ~CUDADeviceGuard() { cudaSetDevice(previous_); }
  CUDADeviceGuard(const CUDADeviceGuard&) = delete;
  CUDADeviceGuard& operator=(const CUDADeviceGuard&) = delete;

 private:
  int previous_ = 0;
};

}  // namespace ffi
}  // namespace tvm

#endif  // TVM_FFI_EXTRA_CUDA_DEVICE_GUARD_H_
