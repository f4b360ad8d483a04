#ifndef PTXBENCH_RESULTS_REPORT_HTML_METRICS_H_
#define PTXBENCH_RESULTS_REPORT_HTML_METRICS_H_

// The metrics tables of the HTML report (results/report/html.h), one per grouping
// of an experiment, laid out like a paper's table: a row per group and one
// for all of the experiment's trajectories. Internal to report/html*.cc.

#include <string>

#include "ptxbench/v1/report.pb.h"

namespace ptxbench::report::html {

// The tables of `experiment`, under a heading naming it when `titled`
// (several experiments in the report). `report` gives the fast_p
// thresholds.
std::string MetricsSection(const ptxbench::v1::ExperimentReport& experiment,
                           const ptxbench::v1::ReportResponse& report, bool titled);

}  // namespace ptxbench::report::html

#endif  // PTXBENCH_RESULTS_REPORT_HTML_METRICS_H_
