#ifndef PTXBENCH_WORKER_RUNNER_TENSORS_H_
#define PTXBENCH_WORKER_RUNNER_TENSORS_H_

// Device tensors of one definition's inputs or outputs, allocated by the
// runner, with the ptxb::Tensor views the candidate's run() receives. Each
// tensor is its own allocation (workloads/reference/device_memory.h): private
// to the process, or exportable only as a file descriptor; zero-filled past
// its end up to the allocation granularity.

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "ptxbench/kernel_abi.h"
#include "workloads/definition.h"
#include "workloads/reference/device_memory.h"

namespace ptxbench::runner {

struct TensorBuffer {
  std::string name;
  int64_t count = 0;  // elements
  int64_t bytes = 0;
  ptxb::Tensor view{};  // view.data is the device allocation
  // The allocation, shared by the copies of this buffer.
  std::shared_ptr<const reference::DeviceMemory> memory;
  void* data() const { return view.data; }
  ptxb::DType dtype() const { return view.dtype; }
  // Bytes mapped: `bytes` rounded up to the allocation granularity.
  int64_t allocated() const { return memory ? static_cast<int64_t>(memory->size()) : 0; }
  // A new descriptor for the allocation (the caller closes it);
  // kFailedPrecondition for a private one.
  absl::StatusOr<int> ExportDescriptor() const;
};

// The ABI dtype of a FlashInfer-Trace dtype name, and its size. Every dtype
// of the schema but float4_e2m1 (two values per byte): kUnimplemented.
absl::StatusOr<ptxb::DType> DTypeOf(const workloads::TensorSpec& spec);
int64_t ElementBytes(ptxb::DType dtype);

// Allocates the device memory of its tensors (move-only).
class TensorSet {
 public:
  TensorSet() = default;
  using Sharing = reference::DeviceMemory::Sharing;
  // kUnimplemented for a dtype the runner cannot generate or check yet
  // (DTypeOf), kInvalidArgument for a missing axis value, kResourceExhausted
  // when the GPU has no room.
  static absl::StatusOr<TensorSet> Allocate(const std::vector<workloads::TensorSpec>& specs,
                                            const std::map<std::string, int64_t>& axes,
                                            Sharing sharing);
  TensorSet(TensorSet&& other) noexcept = default;
  TensorSet& operator=(TensorSet&& other) noexcept = default;
  TensorSet(const TensorSet&) = delete;
  TensorSet& operator=(const TensorSet&) = delete;

  std::vector<TensorBuffer>& tensors() { return tensors_; }
  const std::vector<TensorBuffer>& tensors() const { return tensors_; }
  int64_t total_bytes() const;

 private:
  std::vector<TensorBuffer> tensors_;
};

// Bytes a TensorSet of `specs` will take (for the free-memory check).
absl::StatusOr<int64_t> TensorBytes(const std::vector<workloads::TensorSpec>& specs,
                                    const std::map<std::string, int64_t>& axes);

}  // namespace ptxbench::runner

#endif  // PTXBENCH_WORKER_RUNNER_TENSORS_H_
