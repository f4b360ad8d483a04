#ifndef PTXBENCH_CLI_VIEWS_VIEWS_H_
#define PTXBENCH_CLI_VIEWS_VIEWS_H_

// Renderings of the ClientService messages: the JSON forms printed with
// `--output json` (a contract for scripts: keys only get added) and the
// human forms (tables and text). Pure functions of the messages.

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/time/time.h"
#include "nlohmann/json.hpp"
#include "ptxbench/v1/client.pb.h"

namespace ptxbench::cli {

namespace v1 = ::ptxbench::v1;

// Trajectory-state counts in the enum's order (live states first), then any
// name the CLI does not know; zero counts left out.
std::vector<std::pair<std::string, int64_t>> OrderedStateCounts(
    const v1::ExperimentProgress& progress);

// Experiments: `status EXP` and `status`.
// `waiting_for`: UnservedArchitectures, shown when not empty;
// `waiting_for_triton`: WaitsForTriton.
nlohmann::json ExperimentJson(const v1::GetExperimentResponse& experiment,
                              const std::vector<std::string>& waiting_for = {},
                              bool waiting_for_triton = false);
nlohmann::json ExperimentListJson(const v1::ListExperimentsResponse& list);
std::string ExperimentText(const v1::GetExperimentResponse& experiment,
                           const std::vector<std::string>& waiting_for = {},
                           bool waiting_for_triton = false);
// The architectures an experiment's queued evaluations wait for when no
// active worker has a healthy GPU of any of them; empty otherwise.
std::vector<std::string> UnservedArchitectures(const v1::GetExperimentResponse& experiment,
                                               const v1::ListExecutorsResponse& executors);
// Whether a Triton experiment's queued evaluations wait for a worker that
// runs Triton: an active worker has a GPU of its architectures (else
// UnservedArchitectures says so) and none of those runs Triton.
bool WaitsForTriton(const v1::GetExperimentResponse& experiment,
                    const v1::ListExecutorsResponse& executors);
std::string ExperimentTable(const v1::ListExperimentsResponse& list);
// "AWAITING_MODEL 3, SUBMITTED 5" ("none yet" when empty).
std::string StateCountsText(const v1::ExperimentProgress& progress);
// One line for a non-terminal --watch: time, counts, results.
std::string ProgressLine(const std::string& experiment_id, const v1::ExperimentProgress& progress,
                         bool finished);

// Trajectories: `list EXP` and `show TRAJ`.
nlohmann::json TrajectorySummaryJson(const v1::TrajectorySummary& summary);
nlohmann::json TrajectoryListJson(const std::string& experiment_id,
                                  const v1::ListTrajectoriesResponse& list);
std::string TrajectoryTable(const v1::ListTrajectoriesResponse& list);
// `full` adds whole answers, kernels, compile logs and feedback.
nlohmann::json TrajectoryJson(const v1::Trajectory& trajectory, bool full);
std::string TrajectoryText(const v1::Trajectory& trajectory, bool full);

// Executors: `workers`.
nlohmann::json ExecutorListJson(const v1::ListExecutorsResponse& list);
std::string ExecutorTable(const v1::ListExecutorsResponse& list, absl::Time now);

// Enum names for display; "-" for UNSPECIFIED.
std::string StateName(v1::TrajectoryState state);
std::string FailureClassName(v1::FailureClass failure_class);
std::string EvalStatusName(v1::EvalStatus status);

}  // namespace ptxbench::cli

#endif  // PTXBENCH_CLI_VIEWS_VIEWS_H_
