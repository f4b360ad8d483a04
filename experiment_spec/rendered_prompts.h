#ifndef PTXBENCH_EXPERIMENT_SPEC_RENDERED_PROMPTS_H_
#define PTXBENCH_EXPERIMENT_SPEC_RENDERED_PROMPTS_H_

// Every prompt of an expanded experiment, rendered: the system prompt of
// each tag and each distinct task prompt. What a trajectory is shown is a
// rule of the spec (a list item's workloads, a fix-it item's kernel and log,
// a tag the submission brought, a synthesis row's prompt), so it lives with
// the expansion; the texts themselves are the prompt registry's
// (prompts/prompts.h). Pure and thread-compatible: the scheduler renders an
// experiment off its writer thread before it stores anything.

#include <map>
#include <string>

#include "absl/status/statusor.h"
#include "experiment_spec/spec.h"
#include "prompts/prompts.h"
#include "workloads/registry.h"

namespace ptxbench::experiment_spec {

struct RenderedPrompts {
  std::map<std::string, std::string> system_by_tag;
  // Key: TaskPromptKey(trajectory).
  std::map<std::string, std::string> task_by_key;
};

// Trajectories with the same task prompt share one: the definition, target,
// turns, workloads, the kernel to repair and a synthesis row's prompt.
std::string TaskPromptKey(const TrajectorySpec& t);

// Every prompt of `x`. A synthesis experiment's are its spec's, as written;
// every other's system prompts are each tag's text (or the text the
// submission brought for it) with the ABI description of its language, and
// its task prompts show the definition with the workloads the trajectory is
// evaluated on, followed by a fix-it item's kernel and log. `x` is an
// expansion of ExpandSpec or OneOffEvalSpec against these registries.
absl::StatusOr<RenderedPrompts> RenderPrompts(const ExpandedExperiment& x,
                                              const workloads::DefinitionRegistry& definitions,
                                              const prompts::PromptRegistry& prompts);

}  // namespace ptxbench::experiment_spec

#endif  // PTXBENCH_EXPERIMENT_SPEC_RENDERED_PROMPTS_H_
