#ifndef PTXBENCH_SCHEDULER_STORE_TRAJECTORY_STORE_H_
#define PTXBENCH_SCHEDULER_STORE_TRAJECTORY_STORE_H_

// The trajectories table: every SQL statement on it that Core runs. A
// trajectory's row is written only by Transit, which takes its next state
// from the trajectory table of scheduler/store/transitions.h. Internal to the
// scheduler.
//
// Threading: as Core (the writer thread, or one test thread).

#include <cstdint>
#include <limits>
#include <set>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "experiment_spec/spec.h"
#include "ptxbench/v1/common.pb.h"
#include "scheduler/store/transitions.h"
#include "storage/database.h"

namespace ptxbench::scheduler {

struct TrajectoryRow {
  int64_t rowid = 0;
  std::string id;
  int64_t experiment = 0;
  std::string experiment_id;
  std::string model;
  std::string definition;
  std::string prompt_tag;
  int num_turns = 0;
  double target_speedup = 1;
  // Read-only for callers: Transit changes it, by the table.
  ptxbench::v1::TrajectoryState state = ptxbench::v1::AWAITING_MODEL;
  ptxbench::v1::FailureClass failure_class = ptxbench::v1::FAILURE_CLASS_UNSPECIFIED;
  std::string reason;
  int turns_completed = 0;
  double best_speedup = 0;
  bool correct = false;
  bool simulated = false;
  double cost_usd = 0;
  std::string system_blob;
  std::string task_blob;
  std::vector<std::string> workloads;  // empty: all of the definition's
  // Those of `workloads` its model is never shown (verdict::ShownPart).
  std::vector<std::string> held_out;
  // Agent mode with starter fixit: the blob of {"kernel", "log"} its
  // sessions start from; "" for every other.
  std::string starter_blob;
};

// `t.held_out` as verdict::ShownPart takes it.
inline std::set<std::string> HeldOutSet(const TrajectoryRow& t) {
  return {t.held_out.begin(), t.held_out.end()};
}

class TrajectoryStore {
 public:
  explicit TrajectoryStore(storage::Database* db) : db_(db) {}

  // NOT_FOUND for an unknown trajectory.
  absl::StatusOr<TrajectoryRow> Read(int64_t rowid);
  absl::StatusOr<TrajectoryRow> ReadById(const std::string& id);
  // Inserts `t` of experiment `experiment` in `state` (AWAITING_MODEL, or
  // AWAITING_AGENT in agent mode); returns its rowid.
  absl::StatusOr<int64_t> Insert(const experiment_spec::TrajectorySpec& t, int64_t experiment,
                                 const std::string& system_blob, const std::string& task_blob,
                                 ptxbench::v1::TrajectoryState state, int64_t now_ms,
                                 const std::string& starter_blob = "");
  // Agent mode: how its session ended (a serialized AgentOutcome).
  absl::Status SetAgentOutcome(int64_t rowid, const std::string& outcome);
  // Moves `row` by `event` (INTERNAL when the table refuses it) and writes
  // its mutable columns (state, counters, reason, cost, num_turns). Returns
  // the table row, whose effect the caller applies.
  absl::StatusOr<const TrajectoryTransition*> Transit(TrajectoryRow& row, TrajectoryEvent event,
                                                      int64_t now_ms);
  // The rowids of an experiment's trajectories in `state`, in order: the
  // first `limit` of those above `after` and at most `up_to`.
  absl::StatusOr<std::vector<int64_t>> InState(
      int64_t experiment, ptxbench::v1::TrajectoryState state, int64_t after, int64_t limit,
      int64_t up_to = std::numeric_limits<int64_t>::max());
  // Raises num_turns to at least `num_turns` for the experiment's next
  // `limit` trajectories above rowid `after`; returns the last one's rowid (0
  // when none is left).
  absl::StatusOr<int64_t> RaiseNumTurns(int64_t experiment, int num_turns, int64_t after,
                                        int64_t limit);

 private:
  storage::Database* db_;
};

}  // namespace ptxbench::scheduler

#endif  // PTXBENCH_SCHEDULER_STORE_TRAJECTORY_STORE_H_
