#include "scheduler/store/schema.h"

#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "common/status_macros.h"
#include "scheduler/store/counts.h"
#include "scheduler/store/event_log.h"
#include "scheduler/store/turn_verdicts.h"
#include "storage/blob_store.h"
#include "storage/migrations.h"

namespace ptxbench::scheduler {

namespace {

// Version 1. Large texts live in blobs (sha256 keys); rows reference them.
// Times are Unix milliseconds. Enum columns hold the proto enum values.
constexpr char kSchemaV1[] = R"sql(
CREATE TABLE experiments(
  rowid INTEGER PRIMARY KEY,
  id TEXT NOT NULL UNIQUE,
  name TEXT NOT NULL UNIQUE,
  spec_hash TEXT NOT NULL,
  spec_json TEXT NOT NULL,
  priority INTEGER NOT NULL,
  eval_mode INTEGER NOT NULL,
  language TEXT NOT NULL,
  context_policy TEXT NOT NULL,
  max_cost_usd REAL NOT NULL,
  num_turns INTEGER NOT NULL,
  created_ms INTEGER NOT NULL,
  cost_usd REAL NOT NULL DEFAULT 0
);
CREATE TABLE trajectories(
  rowid INTEGER PRIMARY KEY,
  id TEXT NOT NULL UNIQUE,
  experiment INTEGER NOT NULL REFERENCES experiments(rowid),
  model TEXT NOT NULL,
  definition TEXT NOT NULL,
  prompt_tag TEXT NOT NULL,
  sample INTEGER NOT NULL,
  num_turns INTEGER NOT NULL,
  target_speedup REAL NOT NULL,
  state INTEGER NOT NULL,
  failure_class INTEGER NOT NULL DEFAULT 0,
  reason TEXT NOT NULL DEFAULT '',
  turns_completed INTEGER NOT NULL DEFAULT 0,
  best_speedup REAL NOT NULL DEFAULT 0,
  correct INTEGER NOT NULL DEFAULT 0,
  cost_usd REAL NOT NULL DEFAULT 0,
  simulated INTEGER NOT NULL DEFAULT 0,
  system_blob TEXT NOT NULL,
  task_blob TEXT NOT NULL,
  updated_ms INTEGER NOT NULL
);
CREATE INDEX trajectories_by_experiment_state ON trajectories(experiment, state);
CREATE TABLE turns(
  trajectory INTEGER NOT NULL REFERENCES trajectories(rowid),
  turn INTEGER NOT NULL,
  state TEXT NOT NULL,
  answer_blob TEXT NOT NULL,
  reasoning_blob TEXT,
  llm_meta BLOB NOT NULL,
  kernel_blob TEXT,
  kernel_sha256 TEXT,
  eval_blob TEXT,
  eval_status INTEGER,
  speedup REAL,
  feedback_blob TEXT,
  started_ms INTEGER NOT NULL,
  finished_ms INTEGER,
  PRIMARY KEY(trajectory, turn)
) WITHOUT ROWID;
CREATE TABLE tasks(
  rowid INTEGER PRIMARY KEY,
  experiment INTEGER NOT NULL REFERENCES experiments(rowid),
  trajectory INTEGER NOT NULL REFERENCES trajectories(rowid),
  turn INTEGER NOT NULL,
  kind INTEGER NOT NULL,
  state INTEGER NOT NULL,
  attempt INTEGER NOT NULL DEFAULT 0,
  deaths INTEGER NOT NULL DEFAULT 0,
  infra_failures INTEGER NOT NULL DEFAULT 0,
  api_failures INTEGER NOT NULL DEFAULT 0,
  not_before_ms INTEGER NOT NULL DEFAULT 0,
  lease_id TEXT NOT NULL DEFAULT '',
  lease_deadline_ms INTEGER NOT NULL DEFAULT 0,
  executor TEXT NOT NULL DEFAULT '',
  created_ms INTEGER NOT NULL,
  last_error TEXT NOT NULL DEFAULT '',
  UNIQUE(trajectory, turn, kind)
);
CREATE INDEX tasks_by_experiment_state ON tasks(experiment, state);
)sql";

// The live-task index. Its text, built from the enum by LiveTaskCondition,
// is byte for byte what version 1 always created (schema_test checks it).
std::string LiveTaskIndexSql() {
  return absl::StrCat("CREATE INDEX tasks_live ON tasks(state) WHERE ",
                      LiveTaskCondition("state"), ";\n");
}

constexpr char kSchemaV1Executors[] = R"sql(CREATE TABLE executors(
  id TEXT PRIMARY KEY,
  kind INTEGER NOT NULL,
  name TEXT NOT NULL,
  capabilities BLOB NOT NULL,
  registered_ms INTEGER NOT NULL,
  draining INTEGER NOT NULL DEFAULT 0
) WITHOUT ROWID;
)sql";

