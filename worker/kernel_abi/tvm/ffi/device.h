// DLDevice, as kernels in the TVM-FFI style use it (fields only).
#ifndef TVM_FFI_DEVICE_H_
#define TVM_FFI_DEVICE_H_

#include <tvm/ffi/c_api.h>

#endif  // TVM_FFI_DEVICE_H_
