#include "results/exports/ptxbench_messages.h"

#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "results/exports/turn_facts.h"
#include "verdict/verdict.h"
#include "workloads/trace.h"

namespace ptxbench::exports {
namespace {

namespace v1 = ::ptxbench::v1;
using Json = StrictJson;

// The library a LIBRARY_FALLBACK names: the worker writes "The kernel uses
// <library> (<evidence>)" into the evaluation (worker/compile/compiler.cc),
// and the feedback repeats it.
std::string BannedLibraryEvent(const v1::Turn& turn) {
  for (absl::string_view text : {absl::string_view(turn.eval().error()),
                                 absl::string_view(turn.eval().compile_log()),
                                 absl::string_view(turn.feedback())}) {
    const std::string lower = absl::AsciiStrToLower(text);
    const size_t dnn = lower.find("uses cudnn"), blas = lower.find("uses cublas");
    if (dnn != std::string::npos && (blas == std::string::npos || dnn < blas)) return "cudnn_banned";
    if (blas != std::string::npos) return "cublas_banned";
  }
  return "library_banned";
}

// PTXBench's returncode of the turn's check: 0 only when every workload passed.
int ReturnCode(const v1::Turn& turn) { return IsCorrect(turn) ? 0 : 1; }

// The observation as mini-swe-agent's text template renders it for PTXBench.
std::string ObservationContent(int returncode, absl::string_view output) {
  return absl::StrCat("<returncode>", returncode, "</returncode>\n<output>\n", output, "</output>");
}

Json AssistantMessage(const v1::TrajectorySummary& s, const v1::Turn& turn) {
  const v1::LlmResponse& r = turn.response();
  Json usage = {{"prompt_tokens", r.usage().input_tokens()},
                {"completion_tokens", r.usage().output_tokens()},
                {"total_tokens", r.usage().input_tokens() + r.usage().output_tokens()},
                {"completion_tokens_details", {{"reasoning_tokens", r.usage().reasoning_tokens()}}},
                {"prompt_tokens_details", {{"cached_tokens", r.usage().cached_tokens()}}}};
  Json response = {{"model", s.model()},
                   {"choices", Json::array({{{"index", 0}, {"finish_reason", r.finish_reason()}}})},
                   {"usage", std::move(usage)},
                   {"provider", r.provider()},
                   {"latency_ms", r.latency_ms()}};
  Json message = {{"role", "assistant"}, {"content", r.text()}};
  if (!r.reasoning().empty()) message["reasoning_content"] = r.reasoning();
  // When the answer arrived is not recorded (only the turn's start and end).
  message["extra"] = {{"actions", Json::array()},
                      {"response", std::move(response)},
                      {"cost", r.cost_usd()},
                      {"timestamp", nullptr},
                      {"simulated", r.simulated()}};
  return message;
}

Json FeedbackMessage(const v1::TrajectorySummary& s, const v1::Turn& turn,
                     const DefinitionIndex& definitions) {
  const std::string event = FeedbackEvent(turn);
  const int returncode = ReturnCode(turn);
  Json extra = {{"raw_output", turn.feedback()},
                {"returncode", returncode},
                {"timestamp", turn.finished_unix_ms() > 0
                                  ? Json(static_cast<double>(turn.finished_unix_ms()) / 1000)
                                  : Json()},
                {"exception_info", ""},
                {"event", event}};
  if (event == "test_failed" || event == "no_traces") extra["traces"] = nullptr;
  if (event == "evaluation") {
    extra["traces"] = PtxbenchTraces(s, turn, definitions);
    extra["all_passed"] = IsCorrect(turn);
    extra["min_speedup"] = verdict::MinSpeedup(turn.eval());
    extra["target_met"] = verdict::TargetMet(turn.eval(), s.target_speedup());
  }
  extra["simulated"] = turn.has_eval() && turn.eval().simulated();
  return {{"role", "user"},
          {"content", ObservationContent(returncode, turn.feedback())},
          {"extra", std::move(extra)}};
}

// The exception-like name a failed trajectory exits with.
std::string FailureExitStatus(v1::FailureClass failure) {
  switch (failure) {
    case v1::INFRA:
      return "InfraError";
    case v1::MODEL_API:
      return "ModelAPIError";
    case v1::TERMINAL:
      return "TerminalError";
    default:
      return "Failed";
  }
}

// The "exit" message, when the trajectory ended in a way PTXBench records.
std::optional<Json> ExitMessage(const v1::Trajectory& t) {
  const v1::TrajectorySummary& s = t.summary();
  switch (s.state()) {
    case v1::SUBMITTED: {
      const v1::Turn* last = t.turns().empty() ? nullptr : &t.turns(t.turns_size() - 1);
      return Json{{"role", "exit"},
                  {"content", "Target speedup achieved."},
                  {"extra",
                   {{"exit_status", "Submitted"},
                    {"submission", last ? last->kernel_source() : ""},
                    {"min_speedup", last && last->has_eval() ? verdict::MinSpeedup(last->eval()) : 0.0}}}};
    }
    case v1::LIMITS_EXCEEDED:
      return Json{{"role", "exit"},
                  {"content", "LimitsExceeded"},
                  {"extra", {{"exit_status", "LimitsExceeded"}, {"submission", ""}}}};
    case v1::FAILED:
      return Json{{"role", "exit"},
                  {"content", s.reason()},
                  {"extra",
                   {{"exit_status", FailureExitStatus(s.failure_class())},
                    {"submission", ""},
                    {"failure_class", v1::FailureClass_Name(s.failure_class())}}}};
    default:
      return std::nullopt;  // live, or cancelled: PTXBench has no such ending
  }
}

}  // namespace

std::string FeedbackEvent(const v1::Turn& turn) {
  if (turn.kernel_sha256().empty()) return "no_code";
  if (!turn.has_eval()) return "";
  const v1::EvalResult& eval = turn.eval();
  if (eval.status() == v1::LIBRARY_FALLBACK) return BannedLibraryEvent(turn);
  if (!eval.traces().empty()) return "evaluation";
  // Nothing per workload: the check failed before results, or (compile-only)
  // succeeded without any.
  return eval.status() == v1::COMPILED || eval.status() == v1::PASSED ? "no_traces" : "test_failed";
}

Json PtxbenchTraces(const v1::TrajectorySummary& s, const v1::Turn& turn,
                    const DefinitionIndex& definitions) {
  Json traces = Json::array();
  for (const v1::WorkloadTrace& trace : turn.eval().traces()) {
    traces.push_back(workloads::TraceJson(
        ToTraceRecord(s.definition(), std::nullopt, trace, turn.eval(),
                      definitions.FindWorkload(s.definition(), trace.workload_uuid()),
                      turn.finished_unix_ms())));
  }
  return traces;
}

Json TrajectoryDocument(const v1::Experiment& experiment, const v1::Trajectory& t,
                        const DefinitionIndex& definitions, absl::string_view ptxbench_version) {
  const v1::TrajectorySummary& s = t.summary();
  Json messages = Json::array();
  messages.push_back({{"role", "system"}, {"content", t.system_prompt()}});
  messages.push_back({{"role", "user"}, {"content", t.task_prompt()}});
  double cost = 0;
  int api_calls = 0;
  bool simulated = false;
  for (const v1::Turn& turn : t.turns()) {
    // Turn t's messages sit at 2+2t and 3+2t: stop at the first gap.
    if (!IsAnswered(turn) || messages.size() != static_cast<size_t>(2 + 2 * turn.index())) break;
    messages.push_back(AssistantMessage(s, turn));
    cost += turn.response().cost_usd();
    ++api_calls;
    simulated |= IsSimulated(turn);
    if (FeedbackEvent(turn).empty()) break;  // awaiting its evaluation
    messages.push_back(FeedbackMessage(s, turn, definitions));
  }
  std::string exit_status, submission;
  if (std::optional<Json> exit = ExitMessage(t)) {
    exit_status = (*exit)["extra"]["exit_status"].get<std::string>();
    submission = (*exit)["extra"]["submission"].get<std::string>();
    messages.push_back(std::move(*exit));
  }
  Json config = {{"model", {{"model_name", s.model()}}},
                 {"agent", {{"step_limit", s.num_turns()}}},
                 {"ptxbench",
                  {{"experiment_id", experiment.experiment_id()},
                   {"experiment", experiment.name()},
                   {"trajectory_id", s.trajectory_id()},
                   {"definition", s.definition()},
                   {"prompt_tag", s.prompt_tag()},
                   {"sample_index", s.sample_index()},
                   {"target_speedup", s.target_speedup()},
                   {"language", experiment.language()},
                   {"context_policy", experiment.context_policy()},
                   {"state", v1::TrajectoryState_Name(s.state())}}}};
  Json info = {{"model_stats", {{"instance_cost", cost}, {"api_calls", api_calls}}},
               {"config", std::move(config)},
               {"mini_version", absl::StrCat("ptxbench ", ptxbench_version)},
               {"exit_status", exit_status},
               {"submission", submission},
               {"simulated", simulated}};
  return {{"info", std::move(info)},
          {"messages", std::move(messages)},
          {"trajectory_format", "mini-swe-agent-1.1"}};
}

}  // namespace ptxbench::exports