// The writer connection's page cache: larger than SQLite's default 2 MiB
// (throughput was a third lower with it), but not large. SQLite 3.40 walks
// its whole page cache at the end of any transaction in which a b-tree
// balance reordered pages (the swap parks a page at the pending-byte page
// number, which leaves the cache's largest key above the database size, and
// the commit's truncation then scans every hash bucket); nearly every batch
// does that, so each commit costs time in proportion to the pages cached. At
// 128 MiB that scan was a tenth of the writer's time; 16 MiB was the best of
// 4 to 128 MiB (scheduler_bench, docs/DECISIONS.md), and the database file
// stays in the OS's cache. Checkpoints are the job of a storage::Checkpointer
// on its own thread; the writer's own auto-checkpoint is only a backstop, far
// out, in case that one falls behind.
constexpr char kWriterTuning[] =
    "PRAGMA cache_size = -16384;"         // 16 MiB
    "PRAGMA wal_autocheckpoint = 65536;"  // pages (256 MiB of WAL)
    "PRAGMA temp_store = MEMORY;";

// Version 2: the workloads a trajectory is evaluated on (EncodeWorkloads).
constexpr char kSchemaV2[] =
    "ALTER TABLE trajectories ADD COLUMN workloads TEXT NOT NULL DEFAULT '';";

// Version 3: what a report reads of an evaluation, so that a report over a
// million turns is a scan of columns rather than a decode of every result
// blob (results/report/facts.h). NULL on turns evaluated before version 3
// until version 13 fills them.
constexpr char kSchemaV3[] =
    "ALTER TABLE turns ADD COLUMN kernel_speedup REAL;"
    "ALTER TABLE turns ADD COLUMN roofline REAL;"
    "ALTER TABLE turns ADD COLUMN eval_ms INTEGER;";

// Version 4: tokens (stored as SHA-256 hashes only; auth/token.h) and the
// token each executor registered under, which alone may use its leases.
// Executors registered before version 4 have owner '' and are claimed by the
// first token that registers them again.
constexpr char kSchemaV4[] = R"sql(
CREATE TABLE tokens(
  name TEXT PRIMARY KEY,
  role INTEGER NOT NULL,
  hash TEXT NOT NULL UNIQUE,
  created_ms INTEGER NOT NULL,
  revoked_ms INTEGER NOT NULL DEFAULT 0,
  created_by TEXT NOT NULL DEFAULT ''
) WITHOUT ROWID;
ALTER TABLE executors ADD COLUMN owner TEXT NOT NULL DEFAULT '';
)sql";

// Version 5: the GPU architectures an experiment's evaluations run on
// (EncodeArchitectures); experiments before it were all compiled for Hopper.
constexpr char kSchemaV5[] =
    "ALTER TABLE experiments ADD COLUMN architectures TEXT NOT NULL DEFAULT 'sm_90';";

// Version 6: agent mode (docs/AGENTS.md). An experiment's agent settings
// (canonical JSON, AgentSettingsJson; '' for the multiturn loop), the action
// id of the evaluate call that made an agent turn (NULL for model answers),
// and how a trajectory's session ended (a serialized AgentOutcome).
constexpr char kSchemaV6[] =
    "ALTER TABLE experiments ADD COLUMN agent_json TEXT NOT NULL DEFAULT '';"
    "ALTER TABLE turns ADD COLUMN action_id TEXT;"
    "ALTER TABLE trajectories ADD COLUMN agent_outcome BLOB;";

