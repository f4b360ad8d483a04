#include "workloads/native_reference.h"

#include <algorithm>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace ptxbench::workloads {
namespace {

bool Bf16(const TensorSpec& t) { return t.dtype == "bfloat16"; }

bool FitsGemm(const Definition& d) {
  // A [M,K], B [N,K] -> C [M,N], bf16.
  return d.inputs.size() == 2 && d.outputs.size() == 1 && Bf16(d.inputs[0]) &&
         Bf16(d.inputs[1]) && Bf16(d.outputs[0]) && d.inputs[0].shape.size() == 2 &&
         d.inputs[1].shape.size() == 2 && d.outputs[0].shape.size() == 2 &&
         d.inputs[0].shape[1] == d.inputs[1].shape[1] &&
         d.outputs[0].shape[0] == d.inputs[0].shape[0] &&
         d.outputs[0].shape[1] == d.inputs[1].shape[0];
}

bool FitsAttention(const Definition& d) {
  // Forward: Q, K, V -> O, LSE. Backward: Q, K, V, O, dO, L -> dQ, dK, dV.
  // All [B,H,S,D] bf16 but the LSE/L, [B,H,S] fp32.
  const std::vector<TensorSpec>& in = d.inputs;
  const std::vector<TensorSpec>& out = d.outputs;
  if (in.empty() || in[0].shape.size() != 4 || !Bf16(in[0])) return false;
  const auto is4 = [&](const TensorSpec& t) { return Bf16(t) && t.shape == in[0].shape; };
  const auto is_lse = [&](const TensorSpec& t) {
    return t.dtype == "float32" && t.shape.size() == 3 &&
           std::equal(t.shape.begin(), t.shape.end(), in[0].shape.begin());
  };
  if (IsBackward(d)) {
    return in.size() == 6 && out.size() == 3 && is4(in[1]) && is4(in[2]) && is4(in[3]) &&
           is4(in[4]) && is_lse(in[5]) && is4(out[0]) && is4(out[1]) && is4(out[2]);
  }
  return in.size() == 3 && out.size() == 2 && is4(in[1]) && is4(in[2]) && is4(out[0]) &&
         is_lse(out[1]);
}

}  // namespace

absl::StatusOr<std::string> NativeReference(const Definition& d) {
  if (d.op_type == "gemm") {
    if (FitsGemm(d)) return std::string("cuBLAS");
    return absl::UnimplementedError(absl::StrCat(
        "definition ", d.name, ": the GEMM reference computes C[M,N] = A[M,K]·B[N,K]^T in "
        "bfloat16 only"));
  }
  if (d.op_type == "attention") {
    // The tags say what to compute (definition.h). A name that says causal
    // without a tag that does is ambiguous: the native reference would
    // compute full attention, so it is not used for such a definition.
    if (absl::StrContains(d.name, "causal") && !IsCausal(d)) {
      return absl::UnimplementedError(absl::StrCat(
          "definition ", d.name, ": the name says causal but no tag does (\"causal:true\"); the "
          "native attention reference does not guess"));
    }
    if (FitsAttention(d)) return std::string("cuDNN SDPA");
    return absl::UnimplementedError(absl::StrCat(
        "definition ", d.name, ": the attention reference computes [B,H,S,D] bfloat16 "
        "attention with a [B,H,S] float32 LSE (forward: Q,K,V -> O,LSE; backward: "
        "Q,K,V,O,dO,L -> dQ,dK,dV)"));
  }
  return absl::UnimplementedError(absl::StrCat("definition ", d.name, " (op_type ", d.op_type,
                                               "): no native reference (cuBLAS, cuDNN) computes it"));
}

}  // namespace ptxbench::workloads
