#ifndef PTXBENCH_WORKLOADS_REFERENCE_CUDNN_GRAPH_H_
#define PTXBENCH_WORKLOADS_REFERENCE_CUDNN_GRAPH_H_

// The cuDNN v9 backend API as a graph builder: tensors and operations
// (pointwise, matmul, reduction, reshape) added by name, the graph finalized
// into an execution plan by the heuristics. Internal to the references that
// build cuDNN graphs (attention_reference.cu); one translation unit
// includes it, so its functions are defined here.

#include <cudnn_graph.h>

#include <cstdint>
#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/string_view.h"
#include "common/status_macros.h"

namespace ptxbench::reference {

using Dims = std::vector<int64_t>;

// Virtual tensors get UIDs from here up; a variant pack's tensors stay below.
inline constexpr int64_t kFirstVirtualUid = 100;
inline constexpr int64_t kTensorAlignment = 16;  // bytes; cudnn-frontend's default

// Packed (row-major) strides of `dims`.
inline Dims Packed(const Dims& dims) {
  Dims strides(dims.size(), 1);
  for (int i = static_cast<int>(dims.size()) - 2; i >= 0; --i)
    strides[i] = strides[i + 1] * dims[i + 1];
  return strides;
}

// "<where>: CUDNN_STATUS_X (cuDNN's last error message)" on one line. The
// NOT_SUPPORTED family is kUnimplemented (no engine for this graph here);
// everything else is kInternal.
inline absl::Status CudnnError(cudnnStatus_t status, absl::string_view where) {
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

}  // namespace ptxbench::reference

#endif  // PTXBENCH_WORKLOADS_REFERENCE_CUDNN_GRAPH_H_
