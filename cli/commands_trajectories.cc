// Trajectory commands: list, show.

#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "cli/client.h"
#include "cli/commands.h"
#include "cli/views.h"
#include "common/status_macros.h"

namespace ptxbench::cli {
namespace {

absl::StatusOr<v1::TrajectoryState> ParseState(const std::string& text) {
  v1::TrajectoryState state;
  if (v1::TrajectoryState_Parse(absl::AsciiStrToUpper(text), &state) &&
      state != v1::TRAJECTORY_STATE_UNSPECIFIED) {
    return state;
  }
  std::vector<std::string> names;
  for (int s = v1::TrajectoryState_MIN + 1; s <= v1::TrajectoryState_MAX; ++s) {
    if (v1::TrajectoryState_IsValid(s)) {
      names.push_back(v1::TrajectoryState_Name(static_cast<v1::TrajectoryState>(s)));
    }
  }
  return UsageError(
      absl::StrCat("--state must be one of ", absl::StrJoin(names, ", "), "; got '", text, "'"));
}

absl::Status RunList(const Invocation& inv) {
  v1::ListTrajectoriesRequest request;
  request.set_experiment_id(inv.args.positionals[0]);
  if (inv.args.Has("state")) {
    PTXB_ASSIGN_OR_RETURN(v1::TrajectoryState state, ParseState(inv.args.Get("state")));
    request.set_state(state);
  }
  if (inv.args.Has("limit")) {
    PTXB_ASSIGN_OR_RETURN(int64_t limit, ParseIntFlag("limit", inv.args.Get("limit"), 1, 1000000));
    request.set_limit(static_cast<int32_t>(limit));
  }
  SchedulerClient client = Connect(inv);
  PTXB_ASSIGN_OR_RETURN(v1::ListTrajectoriesResponse list, client.ListTrajectories(request));
  if (inv.global.json) {
    inv.out() << TrajectoryListJson(request.experiment_id(), list).dump(2) << "\n";
    return absl::OkStatus();
  }
  if (list.trajectories().empty()) {
    inv.out() << "no trajectories" << (inv.args.Has("state") ? " in that state" : "") << " in "
              << request.experiment_id() << "\n";
    return absl::OkStatus();
  }
  inv.out() << TrajectoryTable(list);
  if (list.total() > list.trajectories_size()) {
    inv.out() << "(" << list.trajectories_size() << " of " << list.total()
              << " trajectories; raise --limit to see more)\n";
  }
  return absl::OkStatus();
}

// Streamed (ReadTrajectories), so a long trajectory is never bounded by one
// message's size.
absl::Status RunShow(const Invocation& inv) {
  SchedulerClient client = Connect(inv);
  v1::ReadTrajectoriesRequest request;
  request.set_trajectory_id(inv.args.positionals[0]);
  request.set_detail(v1::TURN_DETAIL_FULL);
  v1::Trajectory trajectory;
  PTXB_RETURN_IF_ERROR(client.ReadTrajectories(request, [&](v1::Trajectory&& t) {
    trajectory = std::move(t);
    return absl::OkStatus();
  }));
  const bool full = inv.args.Has("full");
  if (inv.global.json) {
    inv.out() << TrajectoryJson(trajectory, full).dump(2) << "\n";
  } else {
    inv.out() << TrajectoryText(trajectory, full);
  }
  return absl::OkStatus();
}

}  // namespace

void AddTrajectoryCommands(std::vector<Command>* commands) {
  commands->push_back(
      {{"list",
        "EXP",
        1,
        1,
        {{"state", true, false, "STATE", "only trajectories in STATE (e.g. FAILED, SUBMITTED)"},
         {"limit", true, false, "N", "at most N trajectories (default: the scheduler's, 1000)"}},
        "the trajectories of an experiment",
        ""},
       RunList});
  commands->push_back(
      {{"show",
        "TRAJ",
        1,
        1,
        {{"full", false, false, "", "whole answers, kernels, compile logs and feedback"}},
        "one trajectory, turn by turn",
        "Each turn: the model's answer (excerpt), the kernel's sha256, the evaluation\n"
        "status with one line per workload, and the feedback (excerpt). Simulated\n"
        "answers and results are labelled [SIMULATED]."},
       RunShow});
}

}  // namespace ptxbench::cli
