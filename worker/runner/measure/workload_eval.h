#ifndef PTXBENCH_WORKER_RUNNER_WORKLOAD_EVAL_H_
#define PTXBENCH_WORKER_RUNNER_WORKLOAD_EVAL_H_

// The buffers and checks of one workload in the harness (harness.h), each
// its own allocation (workloads/reference/device_memory.h).
//
// Shared with a host process, by file descriptor: two sets of inputs and
// outputs that calls alternate between. Private to the harness: the
// pristine inputs of the call in flight and the expected outputs for them,
// the check counters and the values a workload fixes; a PyTorch reference
// host (torch_reference.h) alone is also given the first two, to compute
// the expected outputs into. No other process can open any of them.
//
// Per call: Prepare (fresh inputs into the pristine copy, the reference's
// expected outputs from them) before the call's gate; Stage (the pristine
// inputs copied into the shared set, its outputs poisoned) inside it, so no
// host sees the inputs before the harness's start event; EnqueueChecks right
// after the end event; ReadChecks once the stream finished.

#include <cuda_runtime_api.h>

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "ptxbench/kernel_abi.h"
#include "worker/runner/measure/checks.h"
#include "worker/runner/measure/references.h"
#include "worker/runner/measure/tensors.h"
#include "worker/runner/wire/call_outcome.h"
#include "worker/runner/wire/protocol.h"
#include "workloads/definition.h"
#include "workloads/reference/compare.h"
#include "workloads/reference/device_memory.h"

namespace ptxbench::runner {

class WorkloadBuffers {
 public:
  static constexpr int kSets = 2;

  // Allocates everything; kResourceExhausted (with the sizes) when the GPU
  // has not enough free memory. `reference_host_computes`: the expected
  // outputs and pristine inputs can be exported to the reference host.
  static absl::StatusOr<WorkloadBuffers> Allocate(const workloads::Definition& definition,
                                                  const std::map<std::string, int64_t>& axes,
                                                  bool reference_host_computes);
  WorkloadBuffers(WorkloadBuffers&& other) noexcept = default;
  WorkloadBuffers& operator=(WorkloadBuffers&& other) noexcept = default;

  // Input `index` becomes `bytes` (its exact size) in every call: a value
  // the workload fixes (a dataset's safetensors or scalar source).
  absl::Status Fix(int index, const std::string& bytes);
  // Fresh inputs for `seed` into the pristine copy (the fixed ones copied),
  // drawn from the distribution the seed chooses among distributions()
  // (workloads::DistributionForCall); with `expected`, the reference's
  // outputs for them too. Enqueued on `stream`, but for a reference that
  // computes in another process (torch_reference.h), which waits.
  absl::Status Prepare(Reference& reference, uint64_t seed, bool expected, cudaStream_t stream);
  // The distributions calls draw from: the definition's, less those
  // KeepFiniteDistributions dropped.
  const std::vector<workloads::InputDistribution>& distributions() const { return distributions_; }
  workloads::InputDistribution DistributionOf(uint64_t seed) const {
    return workloads::DistributionForCall(seed, distributions_);
  }
  // Drops each distribution (but normal) for whose inputs, drawn once with
  // `seed`, the reference's outputs are not all finite (a workload whose
  // computation overflows on inputs scaled by 64, say): every kernel would
  // fail such a call. Waits for `stream`. Returns the dropped ones.
  absl::StatusOr<std::vector<workloads::InputDistribution>> KeepFiniteDistributions(
      Reference& reference, uint64_t seed, cudaStream_t stream);
  // The pristine inputs into set `set`, its outputs NaN-poisoned. Enqueued;
  // never waits.
  absl::Status Stage(int set, cudaStream_t stream);
  // The checks of set `set` against the expected outputs and the pristine
  // inputs. Enqueued; never waits.
  absl::Status EnqueueChecks(int set, const reference::Tolerance& tol, cudaStream_t stream);
  // What EnqueueChecks found, once `stream` finished.
  absl::StatusOr<CallCheck> ReadChecks(int set, const reference::Tolerance& tol);

  // The shared buffers, as a host maps them (kWorkload): the tensors, and
  // their descriptors in the order they travel (the caller closes them).
  struct Exported {
    std::vector<protocol::TensorMeta> tensors;
    std::vector<int> descriptors;
  };
  absl::StatusOr<Exported> Export() const;
  int num_inputs() const { return static_cast<int>(pristine_.tensors().size()); }
  // The shared buffers of set `set` (benchmarks time the reference on them
  // in one process, the way ptxbench measured before the harness split).
  std::vector<TensorBuffer>& inputs(int set) { return inputs_[set].tensors(); }
  std::vector<TensorBuffer>& outputs(int set) { return outputs_[set].tensors(); }

 private:
  WorkloadBuffers() = default;

  absl::Status PrepareWith(Reference& reference, uint64_t seed,
                           workloads::InputDistribution distribution, bool expected,
                           cudaStream_t stream);

  TensorSet inputs_[kSets], outputs_[kSets], expected_, pristine_;
  std::vector<workloads::InputDistribution> distributions_;
  // Per input: its fixed value, or empty.
  std::vector<reference::DeviceMemory> fixed_;
  // The check counters: one CompareCounters per output, then one count of
  // changed bytes per input.
  reference::DeviceMemory counters_;
  CompareCounters* compare_slots() const { return static_cast<CompareCounters*>(counters_.data()); }
  unsigned long long* changed_slots() const {
    return reinterpret_cast<unsigned long long*>(compare_slots() + outputs_[0].tensors().size());
  }
};

}  // namespace ptxbench::runner

#endif  // PTXBENCH_WORKER_RUNNER_WORKLOAD_EVAL_H_
