#ifndef PTXBENCH_COMMON_GPU_ARCH_H_
#define PTXBENCH_COMMON_GPU_ARCH_H_

// GPU architectures by name. A GPU's architecture is "sm_<major><minor>" of
// its compute capability ("sm_90": H100, H200). Experiments name the
// architectures they target, as such names or as families ("hopper"); the
// scheduler sends their evaluations only to GPUs of those, and the worker
// compiles each kernel for the GPU that runs it (CompileTarget).

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace ptxbench {

// The families an experiment may name, each with its architectures:
// ampere (sm_80, sm_86, sm_87), ada (sm_89), hopper (sm_90), blackwell
// (sm_100, sm_103: B200, B300).
// `names` (families or sm_NN / sm_NNa) as sorted, distinct sm_NN names.
// INVALID_ARGUMENT naming the first name that is neither; an empty list is
// one too.
absl::StatusOr<std::vector<std::string>> ParseArchitectures(const std::vector<std::string>& names);

// What an experiment targets when it names nothing: the Hopper family.
const std::vector<std::string>& DefaultArchitectures();

// The target a kernel is compiled for on a GPU of `sm_arch`: from Hopper on
// the architecture-specific one ("sm_90" -> "sm_90a": wgmma, TMA multicast
// and setmaxnreg exist only there), before it `sm_arch` itself.
std::string CompileTarget(absl::string_view sm_arch);

// Whether `target` is one CompileTarget can return ("sm_90a", "sm_89").
bool IsCompileTarget(absl::string_view target);

// The family's title of `sm_arch` ("Hopper"), or empty for none.
absl::string_view FamilyTitle(absl::string_view sm_arch);

// "sm_90 (Hopper)", or the name alone for an architecture of no family.
std::string DescribeArchitecture(absl::string_view sm_arch);

// Whether `sm_arch` is one of `targets`.
bool TargetsArchitecture(const std::vector<std::string>& targets, absl::string_view sm_arch);

}  // namespace ptxbench

#endif  // PTXBENCH_COMMON_GPU_ARCH_H_
