#include <algorithm>
#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "common/status_macros.h"
#include "workloads/reference/attention_reference.h"
#include "workloads/reference/cudnn_graph.h"

namespace ptxbench::reference {
namespace {

// UIDs of the tensors that appear in a variant pack, below the virtual
// tensors' (kFirstVirtualUid up, cudnn_graph.h).
enum Uid : int64_t {
  kUidQ = 1,
  kUidK,
  kUidV,
  kUidO,
  kUidStats,
  kUidDo,
  kUidDq,
  kUidDk,
  kUidDv,
  kUidScale,
  kUidNegInf,
  kUidOne,
  kUidDqAccum,
  kUidSoftmaxSum,
};
constexpr size_t kWorkspaceAlignment = 256;

size_t AlignUp(size_t n) {
  return (n + kWorkspaceAlignment - 1) / kWorkspaceAlignment * kWorkspaceAlignment;
}

// Dimensions shared by both graphs.
struct Layout {
  explicit Layout(const AttentionShape& s)
      : b(s.batch),
        h(s.heads),
        n(s.seq),
        d(s.head_dim),
        bhsd{b, h, n, d},
        bhds{b, h, d, n},
        bhss{b, h, n, n},
        bhs1{b, h, n, 1},
        // [B,H,S,D] memory read as [B,H,D,S] (K^T, V^T) ...
        transposed_bhsd_strides{h * n * d, n * d, 1, d},
        // ... and an [B,H,S,S] intermediate read transposed.
        transposed_bhss_strides{h * n * n, n * n, 1, n} {}
  int64_t b, h, n, d;
  Dims bhsd, bhds, bhss, bhs1;
  Dims transposed_bhsd_strides, transposed_bhss_strides;
};

// Replaces masked scores (key j > query i) with the most negative float,
// as cudnn-frontend's causal mask does: select(row >= col, x, lowest).
GraphBuilder::Tensor CausalMask(GraphBuilder& g, const Layout& l, GraphBuilder::Tensor scores,
                                GraphBuilder::Tensor neg_inf) {
  auto row = g.Pointwise("gen_index(row)", CUDNN_POINTWISE_GEN_INDEX, CUDNN_DATA_FLOAT, {scores},
                         g.Virtual("row index", CUDNN_DATA_INT32, l.bhss), /*axis=*/2);
  auto col = g.Pointwise("gen_index(col)", CUDNN_POINTWISE_GEN_INDEX, CUDNN_DATA_FLOAT, {scores},
                         g.Virtual("col index", CUDNN_DATA_INT32, l.bhss), /*axis=*/3);
  auto keep = g.Pointwise("row >= col", CUDNN_POINTWISE_CMP_GE, CUDNN_DATA_BOOLEAN, {row, col},
                          g.Virtual("causal keep", CUDNN_DATA_BOOLEAN, l.bhss));
  return g.Pointwise("causal select", CUDNN_POINTWISE_BINARY_SELECT, CUDNN_DATA_FLOAT,
                     {scores, neg_inf, keep}, g.Virtual("masked scores", CUDNN_DATA_FLOAT, l.bhss));
}

// O = softmax(scale · Q·K^T [+ causal mask]) · V, Stats = max + ln(sum exp):
// the composite graph that cuDNN's fused flash-attention engine matches.
absl::StatusOr<Plan> BuildForwardPlan(cudnnHandle_t handle, const AttentionShape& shape,
                                      std::vector<cudnnBackendDescriptor_t>* owned) {
  const Layout l(shape);
  GraphBuilder g(handle, "cuDNN SDPA forward graph", owned);
  constexpr auto kBf16 = CUDNN_DATA_BFLOAT16;
  constexpr auto kF32 = CUDNN_DATA_FLOAT;

  auto q = g.Global("Q", kUidQ, kBf16, l.bhsd, Packed(l.bhsd));
  auto kt = g.Global("K^T", kUidK, kBf16, l.bhds, l.transposed_bhsd_strides);
  auto v = g.Global("V", kUidV, kBf16, l.bhsd, Packed(l.bhsd));
  auto o = g.Global("O", kUidO, kBf16, l.bhsd, Packed(l.bhsd));
  auto stats = g.Global("Stats", kUidStats, kF32, l.bhs1, Packed(l.bhs1));
  auto scale = g.Scalar("attn_scale", kUidScale);

  auto s = g.Matmul("bmm1 Q·K^T", q, kt, g.Virtual("S", kF32, l.bhss));
  s = g.Pointwise("mul attn_scale", CUDNN_POINTWISE_MUL, kF32, {s, scale},
                  g.Virtual("S*scale", kF32, l.bhss));
  if (shape.causal) s = CausalMask(g, l, s, g.Scalar("neg_inf", kUidNegInf));

  auto max = g.Reduction("softmax max", CUDNN_REDUCE_TENSOR_MAX, s, g.Virtual("max", kF32, l.bhs1));
  auto sub = g.Pointwise("softmax sub max", CUDNN_POINTWISE_SUB, kF32, {s, max},
                         g.Virtual("S-max", kF32, l.bhss));
  auto e = g.Pointwise("softmax exp", CUDNN_POINTWISE_EXP, kF32, {sub},
                       g.Virtual("exp(S-max)", kF32, l.bhss));
  auto sum = g.Reduction("softmax sum", CUDNN_REDUCE_TENSOR_ADD, e, g.Virtual("sum", kF32, l.bhs1));
  auto log = g.Pointwise("softmax log sum", CUDNN_POINTWISE_LOG, kF32, {sum},
                         g.Virtual("log(sum)", kF32, l.bhs1));
  g.Pointwise("stats = max + log(sum)", CUDNN_POINTWISE_ADD, kF32, {max, log}, stats);
  // P goes into the second matmul in the I/O type, as the engine requires.
  auto p = g.Pointwise("softmax div", CUDNN_POINTWISE_DIV, kF32, {e, sum},
                       g.Virtual("P", kBf16, l.bhss));
  g.Matmul("bmm2 P·V", p, v, o);
  return g.Build();
}

// dQ, dK, dV from Q, K, V, O, dO and Stats, in the form cudnn-frontend
// gives cuDNN: P is recomputed from Stats; rowsum(dO*O) and the fp32 dQ
// accumulator are global tensors in the workspace.
absl::StatusOr<Plan> BuildBackwardPlan(cudnnHandle_t handle, const AttentionShape& shape,
                                       std::vector<cudnnBackendDescriptor_t>* owned) {
  const Layout l(shape);
  GraphBuilder g(handle, "cuDNN SDPA backward graph", owned);
  constexpr auto kBf16 = CUDNN_DATA_BFLOAT16;
  constexpr auto kF32 = CUDNN_DATA_FLOAT;
  const Dims packed = Packed(l.bhsd);

  auto q = g.Global("Q", kUidQ, kBf16, l.bhsd, packed);
  auto kt = g.Global("K^T", kUidK, kBf16, l.bhds, l.transposed_bhsd_strides);
  auto vt = g.Global("V^T", kUidV, kBf16, l.bhds, l.transposed_bhsd_strides);
  auto o = g.Global("O", kUidO, kBf16, l.bhsd, packed);
  auto d_o = g.Global("dO", kUidDo, kBf16, l.bhsd, packed);
  auto stats = g.Global("Stats", kUidStats, kF32, l.bhs1, Packed(l.bhs1));
  auto dq = g.Global("dQ", kUidDq, kBf16, l.bhsd, packed);
  auto dk = g.Global("dK", kUidDk, kBf16, l.bhsd, packed);
  auto dv = g.Global("dV", kUidDv, kBf16, l.bhsd, packed);
  auto dq_accum = g.Global("dQ accumulator", kUidDqAccum, kF32, l.bhsd, packed);
  auto softmax_sum = g.Global("rowsum(dO*O)", kUidSoftmaxSum, kF32, l.bhs1, Packed(l.bhs1));
  auto scale = g.Scalar("attn_scale", kUidScale);
  auto one = g.Scalar("one", kUidOne);

  // D_i = rowsum(dO * O)
  auto do_o =
      g.Pointwise("mul dO*O", CUDNN_POINTWISE_MUL, kF32, {d_o, o}, g.Virtual("dO*O", kF32, l.bhsd));
  auto rowsum =
      g.Reduction("reduce dO*O", CUDNN_REDUCE_TENSOR_ADD, do_o, g.Virtual("rowsum", kF32, l.bhs1));
  g.Pointwise("softmax_sum = rowsum * 1", CUDNN_POINTWISE_MUL, kF32, {rowsum, one}, softmax_sum);

  // P = exp(scale * Q·K^T - Stats), masked
  auto s = g.Matmul("bmm Q·K^T", q, kt, g.Virtual("S", kF32, l.bhss));
  s = g.Pointwise("mul attn_scale", CUDNN_POINTWISE_MUL, kF32, {s, scale},
                  g.Virtual("S*scale", kF32, l.bhss));
  s = g.Pointwise("sub stats", CUDNN_POINTWISE_SUB, kF32, {s, stats},
                  g.Virtual("S-stats", kF32, l.bhss));
  if (shape.causal) s = CausalMask(g, l, s, g.Scalar("neg_inf", kUidNegInf));
  auto p = g.Pointwise("exp", CUDNN_POINTWISE_EXP, kF32, {s}, g.Virtual("P", kF32, l.bhss));

  // dV = P^T · dO
  auto pt = g.Reshape("reshape P^T", p, g.Virtual("P^T", kBf16, l.bhss, l.transposed_bhss_strides));
  g.Matmul("bmm P^T·dO", pt, d_o, dv);

  // dS = P * (dO·V^T - D) * scale
  auto dp = g.Matmul("bmm dO·V^T", d_o, vt, g.Virtual("dP", kF32, l.bhss));
  auto ds = g.Pointwise("sub softmax_sum", CUDNN_POINTWISE_SUB, kF32, {dp, softmax_sum},
                        g.Virtual("dP-D", kF32, l.bhss));
  ds =
      g.Pointwise("mul P", CUDNN_POINTWISE_MUL, kF32, {ds, p}, g.Virtual("P*(dP-D)", kF32, l.bhss));
  ds = g.Pointwise("mul attn_scale (dS)", CUDNN_POINTWISE_MUL, kF32, {ds, scale},
                   g.Virtual("dS", kF32, l.bhss));

  // dK = dS^T · Q
  auto dst =
      g.Reshape("reshape dS^T", ds, g.Virtual("dS^T", kBf16, l.bhss, l.transposed_bhss_strides));
  g.Matmul("bmm dS^T·Q", dst, q, dk);

  // dQ = dS · K, accumulated in fp32, then converted
  auto k = g.Reshape("reshape K", kt, g.Virtual("K", kF32, l.bhsd));
  g.Matmul("bmm dS·K", ds, k, dq_accum);
  g.Pointwise("dQ = identity(dQ accumulator)", CUDNN_POINTWISE_IDENTITY, kF32, {dq_accum}, dq);
  return g.Build();
}

// Runs a plan with one variant pack built for this call (host-side only).
absl::Status Execute(cudnnHandle_t handle, cudnnBackendDescriptor_t plan,
                     const std::vector<int64_t>& uids, const std::vector<void*>& pointers,
                     void* workspace, absl::string_view what) {
  struct Pack {
    cudnnBackendDescriptor_t desc = nullptr;
    ~Pack() {
      if (desc != nullptr) cudnnBackendDestroyDescriptor(desc);
    }
  } pack;
  auto check = [&](cudnnStatus_t s, absl::string_view step) {
    return s == CUDNN_STATUS_SUCCESS ? absl::OkStatus()
                                     : CudnnError(s, absl::StrCat(what, ": ", step));
  };
  PTXB_RETURN_IF_ERROR(
      check(cudnnBackendCreateDescriptor(CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR, &pack.desc),
            "create variant pack"));
  PTXB_RETURN_IF_ERROR(check(
      cudnnBackendSetAttribute(pack.desc, CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS, CUDNN_TYPE_INT64,
                               static_cast<int64_t>(uids.size()), uids.data()),
      "set CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS"));
  PTXB_RETURN_IF_ERROR(
      check(cudnnBackendSetAttribute(pack.desc, CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS,
                                     CUDNN_TYPE_VOID_PTR, static_cast<int64_t>(pointers.size()),
                                     pointers.data()),
            "set CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS"));
  PTXB_RETURN_IF_ERROR(check(cudnnBackendSetAttribute(pack.desc, CUDNN_ATTR_VARIANT_PACK_WORKSPACE,
                                                      CUDNN_TYPE_VOID_PTR, 1, &workspace),
                             "set CUDNN_ATTR_VARIANT_PACK_WORKSPACE"));
  PTXB_RETURN_IF_ERROR(check(cudnnBackendFinalize(pack.desc), "finalize variant pack"));
  return check(cudnnBackendExecute(handle, plan, pack.desc), "cudnnBackendExecute");
}

absl::Status CudaStatus(cudaError_t err, absl::string_view what) {
  if (err == cudaSuccess) return absl::OkStatus();
  return absl::InternalError(
      absl::StrCat(what, ": ", cudaGetErrorName(err), ": ", cudaGetErrorString(err)));
}

}  // namespace

absl::Status ValidateAttentionShape(const AttentionShape& s) {
  if (s.batch <= 0 || s.heads <= 0 || s.seq <= 0 || s.head_dim <= 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("attention sizes must be positive, got B=", s.batch, " H=", s.heads,
                     " S=", s.seq, " D=", s.head_dim));
  }
  if (int64_t{s.batch} * s.heads > 65535) {
    return absl::InvalidArgumentError(
        absl::StrCat("B*H must be at most 65535, got ", int64_t{s.batch} * s.heads));
  }
  return absl::OkStatus();
}

