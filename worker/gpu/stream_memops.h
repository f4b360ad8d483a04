#ifndef PTXBENCH_WORKER_GPU_STREAM_MEMOPS_H_
#define PTXBENCH_WORKER_GPU_STREAM_MEMOPS_H_

// CUDA's stream memory operations: a 32-bit word of device memory written,
// or waited on, in stream order (cuStreamWriteValue32, cuStreamWaitValue32).
// Two processes that share one allocation (workloads/reference/
// device_memory.h) order their streams with them (worker/runner/measure/bracket.h).
// Reached through the runtime's driver entry points, so binaries that link
// this start where there is no driver. Copyable; thread-compatible.

#include <cuda_runtime_api.h>

#include <cstdint>

#include "absl/status/statusor.h"

namespace ptxbench::gpu {

class StreamMemOps {
 public:
  StreamMemOps() = default;
  // kFailedPrecondition when the driver has no stream memory operations.
  static absl::StatusOr<StreamMemOps> Load();

  // Enqueues: `*word = value` once the stream's earlier work finished (and
  // its writes are visible).
  absl::Status Write(cudaStream_t stream, void* word, uint32_t value) const;
  // Enqueues: the stream waits until `*word == value` (WaitEqual) or
  // `*word >= value` (WaitAtLeast, unsigned).
  absl::Status WaitEqual(cudaStream_t stream, void* word, uint32_t value) const;
  absl::Status WaitAtLeast(cudaStream_t stream, void* word, uint32_t value) const;

 private:
  using ValueFn = int (*)(cudaStream_t, unsigned long long, uint32_t, unsigned int);
  absl::Status Wait(cudaStream_t stream, void* word, uint32_t value, unsigned int flags) const;

  ValueFn write_ = nullptr;
  ValueFn wait_ = nullptr;
};

}  // namespace ptxbench::gpu

#endif  // PTXBENCH_WORKER_GPU_STREAM_MEMOPS_H_
