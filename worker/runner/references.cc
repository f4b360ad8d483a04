#include "worker/runner/references.h"

#include <cuda_bf16.h>

#include <algorithm>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "workloads/reference/gemm_reference.h"
#if PTXB_HAVE_CUDNN
#include "workloads/reference/attention_reference.h"
#endif
#include "workloads/reference/random.h"

namespace ptxbench::runner {
namespace {

uint64_t SplitMix64(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

// gemm: C[M,N] = A[M,K] · B[N,K]^T, bf16, through cuBLAS.
class GemmReference final : public Reference {
 public:
  GemmReference(std::unique_ptr<reference::CublasGemm> gemm, int m, int n, int k)
      : gemm_(std::move(gemm)), m_(m), n_(n), k_(k) {}
  std::string Name() const override { return "cuBLAS"; }
  absl::Status Run(const std::vector<TensorBuffer>& in, std::vector<TensorBuffer>& out,
                   cudaStream_t stream) override {
    return gemm_->Run(static_cast<const __nv_bfloat16*>(in[0].data()),
                      static_cast<const __nv_bfloat16*>(in[1].data()),
                      static_cast<__nv_bfloat16*>(out[0].data()), m_, n_, k_, stream);
  }

 private:
  std::unique_ptr<reference::CublasGemm> gemm_;
  int m_, n_, k_;
};

bool Bf16(const workloads::TensorSpec& t) { return t.dtype == "bfloat16"; }

absl::StatusOr<std::unique_ptr<Reference>> MakeGemm(const workloads::Definition& d,
                                                    const std::map<std::string, int64_t>& axes) {
  // The shape this reference computes: A [M,K], B [N,K] -> C [M,N], bf16.
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
  PTXB_ASSIGN_OR_RETURN(const std::vector<int64_t> a, workloads::TensorDims(d.inputs[0], axes));
  PTXB_ASSIGN_OR_RETURN(const std::vector<int64_t> b, workloads::TensorDims(d.inputs[1], axes));
  const int64_t m = a[0], k = a[1], n = b[0];
  PTXB_ASSIGN_OR_RETURN(std::unique_ptr<reference::CublasGemm> gemm, reference::CublasGemm::Create());
  return std::unique_ptr<Reference>(new GemmReference(std::move(gemm), static_cast<int>(m),
                                                      static_cast<int>(n), static_cast<int>(k)));
}

#if PTXB_HAVE_CUDNN
const __nv_bfloat16* Bf16In(const TensorBuffer& t) { return static_cast<const __nv_bfloat16*>(t.data()); }
__nv_bfloat16* Bf16Out(TensorBuffer& t) { return static_cast<__nv_bfloat16*>(t.data()); }

// Attention forward with LSE: Q, K, V -> O, LSE, through cuDNN SDPA.
class AttentionForwardReference final : public Reference {
 public:
  explicit AttentionForwardReference(std::unique_ptr<reference::CudnnAttention> attn)
      : attn_(std::move(attn)) {}
  std::string Name() const override { return "cuDNN SDPA"; }
  absl::Status Run(const std::vector<TensorBuffer>& in, std::vector<TensorBuffer>& out,
                   cudaStream_t stream) override {
    return attn_->Forward(Bf16In(in[0]), Bf16In(in[1]), Bf16In(in[2]), Bf16Out(out[0]),
                          static_cast<float*>(out[1].data()), stream);
  }

 private:
  std::unique_ptr<reference::CudnnAttention> attn_;
};

// Attention backward: Q, K, V, O, dO, L -> dQ, dK, dV. O and L are the
// forward's outputs for the same Q, K, V (WORKLOADS.md), so they are
// computed, not drawn.
class AttentionBackwardReference final : public Reference {
 public:
  explicit AttentionBackwardReference(std::unique_ptr<reference::CudnnAttention> attn)
      : attn_(std::move(attn)) {}
  std::string Name() const override { return "cuDNN SDPA"; }
  absl::Status FillInputs(uint64_t seed, std::vector<TensorBuffer>& in,
                          cudaStream_t stream) override {
    for (int i : {0, 1, 2, 4}) {  // Q, K, V, dO
      PTXB_RETURN_IF_ERROR(reference::FillStandardNormal(Bf16Out(in[i]), in[i].count,
                                                         InputSeed(seed, i), stream));
    }
    return attn_->Forward(Bf16In(in[0]), Bf16In(in[1]), Bf16In(in[2]), Bf16Out(in[3]),
                          static_cast<float*>(in[5].data()), stream);
  }
  absl::Status Run(const std::vector<TensorBuffer>& in, std::vector<TensorBuffer>& out,
                   cudaStream_t stream) override {
    return attn_->Backward(Bf16In(in[0]), Bf16In(in[1]), Bf16In(in[2]), Bf16In(in[3]),
                           Bf16In(in[4]), static_cast<const float*>(in[5].data()),
                           Bf16Out(out[0]), Bf16Out(out[1]), Bf16Out(out[2]), stream);
  }

 private:
  std::unique_ptr<reference::CudnnAttention> attn_;
};

absl::StatusOr<std::unique_ptr<Reference>> MakeAttention(
    const workloads::Definition& d, const std::map<std::string, int64_t>& axes) {
  const bool backward = workloads::IsBackward(d);
  // The tags say what to compute (definition.h). A name that says causal
  // without a tag that does is ambiguous: the native reference would compute
  // full attention, so it is not used for such a definition.
  if (absl::StrContains(d.name, "causal") && !workloads::IsCausal(d)) {
    return absl::UnimplementedError(absl::StrCat(
        "definition ", d.name, ": the name says causal but no tag does (\"causal:true\"); the "
        "native attention reference does not guess"));
  }
  // Forward: Q, K, V -> O, LSE. Backward: Q, K, V, O, dO, L -> dQ, dK, dV.
  // All [B,H,S,D] bf16 but the LSE/L, [B,H,S] fp32.
  const std::vector<workloads::TensorSpec>& in = d.inputs;
  const std::vector<workloads::TensorSpec>& out = d.outputs;
  const auto is4 = [&](const workloads::TensorSpec& t) {
    return Bf16(t) && t.shape == in[0].shape;
  };
  const auto is_lse = [&](const workloads::TensorSpec& t) {
    return t.dtype == "float32" && t.shape.size() == 3 &&
           std::equal(t.shape.begin(), t.shape.end(), in[0].shape.begin());
  };
  bool fits = !in.empty() && in[0].shape.size() == 4;
  if (fits && backward) {
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
  PTXB_ASSIGN_OR_RETURN(const std::vector<int64_t> q, workloads::TensorDims(in[0], axes));
  reference::AttentionShape shape;
  shape.batch = static_cast<int>(q[0]);
  shape.heads = static_cast<int>(q[1]);
  shape.seq = static_cast<int>(q[2]);
  shape.head_dim = static_cast<int>(q[3]);
  shape.causal = workloads::IsCausal(d);
  PTXB_ASSIGN_OR_RETURN(std::unique_ptr<reference::CudnnAttention> attn,
                        reference::CudnnAttention::Create(shape));
  if (backward) return std::unique_ptr<Reference>(new AttentionBackwardReference(std::move(attn)));
  return std::unique_ptr<Reference>(new AttentionForwardReference(std::move(attn)));
}
#endif  // PTXB_HAVE_CUDNN

}  // namespace

uint64_t InputSeed(uint64_t seed, int index) {
  return SplitMix64(seed ^ SplitMix64(static_cast<uint64_t>(index) + 1));
}

absl::Status Reference::FillInputs(uint64_t seed, std::vector<TensorBuffer>& inputs,
                                   cudaStream_t stream) {
  for (size_t i = 0; i < inputs.size(); ++i) {
    TensorBuffer& t = inputs[i];
    const uint64_t s = InputSeed(seed, static_cast<int>(i));
    if (t.type == ElementType::kBFloat16) {
      PTXB_RETURN_IF_ERROR(reference::FillStandardNormal(static_cast<__nv_bfloat16*>(t.data()),
                                                         t.count, s, stream));
    } else {
      PTXB_RETURN_IF_ERROR(
          reference::FillStandardNormal(static_cast<float*>(t.data()), t.count, s, stream));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<Reference>> MakeReference(
    const workloads::Definition& definition, const std::map<std::string, int64_t>& axes) {
  for (const workloads::TensorSpec& t : definition.inputs) {
    PTXB_RETURN_IF_ERROR(workloads::TensorDims(t, axes).status());
  }
  if (definition.op_type == "gemm") return MakeGemm(definition, axes);
#if PTXB_HAVE_CUDNN
  if (definition.op_type == "attention") return MakeAttention(definition, axes);
#endif
  return absl::UnimplementedError(absl::StrCat("definition ", definition.name, " (op_type ",
                                               definition.op_type,
                                               "): this build has no native reference for it"));
}

}  // namespace ptxbench::runner
