#include "worker/runner/hosts/tensor_extents.h"

#include <nvtx3/nvToolsExtMem.h>

namespace ptxbench::runner {
namespace {

nvtxDomainHandle_t Domain() {
  static nvtxDomainHandle_t domain = nvtxDomainCreateA("ptxbench");
  return domain;
}

}  // namespace

int64_t ViewBytes(const ptxb::Tensor& view) {
  const int64_t n = view.numel();
  switch (view.dtype) {
    case ptxb::DType::kFloat4E2M1: return (n + 1) / 2;
    case ptxb::DType::kFloat8E4M3FN:
    case ptxb::DType::kFloat8E5M2:
    case ptxb::DType::kInt8:
    case ptxb::DType::kBool: return n;
    case ptxb::DType::kFloat16:
    case ptxb::DType::kBFloat16:
    case ptxb::DType::kInt16: return 2 * n;
    case ptxb::DType::kFloat32:
    case ptxb::DType::kInt32: return 4 * n;
    case ptxb::DType::kInt64: return 8 * n;
  }
  return 0;
}

void TensorExtents::Mark(const void* base, size_t mapped, size_t used) {
  if (base == nullptr || used == 0 || used >= mapped) return;  // nothing to tell apart
  nvtxMemVirtualRangeDesc_t pool{mapped, base};
  nvtxMemHeapDesc_t heap{};
  heap.extCompatID = NVTX_EXT_COMPATID_MEM;
  heap.structSize = sizeof(heap);
  heap.usage = NVTX_MEM_HEAP_USAGE_TYPE_SUB_ALLOCATOR;
  heap.type = NVTX_MEM_TYPE_VIRTUAL_ADDRESS;
  heap.typeSpecificDescSize = sizeof(pool);
  heap.typeSpecificDesc = &pool;
  nvtxMemHeapHandle_t handle = nvtxMemHeapRegister(Domain(), &heap);
  if (handle == nullptr) return;  // no tool attached
  heaps_.push_back(handle);
  nvtxMemVirtualRangeDesc_t tensor{used, base};
  nvtxMemRegionsRegisterBatch_t regions{};
  regions.extCompatID = NVTX_EXT_COMPATID_MEM;
  regions.structSize = sizeof(regions);
  regions.regionType = NVTX_MEM_TYPE_VIRTUAL_ADDRESS;
  regions.heap = handle;
  regions.regionCount = 1;
  regions.regionDescElementSize = sizeof(tensor);
  regions.regionDescElements = &tensor;
  nvtxMemRegionsRegister(Domain(), &regions);
}

void TensorExtents::Clear() {
  for (void* h : heaps_) nvtxMemHeapUnregister(Domain(), static_cast<nvtxMemHeapHandle_t>(h));
  heaps_.clear();
}

}  // namespace ptxbench::runner
