#ifndef PTXBENCH_PROMPTS_TARGETS_H_
#define PTXBENCH_PROMPTS_TARGETS_H_

// What the prompts tell a model about the GPUs its experiment targets
// (common/gpu_arch.h). Kernels are built for the GPU that runs them, so a
// Blackwell experiment must not be told that it writes for Hopper (sm_90a):
// the bundled documents and the kernel ABI texts carry placeholders, filled
// here from the experiment's architectures. The default (Hopper) renders
// exactly the text these documents had before they carried placeholders.
//
//   {{target_gpus}}      "Hopper GPUs (H100 / H200, compute capability 9.0,
//                        compiled for sm_90a)"
//   {{sm}}, {{compute}}  the compile target and its virtual architecture
//                        ("sm_90a", "compute_90a"); the first architecture's
//                        when an experiment targets several
//   {{ptx_version}}      the PTX ISA version that target needs ("8.0")
//   {{target_hardware}}  a solution's spec.target_hardware ("H100", "H200")
//   {{build_note}}       empty for one architecture; for several, a sentence
//                        saying that each GPU builds the kernel for itself

#include <string>
#include <vector>

#include "absl/strings/string_view.h"

namespace ptxbench::prompts {

// The text of each placeholder for `architectures` (sorted sm_NN names, as
// ParseArchitectures returns them; not empty).
struct TargetText {
  std::string target_gpus;
  std::string sm, compute, ptx_version;
  std::string target_hardware;
  std::string build_note;
  // The task prompt's "on ..." phrase: "an NVIDIA Hopper GPU (sm_90a)".
  std::string headline;
};
TargetText DescribeTargets(const std::vector<std::string>& architectures);

// `text` with every placeholder above replaced; other text is kept as is.
std::string FillTargets(absl::string_view text, const TargetText& targets);

// The families ("Hopper", "Blackwell") a prompt document or tag is written
// for, judged by its name (PTXBench names them: hopper-05, b200-bf16,
// arch_param_h100.md, umma_sm100.h); empty when its name says none.
std::vector<std::string> FamiliesNamedBy(absl::string_view name);

}  // namespace ptxbench::prompts

#endif  // PTXBENCH_PROMPTS_TARGETS_H_
