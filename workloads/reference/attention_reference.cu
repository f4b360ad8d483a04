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
#include "absl/strings/str_replace.h"
#include "absl/strings/string_view.h"
#include "common/status_macros.h"
#include "workloads/reference/attention_reference.h"

namespace ptxbench::reference {
namespace {

// ---------------------------------------------------------------------------
// cuDNN backend plumbing
// ---------------------------------------------------------------------------

using Dims = std::vector<int64_t>;

// UIDs of the tensors that appear in a variant pack. Virtual tensors get
// UIDs from kFirstVirtualUid up.
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
constexpr int64_t kFirstVirtualUid = 100;
constexpr int64_t kTensorAlignment = 16;  // bytes; cudnn-frontend's default
constexpr size_t kWorkspaceAlignment = 256;

size_t AlignUp(size_t n) {
  return (n + kWorkspaceAlignment - 1) / kWorkspaceAlignment * kWorkspaceAlignment;
}

Dims Packed(const Dims& dims) {
  Dims strides(dims.size(), 1);
  for (int i = static_cast<int>(dims.size()) - 2; i >= 0; --i)
    strides[i] = strides[i + 1] * dims[i + 1];
  return strides;
}

// "<where>: CUDNN_STATUS_X (cuDNN's last error message)" on one line. The
// NOT_SUPPORTED family is kUnimplemented (no engine for this graph here);
// everything else is kInternal.
absl::Status CudnnError(cudnnStatus_t status, absl::string_view where) {
  std::string message = absl::StrCat(where, ": ", cudnnGetErrorString(status));
  char detail[1024] = {0};
  cudnnGetLastErrorString(detail, sizeof(detail));
  if (detail[0] != '\0') {
    absl::StrAppend(&message, " (", absl::StrReplaceAll(detail, {{"\n", " "}, {"\r", " "}}), ")");
  }
  if (CUDNN_STATUS_CATEGORY(status) == CUDNN_STATUS_NOT_SUPPORTED) {
    return absl::UnimplementedError(message);
  }
  return absl::InternalError(message);
}

// A finalized execution plan and what it needs at run time.
struct Plan {
  cudnnBackendDescriptor_t plan = nullptr;
  int64_t workspace_bytes = 0;
  std::string summary;
};

// Builds one operation graph through the backend API and turns it into an
// execution plan. Errors are sticky: after the first failure every call is a
// no-op and Build() returns that failure, which names the graph, the
// descriptor and the attribute, so the graph code reads as a list of
// operations. Every descriptor created is appended to `owned`, whose owner
// destroys them (plans refer to the graph, the graph to its operations).
class GraphBuilder {
 public:
  using Tensor = cudnnBackendDescriptor_t;

  GraphBuilder(cudnnHandle_t handle, std::string graph_name,
               std::vector<cudnnBackendDescriptor_t>* owned)
      : handle_(handle), graph_name_(std::move(graph_name)), owned_(owned) {}

  // A tensor in the variant pack (caller's buffer or workspace).
  Tensor Global(const char* name, int64_t uid, cudnnDataType_t type, const Dims& dims,
                const Dims& strides) {
    return MakeTensor(name, uid, type, dims, strides, /*is_virtual=*/false, /*by_value=*/false);
  }
  // An fp32 scalar passed by value (host pointer in the variant pack).
  Tensor Scalar(const char* name, int64_t uid) {
    return MakeTensor(name, uid, CUDNN_DATA_FLOAT, {1, 1, 1, 1}, {1, 1, 1, 1}, false, true);
  }
  // An intermediate the fused engine never writes to memory.
  Tensor Virtual(const char* name, cudnnDataType_t type, const Dims& dims) {
    return Virtual(name, type, dims, Packed(dims));
  }
  Tensor Virtual(const char* name, cudnnDataType_t type, const Dims& dims, const Dims& strides) {
    return MakeTensor(name, next_virtual_uid_++, type, dims, strides, true, false);
  }

