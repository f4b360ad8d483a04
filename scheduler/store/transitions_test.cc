// The state machine's tables, walked row by row through the row stores, and
// the pairs they refuse.
#include "scheduler/store/transitions.h"

#include <cstdlib>
#include <deque>
#include <map>
#include <optional>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "scheduler/store/schema.h"
#include "scheduler/store/task_store.h"
#include "scheduler/store/trajectory_store.h"

namespace ptxbench::scheduler {

using experiment_spec::TrajectorySpec;

namespace {

namespace v1 = ::ptxbench::v1;

constexpr TaskState kTaskStates[] = {TaskState::kQueued, TaskState::kLeased,
                                     TaskState::kDone,   TaskState::kFailed,
                                     TaskState::kPoisoned, TaskState::kCancelled};
constexpr TaskEvent kTaskEvents[] = {
    TaskEvent::kLease, TaskEvent::kAnswerByFile, TaskEvent::kComplete, TaskEvent::kBackOff,
    TaskEvent::kFail,  TaskEvent::kPoison,       TaskEvent::kCancel,   TaskEvent::kResume};
constexpr v1::TrajectoryState kTrajectoryStates[] = {
    v1::AWAITING_MODEL, v1::AWAITING_EVAL, v1::SUBMITTED,  v1::LIMITS_EXCEEDED,
    v1::FAILED,         v1::CANCELLED,     v1::AWAITING_AGENT};
constexpr TrajectoryEvent kTrajectoryEvents[] = {
    TrajectoryEvent::kAnswered,  TrajectoryEvent::kNextTurn,   TrajectoryEvent::kTargetMet,
    TrajectoryEvent::kTurnLimit, TrajectoryEvent::kOverBudget, TrajectoryEvent::kFail,
    TrajectoryEvent::kCancel,    TrajectoryEvent::kRetryLlm,   TrajectoryEvent::kRetryEval,
    TrajectoryEvent::kExtend,    TrajectoryEvent::kAgentEval,  TrajectoryEvent::kAgentEvaluated,
    TrajectoryEvent::kAgentEnded, TrajectoryEvent::kRetryAgent};
// Where a trajectory starts: the multiturn loop, or an agent session.
constexpr v1::TrajectoryState kStartStates[] = {v1::AWAITING_MODEL, v1::AWAITING_AGENT};

// The shortest path of table rows from `start` to `goal` (breadth first).
template <typename State, typename Row>
std::optional<std::vector<const Row*>> PathTo(absl::Span<const Row> table, State start,
                                              State goal) {
  std::map<State, std::vector<const Row*>> paths{{start, {}}};
  std::deque<State> todo{start};
  while (!todo.empty()) {
    State s = todo.front();
    todo.pop_front();
    if (s == goal) return paths[s];
    for (const Row& row : table) {
      if (row.from != s || paths.count(row.to)) continue;
      paths[row.to] = paths[s];
      paths[row.to].push_back(&row);
      todo.push_back(row.to);
    }
  }
  return std::nullopt;
}

std::unique_ptr<storage::Database> OpenOrDie() {
  auto db = OpenSchedulerDatabase(":memory:");
  if (!db.ok()) std::abort();
  return *std::move(db);
}

// A fresh trajectory in the start state from which `goal` is reached by the
// fewest rows, and those rows.
struct Start {
  v1::TrajectoryState state;
  std::vector<const TrajectoryTransition*> path;
};
std::optional<Start> StartFor(v1::TrajectoryState goal) {
  for (v1::TrajectoryState start : kStartStates) {
    auto path = PathTo<v1::TrajectoryState, TrajectoryTransition>(TrajectoryTable(), start, goal);
    if (path) return Start{start, *path};
  }
  return std::nullopt;
}

// The stores over a database with one experiment (rowid 1).
class TableWalk : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(db_->Execute("INSERT INTO experiments(id, name, spec_hash, spec_json, priority, "
                             "eval_mode, language, context_policy, max_cost_usd, num_turns, "
                             "created_ms) VALUES('ex_table', 'table', 'h', '{}', 1, 1, 'cuda', "
                             "'full', 0, 3, 0)")
                    .ok());
  }