// Version 7: pipelines (docs/PIPELINES.md). Synthesis experiments'
// settings (canonical JSON, SynthesisSettingsJson; '' for every other).
constexpr char kSchemaV7[] =
    "ALTER TABLE experiments ADD COLUMN synthesis_json TEXT NOT NULL DEFAULT '';"
    // What made an experiment: a pipeline stage's lineage (JSON), '' when
    // it was submitted by hand.
    "ALTER TABLE experiments ADD COLUMN lineage_json TEXT NOT NULL DEFAULT '';";

// Version 8: pipeline stage manifests (StageManifestStore), byte for byte;
// the blob an agent session of a fix-it item starts from (agent.starter
// fixit: {"kernel", "log"} as JSON; '' for every other trajectory).
constexpr char kSchemaV8[] = R"sql(
ALTER TABLE trajectories ADD COLUMN starter_blob TEXT NOT NULL DEFAULT '';
CREATE TABLE stage_manifests(
  stage_id TEXT NOT NULL,
  sha256 TEXT NOT NULL,
  pipeline TEXT NOT NULL,
  stage TEXT NOT NULL,
  kind TEXT NOT NULL,
  recorded_ms INTEGER NOT NULL,
  recorded_by TEXT NOT NULL,
  manifest TEXT NOT NULL,
  PRIMARY KEY(stage_id, sha256)
) WITHOUT ROWID;
CREATE INDEX stage_manifests_pipeline ON stage_manifests(pipeline, recorded_ms);
)sql";

// Version 9: profiles (docs/MEASUREMENT.md, "Profiles"). Experiments that
// ask for them (ExpandedExperiment::profile), and the agent turns whose call
// was profile_kernel (AnswerRow::profile); 0 for every one before.
constexpr char kSchemaV9[] =
    "ALTER TABLE experiments ADD COLUMN profile INTEGER NOT NULL DEFAULT 0;"
    "ALTER TABLE turns ADD COLUMN profile INTEGER NOT NULL DEFAULT 0;";

// Version 10: per-experiment counters kept by triggers (counts.h), so
// status reads a few rows at any size.

// Version 11: an experiment being submitted in parts (Dispatcher::Submit)
// is staged: its rows are written but no reader sees it, no lease takes its
// tasks, and a scheduler restarted before its last part deletes it.
constexpr char kSchemaV11[] =
    "ALTER TABLE experiments ADD COLUMN staged INTEGER NOT NULL DEFAULT 0;";

// Version 12: a LIBRARY_FALLBACK turn whose outputs passed the checks
// (verdict::FallbackCorrect), for the reports' fallback figures. No turn
// before it had a kernel census, so none of them was one.
constexpr char kSchemaV12[] =
    "ALTER TABLE turns ADD COLUMN fallback_correct INTEGER NOT NULL DEFAULT 0;";

// Version 13: whether the evaluation is correct (verdict::Correct), written
// with the result (TurnStore::RecordEval), so a report decides correctness
// through verdict/ while reading columns only. Its rows step decides it once
// for the turns evaluated before, and fills the report columns of those
// evaluated before version 3, which every report decoded from their blobs
// until then (turn_verdicts.h).
constexpr char kSchemaV13[] =
    "ALTER TABLE turns ADD COLUMN correct INTEGER NOT NULL DEFAULT 0;";

// Version 14: the scores' figures of a correct turn (verdict::WeightedScores,
// docs/REPORTS.md "Scores"): its importance-weighted roofline fraction (0
// unknown) and SOL-Score (negative unknown), written with the result. Its
// rows step fills them for the correct turns stored before, from their
// results (turn_verdicts.h); no workload had an importance before it, so
// every workload weighs 1 there, as it then did.
constexpr char kSchemaV14[] =
    "ALTER TABLE turns ADD COLUMN weighted_roofline REAL NOT NULL DEFAULT 0;"
    "ALTER TABLE turns ADD COLUMN sol_score REAL NOT NULL DEFAULT -1;";

