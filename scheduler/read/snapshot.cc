#include "scheduler/read/snapshot.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "google/protobuf/io/coded_stream.h"
#include "scheduler/store/schema.h"

namespace ptxbench::scheduler {

namespace v1 = ::ptxbench::v1;

absl::StatusOr<std::unique_ptr<Snapshot>> Snapshot::Open(const std::string& path) {
  PTXB_ASSIGN_OR_RETURN(std::unique_ptr<storage::Database> db, OpenReadOnly(path));
  // BEGIN alone takes no snapshot; the first read does, so one is done
  // here: the snapshot is the moment of Open.
  // A larger cache for the indexes a long read walks. Not a memory map,
  // though a 1M-turn export ran a fifth faster through one: its page faults
  // take the process's mmap lock, which the writer's and gRPC's threads need
  // too, from a thread of the lowest priority (scheduler_bench lost a third
  // of its throughput beside a report).
  PTXB_RETURN_IF_ERROR(db->Execute("PRAGMA cache_size = -65536"));
  PTXB_RETURN_IF_ERROR(db->Execute("BEGIN; SELECT count(*) FROM experiments"));
  return std::unique_ptr<Snapshot>(new Snapshot(std::move(db)));
}

Snapshot::~Snapshot() { db_->Execute("COMMIT").IgnoreError(); }

absl::StatusOr<StoredExperiment> Snapshot::Experiment(const std::string& id_or_name) {
  return ReadExperiment(*db_, id_or_name);
}

absl::StatusOr<std::vector<std::string>> Snapshot::Definitions(int64_t experiment_rowid) {
  PTXB_ASSIGN_OR_RETURN(storage::Statement s,
                        db_->Prepare("SELECT DISTINCT definition FROM trajectories "
                                     "WHERE experiment = ? ORDER BY definition"));
  s.BindInt64(1, experiment_rowid);
  std::vector<std::string> out;
  while (true) {
    PTXB_ASSIGN_OR_RETURN(bool row, s.Step());
    if (!row) break;
    out.push_back(s.ColumnText(0));
  }
  return out;
}

namespace {

// The serialized size of `message` as a field of its parent: tag, length,
// body.
size_t FieldBytes(const google::protobuf::MessageLite& message) {
  const size_t body = message.ByteSizeLong();
  return 1 + google::protobuf::io::CodedOutputStream::VarintSize64(body) + body;
}

}  // namespace

absl::Status Snapshot::ReadTrajectories(const v1::ReadTrajectoriesRequest& request,
                                        size_t part_bytes, PartWriter& out) {
  const v1::TurnDetail detail =
      request.detail() == v1::TURN_DETAIL_UNSPECIFIED ? v1::TURN_DETAIL_FULL : request.detail();
  PTXB_ASSIGN_OR_RETURN(storage::Statement s,
                        db_->Prepare(absl::StrCat(kTrajectorySummarySelect,
                                                  request.has_trajectory_id()
                                                      ? "WHERE j.id = ?"
                                                      : "WHERE j.experiment = ? ORDER BY j.rowid")));
  if (request.has_trajectory_id()) {
    s.BindText(1, request.trajectory_id());
  } else {
    PTXB_ASSIGN_OR_RETURN(StoredExperiment experiment, Experiment(request.experiment_id()));
    s.BindInt64(1, experiment.rowid);
  }
  bool any = false;
  while (true) {
    PTXB_ASSIGN_OR_RETURN(bool row, s.Step());
    if (!row) break;
    any = true;
    v1::Trajectory* part = out.NewPart();
    PTXB_RETURN_IF_ERROR(ReadTrajectoryHead(*db_, s, detail, part));
    const std::string id = part->summary().trajectory_id();
    size_t bytes = part->ByteSizeLong();
    PTXB_RETURN_IF_ERROR(ReadTurns(
        *db_, s.ColumnInt64(16), detail, [&] { return part->add_turns(); },
        [&](v1::Turn& turn) -> absl::Status {
          const size_t turn_bytes = FieldBytes(turn);
          if (part->turns_size() > 1 && bytes + turn_bytes > part_bytes) {
            // The turn goes on in a new part. Copied: the finished part's
            // memory may be reused once it is handed over (rare: a part is
            // most of a megabyte).
            v1::Turn moved = turn;
            part->mutable_turns()->RemoveLast();
            PTXB_RETURN_IF_ERROR(out.PartDone(bytes));
            part = out.NewPart();
            part->mutable_summary()->set_trajectory_id(id);
            part->set_continued(true);
            *part->add_turns() = std::move(moved);
            bytes = part->ByteSizeLong();
            return absl::OkStatus();
          }
          bytes += turn_bytes;
          return absl::OkStatus();
        }));
    PTXB_RETURN_IF_ERROR(out.PartDone(bytes));
  }
  if (!any && request.has_trajectory_id()) {
    return absl::NotFoundError(absl::StrCat("unknown trajectory '", request.trajectory_id(), "'"));
  }
  return absl::OkStatus();
}

absl::Status Snapshot::TurnFacts(int64_t trajectory_rowid, std::vector<report::TurnFacts>* out) {
  // Every evaluated turn has its verdict in columns (schema version 13
  // filled those of the turns evaluated before them): no result is decoded.
  PTXB_ASSIGN_OR_RETURN(
      storage::Statement * s,
      db_->Cached("SELECT turn, llm_meta, kernel_blob IS NOT NULL, eval_blob IS NOT NULL, "
                  "eval_status, kernel_speedup, roofline, eval_ms, fallback_correct, correct, "
                  "weighted_roofline, sol_score, shown_correct "
                  "FROM turns WHERE trajectory = ? ORDER BY turn"));
  s->BindInt64(1, trajectory_rowid);
  v1::LlmResponse meta;
  while (true) {
    PTXB_ASSIGN_OR_RETURN(bool row, s->Step());
    if (!row) break;
    report::TurnFacts& f = out->emplace_back();
    f.turn = static_cast<int>(s->ColumnInt64(0));
    f.answered = true;  // a turn row is written with its answer
    meta.Clear();
    meta.ParseFromString(s->ColumnBlob(1));
    f.usage = meta.usage();
    f.cost_usd = meta.cost_usd();
    f.model_latency_ms = meta.latency_ms();
    f.model_calls = meta.provider().rfind("agent:", 0) == 0 ? meta.model_calls() : 1;
    f.simulated = meta.simulated();
    f.scripted = meta.provider() == "scripted";
    f.has_kernel = s->ColumnInt64(2) != 0;
    f.evaluated = s->ColumnInt64(3) != 0;
    if (!f.evaluated) continue;
    f.status = static_cast<v1::EvalStatus>(s->ColumnInt64(4));
    f.speedup = s->ColumnDouble(5);
    f.roofline = s->ColumnDouble(6);
    f.eval_ms = s->ColumnInt64(7);
    f.fallback_correct = s->ColumnInt64(8) != 0;
    f.correct = s->ColumnInt64(9) != 0;
    f.weighted_roofline = s->ColumnDouble(10);
    f.sol_score = s->ColumnDouble(11);
    f.shown_correct = s->ColumnInt64(12) != 0;
  }
  return absl::OkStatus();
}

absl::Status Snapshot::ForEachFacts(
    int64_t experiment_rowid,
    const std::function<DefinitionFacts(const std::string&)>& definition,
    const std::function<void(const report::TrajectoryFacts&)>& fn) {
  PTXB_ASSIGN_OR_RETURN(
      storage::Statement s,
      db_->Prepare("SELECT j.rowid, j.id, e.id, j.model, j.prompt_tag, j.definition, j.sample, "
                   "j.state, j.num_turns, j.simulated, j.agent_outcome, j.held_out != '' "
                   "FROM trajectories j "
                   "JOIN experiments e ON e.rowid = j.experiment "
                   "WHERE j.experiment = ? ORDER BY j.rowid"));
  s.BindInt64(1, experiment_rowid);
  report::TrajectoryFacts t;
  std::string last_definition;
  while (true) {
    PTXB_ASSIGN_OR_RETURN(bool row, s.Step());
    if (!row) break;
    t.trajectory_id = s.ColumnText(1);
    t.experiment_id = s.ColumnText(2);
    t.model = s.ColumnText(3);
    t.tag = s.ColumnText(4);
    t.definition = s.ColumnText(5);
    if (t.definition != last_definition) {
      DefinitionFacts facts = definition(t.definition);
      t.categories = std::move(facts.categories);
      t.importance = facts.importance;
      last_definition = t.definition;
    }
    t.sample = static_cast<int>(s.ColumnInt64(6));
    t.state = static_cast<v1::TrajectoryState>(s.ColumnInt64(7));
    t.num_turns = static_cast<int>(s.ColumnInt64(8));
    t.simulated = s.ColumnInt64(9) != 0;
    t.held_out = s.ColumnInt64(11) != 0;
    t.session_tail_usage.Clear();
    t.session_tail_cost_usd = 0;
    t.session_tail_calls = 0;
    if (!s.ColumnIsNull(10)) {
      v1::AgentOutcome outcome;
      outcome.ParseFromString(s.ColumnBlob(10));
      t.session_tail_usage = outcome.usage_since_last_eval().usage();
      t.session_tail_cost_usd = outcome.usage_since_last_eval().cost_usd();
      t.session_tail_calls = outcome.usage_since_last_eval().model_calls();
    }
    t.turns.clear();
    PTXB_RETURN_IF_ERROR(TurnFacts(s.ColumnInt64(0), &t.turns));
    fn(t);
  }
  return absl::OkStatus();
}

}  // namespace ptxbench::scheduler
