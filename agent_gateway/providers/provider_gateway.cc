#include "agent_gateway/providers/provider_gateway.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <utility>

#include "absl/strings/str_cat.h"
#include "agent_gateway/providers/anthropic_provider.h"
#include "agent_gateway/providers/gemini_provider.h"
#include "agent_gateway/providers/http_provider.h"
#include "agent_gateway/providers/openai_provider.h"
#include "agent_gateway/providers/scripted_answers.h"
#include "common/clock.h"
#include "common/data_dir.h"

namespace ptxbench::agent_gateway {
namespace {

namespace v1 = ::ptxbench::v1;

// Answers from a folder (scripted_answers.h), as a provider.
class ScriptedProvider final : public Provider {
 public:
  explicit ScriptedProvider(std::unique_ptr<ScriptedAnswers> answers)
      : answers_(std::move(answers)) {}
  void Start(ModelCall call, Done done) override {
    CallOutcome out;
    absl::StatusOr<v1::LlmResponse> answer = answers_->Answer(call.request, call.turn);
    if (answer.ok()) {
      out.response = *std::move(answer);
    } else {
      out.failure = v1::TERMINAL;
      out.message = std::string(answer.status().message());
    }
    std::move(done)(std::move(out));
  }

 private:
  std::unique_ptr<ScriptedAnswers> answers_;
};

v1::CompleteRequest Report(CallOutcome outcome) {
  if (!outcome.response) {
    return executor::FailureReport(outcome.failure, std::move(outcome.message),
                                   outcome.retry_after_ms);
  }
  v1::CompleteRequest out;
  *out.mutable_llm() = *std::move(outcome.response);
  return out;
}

// The most a pump sleeps before looking at its queues again (cancelled
// steps leave the queue within this).
constexpr absl::Duration kPumpPoll = absl::Milliseconds(200);

}  // namespace

absl::StatusOr<std::unique_ptr<Provider>> MakeProvider(const ModelConfig& config,
                                                       absl::Duration timeout, HttpClient* http) {
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
    absl::Status served = openai::CheckServed(config, key, *http);
    if (!served.ok()) return served;
  }
  return std::unique_ptr<Provider>(
      new HttpJsonProvider(shape, config, std::move(key), timeout, http));
}

ProviderGatewayHandler::ProviderGatewayHandler(std::map<std::string, Served> models,
                                               CallPermits* permits)
    : models_(std::move(models)), permits_(permits) {
  {
    absl::MutexLock lock(&mu_);
    for (const auto& [name, served] : models_) queues_[name];
  }
  pump_ = std::thread([this] { PumpLoop(); });
}

ProviderGatewayHandler::~ProviderGatewayHandler() {
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
    wake_.Signal();
  }
  pump_.join();
}

std::vector<std::string> ProviderGatewayHandler::ModelNames() const {
  std::vector<std::string> names;
  for (const auto& [name, served] : models_) names.push_back(name);
  return names;
}

void ProviderGatewayHandler::Start(const v1::Task& task,
                                   std::shared_ptr<const std::atomic<bool>> cancelled, Done done) {
  if (!task.has_llm()) {
    std::move(done)(executor::FailureReport(v1::INFRA, "a gateway runs LLM tasks only"));
    return;
  }
  const std::string& name = task.llm().model();
  auto it = models_.find(name);
  if (it == models_.end()) {
    std::move(done)(executor::FailureReport(
        v1::TERMINAL, absl::StrCat("unknown model '", name, "': not served here")));
    return;
  }
  const ModelConfig& config = it->second.config;
  // Catch an over-long context before paying for it. The scheduler's
  // estimate (about 4 characters a token) errs low for code, so a context
  // refused here is too long; one it lets through may still be refused by
  // the provider, which ends the trajectory the same way.
  const int64_t input = task.llm().estimated_input_tokens();
  const int64_t max_output = EffectiveParams(config, task.llm()).max_tokens();
  if (config.context_window > 0 && input + max_output > config.context_window) {
    metrics_.RefusedEarly(name);
    std::move(done)(executor::FailureReport(
        v1::TERMINAL,
        absl::StrCat("context window exceeded (caught before the call): about ", input,
                     " input tokens (estimated) + max_tokens ", max_output, " > ",
                     config.context_window, ", the context window of ", name,
                     "; use context_policy \"latest-pair\", fewer turns or a smaller max_tokens")));
    return;
  }
  Pending pending;
  pending.call.request = task.llm();
  pending.call.turn = task.turn();
  pending.call.cancelled = std::move(cancelled);
  pending.reserve_tokens = input + max_output;
  pending.done = std::move(done);
  metrics_.Queued(name, task.attempt() > 1);
  absl::MutexLock lock(&mu_);
  queues_.at(name).push_back(std::move(pending));
  wake_.Signal();
}

