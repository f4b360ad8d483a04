#ifndef PTXBENCH_WORKER_RUNNER_HOSTS_TENSOR_EXTENTS_H_
#define PTXBENCH_WORKER_RUNNER_HOSTS_TENSOR_EXTENTS_H_

// Each tensor's own bytes inside its allocation, told to compute-sanitizer
// (docs/MEASUREMENT.md, "The memcheck gate"). The harness maps every tensor
// as an allocation rounded up to the granularity (tensors.h), zero-filled
// past its end; memcheck alone would take the whole mapping as the tensor,
// so a kernel that writes a few elements past its output's end, inside the
// padding, passes both the checks and memcheck. Through NVTX's memory API
// (header-only; a no-op unless a tool is attached) each mapping is a pool
// whose one registered region is the tensor: memcheck then reports any
// access to the rest. Runs in the candidate host, before the submission's
// code sees the buffers; the marks are ptxbench's, never the candidate's.

#include <cstddef>
#include <cstdint>
#include <vector>

#include "ptxbench/kernel_abi.h"

namespace ptxbench::runner {

// The bytes a tensor of `view`'s shape and dtype takes.
int64_t ViewBytes(const ptxb::Tensor& view);

class TensorExtents {
 public:
  TensorExtents() = default;
  ~TensorExtents() { Clear(); }
  TensorExtents(const TensorExtents&) = delete;
  TensorExtents& operator=(const TensorExtents&) = delete;

  // `mapped` bytes at `base` hold a tensor of `used` bytes at its start.
  // Call after the CUDA runtime is initialized (NVTX's rule for the
  // sanitizer), before any kernel of the submission may touch the memory.
  void Mark(const void* base, size_t mapped, size_t used);
  // Forgets every mark; before the memory is unmapped.
  void Clear();

 private:
  std::vector<void*> heaps_;  // nvtxMemHeapHandle_t
};

}  // namespace ptxbench::runner

#endif  // PTXBENCH_WORKER_RUNNER_HOSTS_TENSOR_EXTENTS_H_
