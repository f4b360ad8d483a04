#ifndef PTXBENCH_SCHEDULER_STATE_PAYLOADS_H_
#define PTXBENCH_SCHEDULER_STATE_PAYLOADS_H_

// What an executor receives with a lease: for an evaluation step the
// kernel and what to evaluate it on, for an agent session its settings and
// prompts, for an LLM step the chat messages the experiment's context
// policy sends (docs/FORMATS.md, "Experiment specs"),
// built from the rows and blobs of the database. System and task prompts
// are shared by many trajectories: kept decoded, in a bounded cache.
// Thread-compatible: Core's writer thread.

#include <string>
#include <unordered_map>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "ptxbench/v1/executor.pb.h"
#include "scheduler/store/experiment_store.h"
#include "scheduler/store/task_store.h"
#include "scheduler/store/trajectory_store.h"
#include "scheduler/store/turn_store.h"
#include "storage/database.h"

namespace ptxbench::scheduler {

class TaskPayloads {
 public:
  // Not owned; must outlive this.
  TaskPayloads(storage::Database* db, TurnStore* turns);

  // The payload of `task` (a step of `trajectory`, of `experiment`) into `out`.
  absl::Status Build(const TaskRow& task, const TrajectoryRow& trajectory,
                     const ExperimentRow& experiment, ptxbench::v1::Task* out);

 private:
  absl::StatusOr<std::string> CachedBlob(const std::string& hash);
  absl::Status BuildAgent(const TaskRow& task, const TrajectoryRow& trajectory,
                          const ExperimentRow& experiment, ptxbench::v1::AgentSession* out);

  storage::Database* db_;
  TurnStore* turns_;
  std::unordered_map<std::string, std::string> prompt_cache_;
};

}  // namespace ptxbench::scheduler

#endif  // PTXBENCH_SCHEDULER_STATE_PAYLOADS_H_
