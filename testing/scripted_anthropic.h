#ifndef PTXBENCH_TESTING_SCRIPTED_ANTHROPIC_H_
#define PTXBENCH_TESTING_SCRIPTED_ANTHROPIC_H_

// A scripted model behind the Anthropic Messages API (POST /v1/messages,
// streamed as server-sent events), on 127.0.0.1, for driving a real agent
// CLI through a session offline. The step it answers is chosen by the number
// of tool results already in the request, so any CLI's retries and side
// requests get the answer that fits where the session stands. After the
// last step it answers with text and ends the turn.

#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "nlohmann/json.hpp"

namespace ptxbench::testing {

class ScriptedAnthropic {
 public:
  // One answer: a call of `tool` with `input`, or (tool empty) `text`.
  struct Step {
    std::string tool;
    nlohmann::json input = nlohmann::json::object();
    std::string text;
  };

  explicit ScriptedAnthropic(std::vector<Step> steps);
  ~ScriptedAnthropic();
  ScriptedAnthropic(const ScriptedAnthropic&) = delete;
  ScriptedAnthropic& operator=(const ScriptedAnthropic&) = delete;

  // 0 when it could not listen.
  int port() const { return port_; }
  // The request bodies received, in order.
  std::vector<nlohmann::json> requests() const;

  // Usage each answer reports.
  static constexpr int kInputTokens = 100;
  static constexpr int kOutputTokens = 20;

 private:
  std::string Answer(const nlohmann::json& request);

  const std::vector<Step> steps_;
  struct Impl;
  std::unique_ptr<Impl> impl_;
  int port_ = 0;
  std::thread thread_;
  mutable std::mutex mu_;
  std::vector<nlohmann::json> requests_;  // guarded by mu_
};

// The tool results of a Messages request, in order.
std::vector<nlohmann::json> ToolResults(const nlohmann::json& request);

}  // namespace ptxbench::testing

#endif  // PTXBENCH_TESTING_SCRIPTED_ANTHROPIC_H_
