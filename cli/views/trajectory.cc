// Trajectory renderings (`list`, `show`).

#include <algorithm>
#include <map>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "cli/terminal/format.h"
#include "cli/views/views.h"
#include "results/eval_text.h"
#include "common/proto_json.h"
#include "common/text_format.h"
#include "verdict/verdict.h"

namespace ptxbench::cli {
namespace {

constexpr int kExcerptLines = 12;
constexpr int kExcerptColumns = 160;

nlohmann::json NameOrNull(const std::string& name) {
  return name == "-" ? nlohmann::json(nullptr) : nlohmann::json(name);
}

std::string StateLabel(const v1::TrajectorySummary& s) {
  std::string label = StateName(s.state());
  if (s.failure_class() != v1::FAILURE_CLASS_UNSPECIFIED) {
    absl::StrAppend(&label, " (", FailureClassName(s.failure_class()), ")");
  }
  return label;
}

std::string BestLabel(const v1::TrajectorySummary& s) {
  if (s.best_speedup() > 0) return FormatSpeedup(s.best_speedup());
  return s.has_correct_kernel() ? "correct" : "-";
}

int CountLines(const std::string& text) {
  if (text.empty()) return 0;
  int n = static_cast<int>(std::count(text.begin(), text.end(), '\n'));
  return text.back() == '\n' ? n : n + 1;
}

// The text block of a long field: whole with --full, else an excerpt.
std::string Block(const std::string& text, bool full) {
  return Indent(full ? text : Excerpt(text, kExcerptLines, kExcerptColumns), "  ");
}

nlohmann::json TraceJson(const v1::WorkloadTrace& t) {
  nlohmann::json axes = nlohmann::json::object();
  for (const auto& [name, value] : t.axes()) axes[name] = value;
  return {{"workload_uuid", t.workload_uuid()},
          {"axes", std::move(axes)},
          {"status", NameOrNull(EvalStatusName(t.status()))},
          {"latency_ms", t.latency_ms()},
          {"reference_latency_ms", t.reference_latency_ms()},
          {"reference", t.reference()},
          {"speedup", t.speedup()},
          {"max_abs_error", t.max_abs_error()},
          {"max_rel_error", t.max_rel_error()},
          {"errors", std::vector<std::string>(t.errors().begin(), t.errors().end())}};
}

// A profile as its proto's JSON, without the report's bytes (a blob of its
// own: report_blob).
nlohmann::json ProfileJson(v1::KernelProfileRun profile) {
  profile.clear_report();
  absl::StatusOr<std::string> text = ProtoJson(profile);
  return text.ok() ? nlohmann::json::parse(*text, nullptr, false) : nlohmann::json();
}

nlohmann::json TurnJson(const v1::Turn& turn, bool full) {
  const v1::LlmResponse& r = turn.response();
  nlohmann::json out = {
      {"index", turn.index()},
      {"state", turn.state()},
      {"kernel_sha256", turn.kernel_sha256()},
      {"eval_status", nullptr},
      {"speedup", nullptr},
      {"simulated", r.simulated() || (turn.has_eval() && turn.eval().simulated())},
      {"finish_reason", r.finish_reason()},
      {"provider", r.provider()},
      {"cost_usd", r.cost_usd()},
      {"usage",
       {{"input_tokens", r.usage().input_tokens()},
        {"output_tokens", r.usage().output_tokens()},
        {"reasoning_tokens", r.usage().reasoning_tokens()},
        {"cached_tokens", r.usage().cached_tokens()}}},
      {"started_unix_ms", turn.started_unix_ms()},
      {"finished_unix_ms", turn.finished_unix_ms()},
  };
  if (turn.has_eval()) {
    const v1::EvalResult& e = turn.eval();
    out["eval_status"] = NameOrNull(EvalStatusName(e.status()));
    out["speedup"] = verdict::MinSpeedup(e);
    out["all_passed"] = verdict::Correct(e);
    nlohmann::json traces = nlohmann::json::array();
    for (const auto& t : e.traces()) traces.push_back(TraceJson(t));
    out["workloads"] = std::move(traces);
    if (!e.error().empty()) out["error"] = e.error();
    if (full) out["compile_log"] = e.compile_log();
    if (e.has_sass()) {
      out["sass"] = {{"instructions", e.sass().instructions()},
                     {"instruction_counts", std::map<std::string, int64_t>(
                                                e.sass().instruction_counts().begin(),
                                                e.sass().instruction_counts().end())}};
    }
    if (e.has_profile()) out["profile"] = ProfileJson(e.profile());
  }
  if (full) {
    out["answer"] = r.text();
    out["reasoning"] = r.reasoning();
    out["kernel_source"] = turn.kernel_source();
    out["feedback"] = turn.feedback();
  }
  return out;
}

void AppendEval(std::string* out, const v1::EvalResult& e, bool full) {
  absl::StrAppend(out, "eval      ", EvalStatusName(e.status()));
  // A speedup means something only for a kernel that passed everywhere.
  if (const double speedup = verdict::MinSpeedup(e); speedup > 0) {
    absl::StrAppend(out, ", min speedup ", FormatSpeedup(speedup));
  }
  if (!e.gpu_model().empty()) absl::StrAppend(out, ", ", e.gpu_model());
  if (e.wall_time_ms() >= 1000) {
    absl::StrAppend(out, absl::StrFormat(", %.1f s", e.wall_time_ms() / 1000.0));
  } else if (e.wall_time_ms() > 0) {
    absl::StrAppend(out, ", ", e.wall_time_ms(), " ms");
  }
  if (e.simulated()) absl::StrAppend(out, "  [SIMULATED]");
  absl::StrAppend(out, "\n");
  if (full && !e.definition_version().empty()) {
    absl::StrAppend(out, "  definition version ", e.definition_version().substr(0, 12), " (",
                    e.dataset(), ")\n");
  }
  if (!e.error().empty()) absl::StrAppend(out, "  error: ", OneLine(e.error(), 200), "\n");
  for (const v1::WorkloadTrace& t : e.traces()) {
    std::vector<std::string> axes;
    std::map<std::string, int64_t> sorted(t.axes().begin(), t.axes().end());
    for (const auto& [name, value] : sorted) axes.push_back(absl::StrCat(name, "=", value));
    absl::StrAppend(out, "  ", t.workload_uuid().substr(0, 8), "  ",
                    axes.empty() ? "" : absl::StrCat(absl::StrJoin(axes, " "), "  "),
                    EvalStatusName(t.status()));
    if (t.latency_ms() > 0) {
      absl::StrAppend(out, absl::StrFormat("  %.4f ms (reference%s %.4f ms)", t.latency_ms(),
                                           ReferenceLabel(t.reference()), t.reference_latency_ms()));
    }
    if (t.speedup() > 0) absl::StrAppend(out, "  ", FormatSpeedup(t.speedup()));
    absl::StrAppend(out, "\n");
    for (const std::string& err : t.errors())
      absl::StrAppend(out, "      ", OneLine(err, 200), "\n");
    // What the timed calls ran (the lines the model was given).
    absl::StrAppend(out, RenderKernelCensus(t.census(), "      "));
  }
  // What runs, and where its time went (the text the model was given).
  if (e.has_sass()) absl::StrAppend(out, "  ", RenderSassCensus(e.sass()));
  if (e.has_profile()) {
    std::string profile = RenderProfile(e.profile(), full ? 8 : kFeedbackProfileKernels);
    if (!e.profile().report_blob().empty()) {
      absl::StrAppend(&profile, "  report: ", e.profile().report_bytes(), " bytes (blob ",
                      e.profile().report_blob().substr(0, 12), ")\n");
    } else if (e.profile().status() == v1::PASSED && !e.profile().simulated()) {
      absl::StrAppend(&profile,
                      "  report: none kept (the profiler left none within the size a report "
                      "may have)\n");
    }
    for (absl::string_view line : absl::StrSplit(absl::StripTrailingAsciiWhitespace(profile), '\n')) {
      absl::StrAppend(out, "  ", line, "\n");
    }
  }
  if (!e.compile_log().empty() && (full || e.status() == v1::COMPILE_ERROR)) {
    absl::StrAppend(out, "compile log\n", Block(e.compile_log(), full));
  }
}

void AppendTurn(std::string* out, const v1::Turn& turn, bool full) {
  absl::StrAppend(out, "\n== turn ", turn.index(), " (", turn.state(), ") ==\n");
  const v1::LlmResponse& r = turn.response();
  if (r.text().empty() && r.finish_reason().empty()) {
    absl::StrAppend(out, "answer    (waiting for the model)\n");
    return;
  }
  absl::StrAppend(out, "answer    ", r.simulated() ? "[SIMULATED] " : "", "finish ",
                  r.finish_reason().empty() ? "-" : r.finish_reason(), ", ",
                  r.usage().input_tokens(), " in / ", r.usage().output_tokens(), " out tokens, ",
                  FormatCost(r.cost_usd()));
  if (!r.provider().empty()) absl::StrAppend(out, ", ", r.provider());
  absl::StrAppend(out, "\n", Block(r.text(), full));
  if (full && !r.reasoning().empty())
    absl::StrAppend(out, "reasoning\n", Block(r.reasoning(), true));
  if (turn.kernel_sha256().empty()) {
    absl::StrAppend(out, "kernel    none found in the answer\n");
  } else {
    absl::StrAppend(out, "kernel    sha256 ", turn.kernel_sha256(), " (",
                    CountLines(turn.kernel_source()), " lines)\n");
    if (full) absl::StrAppend(out, Block(turn.kernel_source(), true));
  }
  if (turn.has_eval()) {
    AppendEval(out, turn.eval(), full);
  } else if (!turn.kernel_sha256().empty()) {
    absl::StrAppend(out, "eval      (pending)\n");
  }
  if (!turn.feedback().empty()) absl::StrAppend(out, "feedback\n", Block(turn.feedback(), full));
}

}  // namespace

nlohmann::json TrajectorySummaryJson(const v1::TrajectorySummary& s) {
  return {{"trajectory", s.trajectory_id()},
          {"experiment", s.experiment_id()},
          {"model", s.model()},
          {"definition", s.definition()},
          {"prompt_tag", s.prompt_tag()},
          {"sample_index", s.sample_index()},
          {"state", NameOrNull(StateName(s.state()))},
          {"failure_class", NameOrNull(FailureClassName(s.failure_class()))},
          {"reason", s.reason()},
          {"num_turns", s.num_turns()},
          {"turns_completed", s.turns_completed()},
          {"target_speedup", s.target_speedup()},
          {"best_speedup", s.best_speedup()},
          {"has_correct_kernel", s.has_correct_kernel()},
          {"cost_usd", s.cost_usd()},
          {"updated_unix_ms", s.updated_unix_ms()},
          // null: every workload of the definition
          {"workloads", s.workload_uuids().empty()
                            ? nlohmann::json(nullptr)
                            : nlohmann::json(std::vector<std::string>(s.workload_uuids().begin(),
                                                                      s.workload_uuids().end()))}};
}

nlohmann::json TrajectoryListJson(const std::string& experiment_id,
                                  const v1::ListTrajectoriesResponse& list) {
  nlohmann::json items = nlohmann::json::array();
  for (const auto& s : list.trajectories()) items.push_back(TrajectorySummaryJson(s));
  return {
      {"experiment", experiment_id}, {"total", list.total()}, {"trajectories", std::move(items)}};
}

std::string TrajectoryTable(const v1::ListTrajectoriesResponse& list) {
  Table table(
      {"TRAJECTORY", "MODEL", "DEFINITION", "TAG", "SAMPLE", "STATE", "TURNS", "BEST", "REASON"});
  for (size_t c : {4, 6, 7}) table.AlignRight(c);
  for (const auto& s : list.trajectories()) {
    table.AddRow({s.trajectory_id(), s.model(), s.definition(), s.prompt_tag(),
                  absl::StrCat(s.sample_index()), StateLabel(s),
                  absl::StrCat(s.turns_completed(), "/", s.num_turns()), BestLabel(s),
                  OneLine(s.reason(), 60)});
  }
  return table.Render();
}

namespace {

// Agent mode: how the session ended, what it spent, what it left.
nlohmann::json AgentJson(const v1::AgentOutcome& a, bool full) {
  nlohmann::json records = nlohmann::json::array();
  for (const v1::AgentRecord& r : a.records()) {
    nlohmann::json record = {{"name", r.name()}, {"size", r.size()}, {"truncated", r.truncated()}};
    if (full) record["content"] = r.content();
    records.push_back(std::move(record));
  }
  const v1::AgentUsage& t = a.total();
  return {{"end", a.end() == v1::AGENT_END_UNSPECIFIED ? nlohmann::json(nullptr)
                                                       : nlohmann::json(v1::AgentEnd_Name(a.end()))},
          {"reason", a.reason()},
          {"evaluations", a.evaluations()},
          {"model_calls", t.model_calls()},
          {"input_tokens", t.usage().input_tokens()},
          {"output_tokens", t.usage().output_tokens()},
          {"cost_usd", t.cost_usd()},
          {"blocked_ms", a.blocked_ms()},
          {"wall_ms", a.wall_ms()},
          {"records", std::move(records)}};
}

void AppendAgent(std::string* out, const v1::AgentOutcome& a) {
  const v1::AgentUsage& t = a.total();
  absl::StrAppend(out, "session     ",
                  a.end() == v1::AGENT_END_UNSPECIFIED ? "did not run its course"
                                                       : v1::AgentEnd_Name(a.end()),
                  a.reason().empty() ? "" : ": ", a.reason(), "\n");
  absl::StrAppend(out, "            ", a.evaluations(), " evaluations, ", t.model_calls(),
                  " model calls, ", t.usage().input_tokens() + t.usage().output_tokens(),
                  " tokens, ", FormatCost(t.cost_usd()), ", ", a.wall_ms() / 1000, " s (",
                  a.blocked_ms() / 1000, " s of them waiting for evaluations)\n");
  std::vector<std::string> names;
  for (const v1::AgentRecord& r : a.records()) {
    names.push_back(absl::StrCat(r.name(), " (", r.size(), " B", r.truncated() ? ", cut" : "",
                                 ")"));
  }
  if (!names.empty()) {
    absl::StrAppend(out, "records     ", absl::StrJoin(names, ", "),
                    "\n            (their contents: show --full --output json)\n");
  }
}

}  // namespace

nlohmann::json TrajectoryJson(const v1::Trajectory& trajectory, bool full) {
  nlohmann::json out = TrajectorySummaryJson(trajectory.summary());
  if (trajectory.has_agent()) out["agent"] = AgentJson(trajectory.agent(), full);
  nlohmann::json turns = nlohmann::json::array();
  for (const v1::Turn& turn : trajectory.turns()) turns.push_back(TurnJson(turn, full));
  out["turns"] = std::move(turns);
  if (full) {
    out["system_prompt"] = trajectory.system_prompt();
    out["task_prompt"] = trajectory.task_prompt();
  }
  return out;
}

std::string TrajectoryText(const v1::Trajectory& trajectory, bool full) {
  const v1::TrajectorySummary& s = trajectory.summary();
  std::string out = absl::StrCat("trajectory  ", s.trajectory_id(), "\n");
  absl::StrAppend(&out, "experiment  ", s.experiment_id(), "\n");
  absl::StrAppend(&out, "task        model ", s.model(), ", definition ", s.definition(),
                  ", prompt tag ", s.prompt_tag(), ", sample ", s.sample_index(), "\n");
  absl::StrAppend(&out, "state       ", StateLabel(s));
  if (!s.reason().empty()) absl::StrAppend(&out, ": ", s.reason());
  absl::StrAppend(&out, "\n");
  absl::StrAppend(&out, "turns       ", s.turns_completed(), " of ", s.num_turns(), ", target ",
                  FormatSpeedup(s.target_speedup()), ", best ", BestLabel(s), ", cost ",
                  FormatCost(s.cost_usd()), "\n");
  absl::StrAppend(&out, "workloads   ",
                  s.workload_uuids().empty()
                      ? "every workload of the definition"
                      : absl::StrCat(absl::StrJoin(s.workload_uuids(), ", "),
                                     " only (its speedups cover these)"),
                  "\n");
  if (trajectory.has_agent()) AppendAgent(&out, trajectory.agent());
  if (full && !trajectory.task_prompt().empty()) {
    absl::StrAppend(&out, "\ntask prompt\n", Block(trajectory.task_prompt(), true));
  }
  for (const v1::Turn& turn : trajectory.turns()) AppendTurn(&out, turn, full);
  if (trajectory.turns().empty()) absl::StrAppend(&out, "\n(no turns yet)\n");
  return out;
}

}  // namespace ptxbench::cli
