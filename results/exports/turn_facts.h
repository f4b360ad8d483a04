#ifndef PTXBENCH_RESULTS_EXPORTS_TURN_FACTS_H_
#define PTXBENCH_RESULTS_EXPORTS_TURN_FACTS_H_

// What every export says about a turn, decided in one place so the formats
// agree with each other and with reports; correct and the speedups are the
// verdict's (verdict/verdict.h).

#include <cstdint>
#include <optional>
#include <string>

#include "absl/strings/string_view.h"
#include "ptxbench/v1/client.pb.h"
#include "workloads/definition.h"
#include "workloads/trace.h"

namespace ptxbench::exports {

// A correct kernel: verdict::Correct (the evaluation PASSED, every workload
// was checked and passed).
bool IsCorrect(const ptxbench::v1::EvalResult& eval);
bool IsCorrect(const ptxbench::v1::Turn& turn);

// The kernel's speedup (verdict::KernelSpeedup, the geometric mean) when the turn is correct,
// else 0.
double CorrectSpeedup(const ptxbench::v1::Turn& turn);

// The answer or the evaluation came from a simulated executor.
bool IsSimulated(const ptxbench::v1::Turn& turn);

// The model's answer is in ("eval" or "done"; "model" means pending).
bool IsAnswered(const ptxbench::v1::Turn& turn);

// "PASSED", "COMPILE_ERROR", ...
const std::string& StatusName(ptxbench::v1::EvalStatus status);

// One workload result as a FlashInfer-Trace trace line. `workload` is the
// dataset's workload of that uuid (its axes and inputs), or null when the
// documents given do not have it (the trace's axes then, and no inputs).
// Correctness and performance are present where FlashInfer-Bench wants them
// (workloads/trace.h); the timestamp is `unix_ms`, when the turn ended.
workloads::TraceRecord ToTraceRecord(absl::string_view definition,
                                     std::optional<std::string> solution,
                                     const ptxbench::v1::WorkloadTrace& trace,
                                     const ptxbench::v1::EvalResult& eval,
                                     const workloads::Workload* workload, int64_t unix_ms);

}  // namespace ptxbench::exports

#endif  // PTXBENCH_RESULTS_EXPORTS_TURN_FACTS_H_
