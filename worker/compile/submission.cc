#include "worker/compile/submission.h"

#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/utf8.h"

namespace ptxbench::worker {
namespace {

SubmissionPlan Refused(std::string why) {
  SubmissionPlan plan;
  plan.refusal = std::move(why);
  return plan;
}

}  // namespace

absl::StatusOr<SubmissionPlan> PlanSubmission(absl::string_view source, absl::string_view language,
                                              const workloads::Definition& definition) {
  SubmissionPlan plan;
  if (language == "cuda") {
    plan.files.push_back({"kernel.cu", std::string(source)});
    plan.abi = DetectKernelAbi(source);
    plan.entry = "run";
  } else if (language == "solution") {
    absl::StatusOr<workloads::Solution> s = workloads::ParseSolution(source, "solution");
    if (!s.ok()) return Refused(std::string(s.status().message()));
    if (absl::Status ok = workloads::CheckSolutionSupported(*s); !ok.ok()) {
      return Refused(std::string(ok.message()));
    }
    if (s->definition != definition.name) {
      return Refused(absl::StrCat("solution ", s->name, " is for definition '", s->definition,
                                  "', not '", definition.name, "'"));
    }
    plan.files = std::move(s->sources);
    plan.abi = KernelAbi::kTvmFfi;  // the only binding CheckSolutionSupported lets through
    plan.entry = s->entry_symbol;
  } else {
    return absl::InvalidArgumentError(
        absl::StrCat("unknown submission language '", language, "' (cuda, solution or ptx)"));
  }
  for (const workloads::SourceFile& f : plan.files) {
    if (!workloads::IsCompiledSource(f.path)) continue;
    plan.compiled.push_back(f.path);
    if (absl::EndsWith(f.path, ".cu")) plan.device_sources.push_back(f.path);
  }
  if (plan.abi == KernelAbi::kPtxbench) {
    plan.trampoline = PtxbenchTrampoline(definition);
  } else {
    absl::StatusOr<std::string> t = TvmFfiTrampoline(definition, plan.entry);
    if (!t.ok()) return Refused(std::string(t.status().message()));
    plan.trampoline = *std::move(t);
  }
  return plan;
}

std::string RefuseTritonSource(absl::string_view source) {
  if (source.size() > kMaxTritonSourceBytes) {
    return absl::StrCat("kernel.py holds ", source.size(), " bytes; a Triton submission may hold ",
                        kMaxTritonSourceBytes, " at most");
  }
  if (!IsValidUtf8(source)) {
    return absl::StrCat("kernel.py is not UTF-8: ", DescribeInvalidUtf8(source));
  }
  if (!absl::StrContains(source, "def run")) {
    return "kernel.py defines no run(): a Triton submission's entry point is "
           "run(inputs..., outputs...), which writes the outputs";
  }
  return "";
}

}  // namespace ptxbench::worker
