#ifndef PTXBENCH_RESULTS_REPORT_TESTING_MARKUP_H_
#define PTXBENCH_RESULTS_REPORT_TESTING_MARKUP_H_

// Checks of generated HTML/SVG for the renderings' tests: plain text scans,
// no parser (the browser test, results/report/browser_test.cc, is the real one).

#include <string>

#include "absl/strings/string_view.h"

namespace ptxbench::report::testing {

// How often `what` occurs in `text` (overlapping ones too).
int Occurrences(absl::string_view text, absl::string_view what);

// Whether every element opened is closed, in order (void elements such as
// <meta> and self-closed SVG elements aside); the text of <style> is
// skipped. Empty when all is well, else what went wrong and where.
std::string TagBalance(absl::string_view html);

}  // namespace ptxbench::report::testing

#endif  // PTXBENCH_RESULTS_REPORT_TESTING_MARKUP_H_
