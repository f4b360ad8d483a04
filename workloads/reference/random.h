#ifndef PTXBENCH_WORKLOADS_REFERENCE_RANDOM_H_
#define PTXBENCH_WORKLOADS_REFERENCE_RANDOM_H_

// Seeded standard-normal inputs generated on the GPU (docs/MEASUREMENT.md:
// inputs come from a recorded seed). Element i of a buffer filled with seed s
// is the same on every GPU and launch shape: it is component i%4 of
// StandardNormal4(s, i/4) in philox.h, rounded to the buffer's type (bf16:
// round to nearest even).

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>
#include <cuda_runtime_api.h>

#include <cstdint>

#include "absl/status/status.h"

namespace ptxbench::reference {

// Enqueue on `stream`; kInternal on a launch error. T: float, __half,
// __nv_bfloat16 (rounded to nearest even), or float8 (__nv_fp8_e4m3,
// __nv_fp8_e5m2: the normal clamped to [-2, 2] before rounding, as
// FlashInfer-Bench draws them: most of the range, no saturation).
// `factor`, `one_in`: the input distributions' scaling
// (workloads/input_distribution.h): the drawn value (float8: clamped) of
// every element, or of one in `one_in` chosen by `seed`, times `factor`
// before rounding.
template <typename T>
absl::Status FillStandardNormal(T* out, int64_t count, uint64_t seed, cudaStream_t stream,
                                float factor = 1.0f, int64_t one_in = 1);

// Integers uniform in [lo, hi) (hi - lo in 1 .. 2^32), element i from
// UniformInt4(seed, i/4) in philox.h. T: int64_t, int32_t, int16_t, int8_t,
// or uint8_t (booleans: bytes in [0, 2)).
template <typename T>
absl::Status FillUniformInt(T* out, int64_t count, int64_t lo, int64_t hi, uint64_t seed,
                            cudaStream_t stream);


}  // namespace ptxbench::reference

#endif  // PTXBENCH_WORKLOADS_REFERENCE_RANDOM_H_
