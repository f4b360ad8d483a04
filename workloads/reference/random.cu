#include <type_traits>

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
template <>
__device__ __half FromFloat(float v) {
  return __float2half_rn(v);
}
template <>
__device__ __nv_fp8_e4m3 FromFloat(float v) {
  return __nv_fp8_e4m3(v);
}
template <>
__device__ __nv_fp8_e5m2 FromFloat(float v) {
  return __nv_fp8_e5m2(v);
}

// The normal value as drawn for T: float8 clamped to [-2, 2] (most of its
// range, no saturation), before any scaling, so a scaled float8 input is
// that value times the factor (at most 128, within both float8 ranges).
template <typename T>
__device__ float Drawn(float z) {
  if constexpr (std::is_same_v<T, __nv_fp8_e4m3> || std::is_same_v<T, __nv_fp8_e5m2>) {
    return fminf(fmaxf(z, -2.0f), 2.0f);
  } else {
    return z;
  }
}

// Whether element `i` is one of the one-in-`one_in` a fill with `seed`
// scales (every element when one_in is 1).
__device__ bool Selected(uint64_t seed, int64_t i, int64_t one_in) {
  if (one_in <= 1) return true;
  return Mix64(seed ^ (static_cast<uint64_t>(i) * 0x9E3779B97F4A7C15ull)) %
             static_cast<uint64_t>(one_in) ==
         0;
}

template <typename T>
__global__ void UniformIntKernel(T* out, int64_t count, int64_t lo, uint64_t span, uint64_t seed) {
  const int64_t groups = (count + 3) / 4;
  for (int64_t g = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; g < groups;
       g += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    int64_t v[4];
    UniformInt4(seed, static_cast<uint64_t>(g), lo, span, v);
    const int64_t base = 4 * g;
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      if (base + j < count) out[base + j] = static_cast<T>(v[j]);
    }
  }
}

// One thread per group of four elements; grid-stride so any count fits.
template <typename T>
__global__ void StandardNormalKernel(T* out, int64_t count, uint64_t seed, float factor,
                                     int64_t one_in) {
  const int64_t groups = (count + 3) / 4;
  for (int64_t g = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; g < groups;
       g += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    float z[4];
    StandardNormal4(seed, static_cast<uint64_t>(g), z);
    const int64_t base = 4 * g;
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      if (base + j >= count) continue;
      const float v = Drawn<T>(z[j]);
      out[base + j] = FromFloat<T>(Selected(seed, base + j, one_in) ? v * factor : v);
    }
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

}  // namespace

template <typename T>
absl::Status FillStandardNormal(T* out, int64_t count, uint64_t seed, cudaStream_t stream,
                                float factor, int64_t one_in) {
  if (count <= 0) return absl::OkStatus();
  constexpr int kBlock = 256;
  StandardNormalKernel<T><<<GridFor((count + 3) / 4, kBlock), kBlock, 0, stream>>>(
      out, count, seed, factor, one_in);
  return LaunchStatus("StandardNormalKernel");
}
template absl::Status FillStandardNormal(float*, int64_t, uint64_t, cudaStream_t, float, int64_t);
template absl::Status FillStandardNormal(__half*, int64_t, uint64_t, cudaStream_t, float, int64_t);
template absl::Status FillStandardNormal(__nv_bfloat16*, int64_t, uint64_t, cudaStream_t, float,
                                         int64_t);
template absl::Status FillStandardNormal(__nv_fp8_e4m3*, int64_t, uint64_t, cudaStream_t, float,
                                         int64_t);
template absl::Status FillStandardNormal(__nv_fp8_e5m2*, int64_t, uint64_t, cudaStream_t, float,
                                         int64_t);

template <typename T>
absl::Status FillUniformInt(T* out, int64_t count, int64_t lo, int64_t hi, uint64_t seed,
                            cudaStream_t stream) {
  if (hi <= lo || static_cast<uint64_t>(hi - lo) > (uint64_t{1} << 32)) {
    return absl::InvalidArgumentError(absl::StrCat("FillUniformInt: bad range [", lo, ", ", hi, ")"));
  }
  if (count <= 0) return absl::OkStatus();
  constexpr int kBlock = 256;
  UniformIntKernel<T><<<GridFor((count + 3) / 4, kBlock), kBlock, 0, stream>>>(
      out, count, lo, static_cast<uint64_t>(hi - lo), seed);
  return LaunchStatus("UniformIntKernel");
}
template absl::Status FillUniformInt(int64_t*, int64_t, int64_t, int64_t, uint64_t, cudaStream_t);
template absl::Status FillUniformInt(int32_t*, int64_t, int64_t, int64_t, uint64_t, cudaStream_t);
template absl::Status FillUniformInt(int16_t*, int64_t, int64_t, int64_t, uint64_t, cudaStream_t);
template absl::Status FillUniformInt(int8_t*, int64_t, int64_t, int64_t, uint64_t, cudaStream_t);
template absl::Status FillUniformInt(uint8_t*, int64_t, int64_t, int64_t, uint64_t, cudaStream_t);

}  // namespace ptxbench::reference