float AttentionScale(const AttentionShape& shape) {
  return 1.0f / std::sqrt(static_cast<float>(shape.head_dim));
}

// ---------------------------------------------------------------------------
// CudnnAttention
// ---------------------------------------------------------------------------

absl::StatusOr<std::unique_ptr<CudnnAttention>> CudnnAttention::Create(
    const AttentionShape& shape) {
  PTXB_RETURN_IF_ERROR(ValidateAttentionShape(shape));
  const size_t version = cudnnGetVersion();
  // cuDNN <= 9.15's backward needs an extra padding mask when S % 128 != 0
  // (cudnn-frontend adds one); this reference does not build it.
  if (version <= 91500 && shape.seq % 128 != 0) {
    return absl::UnimplementedError(absl::StrCat(
        "cuDNN ", version, " attention backward needs S % 128 == 0 here, got S=", shape.seq));
  }
  auto attn = std::unique_ptr<CudnnAttention>(new CudnnAttention());
  attn->shape_ = shape;
  const cudnnStatus_t created = cudnnCreate(&attn->handle_);
  if (created != CUDNN_STATUS_SUCCESS) {
    attn->handle_ = nullptr;
    return CudnnError(created, "cudnnCreate");
  }
  PTXB_ASSIGN_OR_RETURN(Plan forward, BuildForwardPlan(attn->handle_, shape, &attn->descriptors_));
  PTXB_ASSIGN_OR_RETURN(Plan backward,
                        BuildBackwardPlan(attn->handle_, shape, &attn->descriptors_));
  attn->forward_plan_ = forward.plan;
  attn->backward_plan_ = backward.plan;
  attn->plan_summary_ =
      absl::StrCat("cuDNN ", version, "; ", forward.summary, "; ", backward.summary);

  // Layout: [plan workspace | dQ accumulator fp32 BHSD | rowsum(dO*O) fp32 BHS].
  const int64_t rows = int64_t{shape.batch} * shape.heads * shape.seq;
  attn->plan_workspace_bytes_ =
      AlignUp(static_cast<size_t>(std::max(forward.workspace_bytes, backward.workspace_bytes)));
  const size_t accum_bytes = AlignUp(static_cast<size_t>(rows) * shape.head_dim * sizeof(float));
  const size_t sum_bytes = AlignUp(static_cast<size_t>(rows) * sizeof(float));
  const size_t total = attn->plan_workspace_bytes_ + accum_bytes + sum_bytes;
  // Private to this process (device_memory.h): it holds the backward's
  // partial results.
  absl::StatusOr<DeviceMemory> workspace = DeviceMemory::Allocate(total);
  if (!workspace.ok()) {
    return absl::ResourceExhaustedError(absl::StrCat("the cuDNN attention workspace (", total,
                                                     " B): ", workspace.status().message()));
  }
  attn->workspace_ = *std::move(workspace);
  char* base = static_cast<char*>(attn->workspace_.data());
  attn->dq_accum_ = reinterpret_cast<float*>(base + attn->plan_workspace_bytes_);
  attn->softmax_sum_ = reinterpret_cast<float*>(base + attn->plan_workspace_bytes_ + accum_bytes);
  // From 9.6 the backward engine initializes the accumulator itself
  // (cudnn-frontend stops zeroing it there).
  attn->zero_dq_accum_ = version < 90600;
  return attn;
}