  // A fresh trajectory in `start`.
  TrajectoryRow NewTrajectory(v1::TrajectoryState start = v1::AWAITING_MODEL) {
    TrajectorySpec t;
    t.trajectory_id = absl::StrCat("tr_", ++count_);
    t.model = "m";
    t.num_turns = 3;
    auto rowid = trajectories_.Insert(t, /*experiment=*/1, "s", "t", start, 0);
    EXPECT_TRUE(rowid.ok()) << rowid.status();
    auto row = trajectories_.Read(*rowid);
    EXPECT_TRUE(row.ok()) << row.status();
    return *row;
  }

  // A fresh task (QUEUED) of a fresh trajectory.
  TaskRow NewTask() {
    TrajectoryRow t = NewTrajectory();
    auto rowid = tasks_.Insert(1, t.rowid, 0, StepKind::kLlm, 0);
    EXPECT_TRUE(rowid.ok()) << rowid.status();
    auto row = tasks_.Read(*rowid);
    EXPECT_TRUE(row.ok()) << row.status();
    return *row;
  }

  // Every task state change goes through TaskStore; kLease through Lease.
  absl::Status Apply(TaskRow& task, TaskEvent event) {
    if (event == TaskEvent::kLease) return tasks_.Lease(task, "ls_1", 1000, "gw_1");
    return tasks_.Transit(task, event, 0);
  }

  std::unique_ptr<storage::Database> db_ = OpenOrDie();
  TaskStore tasks_{db_.get()};
  TrajectoryStore trajectories_{db_.get()};
  int count_ = 0;
};

TEST_F(TableWalk, EveryTaskRowMovesTheStoredState) {
  for (const TaskTransition& row : TaskTable()) {
    SCOPED_TRACE(absl::StrCat(TaskStateName(row.from), " --", TaskEventName(row.event), "--> ",
                              TaskStateName(row.to)));
    TaskRow task = NewTask();
    auto path = PathTo<TaskState, TaskTransition>(TaskTable(), TaskState::kQueued, row.from);
    ASSERT_TRUE(path.has_value()) << "state unreachable from QUEUED";
    for (const TaskTransition* step : *path) ASSERT_TRUE(Apply(task, step->event).ok());
    ASSERT_TRUE(Apply(task, row.event).ok());
    EXPECT_EQ(task.state, row.to);
    auto stored = tasks_.Read(task.rowid);
    ASSERT_TRUE(stored.ok());
    EXPECT_EQ(stored->state, row.to);
  }
}

TEST_F(TableWalk, EveryTrajectoryRowMovesTheStoredState) {
  for (const TrajectoryTransition& row : TrajectoryTable()) {
    SCOPED_TRACE(absl::StrCat(v1::TrajectoryState_Name(row.from), " --",
                              TrajectoryEventName(row.event), "--> ",
                              v1::TrajectoryState_Name(row.to)));
    std::optional<Start> start = StartFor(row.from);
    ASSERT_TRUE(start.has_value()) << "state unreachable from a start state";
    TrajectoryRow t = NewTrajectory(start->state);
    for (const TrajectoryTransition* step : start->path) {
      ASSERT_TRUE(trajectories_.Transit(t, step->event, 0).ok());
    }
    auto applied = trajectories_.Transit(t, row.event, 0);
    ASSERT_TRUE(applied.ok()) << applied.status();
    EXPECT_EQ(*applied, &row) << "the store returns the row, whose effect Core applies";
    auto stored = trajectories_.Read(t.rowid);
    ASSERT_TRUE(stored.ok());
    EXPECT_EQ(stored->state, row.to);
    if (IsTerminal(row.to)) {
      EXPECT_STRNE(row.log_kind, "") << "an ending is logged";
    }
  }
}

TEST_F(TableWalk, PairsNotInTheTaskTableAreRefusedAndChangeNothing) {
  int refused = 0;
  for (TaskState from : kTaskStates) {
    for (TaskEvent event : kTaskEvents) {
      bool listed = false;
      for (const TaskTransition& row : TaskTable()) listed |= row.from == from && row.event == event;
      absl::StatusOr<TaskState> next = NextTaskState(from, event);
      if (listed) {
        EXPECT_TRUE(next.ok());
        continue;
      }
      ++refused;
      EXPECT_EQ(next.status().code(), absl::StatusCode::kInternal)
          << TaskStateName(from) << " on " << TaskEventName(event);
      TaskRow task = NewTask();
      auto path = PathTo<TaskState, TaskTransition>(TaskTable(), TaskState::kQueued, from);
      ASSERT_TRUE(path.has_value());
      for (const TaskTransition* step : *path) ASSERT_TRUE(Apply(task, step->event).ok());
      EXPECT_EQ(Apply(task, event).code(), absl::StatusCode::kInternal);
      EXPECT_EQ(task.state, from);
      EXPECT_EQ(tasks_.Read(task.rowid)->state, from) << "nothing written";
    }
  }
  EXPECT_EQ(refused, 6 * 8 - static_cast<int>(TaskTable().size()));
}

