#include "workloads/native_reference.h"

#include <algorithm>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace ptxbench::workloads {
namespace {

bool Bf16(const TensorSpec& t) { return t.dtype == "bfloat16"; }

// gemm: C[M,N] = A[M,K] · B[N,K]^T, bf16, through cuBLAS.
absl::StatusOr<std::string> Gemm(const Definition& d) {
  const bool fits = d.inputs.size() == 2 && d.outputs.size() == 1 && Bf16(d.inputs[0]) &&
                    Bf16(d.inputs[1]) && Bf16(d.outputs[0]) && d.inputs[0].shape.size() == 2 &&
                    d.inputs[1].shape.size() == 2 && d.outputs[0].shape.size() == 2 &&
                    d.inputs[0].shape[1] == d.inputs[1].shape[1] &&
                    d.outputs[0].shape[0] == d.inputs[0].shape[0] &&
                    d.outputs[0].shape[1] == d.inputs[1].shape[0];
  if (!fits) {
    return absl::UnimplementedError(absl::StrCat(
        "definition ", d.name, ": the GEMM reference computes C[M,N] = A[M,K]·B[N,K]^T in "
        "bfloat16 only"));
  }
  return std::string("cuBLAS");
}

// attention through cuDNN SDPA. Forward: Q, K, V -> O, LSE. Backward: Q, K,
// V, O, dO, L -> dQ, dK, dV. All [B,H,S,D] bf16 but the LSE/L, [B,H,S] fp32.
absl::StatusOr<std::string> Attention(const Definition& d) {
  // The tags say what to compute (definition.h). A name that says causal
  // without a tag that does is ambiguous: the native reference would compute
  // full attention, so it is not used for such a definition.
  if (absl::StrContains(d.name, "causal") && !IsCausal(d)) {
    return absl::UnimplementedError(absl::StrCat(
        "definition ", d.name, ": the name says causal but no tag does (\"causal:true\"); the "
        "native attention reference does not guess"));
  }
  const std::vector<TensorSpec>& in = d.inputs;
  const std::vector<TensorSpec>& out = d.outputs;
  const auto is4 = [&](const TensorSpec& t) { return Bf16(t) && t.shape == in[0].shape; };
  const auto is_lse = [&](const TensorSpec& t) {
    return t.dtype == "float32" && t.shape.size() == 3 &&
           std::equal(t.shape.begin(), t.shape.end(), in[0].shape.begin());
  };
  bool fits = !in.empty() && in[0].shape.size() == 4;
  if (fits && IsBackward(d)) {
    fits = in.size() == 6 && out.size() == 3 && is4(in[1]) && is4(in[2]) && is4(in[3]) &&
           is4(in[4]) && is_lse(in[5]) && is4(out[0]) && is4(out[1]) && is4(out[2]);
  } else if (fits) {
    fits = in.size() == 3 && out.size() == 2 && is4(in[1]) && is4(in[2]) && is4(out[0]) &&
           is_lse(out[1]);
  }
  if (!fits || !Bf16(in[0])) {
    return absl::UnimplementedError(absl::StrCat(
        "definition ", d.name, ": the attention reference computes [B,H,S,D] bfloat16 "
        "attention with a [B,H,S] float32 LSE (forward: Q,K,V -> O,LSE; backward: "
        "Q,K,V,O,dO,L -> dQ,dK,dV)"));
  }
  return std::string("cuDNN SDPA");
}

}  // namespace

absl::StatusOr<std::string> NativeReference(const Definition& d) {
  if (d.op_type == "gemm") return Gemm(d);
  if (d.op_type == "attention") return Attention(d);
  return absl::UnimplementedError(absl::StrCat("definition ", d.name, " (op_type ", d.op_type,
                                               "): this build has no native reference for it"));
}

absl::StatusOr<ReferenceKind> ChooseReference(const Definition& d) {
  const absl::StatusOr<std::string> native = NativeReference(d);
  if (native.ok()) return ReferenceKind::kNative;
  if (!absl::StripAsciiWhitespace(d.reference).empty()) return ReferenceKind::kPyTorch;
  return absl::FailedPreconditionError(absl::StrCat(
      "definition ", d.name, " has no reference to evaluate against: no native reference fits (",
      native.status().message(), ") and its \"reference\" holds no PyTorch code"));
}

}  // namespace ptxbench::workloads