  // y = mode(inputs...): inputs are X, then B, then T (BINARY_SELECT's mask).
  // `axis` only for GEN_INDEX. Returns y.
  Tensor Pointwise(const char* name, cudnnPointwiseMode_t mode, cudnnDataType_t math_precision,
                   std::initializer_list<Tensor> inputs, Tensor y, int64_t axis = -1) {
    Desc pw = Create(CUDNN_BACKEND_POINTWISE_DESCRIPTOR, name);
    Set(pw, CUDNN_ATTR_POINTWISE_MODE, "CUDNN_ATTR_POINTWISE_MODE", CUDNN_TYPE_POINTWISE_MODE, 1,
        &mode);
    Set(pw, CUDNN_ATTR_POINTWISE_MATH_PREC, "CUDNN_ATTR_POINTWISE_MATH_PREC", CUDNN_TYPE_DATA_TYPE,
        1, &math_precision);
    if (axis >= 0) {
      Set(pw, CUDNN_ATTR_POINTWISE_AXIS, "CUDNN_ATTR_POINTWISE_AXIS", CUDNN_TYPE_INT64, 1, &axis);
    }
    Finalize(pw);
    Desc op = Create(CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR, name);
    SetDesc(op, CUDNN_ATTR_OPERATION_POINTWISE_PW_DESCRIPTOR,
            "CUDNN_ATTR_OPERATION_POINTWISE_PW_DESCRIPTOR", pw.desc);
    static constexpr std::pair<cudnnBackendAttributeName_t, const char*> kInputAttrs[] = {
        {CUDNN_ATTR_OPERATION_POINTWISE_XDESC, "CUDNN_ATTR_OPERATION_POINTWISE_XDESC"},
        {CUDNN_ATTR_OPERATION_POINTWISE_BDESC, "CUDNN_ATTR_OPERATION_POINTWISE_BDESC"},
        {CUDNN_ATTR_OPERATION_POINTWISE_TDESC, "CUDNN_ATTR_OPERATION_POINTWISE_TDESC"},
    };
    int slot = 0;
    for (Tensor input : inputs) {
      SetDesc(op, kInputAttrs[slot].first, kInputAttrs[slot].second, input);
      ++slot;
    }
    SetDesc(op, CUDNN_ATTR_OPERATION_POINTWISE_YDESC, "CUDNN_ATTR_OPERATION_POINTWISE_YDESC", y);
    AddOperation(op);
    return y;
  }

  // c = a · b over the last two dimensions, fp32 accumulation.
  Tensor Matmul(const char* name, Tensor a, Tensor b, Tensor c) {
    Desc mm = Create(CUDNN_BACKEND_MATMUL_DESCRIPTOR, name);
    const cudnnDataType_t compute = CUDNN_DATA_FLOAT;
    Set(mm, CUDNN_ATTR_MATMUL_COMP_TYPE, "CUDNN_ATTR_MATMUL_COMP_TYPE", CUDNN_TYPE_DATA_TYPE, 1,
        &compute);
    Finalize(mm);
    Desc op = Create(CUDNN_BACKEND_OPERATION_MATMUL_DESCRIPTOR, name);
    SetDesc(op, CUDNN_ATTR_OPERATION_MATMUL_ADESC, "CUDNN_ATTR_OPERATION_MATMUL_ADESC", a);
    SetDesc(op, CUDNN_ATTR_OPERATION_MATMUL_BDESC, "CUDNN_ATTR_OPERATION_MATMUL_BDESC", b);
    SetDesc(op, CUDNN_ATTR_OPERATION_MATMUL_CDESC, "CUDNN_ATTR_OPERATION_MATMUL_CDESC", c);
    SetDesc(op, CUDNN_ATTR_OPERATION_MATMUL_DESC, "CUDNN_ATTR_OPERATION_MATMUL_DESC", mm.desc);
    AddOperation(op);
    return c;
  }

