// A database written by an earlier scheduler (scheduler/testdata/README.md
// says which and how) opens with this code, and its experiment, stopped with
// work done, leased and queued, runs to the end.
#include <unistd.h>

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/file.h"
#include "gtest/gtest.h"
#include "scheduler/read/report_query.h"
#include "scheduler/read/snapshot.h"
#include "scheduler/state/core.h"
#include "scheduler/state/core_test_util.h"
#include "scheduler/store/counts.h"
#include "scheduler/store/schema.h"
#include "scheduler/store/transitions.h"
#include "storage/blob_store.h"
#include "verdict/scores.h"
#include "verdict/verdict.h"

namespace ptxbench::scheduler {
namespace {

namespace fs = std::filesystem;
namespace v1 = ::ptxbench::v1;

class MainDatabaseTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::path(::testing::TempDir()) / absl::StrCat("main_db_", getpid());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    fs::copy_file(fs::path(PTXB_SCHEDULER_TESTDATA) / "main-b7540e7.db", dir_ / "ptxbench.db");
    auto db = OpenSchedulerDatabase((dir_ / "ptxbench.db").string());
    ASSERT_TRUE(db.ok()) << db.status();
    db_ = *std::move(db);
  }
  void TearDown() override {
    core_.reset();
    db_.reset();
    fs::remove_all(dir_);
  }

  int64_t Count(const std::string& sql) { return QueryInt(*db_, sql); }

  std::map<std::string, v1::TrajectoryState> States() {
    std::map<std::string, v1::TrajectoryState> out;
    auto s = db_->Prepare("SELECT id, state FROM trajectories");
    EXPECT_TRUE(s.ok());
    while (*s->Step()) out[s->ColumnText(0)] = static_cast<v1::TrajectoryState>(s->ColumnInt64(1));
    return out;
  }

  std::string Register(v1::ExecutorKind kind) {
    v1::RegisterRequest r;
    r.set_kind(kind);
    r.set_name("after-upgrade");
    r.mutable_capabilities()->set_serves_any_model(true);
    r.mutable_capabilities()->set_simulated(true);
    auto* gpu = r.mutable_capabilities()->add_gpus();
    gpu->set_model("Simulated H200");
    gpu->set_sm_arch("sm_90");  // the database's experiments predate architectures: Hopper
    gpu->set_healthy(true);
    auto response = core_->Register(r);
    EXPECT_TRUE(response.ok()) << response.status();
    return response->executor_id();
  }

  fs::path dir_;
  FakeClock clock_;
  std::unique_ptr<storage::Database> db_;
  std::unique_ptr<Core> core_;
};

