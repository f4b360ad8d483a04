#include "agent_gateway/providers/http_provider.h"

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"

namespace ptxbench::agent_gateway {

namespace v1 = ::ptxbench::v1;

v1::ModelParameters EffectiveParams(const ModelConfig& config, const v1::LlmRequest& request) {
  v1::ModelParameters p = config.params;
  p.MergeFrom(request.params());
  return p;
}

void HttpJsonProvider::Start(ModelCall call, Done done) {
  HttpRequest http;
  http.url = shape_.url(config_);
  http.headers = shape_.headers(key_);
  http.headers.push_back("Content-Type: application/json");
  http.body = shape_.body(config_, call.request);
  http.timeout = timeout_;
  const absl::Time start = absl::Now();
  http_->Send(std::move(http), std::move(call.cancelled),
              [this, start, done = std::move(done)](HttpResult response) mutable {
                std::move(done)(Finish(response, start));
              });
}

CallOutcome HttpJsonProvider::Finish(const HttpResult& response, absl::Time start) const {
  const std::string who = absl::StrCat(config_.provider, " (", config_.base_url, ")");
  if (!response.ok() || response->status != 200) return ClassifyFailure(response, who, key_);
  absl::StatusOr<v1::LlmResponse> parsed = shape_.parse(response->body);
  CallOutcome out;
  if (!parsed.ok()) {
    // A malformed 200 is most likely a proxy's hiccup: worth another try.
    out.failure = v1::MODEL_API;
    out.message = absl::StrCat(who, ": HTTP 200 but ", parsed.status().message());
    return out;
  }
  parsed->set_provider(config_.provider);
  parsed->set_cost_usd(CostUsd(config_.price, parsed->usage()));
  parsed->set_latency_ms(absl::ToInt64Milliseconds(absl::Now() - start));
  out.response = *std::move(parsed);
  return out;
}

}  // namespace ptxbench::agent_gateway
