#ifndef PTXBENCH_WORKER_RUNNER_RUNNER_H_
#define PTXBENCH_WORKER_RUNNER_RUNNER_H_

// The evaluation of one candidate on one GPU, as DESIGN §5 prescribes. Runs
// inside `ptxbench-runner`, a child process the worker starts in a sandbox
// (worker/sandbox.h), never inside a daemon: the candidate's code runs here.
//
// Order of work, per process:
//  1. For every workload, the reference is timed — before the candidate's
//     library is loaded, so nothing it does at load time can touch the
//     baseline.
//  2. The candidate's kernel.so is loaded (dlopen) and its ptxb_entry found.
//  3. Per workload: `trials` correctness calls, each on fresh seeded inputs
//     with NaN-poisoned outputs, checked against the reference (atol/rtol
//     rule, matched ratio, no NaN/Inf) and for unchanged inputs; then
//     `trials` timing runs of warm-up + timed calls (worker/gpu/timing.h).
//     Every timed call gets freshly generated inputs in the other of two
//     buffer sets (so no call sees the previous call's buffers or values),
//     poisoned outputs, and its outputs and inputs are checked after it: a
//     kernel that caches results across calls fails instead of getting
//     faster. Input generation, the reference's expected outputs and the
//     checks all happen outside the measured span.
// The latency is the mean over trials of each trial's median; the speedup is
// the reference's latency (same method, same process, same GPU) over it.

#include <ostream>

#include "worker/runner/job.h"

namespace ptxbench::runner {

// Evaluates `job` on CUDA device 0 (the sandbox pins one GPU), appending
// result lines (job.h) to `out`, flushed one by one. Returns an exit code.
int RunJob(const RunnerJob& job, std::ostream& out);

// A short self-test of the GPU (context, allocation, a kernel, a cuBLAS call,
// free memory): 0 healthy, 1 not, with one line saying why on `out`.
int CheckHealth(std::ostream& out);

}  // namespace ptxbench::runner

#endif  // PTXBENCH_WORKER_RUNNER_RUNNER_H_
