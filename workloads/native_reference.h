#ifndef PTXBENCH_WORKLOADS_NATIVE_REFERENCE_H_
#define PTXBENCH_WORKLOADS_NATIVE_REFERENCE_H_

// Which native reference — the production library the GPU harness checks
// and times a candidate against (worker/runner/references.cc) — computes a
// definition exactly. Plain C++, so that what no reference can run is
// refused at submit, before any model is called; the runner builds the
// reference this names.

#include <string>

#include "absl/status/statusor.h"
#include "workloads/definition.h"

namespace ptxbench::workloads {

// "cuBLAS" for C[M,N] = A[M,K]·B[N,K]^T in bfloat16 (op_type "gemm");
// "cuDNN SDPA" for [B,H,S,D] bfloat16 attention with a [B,H,S] float32 LSE,
// forward (Q,K,V -> O,LSE) or backward (Q,K,V,O,dO,L -> dQ,dK,dV), causal or
// not as the tags say (op_type "attention"). kUnimplemented naming the
// definition and what the library computes otherwise; a definition whose
// name says causal and whose tags do not is never given one.
absl::StatusOr<std::string> NativeReference(const Definition& d);

}  // namespace ptxbench::workloads

#endif  // PTXBENCH_WORKLOADS_NATIVE_REFERENCE_H_
