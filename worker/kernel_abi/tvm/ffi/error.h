// Errors of kernels in the TVM-FFI style, as TVM-FFI's public API spells
// them (written for ptxbench): tvm::ffi::Error and the THROW / CHECK macros,
// each of which accepts a trailing `<< message`. A thrown error ends the
// call; the exported function returns -1 and ptxbench reports the kind and
// message to the model.
#ifndef TVM_FFI_ERROR_H_
#define TVM_FFI_ERROR_H_

#include <tvm/ffi/c_api.h>

#include <exception>
#include <iostream>
#include <sstream>
#include <string>
#include <utility>

namespace tvm {
namespace ffi {

class Error : public std::exception {
 public:
  Error(std::string kind, std::string message, std::string backtrace = "")
      : kind_(std::move(kind)), message_(std::move(message)), backtrace_(std::move(backtrace)) {}
  const std::string& kind() const { return kind_; }
  const std::string& message() const { return message_; }
  const std::string& backtrace() const { return backtrace_; }
  std::string FullMessage() const { return kind_ + ": " + message_; }
  const char* what() const noexcept override { return message_.c_str(); }

 private:
  std::string kind_, message_, backtrace_;
};

namespace details {

// Collects a message and throws it when the statement ends (the builder is a
// temporary; its destructor throws).
class ErrorBuilder {
 public:
  explicit ErrorBuilder(const char* kind, bool log = false) : kind_(kind), log_(log) {}
  ErrorBuilder(const ErrorBuilder&) = delete;
  ErrorBuilder& operator=(const ErrorBuilder&) = delete;
  [[noreturn]] ~ErrorBuilder() noexcept(false) {
    if (log_) std::cerr << kind_ << ": " << stream_.str() << std::endl;
    throw ::tvm::ffi::Error(kind_, stream_.str());
  }
  std::ostringstream& stream() { return stream_; }

 private:
  const char* kind_;
  bool log_;
  std::ostringstream stream_;
};

}  // namespace details
}  // namespace ffi
}  // namespace tvm

#define TVM_FFI_THROW(ErrorKind) ::tvm::ffi::details::ErrorBuilder(#ErrorKind).stream()
#define TVM_FFI_LOG_AND_THROW(ErrorKind) \
  ::tvm::ffi::details::ErrorBuilder(#ErrorKind, true).stream()

#define TVM_FFI_CHECK(cond, ErrorKind) \
  if (cond) {                          \
  } else                               \
    TVM_FFI_THROW(ErrorKind) << "Check failed: (" #cond ") is false: "

// x op y, evaluating each side once; the message shows both values.
#define TVM_FFI_CHECK_BINARY_OP_(x, y, op, ErrorKind)                                  \
  if (auto&& tvm_ffi_check_x_ = (x); true)                                              \
    if (auto&& tvm_ffi_check_y_ = (y); tvm_ffi_check_x_ op tvm_ffi_check_y_) {          \
    } else                                                                              \
      TVM_FFI_THROW(ErrorKind) << "Check failed: " #x " " #op " " #y " ("              \
                               << tvm_ffi_check_x_ << " vs. " << tvm_ffi_check_y_ << ") : "

#define TVM_FFI_CHECK_EQ(x, y, ErrorKind) TVM_FFI_CHECK_BINARY_OP_(x, y, ==, ErrorKind)
#define TVM_FFI_CHECK_NE(x, y, ErrorKind) TVM_FFI_CHECK_BINARY_OP_(x, y, !=, ErrorKind)
#define TVM_FFI_CHECK_LT(x, y, ErrorKind) TVM_FFI_CHECK_BINARY_OP_(x, y, <, ErrorKind)
#define TVM_FFI_CHECK_LE(x, y, ErrorKind) TVM_FFI_CHECK_BINARY_OP_(x, y, <=, ErrorKind)
#define TVM_FFI_CHECK_GT(x, y, ErrorKind) TVM_FFI_CHECK_BINARY_OP_(x, y, >, ErrorKind)
#define TVM_FFI_CHECK_GE(x, y, ErrorKind) TVM_FFI_CHECK_BINARY_OP_(x, y, >=, ErrorKind)

#define TVM_FFI_ICHECK(cond) TVM_FFI_CHECK(cond, InternalError)
#define TVM_FFI_ICHECK_EQ(x, y) TVM_FFI_CHECK_EQ(x, y, InternalError)
#define TVM_FFI_ICHECK_NE(x, y) TVM_FFI_CHECK_NE(x, y, InternalError)
#define TVM_FFI_ICHECK_LT(x, y) TVM_FFI_CHECK_LT(x, y, InternalError)
#define TVM_FFI_ICHECK_LE(x, y) TVM_FFI_CHECK_LE(x, y, InternalError)
#define TVM_FFI_ICHECK_GT(x, y) TVM_FFI_CHECK_GT(x, y, InternalError)
#define TVM_FFI_ICHECK_GE(x, y) TVM_FFI_CHECK_GE(x, y, InternalError)
#define TVM_FFI_DCHECK(cond) TVM_FFI_ICHECK(cond)

namespace tvm {
namespace ffi {
namespace details {
template <typename T>
T&& CheckNotNull(T&& value, const char* text) {
  if (value == nullptr) {
    throw ::tvm::ffi::Error("InternalError", std::string("Check not null: ") + text);
  }
  return std::forward<T>(value);
}
}  // namespace details
}  // namespace ffi
}  // namespace tvm

#define TVM_FFI_ICHECK_NOTNULL(x) ::tvm::ffi::details::CheckNotNull((x), #x)
#define TVM_FFI_CHECK_NOTNULL(x, ErrorKind) ::tvm::ffi::details::CheckNotNull((x), #x)

#endif  // TVM_FFI_ERROR_H_
