#ifndef PTXBENCH_EXPERIMENT_SPEC_ONE_OFF_EVAL_H_
#define PTXBENCH_EXPERIMENT_SPEC_ONE_OFF_EVAL_H_

// The spec of a one-off evaluation (`ptxbench eval` through a scheduler,
// ClientService.SubmitEval): a matrix of one trajectory of one turn, whose
// answer is the kernel file, built as a value and expanded as a matrix spec
// is, so it is stored, hashed and shown like any experiment.

#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "experiment_spec/spec.h"
#include "ptxbench/v1/common.pb.h"

namespace ptxbench::experiment_spec {

// One-off evaluations go ahead of experiments of the default priority 1:
// someone is waiting.
inline constexpr int kOneOffEvalPriority = 10;

// What the caller asks for.
struct OneOffEval {
  std::string definition;
  std::string language;       // "" is cuda
  std::string kernel_source;  // its sha256 names the experiment
  double target_speedup = 0;  // not above 0 (or not a number): 1
  ptxbench::v1::EvalMode mode = ptxbench::v1::FULL;
  // When it was asked, which names it too: evaluating the same file again
  // measures again.
  absl::Time submitted;
};

// The experiment "eval-<12 hex digits of the kernel's sha256>-<unix ms>":
// model "file", the definition, the first prompt tag of the kernel's language
// (a Triton tag for Triton: recorded, never sent, since no model is asked),
// one sample, one turn. INVALID_ARGUMENT for what a matrix spec refuses (an
// unknown definition, language or target), with the same message against
// "<eval>"; FAILED_PRECONDITION when `prompts` has no tag for the language.
absl::StatusOr<ExpandedExperiment> OneOffEvalSpec(const OneOffEval& eval,
                                                  const workloads::DefinitionRegistry& definitions,
                                                  const prompts::PromptRegistry& prompts,
                                                  const SpecLimits& limits);

}  // namespace ptxbench::experiment_spec

#endif  // PTXBENCH_EXPERIMENT_SPEC_ONE_OFF_EVAL_H_
