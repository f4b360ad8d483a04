#ifndef PTXBENCH_PROMPTS_LANGUAGES_H_
#define PTXBENCH_PROMPTS_LANGUAGES_H_

// The kernel languages a prompt asks for, and how an answer fences its code:
// what the prompts say and what code extraction (scheduler/feedback/extract.h) looks
// for must agree, so both read them here.

#include <string>
#include <vector>

#include "absl/strings/string_view.h"

namespace ptxbench::prompts {

// The languages a prompt can ask for, each with its ABI description
// (<root>/abi/<language>.md): cuda, ptx, solution, triton.
const std::vector<std::string>& KernelLanguages();

// The fence tag ptxbench asks for and shows code of `language` in: cpp
// (cuda), ptx, json (solution), python (triton).
absl::string_view AnswerFence(absl::string_view language);

}  // namespace ptxbench::prompts

#endif  // PTXBENCH_PROMPTS_LANGUAGES_H_
