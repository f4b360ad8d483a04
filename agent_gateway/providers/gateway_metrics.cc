#include "agent_gateway/providers/gateway_metrics.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/prometheus.h"

namespace ptxbench::agent_gateway {

namespace v1 = ::ptxbench::v1;

void GatewayMetrics::Queued(const std::string& model, bool reasked) {
  absl::MutexLock lock(&mu_);
  ModelCounters& c = models_[model];
  ++c.waiting;
  c.reasked += reasked;
}

void GatewayMetrics::Started(const std::string& model) {
  absl::MutexLock lock(&mu_);
  ModelCounters& c = models_[model];
  --c.waiting;
  ++c.in_flight;
}

void GatewayMetrics::Dequeued(const std::string& model) {
  absl::MutexLock lock(&mu_);
  --models_[model].waiting;
}

void GatewayMetrics::RefusedEarly(const std::string& model) {
  absl::MutexLock lock(&mu_);
  ++models_[model].refused_early;
}

void GatewayMetrics::Ended(const std::string& model, const v1::LlmResponse* response,
                           v1::FailureClass failure) {
  absl::MutexLock lock(&mu_);
  ModelCounters& c = models_[model];
  --c.in_flight;
  if (response == nullptr) {
    (failure == v1::MODEL_API ? c.failed_retry : c.failed_terminal) += 1;
    return;
  }
  ++c.answered;
  c.truncated += response->finish_reason() == "length";
  c.input_tokens += response->usage().input_tokens();
  c.output_tokens += response->usage().output_tokens();
  c.reasoning_tokens += response->usage().reasoning_tokens();
  c.cached_tokens += response->usage().cached_tokens();
  c.cost_usd += response->cost_usd();
}

std::map<std::string, ModelCounters> GatewayMetrics::Snapshot() const {
  absl::MutexLock lock(&mu_);
  return models_;
}

namespace {

// Every counter once: its Prometheus family, its key in the stats line.
struct Counter {
  const char* family;
  const char* log_key;
  prometheus::Type type;
  const char* help;
  double (*value)(const ModelCounters&);
};

constexpr Counter kCounters[] = {
    {"ptxbench_gateway_calls_waiting", "waiting", prometheus::Type::kGauge, "Calls queued for the model's limits",
     [](const ModelCounters& c) { return double(c.waiting); }},
    {"ptxbench_gateway_calls_in_flight", "in_flight", prometheus::Type::kGauge, "Provider calls in flight",
     [](const ModelCounters& c) { return double(c.in_flight); }},
    {"ptxbench_gateway_answers_total", "answered", prometheus::Type::kCounter, "Calls answered",
     [](const ModelCounters& c) { return double(c.answered); }},
    {"ptxbench_gateway_truncated_total", "truncated", prometheus::Type::kCounter, "Answers cut at max_tokens",
     [](const ModelCounters& c) { return double(c.truncated); }},
    {"ptxbench_gateway_failures_retryable_total", "failed_retryable", prometheus::Type::kCounter,
     "Calls failed with a retryable error (429, 5xx, transport)",
     [](const ModelCounters& c) { return double(c.failed_retry); }},
    {"ptxbench_gateway_failures_terminal_total", "failed_terminal", prometheus::Type::kCounter,
     "Calls failed for good (auth, unknown model, bad request, context window)",
     [](const ModelCounters& c) { return double(c.failed_terminal); }},
    {"ptxbench_gateway_refused_before_call_total", "refused_early", prometheus::Type::kCounter,
     "Steps refused before paying: context estimated too long",
     [](const ModelCounters& c) { return double(c.refused_early); }},
    {"ptxbench_gateway_retries_total", "retries", prometheus::Type::kCounter,
     "Steps asked again after a failure or crash",
     [](const ModelCounters& c) { return double(c.reasked); }},
    {"ptxbench_gateway_input_tokens_total", "input_tokens", prometheus::Type::kCounter, "Input tokens billed",
     [](const ModelCounters& c) { return double(c.input_tokens); }},
    {"ptxbench_gateway_output_tokens_total", "output_tokens", prometheus::Type::kCounter, "Output tokens billed",
     [](const ModelCounters& c) { return double(c.output_tokens); }},
    {"ptxbench_gateway_reasoning_tokens_total", "reasoning_tokens", prometheus::Type::kCounter,
     "Reasoning tokens (within output)",
     [](const ModelCounters& c) { return double(c.reasoning_tokens); }},
    {"ptxbench_gateway_cached_tokens_total", "cached_tokens", prometheus::Type::kCounter,
     "Cached input tokens (within input)",
     [](const ModelCounters& c) { return double(c.cached_tokens); }},
    {"ptxbench_gateway_cost_usd_total", "cost_usd", prometheus::Type::kCounter, "Cost of the answers, US dollars",
     [](const ModelCounters& c) { return c.cost_usd; }},
};

std::string Number(double v) { return absl::StrFormat("%.10g", v); }

}  // namespace

std::string GatewayMetrics::Prometheus() const {
  const std::map<std::string, ModelCounters> models = Snapshot();
  prometheus::Page page;
  for (const Counter& f : kCounters) {
    page.Family(f.family, f.type, f.help);
    for (const auto& [model, c] : models) page.Sample({{"model", model}}, f.value(c));
  }
  return page.text();
}

std::vector<LogField> GatewayMetrics::LogFields(const std::string& model,
                                                const ModelCounters& c) {
  std::vector<LogField> fields = {{"model", model}};
  for (const Counter& f : kCounters) fields.emplace_back(f.log_key, Number(f.value(c)));
  return fields;
}

}  // namespace ptxbench::agent_gateway
