#ifndef PTXBENCH_RESULTS_EXPORTS_PTXBENCH_MESSAGES_H_
#define PTXBENCH_RESULTS_EXPORTS_PTXBENCH_MESSAGES_H_

// A trajectory as PTXBench's agent saves it: mini-swe-agent's 1.1 message
// format (docs/FORMATS.md, "Exports"). Messages: [0] the system prompt,
// [1] the task; turn t's answer at 2+2t and its feedback at 3+2t; a final
// message of role "exit" when the trajectory ended SUBMITTED,
// LIMITS_EXCEEDED or FAILED.

#include <string>

#include "absl/strings/string_view.h"
#include "common/json_reader.h"
#include "ptxbench/v1/client.pb.h"
#include "results/exports/definitions.h"

namespace ptxbench::exports {

// What PTXBench would have called the turn's outcome (its feedback
// message's extra.event): "no_code", "cublas_banned", "cudnn_banned",
// "test_failed", "no_traces" or "evaluation"; "library_banned" for a vendor
// library that is neither cuBLAS nor cuDNN. Empty while the turn awaits its
// evaluation.
std::string FeedbackEvent(const ptxbench::v1::Turn& turn);

// The turn's evaluation as PTXBench's traces: FlashInfer-Trace trace lines
// (workloads/trace.h) without a solution name.
StrictJson PtxbenchTraces(const ptxbench::v1::TrajectorySummary& summary,
                          const ptxbench::v1::Turn& turn, const DefinitionIndex& definitions);

// The whole document: {"info", "messages", "trajectory_format"}.
StrictJson TrajectoryDocument(const ptxbench::v1::Experiment& experiment,
                              const ptxbench::v1::Trajectory& trajectory,
                              const DefinitionIndex& definitions,
                              absl::string_view ptxbench_version);

}  // namespace ptxbench::exports

#endif  // PTXBENCH_RESULTS_EXPORTS_PTXBENCH_MESSAGES_H_
