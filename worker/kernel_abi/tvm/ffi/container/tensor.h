// tvm::ffi::TensorView: the view of a DLPack tensor that kernels in the
// TVM-FFI style receive for each input and output, as TVM-FFI's public API
// describes it (written for ptxbench). ptxbench passes dense, contiguous,
// row-major tensors on the GPU with byte_offset 0; data_ptr() is the first
// element.
#ifndef TVM_FFI_CONTAINER_TENSOR_H_
#define TVM_FFI_CONTAINER_TENSOR_H_

#include <dlpack/dlpack.h>
#include <tvm/ffi/container/shape.h>
#include <tvm/ffi/dtype.h>
#include <tvm/ffi/error.h>

#include <cstdint>

namespace tvm {
namespace ffi {

// Contiguous row-major: strides absent, an empty tensor, or each stride the
// product of the extents after it (dimensions of extent 1 are skipped).
inline bool IsContiguous(const DLTensor& t) {
  if (t.strides == nullptr) return true;
  int64_t expected = 1;
  for (int32_t i = t.ndim - 1; i >= 0; --i) {
    if (t.shape[i] == 0) return true;
    if (t.shape[i] == 1) continue;
    if (t.strides[i] != expected) return false;
    expected *= t.shape[i];
  }
  return true;
}

inline size_t GetDataSize(size_t numel, DLDataType dtype) {
  return (numel * dtype.bits * dtype.lanes + 7) / 8;
}

class TensorView {
 public:
  TensorView(const DLTensor* tensor) {  // NOLINT: implicit, as in TVM-FFI
    TVM_FFI_ICHECK(tensor != nullptr);
    tensor_ = *tensor;
  }
  void* data_ptr() const { return tensor_.data; }
  DLDevice device() const { return tensor_.device; }
  int32_t ndim() const { return tensor_.ndim; }
  int32_t dim() const { return tensor_.ndim; }
  DLDataType dtype() const { return tensor_.dtype; }
  uint64_t byte_offset() const { return tensor_.byte_offset; }
  ShapeView shape() const { return ShapeView(tensor_.shape, static_cast<size_t>(tensor_.ndim)); }
  ShapeView sizes() const { return shape(); }
  ShapeView strides() const {
    return ShapeView(tensor_.strides, static_cast<size_t>(tensor_.ndim));
  }
  // A negative index counts from the last dimension.
  int64_t size(int64_t i) const { return tensor_.shape[Index(i)]; }
  int64_t stride(int64_t i) const { return tensor_.strides[Index(i)]; }
  int64_t numel() const { return shape().Product(); }
  bool IsContiguous() const { return ::tvm::ffi::IsContiguous(tensor_); }
  bool is_contiguous() const { return IsContiguous(); }

 private:
  int64_t Index(int64_t i) const {
    const int64_t n = tensor_.ndim;
    if (i < -n || i >= n) {
      TVM_FFI_THROW(IndexError) << "Index " << i << " out of bounds for tensor with " << n
                                << " dimensions";
    }
    return i < 0 ? i + n : i;
  }

  DLTensor tensor_{};
};

inline size_t GetDataSize(const TensorView& t) {
  return GetDataSize(static_cast<size_t>(t.numel()), t.dtype());
}

}  // namespace ffi
}  // namespace tvm

#endif  // TVM_FFI_CONTAINER_TENSOR_H_
