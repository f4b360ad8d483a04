#include "workloads/reference/testing/fill_nan.h"

#include "absl/strings/str_cat.h"

namespace ptxbench::reference::testing {
namespace {

__global__ void NaNKernel(__nv_bfloat16* out, int64_t count) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    out[i] = __ushort_as_bfloat16(0x7fc0);
  }
}

}  // namespace

absl::Status FillNaN(__nv_bfloat16* out, int64_t count, cudaStream_t stream) {
  if (count <= 0) return absl::OkStatus();
  constexpr int kBlock = 256;
  const int64_t blocks = (count + kBlock - 1) / kBlock;
  NaNKernel<<<static_cast<int>(blocks < 65536 ? blocks : 65536), kBlock, 0, stream>>>(out, count);
  const cudaError_t err = cudaGetLastError();
  if (err == cudaSuccess) return absl::OkStatus();
  return absl::InternalError(absl::StrCat("NaNKernel launch: ", cudaGetErrorString(err)));
}

}  // namespace ptxbench::reference::testing
