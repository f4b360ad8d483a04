#ifndef PTXBENCH_WORKLOADS_REFERENCE_TESTING_FILL_NAN_H_
#define PTXBENCH_WORKLOADS_REFERENCE_TESTING_FILL_NAN_H_

// A bf16 buffer filled with NaN, as the harness poisons an output before a
// call (docs/MEASUREMENT.md; the harness itself does it with a memset in
// worker/runner/measure/workload_eval.cc). For the GPU tests and benchmarks that
// check a reference writes every element.

#include <cuda_bf16.h>
#include <cuda_runtime_api.h>

#include <cstdint>

#include "absl/status/status.h"

namespace ptxbench::reference::testing {

// Writes NaN into every element. Enqueued on `stream`; kInternal on a launch
// error.
absl::Status FillNaN(__nv_bfloat16* out, int64_t count, cudaStream_t stream);

}  // namespace ptxbench::reference::testing

#endif  // PTXBENCH_WORKLOADS_REFERENCE_TESTING_FILL_NAN_H_
