#ifndef PTXBENCH_WORKER_RUNNER_HOSTS_REFERENCE_HOST_H_
#define PTXBENCH_WORKER_RUNNER_HOSTS_REFERENCE_HOST_H_

// The reference host's code (host_loop.h): the definition's production
// library (references.h) behind the Candidate interface, so the reference
// is called and timed exactly as a submission is.

#include <memory>

#include "worker/runner/hosts/candidate.h"
#include "workloads/definition.h"

namespace ptxbench::runner {

// `definition` must outlive the result.
std::unique_ptr<Candidate> MakeReferenceTarget(const workloads::Definition& definition);

}  // namespace ptxbench::runner

#endif  // PTXBENCH_WORKER_RUNNER_HOSTS_REFERENCE_HOST_H_
