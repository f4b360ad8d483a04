#ifndef PTXBENCH_WORKER_RUNNER_HOSTS_HOST_LOOP_H_
#define PTXBENCH_WORKER_RUNNER_HOSTS_HOST_LOOP_H_

// The loop of a host process (protocol.h): the candidate host, a sandboxed
// process that loads the submission and calls it on request, and the
// reference host, which does the same with the production library before any
// submission is loaded. Both see only the buffers of the workload in
// progress, mapped from the descriptors the harness sends
// (workloads/reference/device_memory.h), and order every call between the
// harness's two shared words (bracket.h): wait for "go", call, write
// "done". A call gets two replies: "enqueued" (or why not), then "finished"
// (or the CUDA error its work ran into). The host's own spin kernel answers
// calibration calls, before anything untrusted is loaded.

#include <functional>
#include <memory>

#include "absl/status/statusor.h"
#include "worker/runner/hosts/candidate.h"
#include "worker/runner/wire/protocol.h"

namespace ptxbench::runner {

// Makes the code a host calls, from the kLoad request.
using Loader = std::function<absl::StatusOr<std::unique_ptr<Candidate>>(const protocol::Request&)>;

// Serves requests on `fd` until kQuit or a closed channel; returns the exit
// code. CUDA device 0 (the sandbox pins one GPU).
int RunHostLoop(int fd, const Loader& loader);

}  // namespace ptxbench::runner

#endif  // PTXBENCH_WORKER_RUNNER_HOSTS_HOST_LOOP_H_
