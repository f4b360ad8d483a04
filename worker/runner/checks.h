#ifndef PTXBENCH_WORKER_RUNNER_CHECKS_H_
#define PTXBENCH_WORKER_RUNNER_CHECKS_H_

// The correctness checks of DESIGN §5 done on the GPU, so that the output of
// every timed call can be checked without copying it to the host.

#include <cuda_runtime_api.h>

#include <cstdint>

#include "absl/status/statusor.h"
#include "workloads/reference/compare.h"

namespace ptxbench::runner {

enum class ElementType { kBFloat16, kFloat32 };

// The rule of reference::CompareOutputs (compare.h) applied on the device to
// `count` elements of `actual` against `expected`, both of `type`. Enqueued
// on `stream` and waited for. kInternal on a CUDA error (which, after a
// candidate's illegal access, is the sticky error of the context).
absl::StatusOr<reference::CompareResult> CompareOnGpu(const void* actual, const void* expected,
                                                      ElementType type, int64_t count,
                                                      const reference::Tolerance& tol,
                                                      cudaStream_t stream);

// Number of bytes that differ between two device buffers of `bytes` bytes
// (a kernel that wrote into an input). Waited for.
absl::StatusOr<int64_t> CountChangedBytes(const void* a, const void* b, int64_t bytes,
                                          cudaStream_t stream);

}  // namespace ptxbench::runner

#endif  // PTXBENCH_WORKER_RUNNER_CHECKS_H_
