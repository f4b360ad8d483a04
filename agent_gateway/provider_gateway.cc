#include "agent_gateway/provider_gateway.h"

#include <cstdlib>
#include <filesystem>

#include "absl/strings/str_cat.h"
#include "agent_gateway/anthropic_provider.h"
#include "agent_gateway/gemini_provider.h"
#include "agent_gateway/openai_provider.h"
#include "agent_gateway/scripted_answers.h"
#include "common/data_dir.h"

namespace ptxbench::agent_gateway {
namespace {

namespace v1 = ::ptxbench::v1;

// Answers from a folder (scripted_answers.h), as a provider.
class ScriptedProvider final : public Provider {
 public:
  explicit ScriptedProvider(std::unique_ptr<ScriptedAnswers> answers)
      : answers_(std::move(answers)) {}
  CallOutcome Call(const v1::LlmRequest& request) override {
    CallOutcome out;
    // The turn is the number of answers so far.
    int turn = 0;
    for (const v1::ChatMessage& m : request.messages()) turn += m.role() == "assistant";
    absl::StatusOr<v1::LlmResponse> answer = answers_->Answer(request, turn);
    if (!answer.ok()) {
      out.failure = v1::TERMINAL;
      out.message = std::string(answer.status().message());
      return out;
    }
    out.response = *std::move(answer);
    return out;
  }

 private:
  std::unique_ptr<ScriptedAnswers> answers_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<Provider>> MakeProvider(const ModelConfig& config,
                                                       absl::Duration timeout) {
  if (config.provider == "scripted") {
    std::filesystem::path dir = config.answers_dir;
    if (dir.is_relative()) dir = std::filesystem::path(DataDir()) / dir;
    absl::StatusOr<std::unique_ptr<ScriptedAnswers>> answers = ScriptedAnswers::Load(dir.string());
    if (!answers.ok()) return answers.status();
    return std::unique_ptr<Provider>(new ScriptedProvider(*std::move(answers)));
  }
  std::string key;
  if (!config.api_key_env.empty()) {
    const char* value = std::getenv(config.api_key_env.c_str());
    if (value == nullptr || *value == '\0') {
      return absl::FailedPreconditionError(absl::StrCat(
          "model ", config.name, " needs an API key in $", config.api_key_env, " (not set)"));
    }
    key = value;
  }
  const ProviderShape& shape = config.provider == "anthropic" ? anthropic::kShape
                               : config.provider == "gemini"  ? gemini::kShape
                                                              : openai::kShape;
  // A self-hosted server (no key) serves only what it loaded: say so now
  // rather than failing every call.
  if (config.provider == "openai" && config.api_key_env.empty()) {
    absl::Status served = openai::CheckServed(config, key);
    if (!served.ok()) return served;
  }
  return std::unique_ptr<Provider>(new HttpJsonProvider(shape, config, std::move(key), timeout));
}

std::vector<std::string> ProviderGatewayHandler::ModelNames() const {
  std::vector<std::string> names;
  for (const auto& [name, served] : models_) names.push_back(name);
  return names;
}

v1::CompleteRequest ProviderGatewayHandler::Run(const v1::Task& task,
                                                const std::atomic<bool>& cancelled) {
  if (!task.has_llm()) {
    return executor::FailureReport(v1::INFRA, "a gateway runs LLM tasks only");
  }
  auto it = models_.find(task.llm().model());
  if (it == models_.end()) {
    return executor::FailureReport(
        v1::TERMINAL, absl::StrCat("unknown model '", task.llm().model(), "': not served here"));
  }
  Served& served = it->second;
  if (!served.limits->Acquire(cancelled)) {
    return executor::FailureReport(v1::INFRA, "cancelled while waiting for the model's limits");
  }
  CallOutcome outcome = served.provider->Call(task.llm());
  served.limits->Release();
  if (!outcome.response) {
    return executor::FailureReport(outcome.failure, outcome.message, outcome.retry_after_ms);
  }
  v1::CompleteRequest out;
  *out.mutable_llm() = *std::move(outcome.response);
  return out;
}

}  // namespace ptxbench::agent_gateway
