#ifndef PTXBENCH_TESTING_SCRIPTED_MODEL_H_
#define PTXBENCH_TESTING_SCRIPTED_MODEL_H_

// A scripted model on 127.0.0.1 behind one of the model APIs the agent CLIs
// speak (agents/clis.h Wire), streamed as server-sent events, for driving a
// real CLI through a session offline:
//  - Anthropic Messages: POST /v1/messages (Claude Code);
//  - OpenAI Responses: POST /v1/responses (Codex);
//  - Gemini: POST /v1beta/models/M:streamGenerateContent?alt=sse (Gemini CLI).
// The step it answers is chosen by the number of tool results already in the
// request, so a CLI's retries and side requests get the answer that fits
// where the session stands. After the last step it answers with text.

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "agents/clis.h"
#include "nlohmann/json.hpp"

namespace ptxbench::testing {

class ScriptedModel {
 public:
  // One answer: a call of `tool` with `input`, or (tool empty) `text`.
  // `tool_namespace`: the Responses API's namespace of an MCP tool (Codex
  // calls MCP tools as name "evaluate_kernel" in namespace "mcp__ptxbench").
  struct Step {
    std::string tool;
    nlohmann::json input = nlohmann::json::object();
    std::string text = "";
    std::string tool_namespace = "";
  };

  ScriptedModel(agents::Wire wire, std::vector<Step> steps);
  ~ScriptedModel();
  ScriptedModel(const ScriptedModel&) = delete;
  ScriptedModel& operator=(const ScriptedModel&) = delete;

  // 0 when it could not listen.
  int port() const { return port_; }
  // The request bodies received, in order.
  std::vector<nlohmann::json> requests() const;
  // Their headers ("name: value", names lower-cased) and paths, in the same order.
  std::vector<std::string> headers() const;
  std::vector<std::string> paths() const;
  // The tool results in a request of this wire, in order.
  std::vector<nlohmann::json> ToolResults(const nlohmann::json& request) const;

  // Usage each answer reports.
  static constexpr int kInputTokens = 100;
  static constexpr int kOutputTokens = 20;

 private:
  std::string Answer(const nlohmann::json& request);
  std::string AnthropicStream(const Step& step, size_t index, const nlohmann::json& request) const;
  std::string ResponsesStream(const Step& step, size_t index) const;
  std::string GeminiStream(const Step& step) const;

  const agents::Wire wire_;
  const std::vector<Step> steps_;
  struct Impl;
  std::unique_ptr<Impl> impl_;
  int port_ = 0;
  mutable std::mutex mu_;
  std::vector<nlohmann::json> requests_;  // guarded by mu_
  std::vector<std::string> headers_;      // guarded by mu_
  std::vector<std::string> paths_;        // guarded by mu_
};

}  // namespace ptxbench::testing

#endif  // PTXBENCH_TESTING_SCRIPTED_MODEL_H_