  // y = reduce(x) over the dimensions where y has extent 1, fp32.
  Tensor Reduction(const char* name, cudnnReduceTensorOp_t reduce_op, Tensor x, Tensor y) {
    Desc red = Create(CUDNN_BACKEND_REDUCTION_DESCRIPTOR, name);
    Set(red, CUDNN_ATTR_REDUCTION_OPERATOR, "CUDNN_ATTR_REDUCTION_OPERATOR",
        CUDNN_TYPE_REDUCTION_OPERATOR_TYPE, 1, &reduce_op);
    const cudnnDataType_t compute = CUDNN_DATA_FLOAT;
    Set(red, CUDNN_ATTR_REDUCTION_COMP_TYPE, "CUDNN_ATTR_REDUCTION_COMP_TYPE", CUDNN_TYPE_DATA_TYPE,
        1, &compute);
    Finalize(red);
    Desc op = Create(CUDNN_BACKEND_OPERATION_REDUCTION_DESCRIPTOR, name);
    SetDesc(op, CUDNN_ATTR_OPERATION_REDUCTION_XDESC, "CUDNN_ATTR_OPERATION_REDUCTION_XDESC", x);
    SetDesc(op, CUDNN_ATTR_OPERATION_REDUCTION_YDESC, "CUDNN_ATTR_OPERATION_REDUCTION_YDESC", y);
    SetDesc(op, CUDNN_ATTR_OPERATION_REDUCTION_DESC, "CUDNN_ATTR_OPERATION_REDUCTION_DESC",
            red.desc);
    AddOperation(op);
    return y;
  }

  // y = x viewed with y's dimensions and strides (used for transposes).
  Tensor Reshape(const char* name, Tensor x, Tensor y) {
    Desc op = Create(CUDNN_BACKEND_OPERATION_RESHAPE_DESCRIPTOR, name);
    SetDesc(op, CUDNN_ATTR_OPERATION_RESHAPE_XDESC, "CUDNN_ATTR_OPERATION_RESHAPE_XDESC", x);
    SetDesc(op, CUDNN_ATTR_OPERATION_RESHAPE_YDESC, "CUDNN_ATTR_OPERATION_RESHAPE_YDESC", y);
    AddOperation(op);
    return y;
  }

