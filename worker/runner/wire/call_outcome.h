#ifndef PTXBENCH_WORKER_RUNNER_WIRE_CALL_OUTCOME_H_
#define PTXBENCH_WORKER_RUNNER_WIRE_CALL_OUTCOME_H_

// How one call in a host ended and what its checks found, in the harness's
// terms (harness.h). Plain C++: the harness's bookkeeping of them
// (workload_trace.h) builds and is tested without CUDA.

#include <string>
#include <vector>

namespace ptxbench::runner {

// How a call ended, from the harness's side.
enum class CallEnd {
  kOk,
  kRefused,  // the host said no (run() failed, or a CUDA error in the call's work)
  kGone,     // the host vanished or broke the protocol
  kTimeout,  // no reply, or its work unfinished, within the call deadline
  kInfra,    // the harness's own CUDA failure
};
struct CallResult {
  CallEnd end = CallEnd::kOk;
  std::string message;
  double bracket_ms = 0;
  bool gate_forced = false;  // the gate was opened before the host enqueued
  std::string census;        // what the host said ran (census.h's wire form)
};

// What the checks of one call found.
struct CallCheck {
  bool passed = true;
  std::vector<std::string> errors;  // one line per problem, for the model
  double max_abs_error = 0;         // over all outputs
  double max_rel_error = 0;
  double matched_ratio = 1;  // the lowest over the outputs
};

}  // namespace ptxbench::runner

#endif  // PTXBENCH_WORKER_RUNNER_WIRE_CALL_OUTCOME_H_
