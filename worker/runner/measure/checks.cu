#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>

#include <bit>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "worker/gpu/timing.h"
#include "worker/runner/measure/checks.h"

namespace ptxbench::runner {
namespace {

using gpu::CudaStatus;

// Non-negative floats order like their bit patterns, so atomicMax on the
// bits is a max on the values.
using Counters = CompareCounters;

__global__ void ResetCounters(Counters* c) { *c = Counters{0, 0, ~0ull, 0, 0, 0, 0, 0.0, 0.0}; }

// An element's bits, for the constant-output check: bit for bit, so that
// NaN poison, -0 and +0 are each a value of their own.
template <typename T>
__device__ auto Bits(const T* p, int64_t i) {
  if constexpr (sizeof(T) == 1) {
    return reinterpret_cast<const uint8_t*>(p)[i];
  } else if constexpr (sizeof(T) == 2) {
    return reinterpret_cast<const uint16_t*>(p)[i];
  } else if constexpr (sizeof(T) == 4) {
    return reinterpret_cast<const uint32_t*>(p)[i];
  } else {
    return reinterpret_cast<const uint64_t*>(p)[i];
  }
}

// Floats are compared in float32, integers (and booleans, as their byte) in
// float64.
__device__ float Load(const __nv_bfloat16* p, int64_t i) { return __bfloat162float(p[i]); }
__device__ float Load(const __half* p, int64_t i) { return __half2float(p[i]); }
__device__ float Load(const __nv_fp8_e4m3* p, int64_t i) { return static_cast<float>(p[i]); }
__device__ float Load(const __nv_fp8_e5m2* p, int64_t i) { return static_cast<float>(p[i]); }
__device__ float Load(const float* p, int64_t i) { return p[i]; }
template <typename I>
__device__ double Load(const I* p, int64_t i) {
  return static_cast<double>(p[i]);
}

// One unit in the last place of `y` in T: the rounding step of the expected
// value itself (checks.h says why it is allowed on top of the tolerance).
// `bits`: the significant bits of T; `min_exponent`: its smallest normal one.
__device__ float Step(float y, int bits, int min_exponent) {
  const int exponent = static_cast<int>((__float_as_uint(y) >> 23) & 0xff) - 127;
  return ldexpf(1.0f, max(exponent, min_exponent) - (bits - 1));
}
__device__ float Ulp(const __nv_bfloat16*, float y) { return Step(y, 8, -126); }
__device__ float Ulp(const __half*, float y) { return Step(y, 11, -14); }
__device__ float Ulp(const __nv_fp8_e4m3*, float y) { return Step(y, 4, -6); }
__device__ float Ulp(const __nv_fp8_e5m2*, float y) { return Step(y, 3, -14); }
__device__ float Ulp(const float*, float) { return 0.0f; }
template <typename I>
__device__ double Ulp(const I*, double) {
  return 0.0;
}

template <typename T>
__global__ void CompareKernel(const T* actual, const T* expected, int64_t count, float atol,
                              float rtol, Counters* out) {
  using C = decltype(Load(actual, 0));  // the type compared in
  unsigned long long matched = 0, nonfinite = 0, first = ~0ull, actual_varying = 0,
                     expected_varying = 0;
  float max_abs = 0, max_rel = 0;
  double error_sq = 0, expected_sq = 0;
  const auto actual_first = Bits(actual, 0), expected_first = Bits(expected, 0);
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < count;
       i += int64_t{gridDim.x} * blockDim.x) {
    actual_varying += Bits(actual, i) != actual_first;
    expected_varying += Bits(expected, i) != expected_first;
    const C x = Load(actual, i), y = Load(expected, i);
    if (!isfinite(x) || !isfinite(y)) {
      ++nonfinite;
      if (static_cast<unsigned long long>(i) < first) first = i;
      continue;
    }
    const C abs_err = fabs(x - y);
    const C rel_err = abs_err / (fabs(y) + C(1e-8));
    max_abs = fmaxf(max_abs, static_cast<float>(abs_err));
    max_rel = fmaxf(max_rel, static_cast<float>(rel_err));
    const C judged = fmax(abs_err - Ulp(expected, y), C(0));
    if (judged > atol && judged / (fabs(y) + C(1e-8)) > rtol) {
      if (static_cast<unsigned long long>(i) < first) first = i;
    } else {
      ++matched;
      error_sq += static_cast<double>(abs_err) * static_cast<double>(abs_err);
      expected_sq += static_cast<double>(y) * static_cast<double>(y);
    }
  }
  for (int offset = 16; offset > 0; offset /= 2) {
    matched += __shfl_down_sync(0xffffffffu, matched, offset);
    nonfinite += __shfl_down_sync(0xffffffffu, nonfinite, offset);
    actual_varying += __shfl_down_sync(0xffffffffu, actual_varying, offset);
    expected_varying += __shfl_down_sync(0xffffffffu, expected_varying, offset);
    error_sq += __shfl_down_sync(0xffffffffu, error_sq, offset);
    expected_sq += __shfl_down_sync(0xffffffffu, expected_sq, offset);
    first = min(first, __shfl_down_sync(0xffffffffu, first, offset));
    max_abs = fmaxf(max_abs, __shfl_down_sync(0xffffffffu, max_abs, offset));
    max_rel = fmaxf(max_rel, __shfl_down_sync(0xffffffffu, max_rel, offset));
  }
  if ((threadIdx.x & 31) == 0) {
    atomicAdd(&out->matched, matched);
    atomicAdd(&out->nonfinite, nonfinite);
    atomicAdd(&out->actual_varying, actual_varying);
    atomicAdd(&out->expected_varying, expected_varying);
    if (error_sq != 0) atomicAdd(&out->matched_error_sq, error_sq);
    if (expected_sq != 0) atomicAdd(&out->matched_expected_sq, expected_sq);
    atomicMin(&out->first_mismatch, first);
    atomicMax(&out->max_abs_bits, __float_as_uint(max_abs));
    atomicMax(&out->max_rel_bits, __float_as_uint(max_rel));
  }
}

__global__ void ChangedBytesKernel(const unsigned char* a, const unsigned char* b, int64_t bytes,
                                   unsigned long long* changed) {
  unsigned long long n = 0;
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < bytes;
       i += int64_t{gridDim.x} * blockDim.x) {
    n += a[i] != b[i];
  }
  for (int offset = 16; offset > 0; offset /= 2) n += __shfl_down_sync(0xffffffffu, n, offset);
  if ((threadIdx.x & 31) == 0 && n != 0) atomicAdd(changed, n);
}