  // Finalizes the operation graph, asks the heuristics (mode A) for engine
  // configs and returns the first one whose execution plan finalizes.
  absl::StatusOr<Plan> Build() {
    Desc graph = Create(CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR, "operation graph");
    // Deprecated in recent cuDNN 9 releases but required by older ones.
    Set(graph, CUDNN_ATTR_OPERATIONGRAPH_HANDLE, "CUDNN_ATTR_OPERATIONGRAPH_HANDLE",
        CUDNN_TYPE_HANDLE, 1, &handle_);
    Set(graph, CUDNN_ATTR_OPERATIONGRAPH_OPS, "CUDNN_ATTR_OPERATIONGRAPH_OPS",
        CUDNN_TYPE_BACKEND_DESCRIPTOR, static_cast<int64_t>(ops_.size()), ops_.data());
    Finalize(graph);

    Desc heuristics = Create(CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR, "heuristics");
    SetDesc(heuristics, CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH,
            "CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH", graph.desc);
    const cudnnBackendHeurMode_t mode = CUDNN_HEUR_MODE_A;
    Set(heuristics, CUDNN_ATTR_ENGINEHEUR_MODE, "CUDNN_ATTR_ENGINEHEUR_MODE", CUDNN_TYPE_HEUR_MODE,
        1, &mode);
    Finalize(heuristics);
    PTXB_RETURN_IF_ERROR(status_);

    int64_t count = 0;
    Check(cudnnBackendGetAttribute(heuristics.desc, CUDNN_ATTR_ENGINEHEUR_RESULTS,
                                   CUDNN_TYPE_BACKEND_DESCRIPTOR, 0, &count, nullptr),
          "heuristics", "get CUDNN_ATTR_ENGINEHEUR_RESULTS count");
    PTXB_RETURN_IF_ERROR(status_);
    if (count == 0) {
      return absl::UnimplementedError(
          absl::StrCat(graph_name_, ": heuristics (CUDNN_HEUR_MODE_A) returned no engine config"));
    }
    std::vector<cudnnBackendDescriptor_t> configs;
    for (int64_t i = 0; i < count; ++i) {
      configs.push_back(Create(CUDNN_BACKEND_ENGINECFG_DESCRIPTOR, "engine config").desc);
    }
    PTXB_RETURN_IF_ERROR(status_);
    int64_t returned = 0;
    Check(cudnnBackendGetAttribute(heuristics.desc, CUDNN_ATTR_ENGINEHEUR_RESULTS,
                                   CUDNN_TYPE_BACKEND_DESCRIPTOR, count, &returned, configs.data()),
          "heuristics", "get CUDNN_ATTR_ENGINEHEUR_RESULTS");
    PTXB_RETURN_IF_ERROR(status_);

    // Configs that the heuristics rank but this GPU/driver cannot run fail
    // at plan finalization; try the next one.
    absl::Status first_failure;
    for (int64_t i = 0; i < returned; ++i) {
      Desc plan = Create(CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR, "execution plan");
      Set(plan, CUDNN_ATTR_EXECUTION_PLAN_HANDLE, "CUDNN_ATTR_EXECUTION_PLAN_HANDLE",
          CUDNN_TYPE_HANDLE, 1, &handle_);
      SetDesc(plan, CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG,
              "CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG", configs[i]);
      PTXB_RETURN_IF_ERROR(status_);
      const cudnnStatus_t finalized = cudnnBackendFinalize(plan.desc);
      if (finalized != CUDNN_STATUS_SUCCESS) {
        first_failure.Update(CudnnError(
            finalized, absl::StrCat(graph_name_, ": finalize execution plan for engine config ",
                                    i + 1, " of ", returned)));
        continue;
      }
      Plan result;
      result.plan = plan.desc;
      int64_t n = 0;
      Check(cudnnBackendGetAttribute(plan.desc, CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE,
                                     CUDNN_TYPE_INT64, 1, &n, &result.workspace_bytes),
            "execution plan", "get CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE");
      PTXB_RETURN_IF_ERROR(status_);
      result.summary =
          absl::StrCat(graph_name_, ": engine ", EngineIndex(configs[i]), " (config ", i + 1,
                       " of ", returned, "), workspace ", result.workspace_bytes, " B");
      return result;
    }
    if (first_failure.ok()) {
      return absl::UnimplementedError(absl::StrCat(graph_name_, ": no engine config to try"));
    }
    return absl::Status(first_failure.code(),
                        absl::StrCat("no engine config of ", returned,
                                     " finalized; first failure: ", first_failure.message()));
  }

 private:
  struct Desc {
    cudnnBackendDescriptor_t desc = nullptr;
    const char* name = "";
  };

  Desc Create(cudnnBackendDescriptorType_t type, const char* name) {
    Desc d{nullptr, name};
    if (!status_.ok()) return d;
    Check(cudnnBackendCreateDescriptor(type, &d.desc), name, "create");
    if (d.desc != nullptr) owned_->push_back(d.desc);
    return d;
  }
  void Set(const Desc& d, cudnnBackendAttributeName_t attr, const char* attr_name,
           cudnnBackendAttributeType_t type, int64_t count, const void* value) {
    if (!status_.ok()) return;
    Check(cudnnBackendSetAttribute(d.desc, attr, type, count, value), d.name,
          absl::StrCat("set ", attr_name));
  }
  void SetDesc(const Desc& d, cudnnBackendAttributeName_t attr, const char* attr_name,
               cudnnBackendDescriptor_t value) {
    Set(d, attr, attr_name, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &value);
  }
  void Finalize(const Desc& d) {
    if (!status_.ok()) return;
    Check(cudnnBackendFinalize(d.desc), d.name, "finalize");
  }
  void Check(cudnnStatus_t s, absl::string_view what, absl::string_view step) {
    if (s != CUDNN_STATUS_SUCCESS) {
      status_.Update(CudnnError(s, absl::StrCat(graph_name_, ": ", what, ": ", step)));
    }
  }
  void AddOperation(const Desc& op) {
    Finalize(op);
    if (status_.ok()) ops_.push_back(op.desc);
  }

