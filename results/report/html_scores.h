#ifndef PTXBENCH_RESULTS_REPORT_HTML_SCORES_H_
#define PTXBENCH_RESULTS_REPORT_HTML_SCORES_H_

// The scores of the HTML report (results/report/html.h; docs/REPORTS.md,
// "Scores" and "Variance in correctness"): per grouping, the
// importance-weighted roofline and SOL-Score, the share of correct kernels
// slower than the reference and the persistent and rescued speedups; the
// experiment's variance in correctness explained by category and by model;
// the persistent and rescued speedups per turn. Internal to
// report/html*.cc.

#include <string>

#include "ptxbench/v1/report.pb.h"

namespace ptxbench::report::html {

// The section of `experiment`, under a heading naming it when `titled`.
std::string ScoresSection(const ptxbench::v1::ExperimentReport& experiment, bool titled);

}  // namespace ptxbench::report::html

#endif  // PTXBENCH_RESULTS_REPORT_HTML_SCORES_H_
