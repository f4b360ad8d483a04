#ifndef PTXBENCH_WORKER_COMPILE_TRAMPOLINE_H_
#define PTXBENCH_WORKER_COMPILE_TRAMPOLINE_H_

// The trampoline: C++ that ptxbench generates from a definition and builds
// into the submission's library, so the candidate host calls every
// submission through one C entry (ptxbench/kernel_abi.h):
//   extern "C" int ptxb_entry(const ptxb::Tensor* const* tensors, int count,
//                             cudaStream_t stream);
// Two kernel ABIs reach it:
//  - ptxbench's own: run(const ptxb::Tensor&..., ptxb::Tensor&..., stream);
//  - the TVM-FFI style of FlashInfer-Bench and PTXBench kernels: a function
//    exported with TVM_FFI_DLL_EXPORT_TYPED_FUNC(<entry>, f), f taking
//    tvm::ffi::TensorView inputs then outputs, launching on
//    TVMFFIEnvGetStream(). The trampoline describes each tensor as a DLPack
//    DLTensor (dense row-major strides, byte_offset 0, the current CUDA
//    device), sets the environment stream for the call and reports the
//    error the function raised. The compatibility headers are under
//    worker/kernel_abi/{tvm,dlpack}.

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "workloads/definition.h"

namespace ptxbench::worker {

enum class KernelAbi { kPtxbench, kTvmFfi };

// TVM-FFI when the sources export a function with TVM_FFI_DLL_EXPORT_TYPED_FUNC.
KernelAbi DetectKernelAbi(absl::string_view sources);

std::string PtxbenchTrampoline(const workloads::Definition& definition);

// kUnimplemented when the definition has a scalar input (it would arrive as
// a device value, where TVM-FFI kernels take a host number).
absl::StatusOr<std::string> TvmFfiTrampoline(const workloads::Definition& definition,
                                             absl::string_view entry);

// The run() declaration a ptxbench-ABI submission must define.
std::string PtxbenchSignature(const workloads::Definition& definition);

// What a TVM-FFI submission must export, for a build that lacks it.
std::string TvmFfiExpectation(const workloads::Definition& definition, absl::string_view entry);

}  // namespace ptxbench::worker

#endif  // PTXBENCH_WORKER_COMPILE_TRAMPOLINE_H_