  Tensor MakeTensor(const char* name, int64_t uid, cudnnDataType_t type, const Dims& dims,
                    const Dims& strides, bool is_virtual, bool by_value) {
    Desc t = Create(CUDNN_BACKEND_TENSOR_DESCRIPTOR, name);
    Set(t, CUDNN_ATTR_TENSOR_DATA_TYPE, "CUDNN_ATTR_TENSOR_DATA_TYPE", CUDNN_TYPE_DATA_TYPE, 1,
        &type);
    Set(t, CUDNN_ATTR_TENSOR_DIMENSIONS, "CUDNN_ATTR_TENSOR_DIMENSIONS", CUDNN_TYPE_INT64,
        static_cast<int64_t>(dims.size()), dims.data());
    Set(t, CUDNN_ATTR_TENSOR_STRIDES, "CUDNN_ATTR_TENSOR_STRIDES", CUDNN_TYPE_INT64,
        static_cast<int64_t>(strides.size()), strides.data());
    Set(t, CUDNN_ATTR_TENSOR_UNIQUE_ID, "CUDNN_ATTR_TENSOR_UNIQUE_ID", CUDNN_TYPE_INT64, 1, &uid);
    Set(t, CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, "CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT", CUDNN_TYPE_INT64,
        1, &kTensorAlignment);
    Set(t, CUDNN_ATTR_TENSOR_IS_VIRTUAL, "CUDNN_ATTR_TENSOR_IS_VIRTUAL", CUDNN_TYPE_BOOLEAN, 1,
        &is_virtual);
    if (by_value) {
      Set(t, CUDNN_ATTR_TENSOR_IS_BY_VALUE, "CUDNN_ATTR_TENSOR_IS_BY_VALUE", CUDNN_TYPE_BOOLEAN, 1,
          &by_value);
    }
    Finalize(t);
    return t.desc;
  }

  // The engine's global index, for logs; -1 if it cannot be read.
  int64_t EngineIndex(cudnnBackendDescriptor_t config) {
    cudnnBackendDescriptor_t engine = nullptr;
    if (cudnnBackendCreateDescriptor(CUDNN_BACKEND_ENGINE_DESCRIPTOR, &engine) !=
        CUDNN_STATUS_SUCCESS) {
      return -1;
    }
    owned_->push_back(engine);
    int64_t n = 0, index = -1;
    if (cudnnBackendGetAttribute(config, CUDNN_ATTR_ENGINECFG_ENGINE, CUDNN_TYPE_BACKEND_DESCRIPTOR,
                                 1, &n, &engine) != CUDNN_STATUS_SUCCESS ||
        cudnnBackendGetAttribute(engine, CUDNN_ATTR_ENGINE_GLOBAL_INDEX, CUDNN_TYPE_INT64, 1, &n,
                                 &index) != CUDNN_STATUS_SUCCESS) {
      return -1;
    }
    return index;
  }

