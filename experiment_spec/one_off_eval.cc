#include "experiment_spec/one_off_eval.h"

#include <vector>

#include "absl/strings/str_cat.h"
#include "common/hash.h"
#include "common/status_macros.h"
#include "experiment_spec/spec_reader.h"

namespace ptxbench::experiment_spec {

using spec_internal::Json;

absl::StatusOr<ExpandedExperiment> OneOffEvalSpec(const OneOffEval& eval,
                                                  const workloads::DefinitionRegistry& definitions,
                                                  const prompts::PromptRegistry& prompts,
                                                  const SpecLimits& limits) {
  // A tag of the kernel's language (a Triton tag for Triton), as a spec
  // must name (PromptRegistry::CheckTarget).
  const std::string language = eval.language.empty() ? "cuda" : eval.language;
  std::vector<std::string> tags;
  for (const std::string& tag : prompts.Tags()) {
    if (prompts.IsTritonTag(tag) == (language == "triton")) tags.push_back(tag);
  }
  if (tags.empty()) {
    return absl::FailedPreconditionError(
        absl::StrCat("the scheduler has no prompt tags for ", language, " kernels"));
  }
  SpecInput input;
  input.path = "<eval>";
  const spec_internal::SpecReader r(input, definitions, prompts);
  spec_internal::Matrix m;
  // A unique name per submission: evaluating the same file again measures again.
  m.name = absl::StrCat("eval-", Sha256Hex(eval.kernel_source).substr(0, 12), "-",
                        absl::ToUnixMillis(eval.submitted));
  m.models = {"file"};
  m.definitions = {eval.definition};
  m.prompt_tags = {tags.front()};
  // The caller's values are checked as a matrix spec's would be, in its
  // order and with its messages; the rest are this function's own.
  PTXB_RETURN_IF_ERROR(r.CheckDefinition(Json(eval.definition), JsonIndex("definitions", 0)));
  // A tag the registry lists can still be broken (`ptxbench prompts check`).
  PTXB_RETURN_IF_ERROR(r.CheckPromptTag(Json(m.prompt_tags[0]), JsonIndex("prompt_tags", 0)));
  PTXB_ASSIGN_OR_RETURN(
      m.target_speedup,
      r.Speedup(Json(eval.target_speedup > 0 ? eval.target_speedup : 1.0), "target_speedup"));
  PTXB_ASSIGN_OR_RETURN(m.options.language, r.Language(Json(language)));
  m.options.eval = eval.mode == ptxbench::v1::COMPILE_ONLY ? "compile-only" : "full";
  m.options.priority = kOneOffEvalPriority;
  PTXB_RETURN_IF_ERROR(r.CheckPromptTarget(Json(m.prompt_tags[0]), JsonIndex("prompt_tags", 0),
                                           m.options.architectures, m.options.language));
  PTXB_ASSIGN_OR_RETURN(ExpandedExperiment out, spec_internal::ExpandMatrix(r, m, limits));
  PTXB_RETURN_IF_ERROR(spec_internal::FinishExpansion(r, out));
  return out;
}

}  // namespace ptxbench::experiment_spec
