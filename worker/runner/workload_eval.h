#ifndef PTXBENCH_WORKER_RUNNER_WORKLOAD_EVAL_H_
#define PTXBENCH_WORKER_RUNNER_WORKLOAD_EVAL_H_

// The buffers and checks of one workload inside the runner (runner.h): two
// sets of inputs and outputs that timed calls alternate between, the
// reference's expected outputs for each, and a pristine copy of the inputs of
// the call in flight.

#include <cuda_runtime_api.h>

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "ptxbench/kernel_abi.h"
#include "worker/runner/references.h"
#include "worker/runner/tensors.h"
#include "workloads/definition.h"
#include "workloads/reference/compare.h"

namespace ptxbench::runner {

// What the checks of one call found.
struct CallCheck {
  bool passed = true;
  std::vector<std::string> errors;  // one line per problem, for the model
  double max_abs_error = 0;         // over all outputs
  double max_rel_error = 0;
  double matched_ratio = 1;  // the lowest over the outputs
};

class WorkloadBuffers {
 public:
  static constexpr int kSets = 2;

  // Allocates everything; kResourceExhausted (with the sizes) when the GPU
  // has not enough free memory.
  static absl::StatusOr<WorkloadBuffers> Allocate(const workloads::Definition& definition,
                                                  const std::map<std::string, int64_t>& axes,
                                                  bool with_checks);

  // Fresh inputs for `seed` into set `set`; with checks, also the pristine
  // copy, the expected outputs (by `reference`) and NaN-poisoned outputs.
  // Enqueued on `stream`.
  absl::Status Prepare(Reference& reference, int set, uint64_t seed, cudaStream_t stream);

  // Checks set `set` after a call (waits for the device first).
  absl::StatusOr<CallCheck> Check(int set, const reference::Tolerance& tol, cudaStream_t stream);

  // The views passed to ptxb_entry for set `set`: inputs, then outputs.
  const ptxb::Tensor* const* Views(int set) const { return views_[set].data(); }
  int ViewCount() const { return static_cast<int>(views_[0].size()); }
  std::vector<TensorBuffer>& inputs(int set) { return inputs_[set].tensors(); }
  std::vector<TensorBuffer>& outputs(int set) { return outputs_[set].tensors(); }

 private:
  void BuildViews();

  bool with_checks_ = false;
  TensorSet inputs_[kSets], outputs_[kSets], expected_[kSets], pristine_;
  std::vector<const ptxb::Tensor*> views_[kSets];
};

}  // namespace ptxbench::runner

#endif  // PTXBENCH_WORKER_RUNNER_WORKLOAD_EVAL_H_
