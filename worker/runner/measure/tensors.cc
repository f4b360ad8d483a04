#include "worker/runner/measure/tensors.h"

#include <iterator>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"

namespace ptxbench::runner {
namespace {

struct Layout {
  const char* name;
  ptxb::DType dtype;
  int64_t bytes;
};

// In ptxb::DType order (kernel_abi.h).
constexpr Layout kLayouts[] = {
    {"float32", ptxb::DType::kFloat32, 4},        {"float16", ptxb::DType::kFloat16, 2},
    {"bfloat16", ptxb::DType::kBFloat16, 2},      {"float8_e4m3fn", ptxb::DType::kFloat8E4M3FN, 1},
    {"float8_e5m2", ptxb::DType::kFloat8E5M2, 1}, {"float4_e2m1", ptxb::DType::kFloat4E2M1, 0},
    {"int64", ptxb::DType::kInt64, 8},            {"int32", ptxb::DType::kInt32, 4},
    {"int16", ptxb::DType::kInt16, 2},            {"int8", ptxb::DType::kInt8, 1},
    {"bool", ptxb::DType::kBool, 1},
};

static_assert([] {
  for (int i = 0; i < static_cast<int>(std::size(kLayouts)); ++i) {
    if (static_cast<int>(kLayouts[i].dtype) != i) return false;
  }
  return true;
}());

absl::StatusOr<TensorBuffer> Describe(const workloads::TensorSpec& spec,
                                      const std::map<std::string, int64_t>& axes) {
  PTXB_ASSIGN_OR_RETURN(const ptxb::DType dtype, DTypeOf(spec));
  if (spec.shape.size() > PTXB_MAX_DIMS) {
    return absl::InvalidArgumentError(absl::StrCat("tensor ", spec.name, " has more than ",
                                                   PTXB_MAX_DIMS, " dimensions"));
  }
  TensorBuffer t;
  t.name = spec.name;
  t.view.dtype = dtype;
  t.view.ndim = static_cast<int>(spec.shape.size());
  PTXB_ASSIGN_OR_RETURN(const std::vector<int64_t> dims, workloads::TensorDims(spec, axes));
  t.count = 1;
  for (size_t i = 0; i < dims.size(); ++i) {
    t.view.sizes[i] = dims[i];
    t.count *= dims[i];
  }
  t.bytes = t.count * ElementBytes(dtype);
  return t;
}

}  // namespace

absl::StatusOr<ptxb::DType> DTypeOf(const workloads::TensorSpec& spec) {
  for (const Layout& l : kLayouts) {
    if (spec.dtype == l.name && l.bytes > 0) return l.dtype;
  }
  return absl::UnimplementedError(absl::StrCat("tensor ", spec.name, ": dtype ", spec.dtype,
                                               " is not supported by the GPU harness yet"));
}

int64_t ElementBytes(ptxb::DType dtype) { return kLayouts[static_cast<int>(dtype)].bytes; }

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
                                              const std::map<std::string, int64_t>& axes,
                                              Sharing sharing) {
  TensorSet set;
  for (const workloads::TensorSpec& spec : specs) {
    PTXB_ASSIGN_OR_RETURN(TensorBuffer t, Describe(spec, axes));
    // Even an empty tensor gets an allocation, so it has a distinct address.
    absl::StatusOr<reference::DeviceMemory> memory =
        reference::DeviceMemory::Allocate(static_cast<size_t>(t.bytes), sharing);
    if (!memory.ok()) {
      return absl::ResourceExhaustedError(
          absl::StrCat(t.bytes, " bytes for ", spec.name, ": ", memory.status().message()));
    }
    t.memory = std::make_shared<const reference::DeviceMemory>(*std::move(memory));
    t.view.data = t.memory->data();
    set.tensors_.push_back(std::move(t));
  }
  return set;
}

absl::StatusOr<int> TensorBuffer::ExportDescriptor() const {
  if (memory == nullptr) return absl::FailedPreconditionError(absl::StrCat(name, " has no memory"));
  return memory->ExportDescriptor();
}

int64_t TensorSet::total_bytes() const {
  int64_t total = 0;
  for (const TensorBuffer& t : tensors_) total += t.bytes;
  return total;
}

}  // namespace ptxbench::runner
