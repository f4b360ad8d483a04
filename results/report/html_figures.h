#ifndef PTXBENCH_RESULTS_REPORT_HTML_FIGURES_H_
#define PTXBENCH_RESULTS_REPORT_HTML_FIGURES_H_

// The figures of the HTML report (results/report/html.h): each a <figure> with an
// inline SVG plot (results/report/svg.h), a caption and a table of the plotted
// numbers; or, when the report lacks the grouping a figure needs, a note
// naming it. With several experiments the series of every experiment share
// one plot ("exp-a / gpt-4.1"). Internal to report/html*.cc.

#include <string>

#include "ptxbench/v1/report.pb.h"

namespace ptxbench::report::html {

// Every figure of `report`, in reading order.
std::string Figures(const ptxbench::v1::ReportResponse& report);

}  // namespace ptxbench::report::html

#endif  // PTXBENCH_RESULTS_REPORT_HTML_FIGURES_H_
