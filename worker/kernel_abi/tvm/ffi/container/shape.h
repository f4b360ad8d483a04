// tvm::ffi::ShapeView: a non-owning view of a tensor's extents or strides,
// and Shape, an owning one. Written for ptxbench.
#ifndef TVM_FFI_CONTAINER_SHAPE_H_
#define TVM_FFI_CONTAINER_SHAPE_H_

#include <tvm/ffi/error.h>

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <ostream>
#include <vector>

namespace tvm {
namespace ffi {

class ShapeView {
 public:
  ShapeView() = default;
  ShapeView(const int64_t* data, size_t size) : data_(data), size_(size) {}
  const int64_t* data() const { return data_; }
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  int64_t operator[](size_t i) const { return data_[i]; }
  int64_t at(size_t i) const {
    if (i >= size_) {
      TVM_FFI_THROW(IndexError) << "index " << i << " out of bounds for a shape of " << size_;
    }
    return data_[i];
  }
  const int64_t* begin() const { return data_; }
  const int64_t* end() const { return data_ + size_; }
  int64_t front() const { return at(0); }
  int64_t back() const { return at(size_ - 1); }
  int64_t Product() const {
    int64_t p = 1;
    for (size_t i = 0; i < size_; ++i) p *= data_[i];
    return p;
  }

 private:
  const int64_t* data_ = nullptr;
  size_t size_ = 0;
};

class Shape {
 public:
  Shape() = default;
  Shape(std::initializer_list<int64_t> values) : values_(values) {}
  explicit Shape(std::vector<int64_t> values) : values_(std::move(values)) {}
  Shape(ShapeView view) : values_(view.begin(), view.end()) {}  // NOLINT
  operator ShapeView() const { return ShapeView(values_.data(), values_.size()); }  // NOLINT
  const int64_t* data() const { return values_.data(); }
  size_t size() const { return values_.size(); }
  bool empty() const { return values_.empty(); }
  int64_t operator[](size_t i) const { return values_[i]; }
  const int64_t* begin() const { return values_.data(); }
  const int64_t* end() const { return values_.data() + values_.size(); }
  int64_t Product() const { return ShapeView(*this).Product(); }

 private:
  std::vector<int64_t> values_;
};

inline std::ostream& operator<<(std::ostream& os, ShapeView s) {
  os << '[';
  for (size_t i = 0; i < s.size(); ++i) os << (i ? ", " : "") << s[i];
  return os << ']';
}

}  // namespace ffi
}  // namespace tvm

#endif  // TVM_FFI_CONTAINER_SHAPE_H_
