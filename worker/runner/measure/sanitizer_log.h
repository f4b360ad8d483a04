#ifndef PTXBENCH_WORKER_RUNNER_MEASURE_SANITIZER_LOG_H_
#define PTXBENCH_WORKER_RUNNER_MEASURE_SANITIZER_LOG_H_

// What a compute-sanitizer memcheck log says (docs/MEASUREMENT.md, "The
// memcheck gate"): the verdict of the gate, and the report the model is
// shown. Pure functions of the log's text, so the rules are tested on
// logs of the real shape without a GPU.
//
// The log comes from the sanitizer's --log-file, never from the candidate's
// stdout or stderr: what a kernel prints (a forged "ERROR SUMMARY: 0
// errors", a forged report) is not in it. Every line of a real log starts
// with the sanitizer's "=========" prefix; a log that does not, or that
// lacks the banner or the closing ERROR SUMMARY, is not a finished report
// (kIncomplete), never a clean one. Plain C++.

#include <string>
#include <vector>

#include "absl/strings/string_view.h"

namespace ptxbench::runner {

enum class SanitizerVerdict {
  kClean,       // a finished report with no error in it
  kErrors,      // at least one error (driver-probe noise removed)
  kIncomplete,  // no finished report: the sanitizer did not end, or the log is not its
};

// A source line a report points at: "in /build/dir/kernel.cu:12".
struct SanitizerLocation {
  std::string file;  // as the report names it (a path of the build)
  int line = 0;
};

struct SanitizerFindings {
  SanitizerVerdict verdict = SanitizerVerdict::kIncomplete;
  int errors = 0;  // error records, probe noise not counted
  // The records as the model sees them: the driver's cuGetProcAddress probe
  // blocks, host frames, banners, separators and the ERROR SUMMARY removed
  // (PTXBench's shape); at most kMaxSanitizerReportBytes.
  std::string report;
  // Where the records point, in order, each once.
  std::vector<SanitizerLocation> locations;
  // Why the verdict is kIncomplete, in words; else empty.
  std::string incomplete;
};

inline constexpr size_t kMaxSanitizerReportBytes = 16 << 10;

SanitizerFindings JudgeSanitizerLog(absl::string_view log);

// `source` (the submission's text) around each location whose file's name
// is `file_name` ("kernel.cu"): `context` lines either side, the faulting
// line marked. Empty when no location is in that file.
std::string SourceContext(const std::vector<SanitizerLocation>& locations,
                          absl::string_view file_name, absl::string_view source, int context);

}  // namespace ptxbench::runner

#endif  // PTXBENCH_WORKER_RUNNER_MEASURE_SANITIZER_LOG_H_
