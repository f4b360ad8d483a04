#ifndef PTXBENCH_WORKER_RUNNER_TENSORS_H_
#define PTXBENCH_WORKER_RUNNER_TENSORS_H_

// Device tensors of one definition's inputs or outputs, allocated by the
// runner, with the ptxb::Tensor views the candidate's run() receives.

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "ptxbench/kernel_abi.h"
#include "workloads/definition.h"

namespace ptxbench::runner {

struct TensorBuffer {
  std::string name;
  int64_t count = 0;  // elements
  int64_t bytes = 0;
  ptxb::Tensor view{};  // view.data is the device allocation
  void* data() const { return view.data; }
  ptxb::DType dtype() const { return view.dtype; }
};

// The ABI dtype of a FlashInfer-Trace dtype name, and its size. Every dtype
// of the schema but float4_e2m1 (two values per byte): kUnimplemented.
absl::StatusOr<ptxb::DType> DTypeOf(const workloads::TensorSpec& spec);
int64_t ElementBytes(ptxb::DType dtype);

// Owns the device memory of its tensors (move-only).
class TensorSet {
 public:
  TensorSet() = default;
  // kUnimplemented for a dtype the runner cannot generate or check yet
  // (DTypeOf), kInvalidArgument for a missing axis value, kResourceExhausted
  // when the GPU has no room.
  static absl::StatusOr<TensorSet> Allocate(const std::vector<workloads::TensorSpec>& specs,
                                            const std::map<std::string, int64_t>& axes);
  TensorSet(TensorSet&& other) noexcept;
  TensorSet& operator=(TensorSet&& other) noexcept;
  TensorSet(const TensorSet&) = delete;
  TensorSet& operator=(const TensorSet&) = delete;
  ~TensorSet();

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
