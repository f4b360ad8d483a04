#ifndef PTXBENCH_WORKER_RUNNER_CHECKS_H_
#define PTXBENCH_WORKER_RUNNER_CHECKS_H_

// The correctness checks of docs/MEASUREMENT.md ("Correctness checks") done on
// the GPU, so that the output of every timed call can be checked without
// copying it to the host.

#include <cuda_runtime_api.h>

#include <cstdint>

#include "absl/status/statusor.h"
#include "ptxbench/kernel_abi.h"
#include "workloads/reference/compare.h"

namespace ptxbench::runner {

// The checks write into counters in device memory and are enqueued without
// waiting (for the harness, whose stream may still be held by a gate:
// nothing here synchronizes or allocates). Read the counters once the
// stream finished; a CUDA error then (after a candidate's illegal access,
// the sticky error of the context) is the caller's to report.
struct CompareCounters {
  unsigned long long matched;
  unsigned long long nonfinite;
  unsigned long long first_mismatch;  // ULLONG_MAX when none
  unsigned int max_abs_bits;          // float bits (non-negative floats order like them)
  unsigned int max_rel_bits;
  // Elements whose bits differ from element 0's (CompareResult::constant).
  unsigned long long actual_varying;
  unsigned long long expected_varying;
  // Over the matched elements (CompareResult::relative_l2).
  double matched_error_sq;
  double matched_expected_sq;
};

// The rule of reference::CompareOutputs (compare.h) applied on the device to
// `count` elements of `actual` against `expected`, both of `type` (any dtype
// but float4: floats are compared in float32, integers and booleans in
// float64 so that large integers stay exact), with one addition: the error is
// judged after subtracting one unit in the last place of the expected value
// in its dtype. The expected values are the reference's own outputs, rounded
// to the dtype: they are no closer than half a step to the exact result, and
// two correct results rounded independently differ by a step. Seen on an H200 (mha_bwd_d128_causal, S=4096): a kernel
// computing in fp32 throughout differed from cuDNN in 2 of 100,663,296 dQ
// elements by 2 steps (1.0156 vs 1.0312: |d| = 0.0156 > 0.01 and 1.5% > 1%),
// where cuDNN itself is up to 0.0103 from an fp32 computation. float32
// outputs get no such allowance (their step is far below any tolerance), nor
// do integers (exact).
// The max errors are reported without it (CompareResultOf).
absl::Status EnqueueCompare(const void* actual, const void* expected, ptxb::DType type,
                            int64_t count, const reference::Tolerance& tol,
                            CompareCounters* device_counters, cudaStream_t stream);
// Runs every check kernel once (each output dtype's compare, the input
// check, the memset and device-to-device copy a call's staging uses) and
// waits: the runner loads modules lazily (worker/runner/main.cc), and these
// are launched while a call's gate holds the harness's stream, where a
// module load would wait on that stream for good. Going through the same
// dispatch as a call, every dtype the checks support is covered.
absl::Status LoadCheckKernels(cudaStream_t stream);

// Counts the bytes that differ between two device buffers of `bytes` bytes
// (a kernel that wrote into an input) into `device_count`.
absl::Status EnqueueCountChangedBytes(const void* a, const void* b, int64_t bytes,
                                      unsigned long long* device_count, cudaStream_t stream);
// The verdict of counters read back from the device.
reference::CompareResult CompareResultOf(const CompareCounters& counters, int64_t count,
                                         const reference::Tolerance& tol);

}  // namespace ptxbench::runner

#endif  // PTXBENCH_WORKER_RUNNER_CHECKS_H_
