// Everything a kernel in the TVM-FFI style includes at once: tensors, shapes,
// dtypes, errors, Optional and the export macro (not the extra/ headers).
#ifndef TVM_FFI_TVM_FFI_H_
#define TVM_FFI_TVM_FFI_H_

#include <tvm/ffi/c_api.h>
#include <tvm/ffi/container/shape.h>
#include <tvm/ffi/container/tensor.h>
#include <tvm/ffi/device.h>
#include <tvm/ffi/dtype.h>
#include <tvm/ffi/error.h>
#include <tvm/ffi/function.h>
#include <tvm/ffi/optional.h>
#include <tvm/ffi/string.h>

#endif  // TVM_FFI_TVM_FFI_H_