CudnnAttention::~CudnnAttention() {
  for (auto it = descriptors_.rbegin(); it != descriptors_.rend(); ++it) {
    cudnnBackendDestroyDescriptor(*it);
  }
  if (handle_ != nullptr) cudnnDestroy(handle_);
}

absl::Status CudnnAttention::Forward(const __nv_bfloat16* q, const __nv_bfloat16* k,
                                     const __nv_bfloat16* v, __nv_bfloat16* o, float* lse,
                                     cudaStream_t stream) {
  const cudnnStatus_t s = cudnnSetStream(handle_, stream);
  if (s != CUDNN_STATUS_SUCCESS) return CudnnError(s, "cudnnSetStream");
  float scale = AttentionScale(shape_);
  float neg_inf = std::numeric_limits<float>::lowest();
  std::vector<int64_t> uids = {kUidQ, kUidK, kUidV, kUidO, kUidStats, kUidScale};
  std::vector<void*> pointers = {const_cast<__nv_bfloat16*>(q),
                                 const_cast<__nv_bfloat16*>(k),
                                 const_cast<__nv_bfloat16*>(v),
                                 o,
                                 lse,
                                 &scale};
  if (shape_.causal) {
    uids.push_back(kUidNegInf);
    pointers.push_back(&neg_inf);
  }
  return Execute(handle_, forward_plan_, uids, pointers, workspace_.data(), "cuDNN SDPA forward");
}

