#include "scheduler/read/report_query.h"

#include <string>
#include <vector>

#include "absl/time/clock.h"
#include "common/status_macros.h"
#include "results/report/metrics.h"

namespace ptxbench::scheduler {

namespace v1 = ::ptxbench::v1;

absl::StatusOr<v1::ReportResponse> ComputeReport(Snapshot& snapshot,
                                                 const workloads::DefinitionRegistry& definitions,
                                                 const v1::ReportRequest& request,
                                                 const std::function<void()>& pace) {
  if (request.experiment_ids().empty()) {
    return absl::InvalidArgumentError("name at least one experiment");
  }
  std::vector<std::vector<std::string>> groupings;
  for (const v1::Grouping& g : request.groupings()) {
    groupings.emplace_back(g.by().begin(), g.by().end());
  }
  // A definition no longer loaded has no category and weighs 1.
  auto definition = [&definitions](const std::string& name) -> Snapshot::DefinitionFacts {
    absl::StatusOr<const workloads::Definition*> d = definitions.Find(name);
    if (!d.ok()) return {};
    return {(*d)->tags, (*d)->importance};
  };
  v1::ReportResponse out;
  out.set_metrics_version(report::kMetricsVersion);
  for (double p : report::FastPThresholds()) out.add_fast_p_thresholds(p);
  out.set_generated_unix_ms(absl::ToUnixMillis(absl::Now()));
  for (const std::string& id : request.experiment_ids()) {
    PTXB_ASSIGN_OR_RETURN(StoredExperiment experiment, snapshot.Experiment(id));
    PTXB_ASSIGN_OR_RETURN(report::ReportBuilder builder, report::ReportBuilder::Create(groupings));
    int64_t added = 0;
    PTXB_RETURN_IF_ERROR(snapshot.ForEachFacts(
        experiment.rowid, definition, [&](const report::TrajectoryFacts& t) {
          builder.Add(t);
          if (pace && ++added % 1000 == 0) pace();
        }));
    v1::ExperimentReport* r = out.add_experiments();
    *r = builder.Finish();
    r->set_experiment_id(experiment.experiment.experiment_id());
    r->set_name(experiment.experiment.name());
    r->set_eval_mode(experiment.experiment.eval_mode());
    r->set_lineage_json(experiment.experiment.lineage_json());
    r->set_language(experiment.experiment.language());
  }
  return out;
}

}  // namespace ptxbench::scheduler
