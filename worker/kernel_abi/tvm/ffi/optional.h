// tvm::ffi::Optional<T> for view types such as TensorView: an absent
// argument is passed as None. Written for ptxbench.
#ifndef TVM_FFI_OPTIONAL_H_
#define TVM_FFI_OPTIONAL_H_

#include <tvm/ffi/error.h>

#include <optional>
#include <utility>

namespace tvm {
namespace ffi {

template <typename T>
class Optional {
 public:
  Optional() = default;
  Optional(std::nullopt_t) {}  // NOLINT: implicit, as in TVM-FFI
  Optional(T value) : value_(std::move(value)) {}  // NOLINT
  bool has_value() const { return value_.has_value(); }
  explicit operator bool() const { return value_.has_value(); }
  const T& value() const {
    if (!value_.has_value()) throw ::tvm::ffi::Error("RuntimeError", "accessing an empty Optional");
    return *value_;
  }
  T value_or(T other) const { return value_.value_or(std::move(other)); }
  const T& operator*() const { return value(); }
  bool operator==(std::nullopt_t) const { return !value_.has_value(); }
  bool operator!=(std::nullopt_t) const { return value_.has_value(); }

 private:
  std::optional<T> value_;
};

}  // namespace ffi
}  // namespace tvm

#endif  // TVM_FFI_OPTIONAL_H_
