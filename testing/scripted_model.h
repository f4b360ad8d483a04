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
//
// A request whose body holds "@ptxb:" (an attack's, tests/agent_attack_test.cc;
// no CLI sends it) is answered as the real API frames it, and as a provider
// that the markers in it describe:
//  - framing: Anthropic and Responses stream only with "stream": true, and
//    answer one JSON object otherwise; Gemini's :generateContent answers one
//    JSON object, and :streamGenerateContent without alt=sse one JSON array
//    of chunks. The answer's text comes in an event (chunk) of its own,
//    before the events that carry the usage (Gemini's usageMetadata with the
//    last chunk only);
//  - kGreedy: it spends all it is allowed: as many output tokens as the
//    request's max tokens (Anthropic max_tokens, Responses max_output_tokens,
//    Gemini generationConfig.maxOutputTokens times its candidateCount), or
//    kDefaultMaxTokens where it sets none or no integer;
//  - kSlow: events `Options::event_delay` apart, the text in four of them;
//  - kBulk: `Options::bulk_bytes` of text before the usage.
// Every answer is billed (billed()) when it is made, as a provider bills
// what it generated whether or not the client read it.

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "absl/time/time.h"
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
  // How the marked requests (above) are answered.
  struct Options {
    absl::Duration event_delay = absl::Milliseconds(300);
    size_t bulk_bytes = 2 << 20;
  };
  // What arrived, any method on any path (the counters' too).
  struct Received {
    std::string method;
    std::string target;   // as sent: path and query
    std::string headers;  // "name: value\n", names lower-cased
    std::string body;     // its first kMaxReceivedBody bytes
    size_t body_size = 0;
  };
  // What one model answer billed (the token counters bill nothing), and the
  // attack it answered: the name in its request's first "@ptxb:atk:NAME@"
  // ("" for none).
  struct Billed {
    int64_t input_tokens = 0;
    int64_t output_tokens = 0;
    std::string attack;
  };

  static constexpr char kMarker[] = "@ptxb:";
  static constexpr char kGreedy[] = "@ptxb:greedy";
  static constexpr char kSlow[] = "@ptxb:slow";
  static constexpr char kBulk[] = "@ptxb:bulk";
  static constexpr int64_t kDefaultMaxTokens = 64'000;
  static constexpr size_t kMaxReceivedBody = 64 << 10;

  ScriptedModel(agents::Wire wire, std::vector<Step> steps, Options options);
  ScriptedModel(agents::Wire wire, std::vector<Step> steps)
      : ScriptedModel(wire, std::move(steps), Options()) {}
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
  // Every request received, in order.
  std::vector<Received> received() const;
  std::vector<Billed> billed() const;
  // Input plus output tokens of every answer.
  int64_t billed_tokens() const;
  // The tool results in a request of this wire, in order.
  std::vector<nlohmann::json> ToolResults(const nlohmann::json& request) const;

  // Usage each answer reports.
  static constexpr int kInputTokens = 100;
  static constexpr int kOutputTokens = 20;

 private:
  struct Reply;
  std::string Answer(const nlohmann::json& request);
  std::string AnthropicStream(const Step& step, size_t index, const nlohmann::json& request) const;
  std::string ResponsesStream(const Step& step, size_t index) const;
  std::string GeminiStream(const Step& step) const;
  // The answer to a marked request (above), billed.
  Reply Marked(const std::string& target, const nlohmann::json& request, const std::string& raw);

  const agents::Wire wire_;
  const std::vector<Step> steps_;
  const Options options_;
  struct Impl;
  std::unique_ptr<Impl> impl_;
  int port_ = 0;
  mutable std::mutex mu_;
  std::vector<nlohmann::json> requests_;  // guarded by mu_
  std::vector<std::string> headers_;      // guarded by mu_
  std::vector<std::string> paths_;        // guarded by mu_
  std::vector<Received> received_;        // guarded by mu_
  std::vector<Billed> billed_;            // guarded by mu_
};

}  // namespace ptxbench::testing

#endif  // PTXBENCH_TESTING_SCRIPTED_MODEL_H_
