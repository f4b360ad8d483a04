// The budget of a session's model proxy (model_proxy.h): what a call is
// admitted with (its worst case, reserved), what it is charged when it ends,
// and when the session's budget is spent. The connection is in
// model_proxy.cc, the upstream transfer in model_proxy_forward.cc.
#include <algorithm>
#include <cmath>
#include <limits>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "agent_gateway/agent/model_proxy.h"
#include "agent_gateway/agent/model_proxy_wire.h"
#include "agent_gateway/agent/request_allowlist.h"
#include "agent_gateway/agent/routes.h"

namespace ptxbench::agent_gateway {

namespace v1 = ::ptxbench::v1;
using proxy_internal::Answered;

namespace {

// A prompt's tokens are at most its body's bytes (every token of a byte-level
// vocabulary covers at least one byte of text, and JSON only adds bytes),
// plus what the provider adds that the body does not show: framing of
// messages and tools, and the tokens of an image, which no byte count bounds.
constexpr int64_t kPromptMargin = 4096;
constexpr int64_t kTokensPerMedia = 2048;

// Adds `u` to `total`.
void Add(v1::Usage& total, const v1::Usage& u) {
  total.set_input_tokens(total.input_tokens() + u.input_tokens());
  total.set_output_tokens(total.output_tokens() + u.output_tokens());
  total.set_reasoning_tokens(total.reasoning_tokens() + u.reasoning_tokens());
  total.set_cached_tokens(total.cached_tokens() + u.cached_tokens());
}

}  // namespace

v1::AgentUsage ModelProxy::totals() const {
  std::lock_guard<std::mutex> lock(mu_);
  return totals_;
}

v1::AgentUsage ModelProxy::CountedLocked() const {
  v1::AgentUsage t = totals_;
  for (const auto& [slot, usage] : answering_) {
    Add(*t.mutable_usage(), usage);
    t.set_cost_usd(t.cost_usd() + CostUsd(upstream_.price, usage));
  }
  return t;
}

std::optional<v1::AgentEnd> ModelProxy::SpentLocked() const {
  if (exhausted_) return exhausted_;
  const v1::AgentUsage t = CountedLocked();
  const int64_t tokens = t.usage().input_tokens() + t.usage().output_tokens();
  if (tokens >= budget_.tokens) return v1::AGENT_TOKEN_BUDGET;
  if (budget_.cost_usd > 0 && t.cost_usd() >= budget_.cost_usd) return v1::AGENT_COST_BUDGET;
  if (budget_.model_calls > 0 && totals_.model_calls() >= budget_.model_calls) {
    return v1::AGENT_MODEL_CALL_LIMIT;
  }
  return std::nullopt;
}

std::optional<v1::AgentEnd> ModelProxy::spent() const {
  std::lock_guard<std::mutex> lock(mu_);
  return SpentLocked();
}

std::string ModelProxy::spent_reason() const {
  std::lock_guard<std::mutex> lock(mu_);
  return SpentReasonLocked();
}

std::string ModelProxy::SpentReasonLocked() const {
  const std::optional<v1::AgentEnd> which = SpentLocked();
  if (!which) return "";
  if (exhausted_) return exhausted_reason_;
  const v1::AgentUsage t = CountedLocked();
  switch (*which) {
    case v1::AGENT_TOKEN_BUDGET:
      return absl::StrCat("token budget of ", budget_.tokens, " spent (",
                          t.usage().input_tokens() + t.usage().output_tokens(), " tokens)");
    case v1::AGENT_COST_BUDGET:
      return absl::StrFormat("cost budget of $%.4f spent ($%.4f)", budget_.cost_usd, t.cost_usd());
    default:
      return absl::StrCat("model call limit of ", budget_.model_calls, " reached");
  }
}

std::optional<int64_t> ModelProxy::CountPrompt(const CheckedRequest& checked,
                                               const std::vector<std::string>& headers) {
  Call call;
  call.started_unix_ms = absl::ToUnixMillis(absl::Now());
  call.kind = CallKind::kAdmissionCount;
  call.target = "POST (the provider's token counter, before admitting a call)";
  const absl::Time start = absl::Now();
  const std::string body = proxy_internal::CounterBody(upstream_.wire, upstream_.model_id, checked.body);
  const Answered answer =
      Forward(-1, CounterUrl(upstream_.wire, upstream_.base_url, upstream_.model_id), headers,
              body, /*slot=*/-1);
  call.status = answer.status;
  call.latency_ms = absl::ToInt64Milliseconds(absl::Now() - start);
  std::optional<int64_t> tokens;
  if (answer.reached && answer.status == 200) {
    tokens = proxy_internal::CountedTokens(upstream_.wire, answer.body);
  }
  if (!tokens) call.refused = "the provider's count could not be read: the prompt's bound stands";
  Record(std::move(call));
  return tokens;
}

absl::StatusOr<ModelProxy::Reservation> ModelProxy::Admit(
    const CheckedRequest& checked, size_t body_bytes, const std::vector<std::string>& headers) {
  const int64_t bound = static_cast<int64_t>(body_bytes) + kPromptMargin +
                        kTokensPerMedia * static_cast<int64_t>(checked.media_parts);
  std::optional<int64_t> counted;
  const absl::Time deadline = absl::Now() + kAdmissionWait;
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    if (closing_) return absl::UnavailableError("ptxbench: the session is over");
    if (const std::string spent_budget = SpentReasonLocked(); !spent_budget.empty()) {
      return absl::ResourceExhaustedError(
          absl::StrCat("ptxbench: this session's ", spent_budget, "; the session is over"));
    }
    if (budget_.model_calls > 0 && totals_.model_calls() + calls_answering_ >= budget_.model_calls) {
      return absl::ResourceExhaustedError(
          absl::StrCat("ptxbench: this session's model call limit of ", budget_.model_calls,
                       " is taken by the calls made so far"));
    }
    const v1::AgentUsage t = CountedLocked();
    const int64_t left = budget_.tokens - t.usage().input_tokens() - t.usage().output_tokens() -
                         reserved_tokens_;
    const double in_price = upstream_.price.input_per_mtok / 1e6;
    const double out_price = upstream_.price.output_per_mtok / 1e6;
    const double cost_left = budget_.cost_usd > 0
                                 ? budget_.cost_usd - t.cost_usd() - reserved_cost_
                                 : std::numeric_limits<double>::infinity();
    const int64_t prompt = counted.value_or(bound);
    auto output_left = [&](int64_t p) {
      int64_t out = left - p;
      if (std::isfinite(cost_left) && out_price > 0) {
        const double by_cost = std::floor((cost_left - p * in_price) / out_price);
        out = std::min<int64_t>(out, by_cost < -1e18 ? -1 : static_cast<int64_t>(std::min(by_cost, 9e18)));
      } else if (std::isfinite(cost_left) && p * in_price > cost_left) {
        out = -1;
      }
      return out;
    };
    if (!counted && output_left(prompt) < 1) {
      // The bound does not fit: the provider's own count may.
      lock.unlock();
      counted = CountPrompt(checked, headers).value_or(bound);
      lock.lock();
      continue;
    }
    int64_t output = output_left(prompt);
    if (checked.requested_max_output > 0) output = std::min(output, checked.requested_max_output);
    if (output >= 1) {
      Reservation r;
      r.slot = next_slot_++;
      r.prompt = prompt;
      r.output = output;
      v1::Usage worst;
      worst.set_input_tokens(prompt);
      worst.set_output_tokens(output);
      r.cost_usd = CostUsd(upstream_.price, worst);
      reserved_tokens_ += r.tokens();
      reserved_cost_ += r.cost_usd;
      ++calls_answering_;
      answering_[r.slot] = v1::Usage();
      last_call_admitted_ = absl::Now();
      return r;
    }
    if (calls_answering_ > 0 && absl::Now() < deadline) {
      // The calls in flight hold what this one needs: it waits for them.
      settled_.wait_until(lock, absl::ToChronoTime(deadline));
      continue;
    }
    if (calls_answering_ > 0) {
      return absl::UnavailableError(
          "ptxbench: the budget left is reserved by the session's calls in flight; try again");
    }
    const bool by_cost = std::isfinite(cost_left) && left - prompt >= 1;
    exhausted_ = by_cost ? v1::AGENT_COST_BUDGET : v1::AGENT_TOKEN_BUDGET;
    exhausted_reason_ =
        by_cost ? absl::StrFormat("cost budget of $%.4f spent: $%.4f left, less than the next "
                                  "call's prompt of %d tokens and one token of answer would cost",
                                  budget_.cost_usd, cost_left, prompt)
                : absl::StrCat("token budget of ", budget_.tokens, " spent: ", left,
                               " tokens left, fewer than the next call's prompt of ", prompt,
                               " tokens and one token of answer");
    return absl::ResourceExhaustedError(
        absl::StrCat("ptxbench: this session's ", exhausted_reason_, "; the session is over"));
  }
}

