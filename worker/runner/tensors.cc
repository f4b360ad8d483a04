#include "worker/runner/tensors.h"

#include <cuda_runtime_api.h>

#include <utility>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"

namespace ptxbench::runner {
namespace {

struct Layout {
  ElementType type;
  ptxb::DType dtype;
  int64_t element_bytes;
};

absl::StatusOr<Layout> LayoutOf(const workloads::TensorSpec& spec) {
  if (spec.dtype == "bfloat16") return Layout{ElementType::kBFloat16, ptxb::DType::kBFloat16, 2};
  if (spec.dtype == "float32") return Layout{ElementType::kFloat32, ptxb::DType::kFloat32, 4};
  return absl::UnimplementedError(absl::StrCat("tensor ", spec.name, ": dtype ", spec.dtype,
                                               " is not supported by the GPU runner yet"));
}

absl::StatusOr<TensorBuffer> Describe(const workloads::TensorSpec& spec,
                                      const std::map<std::string, int64_t>& axes) {
  PTXB_ASSIGN_OR_RETURN(Layout layout, LayoutOf(spec));
  if (spec.shape.size() > PTXB_MAX_DIMS) {
    return absl::InvalidArgumentError(absl::StrCat("tensor ", spec.name, " has more than ",
                                                   PTXB_MAX_DIMS, " dimensions"));
  }
  TensorBuffer t;
  t.name = spec.name;
  t.type = layout.type;
  t.view.dtype = layout.dtype;
  t.view.ndim = static_cast<int>(spec.shape.size());
  PTXB_ASSIGN_OR_RETURN(const std::vector<int64_t> dims, workloads::TensorDims(spec, axes));
  t.count = 1;
  for (size_t i = 0; i < dims.size(); ++i) {
    t.view.sizes[i] = dims[i];
    t.count *= dims[i];
  }
  t.bytes = t.count * layout.element_bytes;
  return t;
}

}  // namespace

absl::StatusOr<int64_t> TensorBytes(const std::vector<workloads::TensorSpec>& specs,
                                    const std::map<std::string, int64_t>& axes) {
  int64_t total = 0;
  for (const workloads::TensorSpec& spec : specs) {
    PTXB_ASSIGN_OR_RETURN(TensorBuffer t, Describe(spec, axes));
    total += t.bytes;
  }
  return total;
}

absl::StatusOr<TensorSet> TensorSet::Allocate(const std::vector<workloads::TensorSpec>& specs,
                                              const std::map<std::string, int64_t>& axes) {
  TensorSet set;
  for (const workloads::TensorSpec& spec : specs) {
    PTXB_ASSIGN_OR_RETURN(TensorBuffer t, Describe(spec, axes));
    void* data = nullptr;
    // At least one byte, so an empty tensor still has a distinct address.
    const cudaError_t err = cudaMalloc(&data, std::max<int64_t>(t.bytes, 1));
    if (err != cudaSuccess) {
      return absl::ResourceExhaustedError(absl::StrCat("cudaMalloc of ", t.bytes, " bytes for ",
                                                       spec.name, ": ", cudaGetErrorString(err)));
    }
    t.view.data = data;
    set.tensors_.push_back(std::move(t));
  }
  return set;
}

TensorSet::TensorSet(TensorSet&& other) noexcept : tensors_(std::move(other.tensors_)) {
  other.tensors_.clear();
}

TensorSet& TensorSet::operator=(TensorSet&& other) noexcept {
  std::swap(tensors_, other.tensors_);
  return *this;
}

TensorSet::~TensorSet() {
  for (TensorBuffer& t : tensors_) cudaFree(t.view.data);
}

int64_t TensorSet::total_bytes() const {
  int64_t total = 0;
  for (const TensorBuffer& t : tensors_) total += t.bytes;
  return total;
}

}  // namespace ptxbench::runner
