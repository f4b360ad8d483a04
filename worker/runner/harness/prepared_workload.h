#ifndef PTXBENCH_WORKER_RUNNER_HARNESS_PREPARED_WORKLOAD_H_
#define PTXBENCH_WORKER_RUNNER_HARNESS_PREPARED_WORKLOAD_H_

// One workload as the harness (harness.h) holds it for a run: its
// reference, its buffers (workload_eval.h) with the values it fixes, and
// what the reference measured; how it travels to a host; and the traces of
// the jobs that measure the references only (job.h: reference_only,
// compare_references).

#include <cuda_runtime_api.h>

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "ptxbench/v1/common.pb.h"
#include "worker/runner/hosts/torch_reference.h"
#include "worker/runner/measure/call_timer.h"
#include "worker/runner/measure/fixed_inputs.h"
#include "worker/runner/measure/references.h"
#include "worker/runner/measure/workload_eval.h"
#include "worker/runner/wire/job.h"
#include "worker/runner/wire/protocol.h"
#include "workloads/definition.h"

namespace ptxbench::runner {

struct PreparedWorkload {
  std::unique_ptr<Reference> reference;  // the harness's own: inputs and expected outputs
  std::unique_ptr<Reference> native;     // compare_references: the native one beside it
  std::optional<WorkloadBuffers> buffers;
  std::string error;  // why it cannot be evaluated (infrastructure)
  double reference_ms = 0;
  std::string reference_log;
  std::string inputs_log;  // the input distributions (Harness::SettleInputDistributions)
  // Set-up time: making the harness's reference (its library's handles and
  // modules) and allocating the buffers, seconds.
  double reference_setup_s = 0;
  double allocation_s = 0;
};

// The reference and every buffer of workload `index` of `job`, with the
// values `fixed` holds put on the GPU (and dropped from the host). A
// PyTorch reference computes in its host through `torch_link`. Failures are
// recorded in `error`.
PreparedWorkload PrepareWorkload(const RunnerJob& job, const workloads::Definition& definition,
                                 size_t index, bool use_torch, TorchHostLink* torch_link,
                                 absl::StatusOr<std::vector<FixedValue>>& fixed);

// The kWorkload request for `workload`, carrying `tensors`.
protocol::Request WorkloadRequest(const workloads::Definition& definition,
                                  const WorkloadSpec& workload,
                                  const std::vector<protocol::TensorMeta>& tensors);
// The workload to `host` with its shared buffers (their descriptors
// attached); kInternal when they cannot be exported, else the channel's
// answer.
absl::StatusOr<protocol::Reply> SendWorkload(HostChannel& host,
                                             const workloads::Definition& definition,
                                             const WorkloadSpec& workload,
                                             const WorkloadBuffers& buffers,
                                             absl::Duration timeout);

// reference_only: the reference's figures as the trace.
ptxbench::v1::WorkloadTrace ReferenceFiguresTrace(const WorkloadSpec& workload,
                                                  const PreparedWorkload& w);
// compare_references: the PyTorch reference's outputs (in buffer set 0,
// checked as a candidate's are) against the native one's, on fresh inputs
// per trial (from `seed`); its time as the reference time.
ptxbench::v1::WorkloadTrace CompareReferencesTrace(const WorkloadSpec& workload,
                                                   PreparedWorkload& w, uint64_t seed, int trials,
                                                   const reference::Tolerance& tol,
                                                   cudaStream_t stream);

}  // namespace ptxbench::runner

#endif  // PTXBENCH_WORKER_RUNNER_HARNESS_PREPARED_WORKLOAD_H_
