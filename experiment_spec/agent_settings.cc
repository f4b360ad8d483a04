// The "agent" object of an agent-mode spec (agent_settings.h), read strictly.

#include "experiment_spec/agent_settings.h"

#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/time.h"
#include "agents/clis.h"
#include "common/status_macros.h"
#include "experiment_spec/spec_reader.h"

namespace ptxbench::experiment_spec {

nlohmann::json AgentSettingsJson(const AgentSettings& a) {
  nlohmann::json j{{"cli", a.cli},
                        {"cli_version", a.cli_version},
                        {"effort", a.effort},
                        {"eval_interface", a.eval_interface},
                        {"shell", a.shell},
                        {"task_view", a.task_view},
                        {"token_budget", a.token_budget},
                        {"max_cost_usd", a.max_cost_usd},
                        {"max_evaluations", a.max_evaluations},
                        {"max_model_calls", a.max_model_calls},
                        {"wall_time_s", a.wall_time_s},
                        {"stall_timeout_s", a.stall_timeout_s},
                        {"eval_wait_timeout_s", a.eval_wait_timeout_s},
                        {"stop_at_target", a.stop_at_target},
                        {"show_budget", a.show_budget},
                        {"final_evaluation", a.final_evaluation},
                        {"toolchain", a.toolchain},
                        {"max_sessions", a.max_sessions}};
  if (a.budget_grace_s != AgentSettings{}.budget_grace_s) j["budget_grace_s"] = a.budget_grace_s;
  if (a.max_parallel != 0) j["max_parallel"] = a.max_parallel;
  if (a.starter != AgentSettings{}.starter) j["starter"] = a.starter;
  return j;
}

absl::StatusOr<AgentSettings> AgentSettingsFromJson(const nlohmann::json& j) {
  AgentSettings a;
  try {
    a.cli = j.at("cli").get<std::string>();
    a.cli_version = j.at("cli_version").get<std::string>();
    a.effort = j.at("effort").get<std::string>();
    a.eval_interface = j.at("eval_interface").get<std::string>();
    a.shell = j.at("shell").get<bool>();
    a.task_view = j.at("task_view").get<std::string>();
    a.token_budget = j.at("token_budget").get<int64_t>();
    a.max_cost_usd = j.at("max_cost_usd").get<double>();
    a.max_evaluations = j.at("max_evaluations").get<int64_t>();
    a.max_model_calls = j.at("max_model_calls").get<int64_t>();
    a.wall_time_s = j.at("wall_time_s").get<int64_t>();
    a.stall_timeout_s = j.at("stall_timeout_s").get<int64_t>();
    a.eval_wait_timeout_s = j.at("eval_wait_timeout_s").get<int64_t>();
    a.stop_at_target = j.at("stop_at_target").get<bool>();
    a.show_budget = j.at("show_budget").get<bool>();
    a.final_evaluation = j.at("final_evaluation").get<std::string>();
    a.toolchain = j.at("toolchain").get<std::string>();
    a.max_sessions = j.at("max_sessions").get<int64_t>();
    a.budget_grace_s = j.value("budget_grace_s", a.budget_grace_s);
    a.max_parallel = j.value("max_parallel", a.max_parallel);
    a.starter = j.value("starter", a.starter);
  } catch (const nlohmann::json::exception& e) {
    return absl::InternalError(absl::StrCat("stored agent settings are unreadable: ", e.what()));
  }
  return a;
}

namespace spec_internal {
namespace {

std::string At(absl::string_view key) { return absl::StrCat("agent.", key); }

// A duration ("90s", "10m", "24h") within [min, max], as whole seconds.
absl::StatusOr<int64_t> Duration(const SpecReader& r, const Json& value, absl::string_view key,
                                 absl::Duration min, absl::Duration max) {
  return r.Seconds(value, At(key), min, max, /*numbers=*/false);
}

absl::StatusOr<bool> Flag(const SpecReader& r, const Json& value, absl::string_view key) {
  if (!value.is_boolean()) return r.Error(At(key), value, "true or false");
  return value.get<bool>();
}

absl::StatusOr<const agents::AgentCli*> ReadCli(const SpecReader& r, const Json& agent,
                                                AgentSettings& out) {
  PTXB_ASSIGN_OR_RETURN(const Json* cli, r.json().Required(agent, "agent", "cli"));
  const agents::AgentCli* found =
      cli->is_string() ? agents::FindAgentCli(cli->get<std::string>()) : nullptr;
  if (found == nullptr) {
    const bool agy = cli->is_string() && cli->get<std::string>() == "agy";
    return r.Error(At("cli"), *cli, absl::StrCat("one of ", agents::AgentCliNames()),
                   agy ? "Antigravity (agy) cannot be installed here; gemini-cli runs Gemini "
                         "models"
                       : "");
  }
  out.cli = found->name;
  PTXB_ASSIGN_OR_RETURN(const Json* version, r.json().Required(agent, "agent", "cli_version"));
  if (!version->is_string() || version->get<std::string>() != found->version) {
    return r.Error(At("cli_version"), *version,
                   absl::StrCat("the version ptxbench pins for ", found->name, ", \"",
                                found->version, "\""),
                   "each CLI runs at one pinned version, installed by scripts/setup.sh");
  }
  out.cli_version = found->version;
  return found;
}

absl::Status ReadTools(const SpecReader& r, const Json& agent, const agents::AgentCli& cli,
                       AgentSettings& out) {
  if (const Json* v = JsonReader::Member(agent, "effort")) {
    if (cli.efforts.empty()) {
      return r.Error(At("effort"), *v, "no effort",
                     absl::StrCat(cli.name, " has no reasoning-effort setting"));
    }
    PTXB_ASSIGN_OR_RETURN(out.effort, r.json().Enum(*v, At("effort"), cli.efforts));
  }
  if (const Json* v = JsonReader::Member(agent, "eval_interface")) {
    PTXB_ASSIGN_OR_RETURN(out.eval_interface,
                          r.json().Enum(*v, At("eval_interface"), {"mcp", "command", "both"}));
  }
  if (const Json* v = JsonReader::Member(agent, "shell")) {
    PTXB_ASSIGN_OR_RETURN(out.shell, Flag(r, *v, "shell"));
    if (!out.shell && !cli.can_drop_shell) {
      return r.Error(At("shell"), *v, "true",
                     absl::StrCat(cli.name, " cannot run without its shell tool"));
    }
  }
  if (const Json* v = JsonReader::Member(agent, "task_view")) {
    PTXB_ASSIGN_OR_RETURN(out.task_view, r.json().Enum(*v, At("task_view"), {"full", "multiturn"}));
  }
  if (const Json* v = JsonReader::Member(agent, "final_evaluation")) {
    PTXB_ASSIGN_OR_RETURN(out.final_evaluation,
                          r.json().Enum(*v, At("final_evaluation"), {"none", "if-changed"}));
  }
  if (const Json* v = JsonReader::Member(agent, "toolchain")) {
    PTXB_ASSIGN_OR_RETURN(out.toolchain, r.json().Enum(*v, At("toolchain"), {"none", "cuda"}));
  }
  if (const Json* v = JsonReader::Member(agent, "starter")) {
    PTXB_ASSIGN_OR_RETURN(out.starter, r.json().Enum(*v, At("starter"), {"none", "fixit"}));
  }
  return absl::OkStatus();
}

absl::Status ReadBudgets(const SpecReader& r, const Json& agent, AgentSettings& out) {
  PTXB_ASSIGN_OR_RETURN(const Json* tokens, r.json().Required(agent, "agent", "token_budget"));
  PTXB_ASSIGN_OR_RETURN(out.token_budget,
                        r.json().Integer(*tokens, At("token_budget"), 1, int64_t{1} << 40));
  if (const Json* v = JsonReader::Member(agent, "max_cost_usd")) {
    if (!v->is_number() || !(v->get<double>() >= 0) || !std::isfinite(v->get<double>())) {
      return r.Error(At("max_cost_usd"), *v, "a number of at least 0 (0 = no limit)");
    }
    out.max_cost_usd = v->get<double>();
  }
  if (const Json* v = JsonReader::Member(agent, "max_evaluations")) {
    PTXB_ASSIGN_OR_RETURN(out.max_evaluations,
                          r.json().Integer(*v, At("max_evaluations"), 0, kMaxTurns));
  }
  if (const Json* v = JsonReader::Member(agent, "max_model_calls")) {
    PTXB_ASSIGN_OR_RETURN(out.max_model_calls,
                          r.json().Integer(*v, At("max_model_calls"), 0, 10'000'000));
  }
  if (const Json* v = JsonReader::Member(agent, "max_sessions")) {
    PTXB_ASSIGN_OR_RETURN(out.max_sessions, r.json().Integer(*v, At("max_sessions"), 1, 100));
  }
  if (const Json* v = JsonReader::Member(agent, "wall_time")) {
    PTXB_ASSIGN_OR_RETURN(out.wall_time_s,
                          Duration(r, *v, "wall_time", absl::Minutes(1), absl::Hours(24 * 30)));
  }
  if (const Json* v = JsonReader::Member(agent, "stall_timeout")) {
    PTXB_ASSIGN_OR_RETURN(out.stall_timeout_s, Duration(r, *v, "stall_timeout", absl::Seconds(10),
                                                        absl::Seconds(out.wall_time_s)));
  }
  if (const Json* v = JsonReader::Member(agent, "eval_wait_timeout")) {
    PTXB_ASSIGN_OR_RETURN(out.eval_wait_timeout_s, Duration(r, *v, "eval_wait_timeout",
                                                            absl::Minutes(1), absl::Hours(24)));
  }
  if (const Json* v = JsonReader::Member(agent, "budget_grace")) {
    PTXB_ASSIGN_OR_RETURN(out.budget_grace_s, Duration(r, *v, "budget_grace", absl::Seconds(0),
                                                       absl::Minutes(10)));
  }
  if (const Json* v = JsonReader::Member(agent, "max_parallel")) {
    PTXB_ASSIGN_OR_RETURN(out.max_parallel, r.json().Integer(*v, At("max_parallel"), 0, 100'000));
  }
  if (const Json* v = JsonReader::Member(agent, "stop_at_target")) {
    PTXB_ASSIGN_OR_RETURN(out.stop_at_target, Flag(r, *v, "stop_at_target"));
  }
  if (const Json* v = JsonReader::Member(agent, "show_budget")) {
    PTXB_ASSIGN_OR_RETURN(out.show_budget, Flag(r, *v, "show_budget"));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<AgentSettings> ReadAgentSettings(const SpecReader& r, const Json& agent) {
  if (!agent.is_object()) return r.Error("agent", agent, "an object");
  PTXB_RETURN_IF_ERROR(r.json().CheckKeys(
      agent, "agent",
      {"cli", "cli_version", "effort", "eval_interface", "shell", "task_view", "token_budget",
       "max_cost_usd", "max_evaluations", "max_model_calls", "wall_time", "stall_timeout",
       "eval_wait_timeout", "stop_at_target", "show_budget", "final_evaluation", "toolchain",
       "max_sessions", "budget_grace", "max_parallel", "starter"},
      /*allow_comments=*/false));
  AgentSettings out;
  PTXB_ASSIGN_OR_RETURN(const agents::AgentCli* cli, ReadCli(r, agent, out));
  PTXB_RETURN_IF_ERROR(ReadTools(r, agent, *cli, out));
  PTXB_RETURN_IF_ERROR(ReadBudgets(r, agent, out));
  return out;
}

}  // namespace spec_internal
}  // namespace ptxbench::experiment_spec
