#ifndef PTXBENCH_RESULTS_REPORT_TEXT_COMPARE_H_
#define PTXBENCH_RESULTS_REPORT_TEXT_COMPARE_H_

// The comparison section of ReportTable (results/report/text.h): for the total and
// each grouping, one row per (group, experiment) with the key metrics and
// their difference from the first experiment. Private to report/.

#include <string>

#include "ptxbench/v1/report.pb.h"

namespace ptxbench::report {

// Appends the comparison of `response`'s experiments (two or more).
void AppendComparison(const ptxbench::v1::ReportResponse& response, std::string* out);

}  // namespace ptxbench::report

#endif  // PTXBENCH_RESULTS_REPORT_TEXT_COMPARE_H_
