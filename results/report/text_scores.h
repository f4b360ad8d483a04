#ifndef PTXBENCH_RESULTS_REPORT_TEXT_SCORES_H_
#define PTXBENCH_RESULTS_REPORT_TEXT_SCORES_H_

// The scores and the variance in correctness (docs/REPORTS.md, "Scores",
// "Variance in correctness") in the report's table (results/report/text.cc).
// Private to report/.

#include <string>

#include "ptxbench/v1/report.pb.h"

namespace ptxbench::report {

// Lines of the total's summary: "scores" (weighted roofline, SOL-Score,
// correct but slower than the reference) and "rescue" (persistent and
// rescued speedups).
void AppendScoreLines(const ptxbench::v1::GroupReport& total, std::string* out);

// The line of the experiment's variance in correctness explained by
// category and by model.
void AppendVarianceLine(const ptxbench::v1::ExperimentReport& experiment, std::string* out);

// "scores by ...": a row per group of the grouping: N, weighted roofline,
// SOL-Score, slower than the reference, persistent and rescued geomeans.
void AppendScoreTable(const ptxbench::v1::GroupingReport& grouping, std::string* out);

// The rescued-vs-persistent speedups of the total per turn, 1-based.
void AppendRescueByTurn(const ptxbench::v1::GroupReport& total, std::string* out);

}  // namespace ptxbench::report

#endif  // PTXBENCH_RESULTS_REPORT_TEXT_SCORES_H_
