#include "absl/strings/str_cat.h"
#include "workloads/reference/philox.h"
#include "workloads/reference/random.h"

namespace ptxbench::reference {
namespace {

template <typename T>
__device__ T FromFloat(float v);
template <>
__device__ __nv_bfloat16 FromFloat(float v) {
  return __float2bfloat16_rn(v);
}
template <>
__device__ float FromFloat(float v) {
  return v;
}

// One thread per group of four elements; grid-stride so any count fits.
template <typename T>
__global__ void StandardNormalKernel(T* out, int64_t count, uint64_t seed) {
  const int64_t groups = (count + 3) / 4;
  for (int64_t g = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; g < groups;
       g += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    float z[4];
    StandardNormal4(seed, static_cast<uint64_t>(g), z);
    const int64_t base = 4 * g;
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      if (base + j < count) out[base + j] = FromFloat<T>(z[j]);
    }
  }
}

__global__ void NaNKernel(__nv_bfloat16* out, int64_t count) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    out[i] = __ushort_as_bfloat16(0x7fc0);
  }
}

int GridFor(int64_t work, int block) {
  const int64_t blocks = (work + block - 1) / block;
  return static_cast<int>(blocks < 65536 ? (blocks > 0 ? blocks : 1) : 65536);
}

absl::Status LaunchStatus(const char* what) {
  cudaError_t err = cudaGetLastError();
  if (err == cudaSuccess) return absl::OkStatus();
  return absl::InternalError(absl::StrCat(what, " launch: ", cudaGetErrorString(err)));
}

template <typename T>
absl::Status Fill(T* out, int64_t count, uint64_t seed, cudaStream_t stream) {
  if (count <= 0) return absl::OkStatus();
  constexpr int kBlock = 256;
  StandardNormalKernel<T>
      <<<GridFor((count + 3) / 4, kBlock), kBlock, 0, stream>>>(out, count, seed);
  return LaunchStatus("StandardNormalKernel");
}

}  // namespace

absl::Status FillStandardNormal(__nv_bfloat16* out, int64_t count, uint64_t seed,
                                cudaStream_t stream) {
  return Fill(out, count, seed, stream);
}

absl::Status FillStandardNormal(float* out, int64_t count, uint64_t seed, cudaStream_t stream) {
  return Fill(out, count, seed, stream);
}

absl::Status FillNaN(__nv_bfloat16* out, int64_t count, cudaStream_t stream) {
  if (count <= 0) return absl::OkStatus();
  constexpr int kBlock = 256;
  NaNKernel<<<GridFor(count, kBlock), kBlock, 0, stream>>>(out, count);
  return LaunchStatus("NaNKernel");
}

}  // namespace ptxbench::reference
