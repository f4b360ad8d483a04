// Experiment commands: submit, status, cancel, retry, extend.

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "cli/client/client.h"
#include "cli/client/submit.h"
#include "cli/commands/commands.h"
#include "cli/views/views.h"
#include "cli/views/watch.h"
#include "common/status_macros.h"

namespace ptxbench::cli {

SchedulerClient Connect(const Invocation& inv) {
  return SchedulerClient(inv.global.scheduler, inv.global.security, inv.global.timeout);
}

namespace {

void PrintJson(const Invocation& inv, const nlohmann::json& json) {
  inv.out() << json.dump(2) << "\n";
}

absl::Status RunSubmit(const Invocation& inv) {
  v1::SubmitExperimentRequest request;
  request.set_name(inv.args.Get("name"));
  request.set_definition(inv.args.Get("definition"));
  request.set_model(inv.args.Get("model"));
  request.set_eval(inv.args.Get("eval"));
  request.set_agent_cli(inv.args.Get("agent-cli"));
  request.set_dry_run(inv.args.Has("dry-run"));
  SchedulerClient client = Connect(inv);
  return SubmitSpecFile(client, inv.args.positionals[0], std::move(request), inv.global.json,
                        inv.out(), inv.err(), inv.args.Get("prompts"))
      .status();
}

absl::Status RunStatus(const Invocation& inv) {
  SchedulerClient client = Connect(inv);
  if (inv.args.Has("watch")) {
    if (inv.args.positionals.empty()) {
      return UsageError("--watch follows one experiment: ptxbench status EXP --watch");
    }
    WatchOptions options;
    options.json = inv.global.json;
    options.terminal = inv.env.out_is_terminal;
    options.terminal_columns = inv.env.out_is_terminal ? TerminalColumns() : 0;
    return FollowExperiment(client, inv.args.positionals[0], options, inv.out()).status();
  }
  if (inv.args.positionals.empty()) {
    PTXB_ASSIGN_OR_RETURN(v1::ListExperimentsResponse list, client.ListExperiments());
    if (inv.global.json) {
      PrintJson(inv, ExperimentListJson(list));
    } else if (list.experiments().empty()) {
      inv.out() << "no experiments yet; submit one with 'ptxbench submit SPEC.json'\n";
    } else {
      inv.out() << ExperimentTable(list);
    }
    return absl::OkStatus();
  }
  PTXB_ASSIGN_OR_RETURN(v1::GetExperimentResponse experiment,
                        client.GetExperiment(inv.args.positionals[0]));
  // Evaluations that wait for a GPU architecture no worker has say so.
  std::vector<std::string> waiting_for;
  bool waiting_for_triton = false;
  if (experiment.progress().eval_tasks_queued() > 0) {
    PTXB_ASSIGN_OR_RETURN(v1::ListExecutorsResponse executors, client.ListExecutors());
    waiting_for = UnservedArchitectures(experiment, executors);
    waiting_for_triton = WaitsForTriton(experiment, executors);
  }
  if (inv.global.json) {
    PrintJson(inv, ExperimentJson(experiment, waiting_for, waiting_for_triton));
  } else {
    inv.out() << ExperimentText(experiment, waiting_for, waiting_for_triton);
  }
  return absl::OkStatus();
}

absl::Status RunCancel(const Invocation& inv) {
  const std::string& id = inv.args.positionals[0];
  v1::CancelRequest request;
  if (absl::StartsWith(id, "exp_")) {
    request.set_experiment_id(id);
  } else if (absl::StartsWith(id, "tr_")) {
    request.set_trajectory_id(id);
  } else {
    return UsageError(
        absl::StrCat("cancel takes an experiment id (exp_...) or a trajectory id "
                     "(tr_...), got '",
                     id, "'"));
  }
  SchedulerClient client = Connect(inv);
  PTXB_ASSIGN_OR_RETURN(v1::CancelResponse response, client.Cancel(request));
  if (inv.global.json) {
    PrintJson(inv, {{"target", id}, {"cancelled", response.cancelled()}});
  } else {
    inv.out() << "cancelled " << response.cancelled() << " trajectories of " << id
              << " (finished ones are left alone)\n";
  }
  return absl::OkStatus();
}

absl::Status RunRetry(const Invocation& inv) {
  const std::string scope = inv.args.Get("failed");
  v1::RetryRequest request;
  request.set_experiment_id(inv.args.positionals[0]);
  if (scope == "infra") {
    request.set_scope(v1::RETRY_INFRA);
  } else if (scope == "api") {
    request.set_scope(v1::RETRY_API);
  } else if (scope == "all") {
    request.set_scope(v1::RETRY_ALL_FAILED);
  } else if (!inv.args.Has("failed")) {
    return UsageError("retry needs --failed infra|api|all (which failed trajectories to resume)");
  } else {
    return UsageError(absl::StrCat("--failed must be infra, api or all, got '", scope, "'"));
  }
  SchedulerClient client = Connect(inv);
  PTXB_ASSIGN_OR_RETURN(v1::RetryResponse response, client.Retry(request));
  if (inv.global.json) {
    PrintJson(inv, {{"experiment", request.experiment_id()},
                    {"scope", scope},
                    {"retried", response.retried()}});
  } else {
    inv.out() << "retried " << response.retried() << " failed trajectories of "
              << request.experiment_id() << " (--failed " << scope << ")\n";
  }
  return absl::OkStatus();
}

absl::Status RunExtend(const Invocation& inv) {
  if (!inv.args.Has("turns")) return UsageError("extend needs --turns N (the new turn limit)");
  PTXB_ASSIGN_OR_RETURN(int64_t turns, ParseIntFlag("turns", inv.args.Get("turns"), 1, 1000000));
  v1::ExtendRequest request;
  request.set_experiment_id(inv.args.positionals[0]);
  request.set_num_turns(static_cast<int32_t>(turns));
  SchedulerClient client = Connect(inv);
  PTXB_ASSIGN_OR_RETURN(v1::ExtendResponse response, client.Extend(request));
  if (inv.global.json) {
    PrintJson(inv, {{"experiment", request.experiment_id()},
                    {"num_turns", turns},
                    {"resumed", response.resumed()}});
  } else {
    inv.out() << "turn limit of " << request.experiment_id() << " is now " << turns << "; "
              << response.resumed() << " trajectories resumed\n";
  }
  return absl::OkStatus();
}

}  // namespace

void AddExperimentCommands(std::vector<Command>* commands) {
  commands->push_back(
      {{"submit",
        "SPEC.json",
        1,
        1,
        {{"definition", true, false, "D",
          "definition for list-form specs; replaces a matrix spec's definitions"},
         {"model", true, false, "M", "model for list-form specs; replaces a matrix spec's models"},
         {"eval", true, false, "full|compile-only", "replaces the spec's eval mode"},
         {"name", true, false, "N",
          "experiment name (overrides the spec's; required for list specs)"},
         {"dry-run", false, false, "", "validate and count only; create nothing"},
         {"prompts", true, false, "HUB",
          "a PTXBench prompt hub (hub.json or its folder): the hub's tags the spec names go "
          "with it"},
         {"agent-cli", true, false, "CLI",
          "runs a PTXBench coding-agent experiment.json with this agent CLI instead of the "
          "one it names (recorded as a substitution)"}},
        "submit an experiment spec",
        "Reads SPEC.json ('-' for stdin) and submits it. Prints a summary, then the\n"
        "experiment id as the last line. Submitting the same spec under the same name\n"
        "again creates nothing."},
       RunSubmit});
  commands->push_back(
      {{"status",
        "[EXP]",
        0,
        1,
        {{"watch", false, false, "", "follow EXP live until it finishes (Ctrl-C stops watching)"}},
        "all experiments, or the progress of one",
        "Without EXP: a table of all experiments, newest first. With EXP: its progress\n"
        "counts. With --output json and EXP: one JSON object (with --watch: one per update)."},
       RunStatus});
  commands->push_back({{"cancel",
                        "EXP|TRAJ",
                        1,
                        1,
                        {},
                        "cancel an experiment (exp_...) or one trajectory (tr_...)",
                        ""},
                       RunCancel});
  commands->push_back(
      {{"retry",
        "EXP",
        1,
        1,
        {{"failed", true, false, "infra|api|all", "which failed trajectories to resume"}},
        "resume failed trajectories from their last turn",
        ""},
       RunRetry});
  commands->push_back({{"extend",
                        "EXP",
                        1,
                        1,
                        {{"turns", true, false, "N", "the new turn limit"}},
                        "raise the turn limit; trajectories that hit the old one resume",
                        ""},
                       RunExtend});
}

}  // namespace ptxbench::cli
