#include "agent_gateway/provider.h"

#include <future>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
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
  auto it = response.headers.find("retry-after");
  if (it == response.headers.end()) return 0;
  double seconds = 0;
  if (!absl::SimpleAtod(it->second, &seconds) || seconds < 0) return 0;
  return static_cast<int64_t>(seconds * 1000);
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
  if (status == 401 || status == 403) {
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

CallOutcome CallAndWait(Provider& provider, ModelCall call) {
  std::promise<CallOutcome> result;
  std::future<CallOutcome> future = result.get_future();
  provider.Start(std::move(call), [&result](CallOutcome out) { result.set_value(std::move(out)); });
  return future.get();
}

}  // namespace ptxbench::agent_gateway
