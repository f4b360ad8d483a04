#ifndef PTXBENCH_WORKER_RUNNER_TORCH_REFERENCE_H_
#define PTXBENCH_WORKER_RUNNER_TORCH_REFERENCE_H_

// The PyTorch reference of a definition, on the harness's side. The
// reference host torch_host.py, started with the worker's Python
// (--torch-python), runs the definition's own reference source; the harness
// keeps everything else — inputs, expected outputs, checks, timing — as for
// a native reference:
//  - it is timed like any host (a bracket minus its calibrated call cost);
//    its timing calls drop their results, so the figure is the reference's
//    own work, not a copy into the harness's buffers;
//  - it computes the expected outputs of every checked call (kCompute) into
//    the harness's private buffers, the only process besides the harness
//    that is given them. It stays up for the whole evaluation for that.
// It runs ptxbench's script and the dataset's source, never a submission's:
// a child of the harness with its uid, outside the candidate's sandbox
// (docs/SECURITY.md).

#include <sys/types.h>

#include <map>
#include <set>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "worker/runner/hosts/isolation.h"
#include "worker/runner/measure/call_timer.h"
#include "worker/runner/measure/references.h"
#include "worker/runner/wire/job.h"

namespace ptxbench::runner {

// Forks the reference host (Isolation::ForkReferenceHost) and execs
// `spec.python spec.script` in it with `channel` as its fd 3 and the
// descriptors in `close_fds` closed. kFailedPrecondition when the worker has
// no Python with torch.
absl::StatusOr<pid_t> StartTorchHost(Isolation& isolation, const TorchHostSpec& spec, int channel,
                                     const std::vector<int>& close_fds);

// The harness's channel to the reference host, shared by the references of
// every workload. Not thread-safe (the harness's thread only).
class TorchHostLink {
 public:
  explicit TorchHostLink(absl::Duration timeout) : timeout_(timeout) {}
  void Attach(HostChannel* channel) { channel_ = channel; }
  // The host now has workload `index` (the harness sent its kWorkload, which
  // also made it drop every buffer it was given before).
  void Selected(size_t index) {
    current_ = index;
    sent_.clear();
  }
  // The outputs of the reference for `in` written into `out` (the harness's
  // own buffers, exported to this host only), once workload `index` with
  // `workload` (its kWorkload request, without buffers) is selected. Waits.
  absl::Status Compute(size_t index, const protocol::Request& workload,
                       const std::vector<TensorBuffer>& in, std::vector<TensorBuffer>& out);

 private:
  // `t` as a kCompute tensor; its descriptor appended to `descriptors` when
  // the host does not have it yet.
  absl::StatusOr<protocol::TensorMeta> Export(const TensorBuffer& t, std::vector<int>* descriptors);
  absl::Status Ask(const protocol::Request& r, const std::vector<int>& descriptors = {});

  const absl::Duration timeout_;
  HostChannel* channel_ = nullptr;
  size_t current_ = ~size_t{0};
  std::map<const void*, int64_t> ids_;  // device pointer -> buffer id
  std::set<int64_t> sent_;              // the buffers the host has for this workload
};

class TorchReference final : public Reference {
 public:
  // `workload`: the kWorkload request of workload `index` (axes, scalars).
  TorchReference(TorchHostLink* link, size_t index, protocol::Request workload)
      : link_(link), index_(index), workload_(std::move(workload)) {}
  std::string Name() const override { return "PyTorch"; }
  // Waits for `stream` (the inputs), then for the host's computation.
  absl::Status Run(const std::vector<TensorBuffer>& inputs, std::vector<TensorBuffer>& outputs,
                   cudaStream_t stream) override;

 private:
  TorchHostLink* link_;
  size_t index_;
  protocol::Request workload_;
};

}  // namespace ptxbench::runner

#endif  // PTXBENCH_WORKER_RUNNER_TORCH_REFERENCE_H_
