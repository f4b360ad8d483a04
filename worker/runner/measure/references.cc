#include "worker/runner/measure/references.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>

#include <algorithm>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "workloads/native_reference.h"
#include "workloads/reference/gemm_reference.h"
#if PTXB_HAVE_CUDNN
#include "workloads/reference/attention_reference.h"
#endif
#include "workloads/reference/philox.h"
#include "workloads/reference/random.h"

namespace ptxbench::runner {
namespace {

using reference::SplitMix64;

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

// Called once NativeReference said cuBLAS computes `d`.
absl::StatusOr<std::unique_ptr<Reference>> MakeGemm(const workloads::Definition& d,
                                                    const std::map<std::string, int64_t>& axes) {
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
  absl::Status FillInputs(uint64_t seed, workloads::InputDistribution distribution,
                          std::vector<TensorBuffer>& in, const std::vector<bool>& fixed,
                          cudaStream_t stream) override {
    // Q, K, V, dO drawn (unless fixed); O and L computed from Q, K, V unless
    // the workload gives both.
    std::vector<bool> not_drawn = fixed;
    not_drawn[3] = not_drawn[5] = true;
    PTXB_RETURN_IF_ERROR(Reference::FillInputs(seed, distribution, in, not_drawn, stream));
    if (fixed[3] && fixed[5]) return absl::OkStatus();
    if (fixed[3] || fixed[5]) {
      return absl::UnimplementedError(
          "the attention backward's O and L are the forward's outputs for Q, K, V: a workload "
          "gives both or neither");
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

// Called once NativeReference said cuDNN computes `d`.
absl::StatusOr<std::unique_ptr<Reference>> MakeAttention(
    const workloads::Definition& d, const std::map<std::string, int64_t>& axes) {
  const bool backward = workloads::IsBackward(d);
  PTXB_ASSIGN_OR_RETURN(const std::vector<int64_t> q, workloads::TensorDims(d.inputs[0], axes));
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

absl::Status FillRandom(TensorBuffer& t, uint64_t s, workloads::InputScaling scale,
                        cudaStream_t stream) {
  namespace r = reference;
  void* p = t.data();
  const int64_t n = t.count;
  const float f = scale.factor;
  const int64_t one_in = scale.one_in;
  switch (t.dtype()) {
    case ptxb::DType::kFloat32:
      return r::FillStandardNormal(static_cast<float*>(p), n, s, stream, f, one_in);
    case ptxb::DType::kFloat16:
      return r::FillStandardNormal(static_cast<__half*>(p), n, s, stream, f, one_in);
    case ptxb::DType::kBFloat16:
      return r::FillStandardNormal(static_cast<__nv_bfloat16*>(p), n, s, stream, f, one_in);
    case ptxb::DType::kFloat8E4M3FN:
      return r::FillStandardNormal(static_cast<__nv_fp8_e4m3*>(p), n, s, stream, f, one_in);
    case ptxb::DType::kFloat8E5M2:
      return r::FillStandardNormal(static_cast<__nv_fp8_e5m2*>(p), n, s, stream, f, one_in);
    case ptxb::DType::kInt64:
      return r::FillUniformInt(static_cast<int64_t*>(p), n, -1024, 1024, s, stream);
    case ptxb::DType::kInt32:
      return r::FillUniformInt(static_cast<int32_t*>(p), n, -1024, 1024, s, stream);
    case ptxb::DType::kInt16:
      return r::FillUniformInt(static_cast<int16_t*>(p), n, -1024, 1024, s, stream);
    case ptxb::DType::kInt8: return r::FillUniformInt(static_cast<int8_t*>(p), n, -128, 128, s, stream);
    case ptxb::DType::kBool: return r::FillUniformInt(static_cast<uint8_t*>(p), n, 0, 2, s, stream);
    default:
      return absl::UnimplementedError(absl::StrCat("input ", t.name, ": no random source for its dtype"));
  }
}

}  // namespace

uint64_t InputSeed(uint64_t seed, int index) {
  return SplitMix64(seed ^ SplitMix64(static_cast<uint64_t>(index) + 1));
}

absl::Status Reference::FillInputs(uint64_t seed, workloads::InputDistribution distribution,
                                   std::vector<TensorBuffer>& inputs,
                                   const std::vector<bool>& fixed, cudaStream_t stream) {
  const workloads::InputScaling scale = workloads::ScalingOf(distribution);
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (fixed[i]) continue;
    PTXB_RETURN_IF_ERROR(
        FillRandom(inputs[i], InputSeed(seed, static_cast<int>(i)), scale, stream));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<Reference>> MakeReference(
    const workloads::Definition& definition, const std::map<std::string, int64_t>& axes) {
  for (const workloads::TensorSpec& t : definition.inputs) {
    PTXB_RETURN_IF_ERROR(workloads::TensorDims(t, axes).status());
  }
  PTXB_RETURN_IF_ERROR(workloads::NativeReference(definition).status());
  if (definition.op_type == "gemm") return MakeGemm(definition, axes);
#if PTXB_HAVE_CUDNN
  if (definition.op_type == "attention") return MakeAttention(definition, axes);
#endif
  return absl::UnimplementedError(absl::StrCat("definition ", definition.name, " (op_type ",
                                               definition.op_type,
                                               "): this build has no cuDNN for its reference"));
}

}  // namespace ptxbench::runner
