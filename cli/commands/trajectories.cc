// Trajectory commands: list, show.

#include <filesystem>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "cli/client/client.h"
#include "cli/commands/commands.h"
#include "cli/views/views.h"
#include "common/file.h"
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

// `show --profile-reports DIR`: each turn's profile report as Nsight
// Compute wrote it (open it with ncu-ui or `ncu --import`), byte for byte,
// one file per turn; what was written is listed.
absl::Status WriteProfileReports(const Invocation& inv, const v1::Trajectory& trajectory,
                                 const std::string& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return absl::InvalidArgumentError(absl::StrCat("--profile-reports ", dir, ": ", ec.message()));
  int written = 0;
  for (const v1::Turn& turn : trajectory.turns()) {
    const v1::KernelProfileRun& p = turn.eval().profile();
    if (p.report().empty()) continue;
    const std::string path = absl::StrCat(dir, "/", trajectory.summary().trajectory_id(), ".turn",
                                          turn.index(), ".ncu-rep");
    PTXB_RETURN_IF_ERROR(WriteFileAtomically(path, p.report()));
    inv.out() << path << "  " << p.report().size() << " bytes (turn " << turn.index() << ", "
              << (p.simulated() ? "simulated, not a real report" : p.tool()) << ")\n";
    ++written;
  }
  if (written == 0) {
    inv.out() << "no turn of " << trajectory.summary().trajectory_id()
              << " has a profile report\n";
  }
  return absl::OkStatus();
}

// Streamed (ReadTrajectories), so a long trajectory is never bounded by one
// message's size.
absl::Status RunShow(const Invocation& inv) {
  SchedulerClient client = Connect(inv);
  v1::ReadTrajectoriesRequest request;
  request.set_trajectory_id(inv.args.positionals[0]);
  const std::string reports_dir = inv.args.Get("profile-reports");
  request.set_detail(reports_dir.empty() ? v1::TURN_DETAIL_FULL
                                         : v1::TURN_DETAIL_FULL_WITH_REPORTS);
  v1::Trajectory trajectory;
  PTXB_RETURN_IF_ERROR(client.ReadTrajectories(request, [&](v1::Trajectory&& t) {
    trajectory = std::move(t);
    return absl::OkStatus();
  }));
  if (!reports_dir.empty()) return WriteProfileReports(inv, trajectory, reports_dir);
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
        {{"full", false, false, "", "whole answers, kernels, compile logs and feedback"},
         {"profile-reports", true, false, "DIR",
          "write each turn's profile report (.ncu-rep) into DIR instead"}},
        "one trajectory, turn by turn",
        "Each turn: the model's answer (excerpt), the kernel's sha256, the evaluation\n"
        "status with one line per workload, and the feedback (excerpt). Simulated\n"
        "answers and results are labelled [SIMULATED]."},
       RunShow});
}

}  // namespace ptxbench::cli