TEST_F(MainDatabaseTest, ItsExperimentRunsToTheEnd) {
  // The fixture was stopped part-way: some work done, some leased by
  // executors that died with it, some still queued.
  const std::map<std::string, v1::TrajectoryState> before = States();
  ASSERT_GE(before.size(), 4u);
  int terminal = 0, live = 0;
  for (const auto& [id, state] : before) (IsTerminal(state) ? terminal : live)++;
  ASSERT_GT(terminal, 0) << "the fixture has finished trajectories";
  ASSERT_GT(live, 0) << "and unfinished ones";
  ASSERT_GT(Count(absl::StrCat("SELECT count(*) FROM tasks WHERE state = ",
                               SqlValue(TaskState::kLeased))),
            0);
  ASSERT_GT(Count(absl::StrCat("SELECT count(*) FROM tasks WHERE state = ",
                               SqlValue(TaskState::kQueued))),
            0);

  // Restarted right after it stopped: the leases it recorded still run.
  clock_.Set(absl::FromUnixMillis(Count("SELECT max(updated_ms) FROM trajectories")));
  CoreOptions options;
  options.lease_ttl = absl::Seconds(30);
  core_ = std::make_unique<Core>(db_.get(), &clock_, options);
  ASSERT_TRUE(core_->Load().ok());
  const std::string gw = Register(v1::GATEWAY);
  const std::string wk = Register(v1::WORKER);

  // Simulated executors: every answer holds a kernel that passes at 2x.
  for (int round = 0; round < 1000; ++round) {
    bool worked = false;
    for (const std::string& executor : {gw, wk}) {
      auto task = core_->TryLease(executor);
      ASSERT_TRUE(task.ok()) << task.status();
      if (!task->has_value()) continue;
      worked = true;
      v1::CompleteRequest c;
      *c.mutable_lease() = (*task)->lease();
      c.set_executor_id(executor);
      if ((*task)->kind() == v1::LLM) {
        c.mutable_llm()->set_text(kKernelAnswer);
        c.mutable_llm()->set_finish_reason("stop");
        c.mutable_llm()->set_simulated(true);
      } else {
        c.mutable_eval()->set_status(v1::PASSED);
        c.mutable_eval()->set_all_passed(true);
        c.mutable_eval()->set_min_speedup(2.0);
        c.mutable_eval()->set_simulated(true);
        v1::WorkloadTrace* trace = c.mutable_eval()->add_traces();
        trace->set_status(v1::PASSED);
        trace->set_speedup(2.0);
      }
      absl::Status done = core_->Complete(c);
      ASSERT_TRUE(done.ok()) << done;
    }
    if (!worked) {
      // The leases of the dead executors expire; their tasks come back.
      clock_.Advance(absl::Seconds(31));
      ASSERT_TRUE(core_->Tick().ok());
    }
    if (Count(absl::StrCat("SELECT count(*) FROM tasks WHERE ", LiveTaskCondition("state"))) == 0) {
      break;
    }
  }

  const std::map<std::string, v1::TrajectoryState> after = States();
  ASSERT_EQ(after.size(), before.size());
  for (const auto& [id, state] : after) {
    if (IsTerminal(before.at(id))) {
      EXPECT_EQ(state, before.at(id)) << id << " was finished and stays so";
    } else {
      EXPECT_EQ(state, v1::SUBMITTED) << id << " met its target";
    }
  }
  EXPECT_EQ(Count(absl::StrCat("SELECT count(*) FROM tasks WHERE ", LiveTaskCondition("state"))),
            0);
  EXPECT_GT(Count("SELECT count(*) FROM events WHERE kind = 'task.expired'"), 0)
      << "the leases held when it stopped expired and were run again";

  // The counters status reads: filled from the rows by the migration, kept
  // by every write since (expiries, retries and completions included).
  absl::StatusOr<std::vector<std::string>> differences = CheckCounts(*db_);
  ASSERT_TRUE(differences.ok()) << differences.status();
  EXPECT_TRUE(differences->empty()) << absl::StrJoin(*differences, "\n");
  EXPECT_EQ(Count("SELECT sum(trajectories) FROM trajectory_counts"),
            static_cast<int64_t>(after.size()));
  EXPECT_EQ(Count(absl::StrCat("SELECT sum(trajectories) FROM trajectory_counts WHERE state = ",
                               SqlValue(v1::SUBMITTED))),
            Count(absl::StrCat("SELECT count(*) FROM trajectories WHERE state = ",
                               SqlValue(v1::SUBMITTED))));
  // And the check sees a counter that drifted from its rows.
  ASSERT_TRUE(db_->Execute("UPDATE task_counts SET tasks = tasks + 2 WHERE (experiment, state, "
                           "kind) = (SELECT experiment, state, kind FROM task_counts LIMIT 1)")
                  .ok());
  differences = CheckCounts(*db_);
  ASSERT_TRUE(differences.ok());
  ASSERT_EQ(differences->size(), 1u);
  EXPECT_NE((*differences)[0].find("tasks stored "), std::string::npos) << (*differences)[0];
}

