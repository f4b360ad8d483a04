/*
 * The environment's stream: the stream a kernel in the TVM-FFI style must
 * launch on. In ptxbench it is the call's stream, set by the generated
 * trampoline around each call (defined there, in the kernel's own library).
 */
#ifndef TVM_FFI_EXTRA_C_ENV_API_H_
#define TVM_FFI_EXTRA_C_ENV_API_H_

#include <tvm/ffi/c_api.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef void* TVMFFIStreamHandle;

/* The stream of (device_type, device_id) for the current call; NULL (the
 * legacy default stream) outside a call. */
TVMFFIStreamHandle TVMFFIEnvGetStream(int32_t device_type, int32_t device_id);

/* Sets the current thread's stream; the previous one in *opt_out_original_stream. */
int TVMFFIEnvSetStream(int32_t device_type, int32_t device_id, TVMFFIStreamHandle stream,
                       TVMFFIStreamHandle* opt_out_original_stream);

#ifdef __cplusplus
}  /* extern "C" */
#endif

#endif /* TVM_FFI_EXTRA_C_ENV_API_H_ */
