#ifndef PTXBENCH_RESULTS_REPORT_HTML_H_
#define PTXBENCH_RESULTS_REPORT_HTML_H_

// The report as one self-contained HTML5 page (`ptxbench report --html`):
// inline CSS and inline SVG plots, no script, nothing loaded from anywhere
// (a Content-Security-Policy in the page says so to the browser), readable
// on a laptop screen and in print. Per experiment: a header, a loud banner
// when any of its numbers are simulated or come from a scripted model; then
// the figures (pass@turn per model and per tag, fast_p, speedups, outcomes
// by turn, cost against correct rate), each with a table of its numbers;
// then a metrics table per grouping; a footer naming the metric definitions
// (docs/REPORTS.md). With several experiments the plots overlay them.
//
// Every text from the data (experiment, model and tag names come from
// users) is escaped. A figure whose grouping the report lacks (["model"],
// ["tag"], ["model", "tag"]) is replaced by a note naming it.

#include <string>
#include <vector>

#include "ptxbench/v1/report.pb.h"

namespace ptxbench::report {

std::string ReportHtml(const ptxbench::v1::ReportResponse& report);

// The groupings the page's figures and tables are drawn from (model, tag,
// model and tag, category): ask for these (besides any others) in the
// request whose response goes to ReportHtml.
const std::vector<std::vector<std::string>>& HtmlGroupings();

}  // namespace ptxbench::report

#endif  // PTXBENCH_RESULTS_REPORT_HTML_H_
