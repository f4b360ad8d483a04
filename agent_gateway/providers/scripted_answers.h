#ifndef PTXBENCH_AGENT_GATEWAY_PROVIDERS_SCRIPTED_ANSWERS_H_
#define PTXBENCH_AGENT_GATEWAY_PROVIDERS_SCRIPTED_ANSWERS_H_

// Answers read from a folder of files instead of a model: for demos and for
// end-to-end runs whose kernels must be real (written for the test). Layout:
//
//   DIR/<definition>/turn<N>.cu|.ptx|.py|.md   the answer at turn N (0-based)
//   DIR/<definition>/answer.cu|.ptx|.py|.md    any turn without its own file
//
// The definition of a request is the longest folder name that occurs in its
// first user message (the task prompt names the definition). A .cu/.ptx/.py
// file is wrapped into a short answer with one code block (```cuda, ```ptx,
// ```python: Triton); a .md file is the answer as written. Several files of
// one turn (turn0.cu and turn0.py) are one answer, in name order, so one
// folder answers a CUDA and a Triton experiment alike (each extracts its own
// block). Answers are labelled provider "scripted".

#include <map>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "ptxbench/v1/common.pb.h"

namespace ptxbench::agent_gateway {

// Immutable after Load: thread-safe.
class ScriptedAnswers {
 public:
  // Reads every answer file under `dir`. kInvalidArgument when the folder
  // is missing or holds no answer.
  static absl::StatusOr<std::unique_ptr<ScriptedAnswers>> Load(const std::string& dir);

  // The answer for `request` at `turn`; kNotFound naming the definitions
  // known when none matches the prompt.
  absl::StatusOr<ptxbench::v1::LlmResponse> Answer(const ptxbench::v1::LlmRequest& request,
                                                   int turn) const;

 private:
  // definition -> (turn, -1 for "answer") -> answer text
  std::map<std::string, std::map<int, std::string>> answers_;
};

}  // namespace ptxbench::agent_gateway

#endif  // PTXBENCH_AGENT_GATEWAY_PROVIDERS_SCRIPTED_ANSWERS_H_
