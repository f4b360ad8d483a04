#ifndef PTXBENCH_WORKER_RUNNER_HARNESS_HARNESS_H_
#define PTXBENCH_WORKER_RUNNER_HARNESS_HARNESS_H_

// The harness: the evaluation of one candidate on one GPU, with only
// ptxbench's code in its process (docs/SECURITY.md). It owns every buffer,
// makes the inputs, keeps their pristine copies and the expected outputs,
// checks, times, and writes the results; the code it measures runs in host
// processes (host_loop.h) that see nothing of it but the current workload's
// shared buffers:
//  1. isolation (isolation.h): the candidate host is started suspended in its
//     sandbox, the reference host forked, the harness drops its privileges;
//  2. the reference host calibrates the bracket (bracket.h) and times the
//     production library on every workload — before any submitted code
//     exists on the machine's GPU — but those whose figure an earlier run on
//     this GPU measured (the job's known_references, which the worker keeps
//     for a while: worker/reference_times.h); each trace's log says which,
//     and how long each set-up step took;
//  3. the candidate host calibrates (its own code still), loads the
//     submission, and per workload: `trials` checked calls on fresh inputs,
//     then `trials` timing runs of warm-up + timed calls, every one on fresh
//     inputs, staged after the gate and checked right after its end event.
// Latency = mean over trials of the per-trial median of (bracket - the
// host's calibrated overhead); speedup = reference latency / latency.
//
// Its pieces: harness_internal.h (the class Harness, its steps split by
// concern over harness.cc, reference_timing.cc, candidate_evaluation.cc and
// profile_files.cc), prepared_workload.h (a workload's reference and buffers),
// call_timer.h (one bracketed call in a host), workload_trace.h (what a call
// that ended badly means, the samples, the integrity checks and the figures:
// plain C++, tested without a GPU).
//
// Whatever the candidate host does or however it ends, it can only fail its
// own evaluation: a reply it refuses, a crash, an exit, a closed channel, a
// limit or a hang are RUNTIME_ERROR or TIMEOUT with what happened;
// INFRA_ERROR is for the harness's own failures (and the reference host's).

#include <ostream>
#include <string>

#include "worker/runner/wire/job.h"

namespace ptxbench::runner {

// Evaluates `job` on CUDA device 0, appending result lines (job.h) to `out`.
// `private_dir` is the runner's own directory. Returns an exit code; the
// process must then end with _exit(), without CUDA's teardown, which can wait
// for good on a stream that a broken candidate context holds.
int RunHarness(const RunnerJob& job, const std::string& private_dir, std::ostream& out);

}  // namespace ptxbench::runner

#endif  // PTXBENCH_WORKER_RUNNER_HARNESS_HARNESS_H_
