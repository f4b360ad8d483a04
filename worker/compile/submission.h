#ifndef PTXBENCH_WORKER_COMPILE_SUBMISSION_H_
#define PTXBENCH_WORKER_COMPILE_SUBMISSION_H_

// What a CUDA-family submission is made of before it is built: its files,
// the kernel ABI it is written against and the trampoline for it. Two forms:
//  - "cuda": one source, kernel.cu, in ptxbench's ABI or the TVM-FFI style
//    (exporting `run`);
//  - "solution": a FlashInfer-Trace solution JSON (workloads/solution.h):
//    several files and the entry point it names, in the TVM-FFI style.

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "worker/compile/trampoline.h"
#include "workloads/definition.h"
#include "workloads/solution.h"

namespace ptxbench::worker {

struct SubmissionPlan {
  std::vector<workloads::SourceFile> files;  // written into the build folder
  std::vector<std::string> compiled;         // the files nvcc compiles, in order
  std::vector<std::string> device_sources;   // the .cu files (PTX census)
  KernelAbi abi = KernelAbi::kPtxbench;
  std::string entry;                         // TVM-FFI: the exported function
  std::string trampoline;
  // Non-empty when the submission cannot be built as given (the kernel's
  // fault, a COMPILE_ERROR for the model): nothing else is set.
  std::string refusal;
};

// kInvalidArgument for a language other than "cuda" and "solution" (the
// caller's fault); everything about the text itself is a refusal.
absl::StatusOr<SubmissionPlan> PlanSubmission(absl::string_view source, absl::string_view language,
                                              const workloads::Definition& definition);

// A Triton submission (kernel.py) is not built here: Triton's JIT compiles
// it on the GPU, in the candidate's sandbox (worker/runner/hosts/triton_host.py).
// What can be said before that: why it cannot be run at all (not UTF-8,
// past kMaxTritonSourceBytes, no run()), or "" when nothing.
inline constexpr size_t kMaxTritonSourceBytes = size_t{1} << 20;
std::string RefuseTritonSource(absl::string_view source);

}  // namespace ptxbench::worker

#endif  // PTXBENCH_WORKER_COMPILE_SUBMISSION_H_