// Its turns were evaluated before the report columns existed (schema 3):
// the migration to version 13 fills their columns once from the result
// blobs, by the verdict, so a report reads them as it reads any turn.
TEST_F(MainDatabaseTest, TurnsEvaluatedBeforeTheReportColumnsAreMigratedOnce) {
  // The fixture's own schema version (the SQLite header's user_version,
  // bytes 60..63, big-endian): older than the report columns.
  const absl::StatusOr<std::string> header =
      ReadFile((fs::path(PTXB_SCHEDULER_TESTDATA) / "main-b7540e7.db").string());
  ASSERT_TRUE(header.ok() && header->size() >= 64) << header.status();
  const auto byte = [&](int i) { return static_cast<unsigned char>((*header)[i]); };
  EXPECT_LT((byte(60) << 24) | (byte(61) << 16) | (byte(62) << 8) | byte(63), 3);

  ASSERT_EQ(Count("SELECT count(*) FROM turns WHERE eval_blob IS NOT NULL"), 12);
  EXPECT_EQ(Count("SELECT count(*) FROM turns WHERE eval_blob IS NOT NULL AND eval_ms IS NULL"), 0);
  auto s = db_->Prepare("SELECT eval_blob, correct, kernel_speedup, roofline, eval_ms, "
                        "fallback_correct FROM turns WHERE eval_blob IS NOT NULL");
  ASSERT_TRUE(s.ok()) << s.status();
  int correct = 0;
  while (*s->Step()) {
    auto blob = storage::GetBlob(*db_, s->ColumnText(0));
    ASSERT_TRUE(blob.ok()) << blob.status();
    v1::EvalResult result;
    ASSERT_TRUE(result.ParseFromString(*blob));
    const verdict::Verdict v = verdict::Judge(result);
    EXPECT_EQ(s->ColumnInt64(1) != 0, v.correct);
    EXPECT_DOUBLE_EQ(s->ColumnDouble(2), v.kernel_speedup);
    EXPECT_DOUBLE_EQ(s->ColumnDouble(3), v.roofline);
    EXPECT_EQ(s->ColumnInt64(4), result.wall_time_ms());
    EXPECT_EQ(s->ColumnInt64(5) != 0, v.fallback_correct);
    correct += v.correct;
  }
  EXPECT_EQ(correct, 4);

  auto snapshot = Snapshot::Open((dir_ / "ptxbench.db").string());
  ASSERT_TRUE(snapshot.ok()) << snapshot.status();
  auto definitions = workloads::DefinitionRegistry::Load({});
  ASSERT_TRUE(definitions.ok()) << definitions.status();
  v1::ReportRequest request;
  request.add_experiment_ids("main-fixture");
  request.add_groupings()->add_by("model");
  auto report = ComputeReport(**snapshot, **definitions, request);
  ASSERT_TRUE(report.ok()) << report.status();
  const v1::GroupReport& total = report->experiments(0).total();
  EXPECT_EQ(total.correct(), 4);
  EXPECT_EQ(total.passed_turns(), 4);
  EXPECT_EQ(total.speedup_count(), 4) << "speedups migrated from the result blobs";
  EXPECT_GT(total.geomean_speedup(), 0);
  EXPECT_EQ(total.evaluations(), 12);
  EXPECT_EQ(total.simulated_trajectories(), total.trajectories());
}

// Its correct turns were stored before the scores' columns (schema 14):
// the migration fills them from the result blobs, every workload weighing 1
// as none then had an importance; the other turns keep "unknown".
TEST_F(MainDatabaseTest, CorrectTurnsGetTheirScoresFromTheMigration) {
  auto s = db_->Prepare("SELECT eval_blob, weighted_roofline, sol_score FROM turns "
                        "WHERE eval_blob IS NOT NULL");
  ASSERT_TRUE(s.ok()) << s.status();
  int scored = 0;
  int evaluated = 0;
  while (*s->Step()) {
    ++evaluated;
    auto blob = storage::GetBlob(*db_, s->ColumnText(0));
    ASSERT_TRUE(blob.ok()) << blob.status();
    v1::EvalResult result;
    ASSERT_TRUE(result.ParseFromString(*blob));
    const verdict::Scores scores = verdict::WeightedScores(result, nullptr);
    EXPECT_DOUBLE_EQ(s->ColumnDouble(1), scores.weighted_roofline);
    EXPECT_DOUBLE_EQ(s->ColumnDouble(2), scores.sol_score);
    if (scores.sol_score >= 0) ++scored;
  }
  EXPECT_EQ(evaluated, 12);
  EXPECT_GT(scored, 0) << "the fixture's correct turns have a SOL-Score to migrate";
}

// Every table and index, as SQL text, by name.
std::map<std::string, std::string> Schema(storage::Database& db) {
  std::map<std::string, std::string> out;
  auto s = db.Prepare("SELECT name, sql FROM sqlite_master WHERE sql IS NOT NULL");
  EXPECT_TRUE(s.ok()) << s.status();
  while (*s->Step()) out[s->ColumnText(0)] = s->ColumnText(1);
  return out;
}

TEST_F(MainDatabaseTest, ANewDatabaseHasTheSameSchemaText) {
  auto fresh = OpenSchedulerDatabase((dir_ / "fresh.db").string());
  ASSERT_TRUE(fresh.ok()) << fresh.status();
  ASSERT_GE(Schema(*db_).size(), 8u) << "tables and indexes of the fixture";
  EXPECT_EQ(Schema(**fresh), Schema(*db_));
  EXPECT_EQ(QueryInt(**fresh, "PRAGMA user_version"), QueryInt(*db_, "PRAGMA user_version"));
}

// The live-task queries spell the states so that SQLite can use tasks_live.
TEST_F(MainDatabaseTest, LiveTaskQueriesUseThePartialIndex) {
  auto s = db_->Prepare(absl::StrCat("EXPLAIN QUERY PLAN SELECT rowid FROM tasks WHERE ",
                                     LiveTaskCondition("state")));
  ASSERT_TRUE(s.ok()) << s.status();
  std::string plan;
  while (*s->Step()) plan += s->ColumnText(3) + "\n";
  EXPECT_NE(plan.find("tasks_live"), std::string::npos) << plan;
}

}  // namespace
}  // namespace ptxbench::scheduler
