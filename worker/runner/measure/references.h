#ifndef PTXBENCH_WORKER_RUNNER_REFERENCES_H_
#define PTXBENCH_WORKER_RUNNER_REFERENCES_H_

// The reference of a definition, as the harness uses it: it makes a
// workload's inputs from a seed and computes the expected outputs. The
// native ones use the production library (cuBLAS, cuDNN), which is also the
// baseline a candidate is timed against; the PyTorch one
// (torch_reference.h) runs the definition's own reference source.

#include <cuda_runtime_api.h>

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "worker/runner/measure/tensors.h"
#include "workloads/definition.h"

namespace ptxbench::runner {

class Reference {
 public:
  virtual ~Reference() = default;
  // The library it stands for, e.g. "cuBLAS".
  virtual std::string Name() const = 0;
  // Writes fresh inputs for `seed` into every input that is not `fixed`
  // (those hold the workload's own values already). Floats are standard
  // normal, rounded to the dtype (float8: clamped to [-2, 2] first), scaled
  // as `distribution` says (workloads/input_distribution.h); integers
  // uniform in [-1024, 1024) (int8: [-128, 128)); booleans 0 or 1, the
  // distributions FlashInfer-Bench draws, whatever `distribution`. Input i
  // uses a seed derived from (seed, i). Enqueued on `stream`. Definitions
  // whose inputs depend on each other (the attention backward's O and L)
  // override it.
  virtual absl::Status FillInputs(uint64_t seed, workloads::InputDistribution distribution,
                                  std::vector<TensorBuffer>& inputs,
                                  const std::vector<bool>& fixed, cudaStream_t stream);
  // Enqueues the outputs for `inputs` on `stream`, allocating nothing.
  virtual absl::Status Run(const std::vector<TensorBuffer>& inputs,
                           std::vector<TensorBuffer>& outputs, cudaStream_t stream) = 0;
};

// The reference of `definition` at `axes` (all axis values). kUnimplemented
// naming the definition when this build has no reference for it.
absl::StatusOr<std::unique_ptr<Reference>> MakeReference(
    const workloads::Definition& definition, const std::map<std::string, int64_t>& axes);

// Seed of input `index` of a fill with `seed` (splitmix64 of both).
uint64_t InputSeed(uint64_t seed, int index);

}  // namespace ptxbench::runner

#endif  // PTXBENCH_WORKER_RUNNER_REFERENCES_H_