// Version 15: held-out workloads (docs/FORMATS.md, "Held-out workloads"):
// the workloads of a trajectory that its model is never shown
// (EncodeWorkloads), and whether a turn is correct on the shown workloads
// alone (verdict::Correct of verdict::ShownPart), the reports' "found out"
// figure. No trajectory before it held any out, so every earlier turn is
// as correct on its shown workloads as on all of them.
constexpr char kSchemaV15[] =
    "ALTER TABLE trajectories ADD COLUMN held_out TEXT NOT NULL DEFAULT '';"
    "ALTER TABLE turns ADD COLUMN shown_correct INTEGER NOT NULL DEFAULT 0;"
    "UPDATE turns SET shown_correct = correct;";

std::vector<storage::Migration> Migrations() {
  static const std::string* v1 = new std::string(
      absl::StrCat(kSchemaV1, LiveTaskIndexSql(), kSchemaV1Executors, storage::kBlobTableSql,
                   ";\n", kEventTableSql, ";\n"));
  return {{1, v1->c_str()}, {2, kSchemaV2}, {3, kSchemaV3}, {4, kSchemaV4}, {5, kSchemaV5},
          {6, kSchemaV6}, {7, kSchemaV7}, {8, kSchemaV8}, {9, kSchemaV9},
          {10, CountsSchemaSql().c_str()}, {11, kSchemaV11}, {12, kSchemaV12},
          {13, kSchemaV13, StoreVerdictsOfEvaluatedTurns},
          {14, kSchemaV14, StoreScoresOfCorrectTurns}, {15, kSchemaV15}};
}

}  // namespace

const char* StepKindName(StepKind kind) {
  switch (kind) {
    case StepKind::kLlm: return "llm";
    case StepKind::kEval: return "eval";
    case StepKind::kAgent: return "agent";
  }
  return "?";
}

std::string SqlValue(TaskState state) { return absl::StrCat(static_cast<int>(state)); }
std::string SqlValue(StepKind kind) { return absl::StrCat(static_cast<int>(kind)); }
std::string SqlValue(ptxbench::v1::TrajectoryState state) {
  return absl::StrCat(static_cast<int>(state));
}

std::string TaskStateCondition(absl::string_view column,
                               std::initializer_list<TaskState> states) {
  return absl::StrCat(column, " IN (",
                      absl::StrJoin(states, ", ",
                                    [](std::string* out, TaskState s) {
                                      absl::StrAppend(out, SqlValue(s));
                                    }),
                      ")");
}

std::string LiveTaskCondition(absl::string_view column) {
  return TaskStateCondition(column, {TaskState::kQueued, TaskState::kLeased});
}

absl::StatusOr<std::vector<int64_t>> ReadInt64Column(storage::Statement* s) {
  std::vector<int64_t> out;
  while (true) {
    PTXB_ASSIGN_OR_RETURN(bool row, s->Step());
    if (!row) break;
    out.push_back(s->ColumnInt64(0));
  }
  s->Reset();
  return out;
}

std::string EncodeWorkloads(const std::vector<std::string>& workloads) {
  return absl::StrJoin(workloads, "\n");
}

std::string EncodeArchitectures(const std::vector<std::string>& architectures) {
  return absl::StrJoin(architectures, ",");
}

std::vector<std::string> DecodeArchitectures(const std::string& column) {
  return absl::StrSplit(column, ',', absl::SkipEmpty());
}

std::vector<std::string> DecodeWorkloads(const std::string& column) {
  if (column.empty()) return {};
  return absl::StrSplit(column, '\n');
}

absl::StatusOr<std::unique_ptr<storage::Database>> OpenSchedulerDatabase(
    const std::string& path) {
  // Every commit is on disk when its RPC answers, power loss included: the
  // write queue batches commits, so the extra fsync per batch costs little
  // (docs/DECISIONS.md, "Durable by default").
  storage::Database::Options options;
  options.synchronous_full = true;
  PTXB_ASSIGN_OR_RETURN(auto db, storage::OpenAndMigrate(path, options, kApplicationId,
                                                         "ptxbench", Migrations()));
  PTXB_RETURN_IF_ERROR(db->Execute(kWriterTuning));
  return db;
}

absl::StatusOr<std::unique_ptr<storage::Database>> OpenReadOnly(const std::string& path) {
  storage::Database::Options options;
  options.read_only = true;
  return storage::Database::Open(path, options);
}

}  // namespace ptxbench::scheduler
