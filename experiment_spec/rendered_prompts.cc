#include "experiment_spec/rendered_prompts.h"

#include <algorithm>
#include <set>

#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "common/status_macros.h"

namespace ptxbench::experiment_spec {

std::string TaskPromptKey(const TrajectorySpec& t) {
  // Workload ids hold no control characters (scheduler/store/schema.h).
  return absl::StrFormat("%s|%.6g|%d|%s|%s|%s|%s", t.definition, t.target_speedup, t.num_turns,
                         absl::StrJoin(t.workloads, "\n"), absl::StrJoin(t.held_out, "\n"),
                         t.repair_sha256, t.synthesis_sha256);
}

absl::StatusOr<RenderedPrompts> RenderPrompts(const ExpandedExperiment& x,
                                              const workloads::DefinitionRegistry& definitions,
                                              const prompts::PromptRegistry& prompts) {
  RenderedPrompts out;
  if (x.synthesis) {
    // A synthesis experiment's prompts are its spec's, as written.
    for (const TrajectorySpec& t : x.trajectories) {
      out.system_by_tag[t.prompt_tag] = x.synthesis->system;
      out.task_by_key[TaskPromptKey(t)] = t.synthesis_prompt;
    }
    return out;
  }
  std::set<std::string> tags;
  for (const TrajectorySpec& t : x.trajectories) {
    if (tags.insert(t.prompt_tag).second) {
      auto brought = x.submitted_prompts.find(t.prompt_tag);
      PTXB_ASSIGN_OR_RETURN(
          out.system_by_tag[t.prompt_tag],
          brought != x.submitted_prompts.end()
              ? prompts.WithAbi(brought->second, x.language, x.architectures)
              : prompts.RenderSystemPrompt(t.prompt_tag, x.language, x.architectures));
    }
    std::string key = TaskPromptKey(t);
    if (!out.task_by_key.count(key)) {
      workloads::Definition definition = **definitions.Find(t.definition);
      // The model is shown the workloads it is evaluated on, but for those
      // held out from it.
      std::erase_if(definition.workloads, [&](const workloads::Workload& w) {
        const bool evaluated = t.workloads.empty() || std::find(t.workloads.begin(),
                                                                t.workloads.end(),
                                                                w.uuid) != t.workloads.end();
        const bool held_out =
            std::find(t.held_out.begin(), t.held_out.end(), w.uuid) != t.held_out.end();
        return !evaluated || held_out;
      });
      out.task_by_key[key] = prompts::PromptRegistry::RenderTaskPrompt(
          definition, x.language, t.target_speedup, t.num_turns, x.architectures);
      if (!t.repair_kernel.empty()) {
        out.task_by_key[key] +=
            prompts::PromptRegistry::RenderRepairPrompt(t.repair_kernel, t.repair_log, x.language);
      }
    }
  }
  return out;
}

}  // namespace ptxbench::experiment_spec