absl::Status CudnnAttention::Backward(const __nv_bfloat16* q, const __nv_bfloat16* k,
                                      const __nv_bfloat16* v, const __nv_bfloat16* o,
                                      const __nv_bfloat16* d_o, const float* lse, __nv_bfloat16* dq,
                                      __nv_bfloat16* dk, __nv_bfloat16* dv, cudaStream_t stream) {
  const cudnnStatus_t s = cudnnSetStream(handle_, stream);
  if (s != CUDNN_STATUS_SUCCESS) return CudnnError(s, "cudnnSetStream");
  if (zero_dq_accum_) {
    const size_t bytes = static_cast<size_t>(shape_.batch) * shape_.heads * shape_.seq *
                         shape_.head_dim * sizeof(float);
    PTXB_RETURN_IF_ERROR(
        CudaStatus(cudaMemsetAsync(dq_accum_, 0, bytes, stream), "zeroing the dQ accumulator"));
  }
  float scale = AttentionScale(shape_);
  float one = 1.0f;
  float neg_inf = std::numeric_limits<float>::lowest();
  auto in = [](const void* p) { return const_cast<void*>(p); };
  std::vector<int64_t> uids = {kUidQ,          kUidK,     kUidV,  kUidO,  kUidDo,
                               kUidStats,      kUidDq,    kUidDk, kUidDv, kUidDqAccum,
                               kUidSoftmaxSum, kUidScale, kUidOne};
  std::vector<void*> pointers = {in(q), in(k), in(v),     in(o),        in(d_o), in(lse), dq,
                                 dk,    dv,    dq_accum_, softmax_sum_, &scale,  &one};
  if (shape_.causal) {
    uids.push_back(kUidNegInf);
    pointers.push_back(&neg_inf);
  }
  return Execute(handle_, backward_plan_, uids, pointers, workspace_.data(), "cuDNN SDPA backward");
}

}  // namespace ptxbench::reference
