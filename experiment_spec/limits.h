#ifndef PTXBENCH_EXPERIMENT_SPEC_LIMITS_H_
#define PTXBENCH_EXPERIMENT_SPEC_LIMITS_H_

// The spec's limits and rules that others check too, before a spec exists or
// after it was stored: a pipeline's derive stage writes a spec from its own
// parameters, and `ptxbench extend` raises a stored experiment's turn limit.
// They read the limit and the rule here, so the pipeline file, the spec and
// the scheduler cannot drift apart.

#include <cstdint>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "common/json_reader.h"

namespace ptxbench::experiment_spec {

// The most turns a trajectory may have: a spec's num_turns, an agent's
// max_evaluations, a PTXBench run's max_turns, a synthesis row's max_passes,
// `ptxbench extend --turns`, and a pipeline's derive num_turns and select
// max_turn.
inline constexpr int64_t kMaxTurns = 1000;

// An agent session has no turn limit of its own: its evaluations are limited
// by agent.max_evaluations. The error for a num_turns given with an agent
// anyway (`value` at `field` of `json`'s document), `where` saying where the
// agent comes from ("in agent mode", "with an agent").
absl::Status NoTurnsWithAgent(const JsonReader& json, absl::string_view field,
                              const StrictJson& value, absl::string_view where);

}  // namespace ptxbench::experiment_spec

#endif  // PTXBENCH_EXPERIMENT_SPEC_LIMITS_H_
