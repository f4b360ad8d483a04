#ifndef PTXBENCH_WORKLOADS_REFERENCE_DEVICE_COMPARE_H_
#define PTXBENCH_WORKLOADS_REFERENCE_DEVICE_COMPARE_H_

// CompareOutputs (compare.h) for device buffers: copies both to the host
// (synchronously, after all work on the device) and applies the rule there.

#include <cuda_bf16.h>

#include <cstdint>

#include "absl/status/statusor.h"
#include "workloads/reference/compare.h"

namespace ptxbench::reference {

// kInternal when a copy fails.
absl::StatusOr<CompareResult> CompareOnDevice(const __nv_bfloat16* actual, const float* expected,
                                              int64_t count, const Tolerance& tol = {});

}  // namespace ptxbench::reference

#endif  // PTXBENCH_WORKLOADS_REFERENCE_DEVICE_COMPARE_H_