constexpr int kThreads = 256;
constexpr int kBlocks = 1024;  // grid-stride: enough to fill an H100/H200

// A small device allocation for the counters, freed on scope exit.
template <typename T>
class DeviceScalar {
 public:
  // Uninitialized: the Enqueue* functions reset what they count into.
  absl::Status Allocate() {
    return CudaStatus(cudaMalloc(&ptr_, sizeof(T)), "cudaMalloc(check counters)");
  }
  absl::StatusOr<T> Read(cudaStream_t stream) {
    T value{};
    PTXB_RETURN_IF_ERROR(CudaStatus(
        cudaMemcpyAsync(&value, ptr_, sizeof(T), cudaMemcpyDeviceToHost, stream), "read check counters"));
    PTXB_RETURN_IF_ERROR(CudaStatus(cudaStreamSynchronize(stream), "check"));
    return value;
  }
  T* get() { return ptr_; }
  ~DeviceScalar() {
    if (ptr_ != nullptr) cudaFree(ptr_);
  }

 private:
  T* ptr_ = nullptr;
};

template <typename T>
void LaunchCompare(const void* actual, const void* expected, int64_t count, float atol, float rtol,
                   Counters* counters, cudaStream_t stream) {
  CompareKernel<<<kBlocks, kThreads, 0, stream>>>(static_cast<const T*>(actual),
                                                  static_cast<const T*>(expected), count, atol,
                                                  rtol, counters);
}

}  // namespace

