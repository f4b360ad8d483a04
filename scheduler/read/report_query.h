#ifndef PTXBENCH_SCHEDULER_READ_REPORT_QUERY_H_
#define PTXBENCH_SCHEDULER_READ_REPORT_QUERY_H_

// GetReport: the metrics of experiments (results/report/metrics.h) from the facts
// of their trajectories, all read from one Snapshot.

#include <functional>

#include "absl/status/statusor.h"
#include "ptxbench/v1/report.pb.h"
#include "scheduler/read/snapshot.h"
#include "workloads/registry.h"

namespace ptxbench::scheduler {

// INVALID_ARGUMENT for no experiment or a bad grouping, NOT_FOUND naming an
// unknown experiment. A definition the registry no longer has has no
// categories. `pace`, when given, is called between chunks of work (every
// 1000 trajectories), e.g. to give way to a busy scheduler.
absl::StatusOr<ptxbench::v1::ReportResponse> ComputeReport(
    Snapshot& snapshot, const workloads::DefinitionRegistry& definitions,
    const ptxbench::v1::ReportRequest& request, const std::function<void()>& pace = nullptr);

}  // namespace ptxbench::scheduler

#endif  // PTXBENCH_SCHEDULER_READ_REPORT_QUERY_H_
