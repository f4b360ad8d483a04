#ifndef PTXBENCH_SCHEDULER_STORE_EXPERIMENT_STORE_H_
#define PTXBENCH_SCHEDULER_STORE_EXPERIMENT_STORE_H_

// The experiments table, as Core writes it. Internal to the scheduler.
//
// Threading: as Core (the writer thread, or one test thread).

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "experiment_spec/spec.h"
#include "ptxbench/v1/common.pb.h"
#include "storage/database.h"

namespace ptxbench::scheduler {

// What Core keeps in memory of an experiment.
struct ExperimentRow {
  int64_t rowid = 0;
  std::string id;
  std::string language;
  std::string context_policy;
  ptxbench::v1::EvalMode eval_mode = ptxbench::v1::FULL;
  int priority = 1;
  double max_cost_usd = 0;  // 0: no budget
  double cost_usd = 0;      // spent so far (model calls)
  // The GPU architectures its evaluations run on, e.g. {"sm_90"}.
  std::vector<std::string> architectures;
  // Its evaluations are profiled too: they go to workers that can profile.
  bool profile = false;
  // Its evaluations pass the memcheck gate first: they go to workers with
  // compute-sanitizer (read from the stored spec: experiment_spec::NormalizedSpecAsksMemcheck).
  bool memcheck = false;
  // Agent mode: the settings of its sessions; nullopt for the multiturn loop.
  std::optional<experiment_spec::AgentSettings> agent;
  // A synthesis experiment: its answers' length bounds; nullopt otherwise.
  std::optional<experiment_spec::SynthesisSettings> synthesis;
  // Reached the budget: no new LLM step starts (calls in flight finish).
  bool OverBudget() const { return max_cost_usd > 0 && cost_usd >= max_cost_usd; }
};

// An experiment found by name.
struct ExistingExperiment {
  std::string id;
  std::string spec_hash;
  int64_t trajectories = 0;
  bool staged = false;  // still being submitted (schema v11)
};

class ExperimentStore {
 public:
  explicit ExperimentStore(storage::Database* db) : db_(db) {}

  absl::StatusOr<std::optional<ExistingExperiment>> FindByName(const std::string& name);
  // Inserts `x` with `num_turns` (its trajectories' largest), staged (no
  // reader sees it until Show); returns its rowid.
  absl::StatusOr<int64_t> Insert(const experiment_spec::ExpandedExperiment& x, int num_turns,
                                 int64_t now_ms);
  absl::Status Show(int64_t rowid);
  // Deletes up to `max_rows` rows of staged experiment `rowid` (tasks, then
  // trajectories, then the experiment's own row). Returns whether it is gone.
  absl::StatusOr<bool> DeleteStagedPart(int64_t rowid, int64_t max_rows);
  // The rowids of staged experiments: submissions a restart cut short.
  absl::StatusOr<std::vector<int64_t>> Staged();
  // Every experiment but staged ones.
  absl::Status ForEach(const std::function<void(const ExperimentRow&)>& fn);
  // NOT_FOUND for an unknown rowid.
  absl::StatusOr<int> NumTurns(int64_t rowid);
  absl::Status SetNumTurns(int64_t rowid, int num_turns);
  absl::Status AddCost(int64_t rowid, double cost_usd);

 private:
  storage::Database* db_;
};

}  // namespace ptxbench::scheduler

#endif  // PTXBENCH_SCHEDULER_STORE_EXPERIMENT_STORE_H_
