// Result commands: report (metrics of experiments, docs/REPORTS.md) and
// export (files other tools read, docs/FORMATS.md "Exports"). Both read the
// scheduler's database through a snapshot of their own, so they may run
// while experiments do.

#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "cli/client/client.h"
#include "cli/commands/commands.h"
#include "common/file.h"
#include "common/proto_json.h"
#include "common/status_macros.h"
#include "results/exports/export.h"
#include "results/report/html.h"
#include "results/report/text.h"

namespace ptxbench::cli {
namespace {

// A request for `ids` with `groupings`, in order.
v1::ReportRequest ReportRequestFor(const std::vector<std::string>& ids,
                                   const std::vector<std::vector<std::string>>& groupings) {
  v1::ReportRequest request;
  for (const std::string& id : ids) request.add_experiment_ids(id);
  for (const auto& g : groupings) {
    v1::Grouping* grouping = request.add_groupings();
    for (const std::string& d : g) grouping->add_by(d);
  }
  return request;
}

// --by A,B (repeatable): one grouping per occurrence; default --by model.
v1::ReportRequest ReportRequestOf(const Invocation& inv) {
  std::vector<std::vector<std::string>> groupings;
  for (const std::string& by : inv.args.GetAll("by")) {
    groupings.push_back(absl::StrSplit(by, ',', absl::SkipWhitespace()));
  }
  if (groupings.empty()) groupings.push_back({"model"});
  if (inv.args.Has("html")) {
    for (const auto& g : report::HtmlGroupings()) {
      if (std::find(groupings.begin(), groupings.end(), g) == groupings.end()) {
        groupings.push_back(g);
      }
    }
  }
  return ReportRequestFor(inv.args.positionals, groupings);
}

}  // namespace

absl::Status WriteHtmlReport(SchedulerClient& client, const std::string& experiment_id,
                             const std::string& path) {
  PTXB_ASSIGN_OR_RETURN(
      v1::ReportResponse report,
      client.GetReport(ReportRequestFor({experiment_id}, report::HtmlGroupings())));
  return WriteFileAtomically(path, report::ReportHtml(report));
}

namespace {

absl::Status RunReport(const Invocation& inv) {
  SchedulerClient client = Connect(inv);
  const v1::ReportRequest request = ReportRequestOf(inv);
  absl::StatusOr<v1::ReportResponse> report = client.GetReport(request);
  if (absl::IsInvalidArgument(report.status())) return UsageError(report.status().message());
  if (!report.ok()) return report.status();
  if (inv.args.Has("html")) {
    const std::string path = inv.args.Get("html");
    PTXB_RETURN_IF_ERROR(WriteFileAtomically(path, report::ReportHtml(*report)));
    inv.err() << "wrote " << path << "\n";
  }
  if (inv.global.output == "json") {
    PTXB_ASSIGN_OR_RETURN(std::string json, ProtoJson(*report, /*indent=*/true));
    inv.out() << json;
  } else if (inv.global.output == "csv") {
    inv.out() << report::ReportCsv(*report);
  } else {
    inv.out() << report::ReportTable(*report);
  }
  return absl::OkStatus();
}

// Rewrites one line on a terminal, else prints a line now and then.
class ExportProgress {
 public:
  explicit ExportProgress(const Invocation& inv)
      : inv_(inv), start_(absl::Now()), last_(start_) {}

  void Add(const v1::Trajectory& t) {
    ++trajectories_;
    turns_ += t.turns_size();
    const absl::Time now = absl::Now();
    if (now - last_ < (inv_.env.err_is_terminal ? absl::Milliseconds(200) : absl::Seconds(10))) {
      return;
    }
    last_ = now;
    Print(inv_.env.err_is_terminal ? "\r" : "", inv_.env.err_is_terminal ? "" : "\n");
  }
  void Done(const std::string& out) {
    Print(inv_.env.err_is_terminal ? "\r" : "", "\n");
    inv_.err() << "wrote " << out << "\n";
  }

 private:
  void Print(const char* begin, const char* end) {
    const double seconds = std::max(absl::ToDoubleSeconds(absl::Now() - start_), 1e-3);
    inv_.err() << begin
               << absl::StrFormat("exported %d %s, %d %s (%.0f turns/s)", trajectories_,
                                  trajectories_ == 1 ? "trajectory" : "trajectories", turns_,
                                  turns_ == 1 ? "turn" : "turns", turns_ / seconds)
               << end << std::flush;
  }

