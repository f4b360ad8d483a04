#ifndef PTXBENCH_SCHEDULER_FEEDBACK_FEEDBACK_H_
#define PTXBENCH_SCHEDULER_FEEDBACK_FEEDBACK_H_

// Room scheduler/feedback/: what a model said and what it is told. Owns the
// kernel's extraction from an answer (extract.h) and the feedback message
// (this header). May include: nothing of the scheduler's other rooms.
//
// Renders an evaluation result as the next user message, in PTXBench's shape
// (docs/FORMATS.md, "Feedback messages"); whether the target was met is
// the verdict's (verdict/verdict.h).

#include <string>

#include "absl/strings/string_view.h"
#include "ptxbench/v1/common.pb.h"
#include "verdict/verdict.h"

namespace ptxbench::scheduler {

// The feedback when no kernel block could be extracted; the turn counts.
std::string RenderNoCodeFeedback(absl::string_view language);

// Whether the target was met: the verdict's rule (verdict/verdict.h), named
// here because the feedback's suffix says so.
using ::ptxbench::verdict::TargetMet;

// The feedback for an evaluation result (never called for INFRA_ERROR).
// Ends with one of the three suffixes: "Target speedup … achieved! …",
// "Kernel is correct. … Keep optimizing.", or
// "Please fix the issues and provide an updated kernel."
std::string RenderEvalFeedback(const ptxbench::v1::EvalResult& result,
                               double target_speedup);

}  // namespace ptxbench::scheduler

#endif  // PTXBENCH_SCHEDULER_FEEDBACK_FEEDBACK_H_
