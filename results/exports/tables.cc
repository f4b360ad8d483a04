#include "results/exports/tables.h"

#include <string>
#include <utility>
#include <vector>

#include "common/status_macros.h"
#include "results/exports/row_format.h"
#include "results/exports/turn_facts.h"
#include "verdict/verdict.h"

namespace ptxbench::exports {
namespace {

namespace v1 = ::ptxbench::v1;

// The columns, in order; WriteTurn and WriteWorkload give one value each.
// Their types and units are in docs/FORMATS.md, "Exports".
const std::vector<std::string>& TurnColumns() {
  static const auto* columns = new std::vector<std::string>{
      "experiment_id",    "experiment",     "trajectory_id",   "model",
      "definition",       "tag",            "sample",          "turn",
      "state",            "trajectory_state", "status",        "correct",
      "speedup",          "min_speedup",    "input_tokens",    "output_tokens",
      "reasoning_tokens", "cached_tokens",  "cost_usd",        "model_latency_ms",
      "eval_ms",          "started_unix_ms", "finished_unix_ms", "provider",
      "simulated",        "kernel_sha256"};
  return *columns;
}

const std::vector<std::string>& WorkloadColumns() {
  static const auto* columns = new std::vector<std::string>{
      "experiment_id", "experiment",     "trajectory_id",       "model",
      "definition",    "tag",            "sample",              "turn",
      "kernel_sha256", "workload_uuid",  "axes",                "status",
      "latency_ms",    "reference_latency_ms", "speedup",       "reference",
      "max_abs_error", "max_rel_error",  "matched_ratio",       "roofline_fraction",
      "errors",        "simulated"};
  return *columns;
}

class TableWriter : public FolderWriter {
 public:
  TableWriter(std::unique_ptr<OutputDir> dir, Format format, std::unique_ptr<RowFormat> turns,
              std::unique_ptr<RowFormat> workloads)
      : FolderWriter(std::move(dir), std::string(FormatName(format)), /*one_experiment=*/false),
        turns_(std::move(turns)),
        workloads_(std::move(workloads)) {}

 private:
  absl::Status OnBegin(const v1::Experiment&, const std::vector<v1::DefinitionDocument>&) override {
    return absl::OkStatus();
  }

  absl::Status OnAdd(const v1::Trajectory& trajectory) override {
    for (const v1::Turn& turn : trajectory.turns()) {
      WriteTurn(trajectory.summary(), turn);
      if (!turn.has_eval()) continue;
      for (const v1::WorkloadTrace& trace : turn.eval().traces()) {
        WriteWorkload(trajectory.summary(), turn, trace);
      }
    }
    PTXB_RETURN_IF_ERROR(turns_->status());
    return workloads_->status();
  }

  absl::Status OnFinish() override {
    absl::Status turns = turns_->Close();
    absl::Status workloads = workloads_->Close();
    return turns.ok() ? workloads : turns;
  }

  // The columns both tables start with.
  void WriteIds(RowFormat& row, const v1::TrajectorySummary& s, const v1::Turn& turn) {
    row.String(experiment().experiment_id());
    row.String(experiment().name());
    row.String(s.trajectory_id());
    row.String(s.model());
    row.String(s.definition());
    row.String(s.prompt_tag());
    row.Int(s.sample_index());
    row.Int(turn.index());
  }

  void WriteTurn(const v1::TrajectorySummary& s, const v1::Turn& turn) {
    RowFormat& row = *turns_;
    WriteIds(row, s, turn);
    const bool evaluated = turn.has_eval();
    const v1::EvalResult& eval = turn.eval();
    const v1::LlmResponse& response = turn.response();
    const bool correct = IsCorrect(turn);
    row.String(turn.state());
    row.String(v1::TrajectoryState_Name(s.state()));
    row.OptionalString(evaluated ? absl::string_view(StatusName(eval.status())) : "");
    row.Bool(correct);
    if (correct) {
      row.Double(CorrectSpeedup(turn));
    } else {
      row.Null();
    }
    if (evaluated) {
      row.Double(verdict::MinSpeedup(eval));  // 0 unless correct, as the real worker writes it
    } else {
      row.Null();
    }
    row.Int(response.usage().input_tokens());
    row.Int(response.usage().output_tokens());
    row.Int(response.usage().reasoning_tokens());
    row.Int(response.usage().cached_tokens());
    row.Double(response.cost_usd());
    row.Int(response.latency_ms());
    if (evaluated) {
      row.Int(eval.wall_time_ms());
    } else {
      row.Null();
    }
    row.Int(turn.started_unix_ms());
    if (turn.finished_unix_ms() > 0) {
      row.Int(turn.finished_unix_ms());
    } else {
      row.Null();
    }
    row.OptionalString(response.provider());
    row.Bool(IsSimulated(turn));
    row.OptionalString(turn.kernel_sha256());
    row.EndRow();
  }

  // A measurement of 0 means "not measured" in a WorkloadTrace.
  static void Measured(RowFormat& row, double value) {
    if (value > 0) {
      row.Double(value);
    } else {
      row.Null();
    }
  }

  void WriteWorkload(const v1::TrajectorySummary& s, const v1::Turn& turn,
                     const v1::WorkloadTrace& trace) {
    RowFormat& row = *workloads_;
    WriteIds(row, s, turn);
    row.OptionalString(turn.kernel_sha256());
    row.String(trace.workload_uuid());
    row.Axes(trace.axes());
    row.String(StatusName(trace.status()));
    Measured(row, trace.latency_ms());
    Measured(row, trace.reference_latency_ms());
    Measured(row, trace.speedup());
    row.OptionalString(trace.reference());
    // Errors are measured where outputs were compared (FlashInfer-Bench's
    // rule: PASSED and INCORRECT_NUMERICAL).
    if (trace.status() == v1::PASSED || trace.status() == v1::INCORRECT_NUMERICAL) {
      row.Double(trace.max_abs_error());
      row.Double(trace.max_rel_error());
      row.Double(trace.matched_ratio());
    } else {
      row.Null();
      row.Null();
      row.Null();
    }
    Measured(row, trace.roofline_fraction());
    row.StringList(trace.errors());
    row.Bool(IsSimulated(turn));
    row.EndRow();
  }

  std::unique_ptr<RowFormat> turns_;
  std::unique_ptr<RowFormat> workloads_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<Writer>> MakeTableWriter(Format format,
                                                        std::unique_ptr<OutputDir> dir) {
  const bool csv = format == Format::kCsv;
  const std::string ext = csv ? ".csv" : ".jsonl";
  PTXB_ASSIGN_OR_RETURN(std::unique_ptr<FileSink> turns, FileSink::Create(dir->File("turns" + ext)));
  PTXB_ASSIGN_OR_RETURN(std::unique_ptr<FileSink> workloads,
                        FileSink::Create(dir->File("workloads" + ext)));
  auto make = csv ? &RowFormat::Csv : &RowFormat::Jsonl;
  return std::unique_ptr<Writer>(new TableWriter(std::move(dir), format,
                                                 make(std::move(turns), TurnColumns()),
                                                 make(std::move(workloads), WorkloadColumns())));
}

}  // namespace ptxbench::exports