  const Invocation& inv_;
  const absl::Time start_;
  absl::Time last_;
  int64_t trajectories_ = 0;
  int64_t turns_ = 0;
};

absl::Status RunExport(const Invocation& inv) {
  if (!inv.args.Has("format")) return UsageError("export needs --format");
  if (!inv.args.Has("out")) return UsageError("export needs --out DIR");
  PTXB_ASSIGN_OR_RETURN(exports::Format format, exports::ParseFormat(inv.args.Get("format")));
  exports::Options options;
  if (inv.args.Has("filter")) {
    if (format != exports::Format::kSft) return UsageError("--filter is for --format sft");
    PTXB_ASSIGN_OR_RETURN(options.sft_filter, exports::ParseSftFilter(inv.args.Get("filter")));
  }
  options.ptxbench_version = PTXB_VERSION;
  options.now = absl::Now();
  SchedulerClient client = Connect(inv);
  // Every experiment is checked before anything is written.
  std::vector<v1::GetExperimentResponse> experiments;
  for (const std::string& id : inv.args.positionals) {
    PTXB_ASSIGN_OR_RETURN(experiments.emplace_back(), client.GetExperiment(id));
  }
  const std::string out = inv.args.Get("out");
  PTXB_ASSIGN_OR_RETURN(std::unique_ptr<exports::Writer> writer,
                        exports::MakeWriter(format, out, options));
  ExportProgress progress(inv);
  for (const v1::GetExperimentResponse& experiment : experiments) {
    const std::string& id = experiment.experiment().experiment_id();
    v1::GetDefinitionsRequest definitions_request;
    definitions_request.set_experiment_id(id);
    PTXB_ASSIGN_OR_RETURN(v1::GetDefinitionsResponse definitions,
                          client.GetDefinitions(definitions_request));
    PTXB_RETURN_IF_ERROR(writer->BeginExperiment(
        experiment.experiment(),
        {definitions.definitions().begin(), definitions.definitions().end()}));
    v1::ReadTrajectoriesRequest request;
    request.set_experiment_id(id);
    request.set_detail(exports::DetailFor(format));
    PTXB_RETURN_IF_ERROR(client.ReadTrajectories(request, [&](v1::Trajectory&& t) {
      progress.Add(t);
      return writer->Add(t);
    }));
    PTXB_RETURN_IF_ERROR(writer->EndExperiment());
  }
  PTXB_RETURN_IF_ERROR(writer->Finish());
  progress.Done(out);
  return absl::OkStatus();
}

}  // namespace

void AddReportCommands(std::vector<Command>* commands) {
  commands->push_back(
      {{"report",
        "EXP [EXP...]",
        1,
        -1,
        {{"by", true, true, "DIM[,DIM]",
          "group by model, tag, definition, category and/or turn (repeatable: one table each; "
          "default model)"},
         {"html", true, false, "FILE", "also write the report as one self-contained HTML page"}},
        "metrics of experiments: correct rate, pass@turn, fast_p, speedups, cost",
        "Reads one consistent snapshot of the experiments. Each metric is defined in\n"
        "docs/REPORTS.md; the report names the definitions it used. Two or more\n"
        "experiments are compared side by side, with the differences from the first.\n"
        "--output table (default), json or csv. Simulated results are labelled."},
       RunReport});
  commands->push_back(
      {{"export",
        "EXP [EXP...]",
        1,
        -1,
        {{"format", true, false, "csv|jsonl|ptxbench|flashinfer-trace|sft", "what to write"},
         {"out", true, false, "DIR", "a new (or empty) folder to write into"},
         {"filter", true, false, "correct|best|min-speedup=X",
          "sft only: which correct turns become records (default correct)"}},
        "write an experiment's results as files other tools read",
        "csv, jsonl: a turns table and a workloads table.\n"
        "ptxbench: PTXBench's output root (plan.json, summary.json, trajectories in the\n"
        "mini-swe-agent format, success/ kernels); one experiment.\n"
        "flashinfer-trace: definitions, workloads, solutions and traces.\n"
        "sft: chat records ending with a correct kernel, with a manifest.\n"
        "Streams from one snapshot; the folder appears only when complete\n"
        "(docs/FORMATS.md, \"Exports\")."},
       RunExport});
}

}  // namespace ptxbench::cli
