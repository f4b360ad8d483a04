// TVM_FFI_CHECK_CUDA_ERROR(stmt): throws RuntimeError naming the CUDA error.
#ifndef TVM_FFI_EXTRA_CUDA_BASE_H_
#define TVM_FFI_EXTRA_CUDA_BASE_H_

#include <cuda_runtime.h>
#include <tvm/ffi/error.h>

#define TVM_FFI_CHECK_CUDA_ERROR(stmt)                                                      \
  do {                                                                                      \
    cudaError_t tvm_ffi_cuda_err_ = (stmt);                                                 \
    if (tvm_ffi_cuda_err_ != cudaSuccess) {                                                 \
      TVM_FFI_THROW(RuntimeError) << "CUDA Runtime Error: " << cudaGetErrorName(tvm_ffi_cuda_err_) \
                                  << " (" << static_cast<int>(tvm_ffi_cuda_err_)            \
                                  << "): " << cudaGetErrorString(tvm_ffi_cuda_err_);        \
    }                                                                                       \
  } while (0)

#endif  // TVM_FFI_EXTRA_CUDA_BASE_H_