  cudnnHandle_t handle_;
  std::string graph_name_;
  std::vector<cudnnBackendDescriptor_t>* owned_;
  std::vector<cudnnBackendDescriptor_t> ops_;
  int64_t next_virtual_uid_ = kFirstVirtualUid;
  absl::Status status_;
};

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

absl::Status ValidateShape(const AttentionShape& s) {
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

// ---------------------------------------------------------------------------
// fp32 validation kernels
// ---------------------------------------------------------------------------

constexpr int kThreads = 128;  // a multiple of 32

struct MaxOp {
  __device__ float operator()(float a, float b) const { return fmaxf(a, b); }
};
struct SumOp {
  __device__ float operator()(float a, float b) const { return a + b; }
};

// Every thread gets op over all threads' values. `scratch` holds 32 floats.
template <typename Op>
__device__ float BlockReduce(float value, float* scratch, Op op) {
  for (int offset = 16; offset > 0; offset >>= 1) {
    value = op(value, __shfl_xor_sync(0xffffffffu, value, offset));
  }
  __syncthreads();  // scratch may still be read by a previous reduction
  if (threadIdx.x % 32 == 0) scratch[threadIdx.x / 32] = value;
  __syncthreads();
  value = scratch[0];
  for (int w = 1; w < static_cast<int>(blockDim.x / 32); ++w) value = op(value, scratch[w]);
  return value;
}

__device__ float Dot(const float* a, const __nv_bfloat16* b, int d) {
  float acc = 0.0f;
  for (int t = 0; t < d; ++t) acc = fmaf(a[t], __bfloat162float(b[t]), acc);
  return acc;
}

__device__ float Dot(const __nv_bfloat16* a, const float* b, int d) { return Dot(b, a, d); }

// One block per (query row i, batch*head). Scores of the row in shared memory.
__global__ void ForwardRowKernel(const __nv_bfloat16* __restrict__ q,
                                 const __nv_bfloat16* __restrict__ k,
                                 const __nv_bfloat16* __restrict__ v, float* __restrict__ o,
                                 float* __restrict__ lse, int s, int d, bool causal, float scale) {
  extern __shared__ float smem[];
  float* p = smem;          // [s]
  float* qi = p + s;        // [d]
  float* scratch = qi + d;  // [32]
  const int i = blockIdx.x;
  const int64_t head = static_cast<int64_t>(blockIdx.y) * s * d;
  const int64_t row = static_cast<int64_t>(blockIdx.y) * s + i;
  for (int t = threadIdx.x; t < d; t += blockDim.x) qi[t] = __bfloat162float(q[row * d + t]);
  __syncthreads();
  const int n = causal ? i + 1 : s;
  float local_max = -INFINITY;
  for (int j = threadIdx.x; j < n; j += blockDim.x) {
    p[j] = scale * Dot(qi, k + head + static_cast<int64_t>(j) * d, d);
    local_max = fmaxf(local_max, p[j]);
  }
  const float m = BlockReduce(local_max, scratch, MaxOp{});
  float local_sum = 0.0f;
  for (int j = threadIdx.x; j < n; j += blockDim.x) {
    p[j] = expf(p[j] - m);
    local_sum += p[j];
  }
  const float l = BlockReduce(local_sum, scratch, SumOp{});
  __syncthreads();
  for (int t = threadIdx.x; t < d; t += blockDim.x) {
    float acc = 0.0f;
    for (int j = 0; j < n; ++j) {
      acc = fmaf(p[j], __bfloat162float(v[head + static_cast<int64_t>(j) * d + t]), acc);
    }
    o[row * d + t] = acc / l;
  }
  if (threadIdx.x == 0) lse[row] = m + logf(l);
}

// One block per query row: D_i = dO_i·O_i, dS_ij = P_ij (dO_i·V_j - D_i),
// dQ_i = scale * sum_j dS_ij K_j.
__global__ void BackwardRowKernel(const __nv_bfloat16* __restrict__ q,
                                  const __nv_bfloat16* __restrict__ k,
                                  const __nv_bfloat16* __restrict__ v,
                                  const __nv_bfloat16* __restrict__ d_o,
                                  const float* __restrict__ o, const float* __restrict__ lse,
                                  float* __restrict__ delta, float* __restrict__ dq, int s, int d,
                                  bool causal, float scale) {
  extern __shared__ float smem[];
  float* ds = smem;          // [s]
  float* qi = ds + s;        // [d]
  float* doi = qi + d;       // [d]
  float* scratch = doi + d;  // [32]
  const int i = blockIdx.x;
  const int64_t head = static_cast<int64_t>(blockIdx.y) * s * d;
  const int64_t row = static_cast<int64_t>(blockIdx.y) * s + i;
  float part = 0.0f;
  for (int t = threadIdx.x; t < d; t += blockDim.x) {
    qi[t] = __bfloat162float(q[row * d + t]);
    doi[t] = __bfloat162float(d_o[row * d + t]);
    part = fmaf(doi[t], o[row * d + t], part);
  }
  const float di = BlockReduce(part, scratch, SumOp{});  // also orders qi/doi writes
  if (threadIdx.x == 0) delta[row] = di;
  const float li = lse[row];
  const int n = causal ? i + 1 : s;
  for (int j = threadIdx.x; j < n; j += blockDim.x) {
    const int64_t kv = head + static_cast<int64_t>(j) * d;
    const float pij = expf(scale * Dot(qi, k + kv, d) - li);
    ds[j] = pij * (Dot(doi, v + kv, d) - di);
  }
  __syncthreads();
  for (int t = threadIdx.x; t < d; t += blockDim.x) {
    float acc = 0.0f;
    for (int j = 0; j < n; ++j) {
      acc = fmaf(ds[j], __bfloat162float(k[head + static_cast<int64_t>(j) * d + t]), acc);
    }
    dq[row * d + t] = scale * acc;
  }
}

// One block per key row j: dK_j = scale * sum_i dS_ij Q_i, dV_j = sum_i P_ij dO_i.
__global__ void BackwardColumnKernel(const __nv_bfloat16* __restrict__ q,
                                     const __nv_bfloat16* __restrict__ k,
                                     const __nv_bfloat16* __restrict__ v,
                                     const __nv_bfloat16* __restrict__ d_o,
                                     const float* __restrict__ lse, const float* __restrict__ delta,
                                     float* __restrict__ dk, float* __restrict__ dv, int s, int d,
                                     bool causal, float scale) {
  extern __shared__ float smem[];
  float* ds = smem;    // [s]
  float* p = ds + s;   // [s]
  float* kj = p + s;   // [d]
  float* vj = kj + d;  // [d]
  const int j = blockIdx.x;
  const int64_t head = static_cast<int64_t>(blockIdx.y) * s * d;
  const int64_t row = static_cast<int64_t>(blockIdx.y) * s + j;
  const int64_t stats = static_cast<int64_t>(blockIdx.y) * s;
  for (int t = threadIdx.x; t < d; t += blockDim.x) {
    kj[t] = __bfloat162float(k[row * d + t]);
    vj[t] = __bfloat162float(v[row * d + t]);
  }
  __syncthreads();
  const int first = causal ? j : 0;
  for (int i = first + threadIdx.x; i < s; i += blockDim.x) {
    const int64_t qo = head + static_cast<int64_t>(i) * d;
    const float pij = expf(scale * Dot(q + qo, kj, d) - lse[stats + i]);
    p[i] = pij;
    ds[i] = pij * (Dot(d_o + qo, vj, d) - delta[stats + i]);
  }
  __syncthreads();
  for (int t = threadIdx.x; t < d; t += blockDim.x) {
    float acc_k = 0.0f, acc_v = 0.0f;
    for (int i = first; i < s; ++i) {
      const int64_t qo = head + static_cast<int64_t>(i) * d + t;
      acc_k = fmaf(ds[i], __bfloat162float(q[qo]), acc_k);
      acc_v = fmaf(p[i], __bfloat162float(d_o[qo]), acc_v);
    }
    dk[row * d + t] = scale * acc_k;
    dv[row * d + t] = acc_v;
  }
}

absl::Status CudaStatus(cudaError_t err, absl::string_view what) {
  if (err == cudaSuccess) return absl::OkStatus();
  return absl::InternalError(
      absl::StrCat(what, ": ", cudaGetErrorName(err), ": ", cudaGetErrorString(err)));
}

// Launches `kernel` on a (S, B*H) grid with `smem_bytes` of dynamic shared
// memory, opting in above the 48 KiB default.
template <typename Kernel, typename... Args>
absl::Status LaunchRows(Kernel kernel, const char* name, const AttentionShape& shape,
                        size_t smem_bytes, cudaStream_t stream, Args... args) {
  if (smem_bytes > 48 * 1024) {
    PTXB_RETURN_IF_ERROR(CudaStatus(
        cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                             static_cast<int>(smem_bytes)),
        absl::StrCat(name, ": ", smem_bytes, " B of shared memory (S=", shape.seq, ")")));
  }
  const dim3 grid(shape.seq, shape.batch * shape.heads);
  kernel<<<grid, kThreads, smem_bytes, stream>>>(args...);
  return CudaStatus(cudaGetLastError(), absl::StrCat(name, " launch"));
}

float SoftmaxScale(const AttentionShape& shape) {
  return 1.0f / std::sqrt(static_cast<float>(shape.head_dim));
}

}  // namespace

// ---------------------------------------------------------------------------
// CudnnAttention
// ---------------------------------------------------------------------------

absl::StatusOr<std::unique_ptr<CudnnAttention>> CudnnAttention::Create(
    const AttentionShape& shape) {
  PTXB_RETURN_IF_ERROR(ValidateShape(shape));
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
  float scale = SoftmaxScale(shape_);
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
  float scale = SoftmaxScale(shape_);
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

// ---------------------------------------------------------------------------
// fp32 references
// ---------------------------------------------------------------------------

absl::Status AttentionForwardFp32(const AttentionShape& shape, const __nv_bfloat16* q,
                                  const __nv_bfloat16* k, const __nv_bfloat16* v, float* o,
                                  float* lse, cudaStream_t stream) {
  PTXB_RETURN_IF_ERROR(ValidateShape(shape));
  const size_t smem = (static_cast<size_t>(shape.seq) + shape.head_dim + 32) * sizeof(float);
  return LaunchRows(ForwardRowKernel, "ForwardRowKernel", shape, smem, stream, q, k, v, o, lse,
                    shape.seq, shape.head_dim, shape.causal, SoftmaxScale(shape));
}

absl::Status AttentionBackwardFp32(const AttentionShape& shape, const __nv_bfloat16* q,
                                   const __nv_bfloat16* k, const __nv_bfloat16* v,
                                   const __nv_bfloat16* d_o, const float* lse, float* dq, float* dk,
                                   float* dv, cudaStream_t stream) {
  PTXB_RETURN_IF_ERROR(ValidateShape(shape));
  const size_t rows = static_cast<size_t>(shape.batch) * shape.heads * shape.seq;
  const int s = shape.seq, d = shape.head_dim;
  const float scale = SoftmaxScale(shape);
  float* o = nullptr;
  float* own_lse = nullptr;
  float* delta = nullptr;
  absl::Status status;
  status.Update(
      CudaStatus(cudaMallocAsync(reinterpret_cast<void**>(&o), rows * d * sizeof(float), stream),
                 "cudaMallocAsync(fp32 O)"));
  if (status.ok()) {
    status.Update(CudaStatus(
        cudaMallocAsync(reinterpret_cast<void**>(&own_lse), rows * sizeof(float), stream),
        "cudaMallocAsync(fp32 LSE)"));
  }
  if (status.ok()) {
    status.Update(
        CudaStatus(cudaMallocAsync(reinterpret_cast<void**>(&delta), rows * sizeof(float), stream),
                   "cudaMallocAsync(rowsum(dO*O))"));
  }
  if (status.ok()) status.Update(AttentionForwardFp32(shape, q, k, v, o, own_lse, stream));
  if (status.ok()) {
    const size_t smem = (static_cast<size_t>(s) + 2 * d + 32) * sizeof(float);
    status.Update(LaunchRows(BackwardRowKernel, "BackwardRowKernel", shape, smem, stream, q, k, v,
                             d_o, static_cast<const float*>(o), lse, delta, dq, s, d, shape.causal,
                             scale));
  }
  if (status.ok()) {
    const size_t smem = (2 * static_cast<size_t>(s) + 2 * d) * sizeof(float);
    status.Update(LaunchRows(BackwardColumnKernel, "BackwardColumnKernel", shape, smem, stream, q,
                             k, v, d_o, lse, static_cast<const float*>(delta), dk, dv, s, d,
                             shape.causal, scale));
  }
  for (float* p : {o, own_lse, delta}) {
    if (p != nullptr) cudaFreeAsync(p, stream);
  }
  return status;
}

}  // namespace ptxbench::reference
