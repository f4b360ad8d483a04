// tvm::ffi::String, as a std::string (ptxbench passes no string arguments).
#ifndef TVM_FFI_STRING_H_
#define TVM_FFI_STRING_H_

#include <string>

namespace tvm {
namespace ffi {
using String = std::string;
}  // namespace ffi
}  // namespace tvm

#endif  // TVM_FFI_STRING_H_
