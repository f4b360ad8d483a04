#ifndef PTXBENCH_SCHEDULER_FEEDBACK_EXTRACT_H_
#define PTXBENCH_SCHEDULER_FEEDBACK_EXTRACT_H_

// Takes the kernel out of a model's answer (docs/FORMATS.md, "Code
// extraction"): the last fenced block of the language asked for that looks like
// a kernel, otherwise the last non-empty block of that language; an unclosed
// final block runs to the end of the answer.

#include <optional>
#include <string>

#include "absl/strings/string_view.h"
#include "prompts/languages.h"

namespace ptxbench::scheduler {

// language "cuda": fence tags cpp, c++, cuda, cu; "ptx": ptx; "solution"
// (a FlashInfer-Trace solution JSON): json; "triton" (kernel.py): python.
// A block "looks like a kernel" for cuda when it has PTXB_EXPORT, a
// __global__ function or a <<< launch; for ptx when it has ".entry"; for a
// solution when it is a JSON object with "sources" and "spec"; for triton
// when it holds both "@triton.jit" and "def run(" (PTXBench's rule).
// For ptx, the launch spec (the last ```json block naming an "entry") is
// appended to the module as its `// ptxbench-launch:` line
// (workloads/launch_spec.h), so the kernel's sha256 covers both.
// nullopt when no non-empty block of that language exists.
std::optional<std::string> ExtractKernel(absl::string_view answer,
                                         absl::string_view language);

// The prompts' fence tags (prompts/languages.h), which feedback shows code in.
using prompts::AnswerFence;

}  // namespace ptxbench::scheduler

#endif  // PTXBENCH_SCHEDULER_FEEDBACK_EXTRACT_H_
