#ifndef PTXBENCH_WORKLOADS_TRACE_H_
#define PTXBENCH_WORKLOADS_TRACE_H_

// FlashInfer-Trace trace lines: one evaluation of a solution on one
// workload (docs/FORMATS.md, "Exports"; docs/COMPATIBILITY.md):
//   {"definition": "...", "solution": "<solution name>" | null,
//    "workload": {"uuid", "axes", "inputs"},
//    "evaluation": {"status", "log",
//                   "correctness": {"max_relative_error", "max_absolute_error"} | null,
//                   "performance": {"latency_ms", "reference_latency_ms",
//                                   "speedup_factor"} | null,
//                   "environment": {"hardware", "libs": {name: version}},
//                   "timestamp"} | null}
// As FlashInfer-Bench requires, correctness is present for PASSED and
// INCORRECT_NUMERICAL only, performance for PASSED only. ptxbench adds
// fields where it knows more (never renaming these): correctness.matched_ratio,
// performance.reference and .roofline_fraction, environment.simulated, and
// evaluation.errors. A workload line is a trace line whose solution and
// evaluation are null.
//
// Undefined errors (NaN, infinities) are written the way FlashInfer-Bench
// writes them, as the strings "NaN", "Infinity" and "-Infinity"; the reader
// takes those, numbers, and null (NaN, as other tools write it).

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "common/json_reader.h"
#include "workloads/definition.h"

namespace ptxbench::workloads {

struct TraceCorrectness {
  double max_relative_error = 0;
  double max_absolute_error = 0;
  std::optional<double> matched_ratio;  // ptxbench's
};

struct TracePerformance {
  double latency_ms = 0;
  double reference_latency_ms = 0;
  double speedup_factor = 0;
  std::string reference;                     // ptxbench's: "cuBLAS", "PyTorch", ...
  std::optional<double> roofline_fraction;   // ptxbench's
};

struct TraceEnvironment {
  std::string hardware;  // never empty
  std::map<std::string, std::string> libs;
  bool simulated = false;  // ptxbench's
};

struct TraceEvaluation {
  std::string status;  // "PASSED", "INCORRECT_NUMERICAL", ...
  std::string log;
  std::optional<TraceCorrectness> correctness;
  std::optional<TracePerformance> performance;
  TraceEnvironment environment;
  std::string timestamp;  // ISO 8601, never empty
  std::vector<std::string> errors;  // ptxbench's
};

struct TraceRecord {
  std::string definition;
  std::optional<std::string> solution;
  Workload workload;
  std::optional<TraceEvaluation> evaluation;
};

// The statuses FlashInfer-Bench knows. ptxbench's own (LIBRARY_FALLBACK,
// COMPILED, INFRA_ERROR) are not among them.
bool IsFlashInferStatus(absl::string_view status);

// The line as a JSON object, in the key order above.
StrictJson TraceJson(const TraceRecord& record);
// The same, compact, without the newline.
std::string FormatTraceLine(const TraceRecord& record);

// Reads one trace line. Types are checked and the presence of correctness
// and performance must match the status; keys the format does not know are
// ignored (FlashInfer-Bench versions add their own). `origin` names the
// file and line in errors (common/json_reader.h's shape).
absl::StatusOr<TraceRecord> ParseTraceLine(absl::string_view line, absl::string_view origin);

}  // namespace ptxbench::workloads

#endif  // PTXBENCH_WORKLOADS_TRACE_H_
