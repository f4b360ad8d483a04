#ifndef PTXBENCH_WORKER_RUNNER_HOSTS_KERNEL_CENSUS_H_
#define PTXBENCH_WORKER_RUNNER_HOSTS_KERNEL_CENSUS_H_

// The candidate host's tracer (census.h): CUPTI's activity records of every
// kernel, memset and copy the process ran on the GPU, and the images the
// driver loaded, each hashed and read for the kernels it defines. Started
// by the host loop at set-up, before any submitted code is loaded, so that
// every image the submission brings is seen loading after it
// (MarkSubmission).
//
// Only a host whose environment names CUPTI (PTXB_CUPTI: the harness mounts
// its own libcupti into the view, which masks every other vendor library)
// traces; it uses the CUPTI this process already loaded if any (torch's, in
// a Triton host), else that one. It is opened, never linked: a host
// without it still runs, and says at set-up why it has no census.

#include <string>

#include "absl/status/status.h"
#include "worker/runner/measure/census.h"

namespace ptxbench::runner {

class KernelTracer {
 public:
  // Starts tracing in this process (once; later calls answer as the first).
  static absl::Status Start();
  static bool running();
  // Images loaded from now on are the submission's side ('a' on the wire).
  static void MarkSubmission();
  // Forgets what ran so far (before a call).
  static void Discard();
  // What ran since the last Discard or Take, once the GPU finished it.
  static CallCensus Take();
};

}  // namespace ptxbench::runner

#endif  // PTXBENCH_WORKER_RUNNER_HOSTS_KERNEL_CENSUS_H_
