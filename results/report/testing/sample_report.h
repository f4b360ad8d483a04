#ifndef PTXBENCH_RESULTS_REPORT_TESTING_SAMPLE_REPORT_H_
#define PTXBENCH_RESULTS_REPORT_TESTING_SAMPLE_REPORT_H_

// Realistic ReportResponses for the tests of the report's renderings (and
// the picture in docs/images/report.png): made-up but self-consistent
// numbers (pass@turn never falls, fast_p falls with p, the outcomes of a turn
// add up to the trajectories still running, totals are the sums of their
// groups). Not computed by results/report/metrics.h: the renderings are tested on
// their own.

#include <string>
#include <vector>

#include "ptxbench/v1/common.pb.h"
#include "ptxbench/v1/report.pb.h"

namespace ptxbench::report::testing {

struct SampleOptions {
  std::string name = "gemm-sweep";
  std::string id = "exp-0001";
  std::vector<std::string> models = {"gpt-4.1", "claude-sonnet-4"};
  std::vector<std::string> tags = {"ptxb-no-hint", "ptxb-hint"};
  int turns = 5;
  int trajectories_per_cell = 40;
  // Scales every pass count (0.5: half as many solved).
  double skill = 1.0;
  // Every trajectory simulated (simulated_trajectories = trajectories).
  bool simulated = false;
  // The turns of this model's trajectories came from a scripted model.
  std::string scripted_model;
  ptxbench::v1::EvalMode eval_mode = ptxbench::v1::FULL;
};

// One experiment with its total and the groupings ["model"], ["tag"] and
// ["model", "tag"], in that order.
ptxbench::v1::ExperimentReport SampleExperiment(const SampleOptions& options);

// The response around `experiments`: metrics_version, the fast_p thresholds
// and a fixed generated time (2025-06-01 12:00:00 UTC).
ptxbench::v1::ReportResponse SampleResponse(
    std::vector<ptxbench::v1::ExperimentReport> experiments);

// One experiment, 2 models × 2 tags × 5 turns, nothing simulated.
ptxbench::v1::ReportResponse SampleReport();
// One experiment whose every trajectory is simulated.
ptxbench::v1::ReportResponse SimulatedReport();
// Two experiments side by side: SampleReport's and a simulated one with a
// scripted model among its models.
ptxbench::v1::ReportResponse ComparisonReport();

}  // namespace ptxbench::report::testing

#endif  // PTXBENCH_RESULTS_REPORT_TESTING_SAMPLE_REPORT_H_