absl::Status EnqueueCompare(const void* actual, const void* expected, ptxb::DType type,
                            int64_t count, const reference::Tolerance& tol,
                            CompareCounters* device_counters, cudaStream_t stream) {
  ResetCounters<<<1, 1, 0, stream>>>(device_counters);
  const float atol = static_cast<float>(tol.atol), rtol = static_cast<float>(tol.rtol);
  using D = ptxb::DType;
  auto launch = [&](auto* typed) {
    LaunchCompare<std::remove_pointer_t<decltype(typed)>>(actual, expected, count, atol, rtol,
                                                           device_counters, stream);
  };
  switch (type) {
    case D::kFloat32: launch(static_cast<float*>(nullptr)); break;
    case D::kFloat16: launch(static_cast<__half*>(nullptr)); break;
    case D::kBFloat16: launch(static_cast<__nv_bfloat16*>(nullptr)); break;
    case D::kFloat8E4M3FN: launch(static_cast<__nv_fp8_e4m3*>(nullptr)); break;
    case D::kFloat8E5M2: launch(static_cast<__nv_fp8_e5m2*>(nullptr)); break;
    case D::kInt64: launch(static_cast<int64_t*>(nullptr)); break;
    case D::kInt32: launch(static_cast<int32_t*>(nullptr)); break;
    case D::kInt16: launch(static_cast<int16_t*>(nullptr)); break;
    case D::kInt8: launch(static_cast<int8_t*>(nullptr)); break;
    case D::kBool: launch(static_cast<uint8_t*>(nullptr)); break;
    default:
      return absl::UnimplementedError("the output checks do not support this dtype");
  }
  return CudaStatus(cudaGetLastError(), "compare kernel launch");
}

absl::Status EnqueueCountChangedBytes(const void* a, const void* b, int64_t bytes,
                                      unsigned long long* device_count, cudaStream_t stream) {
  PTXB_RETURN_IF_ERROR(CudaStatus(cudaMemsetAsync(device_count, 0, sizeof(*device_count), stream),
                                  "reset the input check"));
  ChangedBytesKernel<<<kBlocks, kThreads, 0, stream>>>(static_cast<const unsigned char*>(a),
                                                       static_cast<const unsigned char*>(b), bytes,
                                                       device_count);
  return CudaStatus(cudaGetLastError(), "input check kernel launch");
}

absl::Status LoadCheckKernels(cudaStream_t stream) {
  DeviceScalar<Counters> counters;
  PTXB_RETURN_IF_ERROR(counters.Allocate());
  DeviceScalar<unsigned long long> changed;
  PTXB_RETURN_IF_ERROR(changed.Allocate());
  DeviceScalar<uint64_t[2]> a, b;  // one element of any dtype
  PTXB_RETURN_IF_ERROR(a.Allocate());
  PTXB_RETURN_IF_ERROR(b.Allocate());
  PTXB_RETURN_IF_ERROR(CudaStatus(cudaMemsetAsync(a.get(), 0, sizeof(uint64_t[2]), stream),
                                  "cudaMemsetAsync"));
  PTXB_RETURN_IF_ERROR(CudaStatus(cudaMemcpyAsync(b.get(), a.get(), sizeof(uint64_t[2]),
                                                  cudaMemcpyDeviceToDevice, stream),
                                  "cudaMemcpyAsync"));
  // Past the last DType too: a type added to the ABI and to EnqueueCompare
  // is loaded without a change here; the rest are refused, not launched.
  for (int t = 0; t < 64; ++t) {
    absl::Status s = EnqueueCompare(a.get(), b.get(), static_cast<ptxb::DType>(t), 1,
                                    reference::Tolerance{}, counters.get(), stream);
    if (!s.ok() && !absl::IsUnimplemented(s)) return s;
  }
  PTXB_RETURN_IF_ERROR(EnqueueCountChangedBytes(a.get(), b.get(), 1, changed.get(), stream));
  return CudaStatus(cudaStreamSynchronize(stream), "loading the check kernels");
}

reference::CompareResult CompareResultOf(const CompareCounters& c, int64_t count,
                                         const reference::Tolerance& tol) {
  reference::CompareResult r;
  r.total = count;
  r.matched = static_cast<int64_t>(c.matched);
  r.nonfinite = static_cast<int64_t>(c.nonfinite);
  r.first_mismatch = c.first_mismatch == ~0ull ? -1 : static_cast<int64_t>(c.first_mismatch);
  r.max_abs_error = std::bit_cast<float>(c.max_abs_bits);
  r.max_rel_error = std::bit_cast<float>(c.max_rel_bits);
  r.actual_varying = static_cast<int64_t>(c.actual_varying);
  r.expected_varying = static_cast<int64_t>(c.expected_varying);
  r.matched_error_sq = c.matched_error_sq;
  r.matched_expected_sq = c.matched_expected_sq;
  r.passed = r.nonfinite == 0 && r.matched_ratio() >= tol.required_matched_ratio &&
             !r.constant() && !r.unrelated();
  return r;
}

}  // namespace ptxbench::runner
