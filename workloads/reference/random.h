#ifndef PTXBENCH_WORKLOADS_REFERENCE_RANDOM_H_
#define PTXBENCH_WORKLOADS_REFERENCE_RANDOM_H_

// Seeded standard-normal inputs generated on the GPU (DESIGN §5: inputs come
// from a recorded seed). Element i of a buffer filled with seed s is the same
// on every GPU and launch shape: it is component i%4 of StandardNormal4(s, i/4)
// in philox.h, rounded to the buffer's type (bf16: round to nearest even).

#include <cuda_bf16.h>
#include <cuda_runtime_api.h>

#include <cstdint>

#include "absl/status/status.h"

namespace ptxbench::reference {

// Enqueue on `stream`; kInternal on a launch error.
absl::Status FillStandardNormal(__nv_bfloat16* out, int64_t count, uint64_t seed,
                                cudaStream_t stream);
absl::Status FillStandardNormal(float* out, int64_t count, uint64_t seed, cudaStream_t stream);

// Writes NaN into every element (poisoned outputs, DESIGN §5).
absl::Status FillNaN(__nv_bfloat16* out, int64_t count, cudaStream_t stream);

}  // namespace ptxbench::reference

#endif  // PTXBENCH_WORKLOADS_REFERENCE_RANDOM_H_