void ModelProxy::Settle(const Reservation& r, const Answered& answer, Call& call) {
  std::lock_guard<std::mutex> lock(mu_);
  answering_.erase(r.slot);
  --calls_answering_;
  reserved_tokens_ -= r.tokens();
  reserved_cost_ -= r.cost_usd;
  settled_.notify_all();
  // Only an answer is a model call: the provider's errors cost nothing.
  if (!answer.reached || answer.status < 200 || answer.status >= 300) return;
  v1::Usage usage = proxy_internal::ToProto(answer.usage);
  if (!answer.usage_whole) {
    // Cut short, or in a shape that did not say its usage: the worst case
    // the call was admitted with.
    usage.set_input_tokens(std::max(usage.input_tokens(), r.prompt));
    usage.set_output_tokens(std::max(usage.output_tokens(), r.output));
    call.charged_reservation = true;
  }
  call.usage = usage;
  call.cost_usd = CostUsd(upstream_.price, usage);
  Add(*totals_.mutable_usage(), usage);
  totals_.set_cost_usd(totals_.cost_usd() + call.cost_usd);
  totals_.set_model_calls(totals_.model_calls() + 1);
  totals_.set_latency_ms(totals_.latency_ms() +
                         (absl::ToUnixMillis(absl::Now()) - call.started_unix_ms));
}

}  // namespace ptxbench::agent_gateway
