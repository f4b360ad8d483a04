#include "scheduler/state/payloads.h"

#include <set>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "nlohmann/json.hpp"
#include "storage/blob_store.h"
#include "workloads/solution.h"

namespace ptxbench::scheduler {

using experiment_spec::AgentSettings;

namespace {

namespace v1 = ::ptxbench::v1;

constexpr size_t kPromptCacheEntries = 256;

}  // namespace

TaskPayloads::TaskPayloads(storage::Database* db, TurnStore* turns) : db_(db), turns_(turns) {}

absl::StatusOr<std::string> TaskPayloads::CachedBlob(const std::string& hash) {
  auto it = prompt_cache_.find(hash);
  if (it != prompt_cache_.end()) return it->second;
  PTXB_ASSIGN_OR_RETURN(std::string text, storage::GetBlob(*db_, hash));
  if (prompt_cache_.size() >= kPromptCacheEntries) prompt_cache_.clear();
  prompt_cache_.emplace(hash, text);
  return text;
}

absl::Status TaskPayloads::BuildAgent(const TaskRow& task, const TrajectoryRow& trajectory,
                                      const ExperimentRow& exp, v1::AgentSession* out) {
  const AgentSettings& a = *exp.agent;  // agent tasks exist only in agent mode
  v1::AgentSettings* settings = out->mutable_settings();
  settings->set_cli(a.cli);
  settings->set_cli_version(a.cli_version);
  settings->set_effort(a.effort);
  settings->set_eval_interface(a.eval_interface);
  settings->set_shell(a.shell);
  settings->set_task_view(a.task_view);
  settings->set_token_budget(a.token_budget);
  settings->set_max_cost_usd(a.max_cost_usd);
  // A PTXBench run may set its own max_turns: the trajectory holds it.
  settings->set_max_evaluations(trajectory.num_turns);
  settings->set_max_model_calls(a.max_model_calls);
  settings->set_wall_time_s(a.wall_time_s);
  settings->set_stall_timeout_s(a.stall_timeout_s);
  settings->set_eval_wait_timeout_s(a.eval_wait_timeout_s);
  settings->set_stop_at_target(a.stop_at_target);
  settings->set_show_budget(a.show_budget);
  settings->set_final_evaluation(a.final_evaluation);
  settings->set_toolchain(a.toolchain);
  settings->set_budget_grace_s(a.budget_grace_s);
  settings->set_starter(a.starter);
  if (!trajectory.starter_blob.empty()) {
    PTXB_ASSIGN_OR_RETURN(std::string text, storage::GetBlob(*db_, trajectory.starter_blob));
    const nlohmann::json starter = nlohmann::json::parse(text, nullptr, false);
    if (!starter.is_object() || !starter.value("kernel", nlohmann::json()).is_string() ||
        !starter.value("log", nlohmann::json()).is_string()) {
      return absl::DataLossError(absl::StrCat("the starter of trajectory ", trajectory.id,
                                              " (blob ", trajectory.starter_blob,
                                              ") is not {kernel, log}"));
    }
    out->set_starter_kernel(starter["kernel"].get<std::string>());
    out->set_starter_log(starter["log"].get<std::string>());
  }
  out->set_model(trajectory.model);
  out->set_definition(trajectory.definition);
  out->set_language(exp.language);
  out->set_target_speedup(trajectory.target_speedup);
  out->set_profile(exp.profile);
  // The session's task file names the shown workloads only.
  const std::set<std::string> held_out = HeldOutSet(trajectory);
  for (const std::string& w : trajectory.workloads) {
    if (!held_out.contains(w)) out->add_workload_uuids(w);
  }
  PTXB_ASSIGN_OR_RETURN(*out->mutable_system_prompt(), CachedBlob(trajectory.system_blob));
  PTXB_ASSIGN_OR_RETURN(*out->mutable_task_prompt(), CachedBlob(trajectory.task_blob));
  // Each lease is a session; a session is run again only after one lost
  // before it evaluated anything.
  out->set_session(task.attempt + 1);
  return absl::OkStatus();
}

absl::Status TaskPayloads::Build(const TaskRow& task, const TrajectoryRow& trajectory,
                                 const ExperimentRow& exp, v1::Task* out) {
  if (task.kind == StepKind::kEval) {
    PTXB_ASSIGN_OR_RETURN(TurnKernel kernel, turns_->Kernel(trajectory.rowid, task.turn));
    v1::EvalRequest* eval = out->mutable_eval();
    PTXB_ASSIGN_OR_RETURN(*eval->mutable_kernel_source(), storage::GetBlob(*db_, kernel.blob));
    eval->set_kernel_sha256(kernel.sha256);
    eval->set_definition(trajectory.definition);
    eval->set_language(exp.language);
    // A Triton solution in a solution experiment runs as what it is: its
    // kernel.py, in Triton (routed to a worker that runs Triton:
    // Core::RouteKey). The turn keeps the solution and its hash.
    if (exp.language == "solution") {
      if (std::optional<std::string> module =
              workloads::TritonModuleOfJson(eval->kernel_source())) {
        eval->set_language("triton");
        *eval->mutable_kernel_source() = *std::move(module);
      }
    }
    eval->set_mode(exp.eval_mode);
    eval->set_target_speedup(trajectory.target_speedup);
    // Every evaluation of a profiled multiturn experiment; in agent mode
    // those the session asked for with profile_kernel.
    eval->set_profile(exp.profile && (!exp.agent || kernel.profile));
    eval->set_memcheck(exp.memcheck);
    for (const std::string& a : exp.architectures) eval->add_architectures(a);
    for (const std::string& w : trajectory.workloads) eval->add_workload_uuids(w);
    for (const std::string& w : trajectory.held_out) eval->add_held_out_workload_uuids(w);
    return absl::OkStatus();
  }
  if (task.kind == StepKind::kAgent) return BuildAgent(task, trajectory, exp, out->mutable_agent());
  v1::LlmRequest* llm = out->mutable_llm();
  llm->set_model(trajectory.model);
  PTXB_ASSIGN_OR_RETURN(std::string system, CachedBlob(trajectory.system_blob));
  PTXB_ASSIGN_OR_RETURN(std::string task_prompt, CachedBlob(trajectory.task_blob));
  // Context policies (docs/FORMATS.md, "Experiment specs"): "full" sends every earlier
  // answer and feedback; "latest-pair" only the last ones; "single-user"
  // merges the system prompt into the first user message for models without
  // a system role, then sends the full history.
  // A synthesis pass asks afresh: no history.
  std::vector<std::pair<std::string, std::string>> history;  // answer, feedback
  if (exp.synthesis && exp.synthesis->max_tokens > 0) {
    llm->mutable_params()->set_max_tokens(static_cast<int32_t>(exp.synthesis->max_tokens));
  }
  if (task.turn > 0 && !exp.synthesis) {
    int first = exp.context_policy == "latest-pair" ? task.turn - 1 : 0;
    PTXB_ASSIGN_OR_RETURN(auto hashes, turns_->History(trajectory.rowid, first, task.turn));
    for (const auto& [a, f] : hashes) {
      PTXB_ASSIGN_OR_RETURN(std::string answer, storage::GetBlob(*db_, a));
      PTXB_ASSIGN_OR_RETURN(std::string feedback, storage::GetBlob(*db_, f));
      history.emplace_back(std::move(answer), std::move(feedback));
    }
  }
  auto add = [&](const char* role, std::string content) {
    v1::ChatMessage* m = llm->add_messages();
    m->set_role(role);
    m->set_content(std::move(content));
  };
  if (exp.context_policy == "single-user") {
    add("user", absl::StrCat(system, "\n\n", task_prompt));
  } else {
    add("system", system);
    add("user", task_prompt);
  }
  for (auto& [answer, feedback] : history) {
    add("assistant", std::move(answer));
    add("user", std::move(feedback));
  }
  int64_t chars = 0;
  for (const v1::ChatMessage& m : llm->messages()) chars += m.content().size();
  llm->set_estimated_input_tokens(chars / 4);  // ~4 characters per token
  return absl::OkStatus();
}

}  // namespace ptxbench::scheduler
