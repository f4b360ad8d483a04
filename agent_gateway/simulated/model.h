#ifndef PTXBENCH_AGENT_GATEWAY_SIMULATED_MODEL_H_
#define PTXBENCH_AGENT_GATEWAY_SIMULATED_MODEL_H_

// A stand-in for a model provider, for tests and benchmarks of the rest of
// the system: answers look like a model's (a line of prose and one ```cpp
// kernel, or a ```python Triton kernel.py when the task asks for Triton) but
// are generated from a hash. Every answer is labelled simulated.

#include <cstdint>

#include "absl/strings/string_view.h"
#include "ptxbench/v1/common.pb.h"

namespace ptxbench::agent_gateway {

// Thread-safe (no mutable state).
class SimulatedModel {
 public:
  explicit SimulatedModel(uint64_t seed) : seed_(seed) {}

  // Deterministic in (seed, request.model, trajectory_id, turn): the kernel
  // text (and so its hash) differs per turn; about 5% of answers hold no code
  // block. Usage is estimated as characters / 4; cost 0; provider
  // "simulated"; finish_reason "stop". latency_ms is left to the caller.
  ptxbench::v1::LlmResponse Answer(const ptxbench::v1::LlmRequest& request,
                                   absl::string_view trajectory_id, int turn) const;

 private:
  uint64_t seed_;
};

}  // namespace ptxbench::agent_gateway

#endif  // PTXBENCH_AGENT_GATEWAY_SIMULATED_MODEL_H_
