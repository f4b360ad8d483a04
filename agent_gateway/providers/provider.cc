#include "agent_gateway/providers/provider.h"

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/strip.h"
#include "nlohmann/json.hpp"

namespace ptxbench::agent_gateway {
namespace {

namespace v1 = ::ptxbench::v1;

constexpr size_t kMaxMessage = 600;

// The provider's own words: error.message of OpenAI, Anthropic and Gemini
// bodies, else the start of the body.
std::string ProviderMessage(const std::string& body) {
  nlohmann::json j = nlohmann::json::parse(body, nullptr, /*allow_exceptions=*/false);
  std::string message;
  if (!j.is_discarded() && j.is_object() && j.contains("error")) {
    const nlohmann::json& e = j["error"];
    if (e.is_object() && e.contains("message") && e["message"].is_string()) {
      message = e["message"].get<std::string>();
    } else if (e.is_string()) {
      message = e.get<std::string>();
    }
  }
  if (message.empty()) message = body;
  if (message.size() > kMaxMessage) message = message.substr(0, kMaxMessage) + "...";
  return message;
}

bool IsContextWindowError(const std::string& body) {
  for (const char* marker :
       {"context_length_exceeded", "maximum context length", "context window",
        "prompt is too long", "input token count", "too many tokens", "exceeds the context"}) {
    if (absl::StrContains(absl::AsciiStrToLower(body), marker)) return true;
  }
  return false;
}

}  // namespace

int64_t RetryAfterMs(const HttpResponse& response) {
  double value = 0;
  // OpenAI's own millisecond header is the more precise one.
  if (auto it = response.headers.find("retry-after-ms");
      it != response.headers.end() && absl::SimpleAtod(it->second, &value) && value >= 0) {
    return static_cast<int64_t>(value);
  }
  if (auto it = response.headers.find("retry-after");
      it != response.headers.end() && absl::SimpleAtod(it->second, &value) && value >= 0) {
    return static_cast<int64_t>(value * 1000);
  }
  // Gemini says it in the body: error.details[] of type RetryInfo, "retryDelay": "2s".
  nlohmann::json j = nlohmann::json::parse(response.body, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object() || !j.contains("error") || !j["error"].is_object()) {
    return 0;
  }
  const nlohmann::json& details = j["error"].value("details", nlohmann::json::array());
  if (!details.is_array()) return 0;
  for (const nlohmann::json& d : details) {
    if (!d.is_object() || !d.contains("retryDelay") || !d["retryDelay"].is_string()) continue;
    const std::string delay = d["retryDelay"].get<std::string>();
    if (absl::EndsWith(delay, "s") &&
        absl::SimpleAtod(absl::StripSuffix(delay, "s"), &value) && value >= 0) {
      return static_cast<int64_t>(value * 1000);
    }
  }
  return 0;
}

CallOutcome ClassifyFailure(const absl::StatusOr<HttpResponse>& response,
                            const std::string& provider, const std::string& key) {
  CallOutcome out;
  auto scrub = [&](std::string text) {
    if (!key.empty()) absl::StrReplaceAll({{key, "<api key>"}}, &text);
    return text;
  };
  if (!response.ok()) {
    out.failure = v1::MODEL_API;
    out.message = scrub(absl::StrCat(provider, ": ", response.status().message()));
    return out;
  }
  const long status = response->status;
  const std::string said = ProviderMessage(response->body);
  if (status == 408 || status == 409 || status == 429 || status >= 500) {
    out.failure = v1::MODEL_API;
    out.retry_after_ms = RetryAfterMs(*response);
    out.message = scrub(absl::StrCat(provider, " HTTP ", status, ": ", said));
    return out;
  }
  out.failure = v1::TERMINAL;
  std::string what;
  // Gemini answers a bad key with 400 API_KEY_INVALID.
  if (status == 401 || status == 403 || absl::StrContains(response->body, "API_KEY_INVALID")) {
    what = "authentication failed";
  } else if (status == 404) {
    what = "unknown model or endpoint";
  } else if (IsContextWindowError(response->body)) {
    what = "context window exceeded";
  } else {
    what = "request refused";
  }
  out.message = scrub(absl::StrCat(provider, " ", what, " (HTTP ", status, "): ", said));
  return out;
}

}  // namespace ptxbench::agent_gateway
