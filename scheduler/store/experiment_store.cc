#include "scheduler/store/experiment_store.h"

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "scheduler/store/schema.h"

namespace ptxbench::scheduler {

using experiment_spec::AgentSettingsFromJson;
using experiment_spec::AgentSettingsJson;
using experiment_spec::ExpandedExperiment;
using experiment_spec::NormalizedSpecAsksMemcheck;
using experiment_spec::SynthesisSettingsFromJson;
using experiment_spec::SynthesisSettingsJson;

namespace v1 = ::ptxbench::v1;

namespace {

// Settings the experiments table keeps as canonical JSON ('' for none),
// read back with `from_json` (AgentSettingsFromJson, SynthesisSettingsFromJson)
// into `out`.
template <typename Settings, typename FromJson>
absl::Status ReadStoredSettings(const std::string& text, const std::string& experiment,
                                FromJson from_json, std::optional<Settings>& out) {
  if (text.empty()) return absl::OkStatus();
  absl::StatusOr<Settings> settings =
      from_json(nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false));
  if (!settings.ok()) {
    return absl::InternalError(
        absl::StrCat("experiment ", experiment, ": ", settings.status().message()));
  }
  out = *std::move(settings);
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::optional<ExistingExperiment>> ExperimentStore::FindByName(
    const std::string& name) {
  PTXB_ASSIGN_OR_RETURN(
      storage::Statement * s,
      db_->Cached("SELECT e.id, e.spec_hash, (SELECT count(*) FROM trajectories j "
                  "WHERE j.experiment = e.rowid), e.staged FROM experiments e WHERE e.name = ?"));
  s->BindText(1, name);
  PTXB_ASSIGN_OR_RETURN(bool exists, s->Step());
  if (!exists) return std::nullopt;
  ExistingExperiment found{s->ColumnText(0), s->ColumnText(1), s->ColumnInt64(2),
                           s->ColumnInt64(3) != 0};
  s->Reset();
  return found;
}

absl::StatusOr<int64_t> ExperimentStore::Insert(const ExpandedExperiment& x, int num_turns,
                                                int64_t now_ms) {
  PTXB_ASSIGN_OR_RETURN(
      storage::Statement * s,
      db_->Cached("INSERT INTO experiments(id, name, spec_hash, spec_json, priority, "
                  "eval_mode, language, context_policy, max_cost_usd, num_turns, "
                  "created_ms, architectures, agent_json, synthesis_json, lineage_json, profile, "
                  "staged) VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,1)"));
  s->BindText(1, x.experiment_id)
      .BindText(2, x.name)
      .BindText(3, x.spec_hash)
      .BindText(4, x.normalized_json)
      .BindInt64(5, x.priority)
      .BindInt64(6, x.eval_mode)
      .BindText(7, x.language)
      .BindText(8, x.context_policy)
      .BindDouble(9, x.max_cost_usd)
      .BindInt64(10, num_turns)
      .BindInt64(11, now_ms)
      .BindText(12, EncodeArchitectures(x.architectures))
      .BindText(13, x.agent ? AgentSettingsJson(*x.agent).dump() : std::string())
      .BindText(14, x.synthesis ? SynthesisSettingsJson(*x.synthesis).dump() : std::string())
      .BindText(15, x.lineage_json)
      .BindInt64(16, x.profile ? 1 : 0);
  PTXB_RETURN_IF_ERROR(s->Run());
  return db_->LastInsertRowId();
}

absl::Status ExperimentStore::Show(int64_t rowid) {
  PTXB_ASSIGN_OR_RETURN(storage::Statement * s,
                        db_->Cached("UPDATE experiments SET staged = 0 WHERE rowid = ?"));
  s->BindInt64(1, rowid);
  return s->Run();
}

absl::StatusOr<bool> ExperimentStore::DeleteStagedPart(int64_t rowid, int64_t max_rows) {
  // Only ever a staged experiment's rows: a shown one is never deleted here.
  PTXB_ASSIGN_OR_RETURN(storage::Statement * staged,
                        db_->Cached("SELECT staged FROM experiments WHERE rowid = ?"));
  staged->BindInt64(1, rowid);
  PTXB_ASSIGN_OR_RETURN(bool found, staged->Step());
  const bool is_staged = found && staged->ColumnInt64(0) != 0;
  staged->Reset();
  if (!found) return true;
  if (!is_staged) {
    return absl::FailedPreconditionError(absl::StrCat("experiment #", rowid, " is not staged"));
  }
  int64_t left = max_rows;
  for (const char* sql :
       {"DELETE FROM tasks WHERE rowid IN (SELECT rowid FROM tasks WHERE experiment = ?1 "
        "LIMIT ?2)",
        "DELETE FROM trajectories WHERE rowid IN (SELECT rowid FROM trajectories WHERE "
        "experiment = ?1 LIMIT ?2)"}) {
    PTXB_ASSIGN_OR_RETURN(storage::Statement * s, db_->Cached(sql));
    s->BindInt64(1, rowid).BindInt64(2, left);
    PTXB_RETURN_IF_ERROR(s->Run());
    left -= db_->Changes();
    if (left <= 0) return false;
  }
  PTXB_ASSIGN_OR_RETURN(storage::Statement * s,
                        db_->Cached("DELETE FROM experiments WHERE rowid = ?"));
  s->BindInt64(1, rowid);
  PTXB_RETURN_IF_ERROR(s->Run());
  return true;
}

absl::StatusOr<std::vector<int64_t>> ExperimentStore::Staged() {
  PTXB_ASSIGN_OR_RETURN(storage::Statement * s,
                        db_->Cached("SELECT rowid FROM experiments WHERE staged != 0"));
  return ReadInt64Column(s);
}

absl::Status ExperimentStore::ForEach(const std::function<void(const ExperimentRow&)>& fn) {
  PTXB_ASSIGN_OR_RETURN(
      storage::Statement * s,
      db_->Cached("SELECT rowid, id, language, context_policy, eval_mode, priority, "
                  "max_cost_usd, cost_usd, architectures, agent_json, synthesis_json, profile, "
                  "spec_json FROM experiments WHERE staged = 0"));
  while (true) {
    PTXB_ASSIGN_OR_RETURN(bool row, s->Step());
    if (!row) break;
    ExperimentRow e;
    e.rowid = s->ColumnInt64(0);
    e.id = s->ColumnText(1);
    e.language = s->ColumnText(2);
    e.context_policy = s->ColumnText(3);
    e.eval_mode = static_cast<v1::EvalMode>(s->ColumnInt64(4));
    e.priority = static_cast<int>(s->ColumnInt64(5));
    e.max_cost_usd = s->ColumnDouble(6);
    e.cost_usd = s->ColumnDouble(7);
    e.architectures = DecodeArchitectures(s->ColumnText(8));
    e.profile = s->ColumnInt64(11) != 0;
    e.memcheck = NormalizedSpecAsksMemcheck(s->ColumnText(12));
    absl::Status stored =
        ReadStoredSettings(s->ColumnText(9), e.id, AgentSettingsFromJson, e.agent);
    if (stored.ok()) {
      stored = ReadStoredSettings(s->ColumnText(10), e.id, SynthesisSettingsFromJson, e.synthesis);
    }
    if (!stored.ok()) {
      s->Reset();
      return stored;
    }
    fn(e);
  }
  s->Reset();
  return absl::OkStatus();
}

absl::StatusOr<int> ExperimentStore::NumTurns(int64_t rowid) {
  PTXB_ASSIGN_OR_RETURN(storage::Statement * s,
                        db_->Cached("SELECT num_turns FROM experiments WHERE rowid = ?"));
  s->BindInt64(1, rowid);
  PTXB_ASSIGN_OR_RETURN(bool found, s->Step());
  if (!found) return absl::NotFoundError(absl::StrCat("no experiment #", rowid));
  const int num_turns = static_cast<int>(s->ColumnInt64(0));
  s->Reset();
  return num_turns;
}

absl::Status ExperimentStore::SetNumTurns(int64_t rowid, int num_turns) {
  PTXB_ASSIGN_OR_RETURN(storage::Statement * s,
                        db_->Cached("UPDATE experiments SET num_turns = ? WHERE rowid = ?"));
  s->BindInt64(1, num_turns).BindInt64(2, rowid);
  return s->Run();
}

absl::Status ExperimentStore::AddCost(int64_t rowid, double cost_usd) {
  PTXB_ASSIGN_OR_RETURN(
      storage::Statement * s,
      db_->Cached("UPDATE experiments SET cost_usd = cost_usd + ? WHERE rowid = ?"));
  s->BindDouble(1, cost_usd).BindInt64(2, rowid);
  return s->Run();
}

}  // namespace ptxbench::scheduler
