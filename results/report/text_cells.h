#ifndef PTXBENCH_RESULTS_REPORT_TEXT_CELLS_H_
#define PTXBENCH_RESULTS_REPORT_TEXT_CELLS_H_

// The cells that the report's table (results/report/text.cc) and its comparison
// (results/report/text_compare.cc) write the same way. Private to report/.

#include <string>
#include <vector>

#include "common/text_format.h"
#include "ptxbench/v1/report.pb.h"

namespace ptxbench::report {

// "12.5%" of a share in [0, 1].
std::string Percent(double rate);
// "850ms", "12.3s", "4.2m".
std::string Millis(double ms);
// "850ms/1.2s"; "-" for an empty sample.
std::string P50P95(const ptxbench::v1::Percentiles& percentiles);
// A key value as shown: "(none)" for "" (a trajectory without a category).
std::string ShownValue(const std::string& value);
// The experiment's name, or its id when it has none.
std::string ExperimentLabel(const ptxbench::v1::ExperimentReport& experiment);
// "full", "compile-only".
std::string EvalModeName(ptxbench::v1::EvalMode mode);
// "run1 (triton)": the label and, when the report has it, the language.
std::string ExperimentLabelWithLanguage(const ptxbench::v1::ExperimentReport& experiment);
// "by checks 3 (75.0%), fallback-free 2 (50.0%); 1 of 4 turns correct by
// checks was a library fallback (25.0%)".
std::string FallbackSummary(const ptxbench::v1::GroupReport& group);
// "SIMULATED", "SCRIPTED", "SIM+SCRIPTED" (both) or "".
std::string Labels(const ptxbench::v1::GroupReport& group);

// The rate of pass_at_turn at turn 1; 0 when there is none.
double PassAt1(const ptxbench::v1::GroupReport& group);
// The fast_p entry for `p`, or null.
const ptxbench::v1::FastP* FindFastP(const ptxbench::v1::GroupReport& group, double p);

// The values of a group's key, one per dimension of `by`.
std::vector<std::string> KeyValues(const ptxbench::v1::GroupReport& group,
                                   const google::protobuf::RepeatedPtrField<std::string>& by);
// The values of a group's key as a table shows them (ShownValue), one per
// dimension of `by`: the first cells of its row.
std::vector<std::string> ShownKey(const ptxbench::v1::GroupReport& group,
                                  const google::protobuf::RepeatedPtrField<std::string>& by);
// A table of a grouping's groups: a column per dimension of `by`, then
// `metrics`, right-aligned.
Table GroupingTable(const google::protobuf::RepeatedPtrField<std::string>& by,
                    const std::vector<std::string>& metrics);
// Orders key values as the groups of a report are ordered: dimension by
// dimension, "turn" numerically, the rest as text.
bool KeyValuesLess(const google::protobuf::RepeatedPtrField<std::string>& by,
                   const std::vector<std::string>& a, const std::vector<std::string>& b);

}  // namespace ptxbench::report

#endif  // PTXBENCH_RESULTS_REPORT_TEXT_CELLS_H_
