#ifndef PTXBENCH_WORKLOADS_NATIVE_REFERENCE_H_
#define PTXBENCH_WORKLOADS_NATIVE_REFERENCE_H_

// Which reference computes a definition's expected outputs. A native one
// (cuBLAS, cuDNN SDPA) is used where it computes exactly the definition;
// otherwise the definition's own PyTorch `reference` runs in a trusted
// Python with torch and CUDA. Plain C++: the scheduler decides at submit
// whether a definition can be evaluated anywhere, before any model is
// called, and the runner (worker/runner/measure/references.cc) builds the native
// reference by the same rules.

#include <string>

#include "absl/status/statusor.h"
#include "workloads/definition.h"

namespace ptxbench::workloads {

// The library of the native reference that computes `d` exactly: "cuBLAS"
// for op_type "gemm" (A[M,K], B[N,K] -> C[M,N], all bfloat16), "cuDNN SDPA"
// for op_type "attention" (forward Q,K,V -> O,LSE or backward
// Q,K,V,O,dO,L -> dQ,dK,dV; [B,H,S,D] bfloat16, LSE/L [B,H,S] float32;
// causal and backward read from the tags). kUnimplemented naming the
// definition and why none fits.
absl::StatusOr<std::string> NativeReference(const Definition& d);

enum class ReferenceKind {
  kNative,   // NativeReference fits
  kPyTorch,  // none fits; the definition's PyTorch `reference` computes it
};

// The reference a full evaluation of `d` uses. kFailedPrecondition naming
// the definition when no native reference fits and it has no PyTorch code.
absl::StatusOr<ReferenceKind> ChooseReference(const Definition& d);

}  // namespace ptxbench::workloads

#endif  // PTXBENCH_WORKLOADS_NATIVE_REFERENCE_H_
