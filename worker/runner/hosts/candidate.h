#ifndef PTXBENCH_WORKER_RUNNER_HOSTS_CANDIDATE_H_
#define PTXBENCH_WORKER_RUNNER_HOSTS_CANDIDATE_H_

// The candidate kernel as the runner calls it, for both submission formats
// (docs/MEASUREMENT.md, "Building a submission"): a CUDA build's ptxb_entry
// from its kernel.so, or a raw-PTX module (kernel.cubin from ptxas) launched
// through the driver API with its launch spec.

#include <cuda_runtime_api.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "ptxbench/kernel_abi.h"
#include "worker/runner/wire/protocol.h"
#include "workloads/launch_spec.h"

namespace ptxbench::runner {

class Candidate {
 public:
  virtual ~Candidate() = default;
  // Called before the calls of each workload with its kWorkload request (all
  // its axis values, the scalars it fixes).
  virtual absl::Status SetWorkload(const protocol::Request& workload) = 0;
  // One call: launches the work on `stream` (views: inputs, then outputs).
  // An error is the kernel's (an exception in run(), a rejected launch).
  virtual absl::Status Call(const ptxb::Tensor* const* views, int count, cudaStream_t stream) = 0;
  // A reference host's kCompute: the outputs for the harness to keep. Code
  // whose timing calls drop their results (the PyTorch reference) keeps
  // them here; for the rest it is a call.
  virtual absl::Status Compute(const ptxb::Tensor* const* views, int count, cudaStream_t stream) {
    return Call(views, count, stream);
  }
};

// dlopen()s a CUDA submission's library; runs its static constructors.
absl::StatusOr<std::unique_ptr<Candidate>> LoadCudaCandidate(const std::string& library);

// Loads a raw-PTX submission's cubin into the current context. `axis_order`
// is the definition's axes, in order: the kernel's trailing .u64 parameters.
absl::StatusOr<std::unique_ptr<Candidate>> LoadPtxCandidate(const std::string& cubin,
                                                           const workloads::LaunchSpec& spec,
                                                           std::vector<std::string> axis_order);

}  // namespace ptxbench::runner

#endif  // PTXBENCH_WORKER_RUNNER_HOSTS_CANDIDATE_H_
