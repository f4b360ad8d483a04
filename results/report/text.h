#ifndef PTXBENCH_RESULTS_REPORT_TEXT_H_
#define PTXBENCH_RESULTS_REPORT_TEXT_H_

// The renderings of a report for `ptxbench report`: an aligned text table for
// people and a CSV for tools. Both are laid out in docs/REPORTS.md
// ("Renderings"). Pure functions of the response.

#include <string>

#include "ptxbench/v1/report.pb.h"

namespace ptxbench::report {

// For each experiment: a header (name, id, eval mode, and a loud line when
// any result in it is simulated or scripted), the total, one table per
// grouping, and the total's outcomes by turn. With two experiments or more, a
// comparison with the first follows. Ends with the metrics version.
std::string ReportTable(const ptxbench::v1::ReportResponse& response);

// One header line and one line per (experiment, grouping, group), the total
// included (grouping "total"); RFC 4180 quoting, lines ending in "\n".
std::string ReportCsv(const ptxbench::v1::ReportResponse& response);

}  // namespace ptxbench::report

#endif  // PTXBENCH_RESULTS_REPORT_TEXT_H_