void ProviderGatewayHandler::PumpLoop() {
  // When each model may be asked again (the permit's wait).
  std::map<std::string, absl::Time> not_before;
  for (;;) {
    struct Head {
      const std::string* name;
      Pending* pending;  // the queue's front: only this thread pops
      int64_t tokens;
    };
    struct Ready {
      const std::string* name;
      Pending pending;
      CallPermits::Permit permit;
      absl::Status refused;  // cancelled, or the permit refused for good
    };
    std::vector<Head> heads;
    std::vector<Ready> ready;
    bool stopping;
    absl::Time now = absl::Now();
    {
      absl::MutexLock lock(&mu_);
      stopping = stopping_;
      for (auto& [name, queue] : queues_) {
        // Cancelled steps leave the queue at once, whatever the limits.
        while (!queue.empty()) {
          Pending& head = queue.front();
          if (!stopping && !(head.call.cancelled != nullptr && head.call.cancelled->load())) break;
          ready.push_back({&name, std::move(head), {},
                           absl::CancelledError("cancelled while waiting for the model's limits")});
          queue.pop_front();
        }
        if (queue.empty() || now < not_before[name]) continue;
        heads.push_back({&name, &queue.front(), queue.front().reserve_tokens});
      }
      if (stopping && ready.empty()) return;
    }
    // The asks, without mu_: Start() goes on queueing meanwhile.
    std::vector<std::pair<Head, absl::StatusOr<CallPermits::Grant>>> answers;
    for (const Head& h : heads) answers.emplace_back(h, permits_->TryAcquire(*h.name, h.tokens));
    now = absl::Now();
    absl::Duration next = kPumpPoll;
    {
      absl::MutexLock lock(&mu_);
      for (auto& [h, grant] : answers) {
        std::deque<Pending>& queue = queues_.at(*h.name);
        if (grant.ok() && !grant->granted) {
          not_before[*h.name] = now + grant->wait;
          continue;
        }
        Ready r{h.name, std::move(queue.front()), {}, grant.status()};
        if (grant.ok()) r.permit = grant->permit;
        queue.pop_front();
        ready.push_back(std::move(r));
      }
      for (const auto& [name, at] : not_before) {
        if (!queues_.at(name).empty()) next = std::min(next, at - now);
      }
      if (ready.empty()) {
        wake_.WaitWithTimeout(&mu_, std::max(next, absl::Milliseconds(1)));
        continue;
      }
    }
    for (Ready& r : ready) {
      if (!r.refused.ok()) {
        metrics_.Dequeued(*r.name);
        std::move(r.pending.done)(executor::FailureReport(
            v1::INFRA, std::string(r.refused.message())));
      } else {
        StartCall(*r.name, models_.at(*r.name), std::move(r.pending), r.permit);
      }
    }
  }
}

void ProviderGatewayHandler::StartCall(const std::string& name, Served& served, Pending pending,
                                       CallPermits::Permit permit) {
  metrics_.Started(name);
  Done done = std::move(pending.done);
  served.provider->Start(
      std::move(pending.call),
      [this, &name, permit, done = std::move(done)](CallOutcome outcome) mutable {
        const v1::LlmResponse* response = outcome.response ? &*outcome.response : nullptr;
        const int64_t billed =
            response ? response->usage().input_tokens() + response->usage().output_tokens() : 0;
        permits_->Release(name, permit, billed);
        metrics_.Ended(name, response, outcome.failure);
        {
          absl::MutexLock lock(&mu_);
          wake_.Signal();  // a concurrency slot is free
        }
        std::move(done)(Report(std::move(outcome)));
      });
}

}  // namespace ptxbench::agent_gateway
