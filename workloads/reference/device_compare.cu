#include <cuda_runtime_api.h>

#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "workloads/reference/device_compare.h"

namespace ptxbench::reference {

absl::StatusOr<CompareResult> CompareOnDevice(const __nv_bfloat16* actual, const float* expected,
                                              int64_t count, const Tolerance& tol) {
  std::vector<uint16_t> bits(count);
  std::vector<float> x(count), y(count);
  cudaError_t err = cudaDeviceSynchronize();
  if (err == cudaSuccess) {
    err = cudaMemcpy(bits.data(), actual, count * sizeof(uint16_t), cudaMemcpyDeviceToHost);
  }
  if (err == cudaSuccess) {
    err = cudaMemcpy(y.data(), expected, count * sizeof(float), cudaMemcpyDeviceToHost);
  }
  if (err != cudaSuccess) {
    return absl::InternalError(absl::StrCat(
        "copying outputs for comparison: ", cudaGetErrorName(err), ": ", cudaGetErrorString(err)));
  }
  for (int64_t i = 0; i < count; ++i) x[i] = Bf16BitsToFloat(bits[i]);
  return CompareOutputs(x, y, tol);
}

}  // namespace ptxbench::reference
