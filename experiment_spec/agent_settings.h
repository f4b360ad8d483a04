#ifndef PTXBENCH_EXPERIMENT_SPEC_AGENT_SETTINGS_H_
#define PTXBENCH_EXPERIMENT_SPEC_AGENT_SETTINGS_H_

// The "agent" object of a spec in agent mode ("mode": "agent"; docs/AGENTS.md,
// docs/FORMATS.md "Agent mode"): which coding-agent CLI runs each
// trajectory's session, and the budgets that end it. Read by the strict spec
// reader (spec.h); its canonical JSON is part of the spec's hash.

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "nlohmann/json.hpp"

namespace ptxbench::experiment_spec {

struct AgentSettings {
  std::string cli;          // agents/clis.h name
  std::string cli_version;  // its pinned version
  std::string effort;       // "" = the CLI's default; only for CLIs that take one
  std::string eval_interface = "mcp";  // mcp | command | both
  bool shell = true;                   // false: file tools only
  std::string task_view = "full";      // full | multiturn
  // Budgets; 0 = none, but the token budget, which is required.
  int64_t token_budget = 0;
  double max_cost_usd = 0;
  int64_t max_evaluations = 0;
  int64_t max_model_calls = 0;
  // Seconds. Time blocked in an evaluation counts towards none of them.
  int64_t wall_time_s = 24 * 3600;
  int64_t stall_timeout_s = 600;
  int64_t eval_wait_timeout_s = 900;
  bool stop_at_target = false;
  bool show_budget = true;  // a budget line after each evaluation's feedback
  std::string final_evaluation = "none";  // none | if-changed
  std::string toolchain = "none";         // none | cuda (read-only, no GPU)
  // What the workspace starts with: "none" (an empty kernel file), or
  // "fixit": a fix-it item's broken kernel in the kernel file and its
  // evaluation's feedback in error.log (a list spec's fix-it items only).
  std::string starter = "none";
  int64_t max_sessions = 3;  // sessions lost to infrastructure before FAILED
  // Seconds a session whose budget is spent waits for the CLI to start
  // evaluating the kernel it was writing when it crossed (it ends sooner
  // when the CLI asks the model again instead).
  int64_t budget_grace_s = 30;
  // Sessions of this experiment running at once; 0 = as many as there are
  // agent slots.
  int64_t max_parallel = 0;
};

// Canonical JSON: every field, defaults filled in; budget_grace_s,
// max_parallel and starter only when not their defaults, so that specs
// written before them keep their hash.
nlohmann::json AgentSettingsJson(const AgentSettings& a);
// Reads back what AgentSettingsJson wrote (the experiments table keeps it);
// INTERNAL when a field is missing or of another type.
absl::StatusOr<AgentSettings> AgentSettingsFromJson(const nlohmann::json& j);

}  // namespace ptxbench::experiment_spec

#endif  // PTXBENCH_EXPERIMENT_SPEC_AGENT_SETTINGS_H_