TEST_F(TableWalk, PairsNotInTheTrajectoryTableAreRefusedAndChangeNothing) {
  for (v1::TrajectoryState from : kTrajectoryStates) {
    for (TrajectoryEvent event : kTrajectoryEvents) {
      bool listed = false;
      for (const TrajectoryTransition& row : TrajectoryTable()) {
        listed |= row.from == from && row.event == event;
      }
      if (listed) continue;
      std::optional<Start> start = StartFor(from);
      ASSERT_TRUE(start.has_value());
      TrajectoryRow t = NewTrajectory(start->state);
      for (const TrajectoryTransition* step : start->path) {
        ASSERT_TRUE(trajectories_.Transit(t, step->event, 0).ok());
      }
      EXPECT_EQ(trajectories_.Transit(t, event, 0).status().code(), absl::StatusCode::kInternal)
          << v1::TrajectoryState_Name(from) << " on " << TrajectoryEventName(event);
      EXPECT_EQ(trajectories_.Read(t.rowid)->state, from) << "nothing written";
    }
  }
}

TEST_F(TableWalk, ALeaseIsTakenOnlyThroughLease) {
  TaskRow task = NewTask();
  EXPECT_EQ(tasks_.Transit(task, TaskEvent::kLease, 0).code(), absl::StatusCode::kInternal);
  ASSERT_TRUE(tasks_.Lease(task, "ls_x", 5, "gw_x").ok());
  auto stored = tasks_.Read(task.rowid);
  ASSERT_TRUE(stored.ok());
  EXPECT_EQ(stored->state, TaskState::kLeased);
  EXPECT_EQ(stored->attempt, 1);
  EXPECT_EQ(stored->lease_id, "ls_x");
}

// Only the user commands leave a terminal state, and only the two the
// protos document: retry (FAILED) and extend (LIMITS_EXCEEDED).
TEST(TransitionTables, TerminalStatesAreLeftOnlyByRetryAndExtend) {
  for (const TrajectoryTransition& row : TrajectoryTable()) {
    if (!IsTerminal(row.from)) continue;
    EXPECT_TRUE((row.from == v1::FAILED && (row.event == TrajectoryEvent::kRetryLlm ||
                                            row.event == TrajectoryEvent::kRetryEval ||
                                            row.event == TrajectoryEvent::kRetryAgent)) ||
                (row.from == v1::LIMITS_EXCEEDED && row.event == TrajectoryEvent::kExtend))
        << v1::TrajectoryState_Name(row.from) << " on " << TrajectoryEventName(row.event);
  }
}

// An agent session ends only by the rows that cancel its evaluations still
// running: none outlives the trajectory.
TEST(TransitionTables, LeavingAnAgentSessionCancelsItsTasks) {
  for (const TrajectoryTransition& row : TrajectoryTable()) {
    if (row.from != v1::AWAITING_AGENT || !IsTerminal(row.to)) continue;
    EXPECT_EQ(row.effect, TrajectoryEffect::kCancelTasks) << TrajectoryEventName(row.event);
  }
}

TEST(TransitionTables, EachPairHasAtMostOneRow) {
  for (const TaskTransition& a : TaskTable()) {
    int n = 0;
    for (const TaskTransition& b : TaskTable()) n += a.from == b.from && a.event == b.event;
    EXPECT_EQ(n, 1) << TaskStateName(a.from) << " on " << TaskEventName(a.event);
  }
  for (const TrajectoryTransition& a : TrajectoryTable()) {
    int n = 0;
    for (const TrajectoryTransition& b : TrajectoryTable()) n += a.from == b.from && a.event == b.event;
    EXPECT_EQ(n, 1) << v1::TrajectoryState_Name(a.from) << " on " << TrajectoryEventName(a.event);
  }
}

}  // namespace
}  // namespace ptxbench::scheduler
