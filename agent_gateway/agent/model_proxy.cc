// A session's model proxy (model_proxy.h): the connection and the request's
// checks. The budget's reservations are in model_proxy_budget.cc, the
// upstream transfer in model_proxy_forward.cc.
#include "agent_gateway/agent/model_proxy.h"

#include <curl/curl.h>
#include <poll.h>
#include <sys/time.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <exception>
#include <tuple>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "absl/time/clock.h"
#include "agent_gateway/agent/client_request.h"
#include "agent_gateway/agent/model_proxy_wire.h"
#include "agent_gateway/agent/request_allowlist.h"
#include "agent_gateway/agent/request_policy.h"
#include "agent_gateway/agent/routes.h"
#include "common/log.h"

namespace ptxbench::agent_gateway {

namespace v1 = ::ptxbench::v1;
using proxy_internal::Answered;
using proxy_internal::ErrorBody;
using proxy_internal::HttpHead;
using proxy_internal::WriteAll;
using proxy_internal::WriteChunk;

namespace {

std::string Cut(absl::string_view text, size_t max) {
  return std::string(text.substr(0, std::min(text.size(), max)));
}

// Reads one request from `fd`, whole, within the deadline; gives up when
// `stop` is set (the session is over: an idle connection must not hold it).
// DEADLINE_EXCEEDED and CANCELLED (the client closed) need no answer.
absl::StatusOr<ClientRequest> ReadRequest(int fd, const std::function<void()>& touch,
                                        const std::atomic<bool>& stop) {
  ClientRequestLimits limits;
  limits.max_head_bytes = ModelProxy::kMaxHeadBytes;
  limits.max_body_bytes = ModelProxy::kMaxBodyBytes;
  ClientRequestParser parser(limits);
  const absl::Time deadline = absl::Now() + ModelProxy::kRequestDeadline;
  // A head arrives at once from a client; one that trickles in holds one of
  // the few connections (16 slow heads locked the CLI out).
  const absl::Time head_deadline = absl::Now() + ModelProxy::kHeadDeadline;
  bool continued = false;
  char chunk[64 << 10];
  while (parser.state() == ClientRequestParser::State::kNeedMore) {
    const int64_t wait = absl::ToInt64Milliseconds(
        (parser.head_done() ? deadline : std::min(deadline, head_deadline)) - absl::Now());
    if (wait <= 0 || stop.load()) return absl::DeadlineExceededError("no whole request in time");
    pollfd p{fd, POLLIN, 0};
    const int ready = poll(&p, 1, static_cast<int>(std::min<int64_t>(wait, 250)));
    if (ready < 0 && errno != EINTR) return absl::DeadlineExceededError("poll failed");
    if (ready <= 0) continue;
    const ssize_t n = recv(fd, chunk, sizeof(chunk), 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return absl::CancelledError("the connection ended mid-request");
    touch();
    parser.Feed(absl::string_view(chunk, static_cast<size_t>(n)));
    if (parser.expects_continue() && parser.head_done() && !continued &&
        parser.state() == ClientRequestParser::State::kNeedMore) {
      continued = true;
      (void)WriteAll(fd, "HTTP/1.1 100 Continue\r\n\r\n");
    }
  }
  if (parser.state() == ClientRequestParser::State::kError) return parser.error();
  return std::move(parser.request());
}

// After refusing a request it did not read whole: the rest of what the
// client sends is read and dropped for a moment, so that the refusal reaches
// it (a socket closed with unread bytes resets the connection, and the
// client sees an error instead of the answer).
void Linger(int fd) {
  shutdown(fd, SHUT_WR);
  const absl::Time until = absl::Now() + absl::Seconds(2);
  char chunk[64 << 10];
  size_t dropped = 0;
  while (dropped < (64u << 20)) {
    const int64_t wait = absl::ToInt64Milliseconds(until - absl::Now());
    pollfd p{fd, POLLIN, 0};
    if (wait <= 0 || poll(&p, 1, static_cast<int>(wait)) <= 0) return;
    const ssize_t n = recv(fd, chunk, sizeof(chunk), 0);
    if (n <= 0) return;
    dropped += static_cast<size_t>(n);
  }
}

// The Anthropic betas a session may ask for, by family (the name without its
// date): those the pinned Claude Code sends, which change neither the price
// nor what runs at the provider. A beta that does (context-1m and fast-mode
// price tokens above the registry's, extended-cache-ttl caches at twice the
// input price, mcp-client, files-api, code-execution, web-fetch and skills
// run or read things at the provider) is refused with the request.
bool AllowedBeta(absl::string_view beta) {
  // "name-2025-05-14" or "name-20250219": the family is the name.
  absl::string_view family = beta;
  const size_t dash = family.find_last_of('-');
  if (dash != absl::string_view::npos && family.size() - dash - 1 == 8 &&
      family.substr(dash + 1).find_first_not_of("0123456789") == absl::string_view::npos) {
    family = family.substr(0, dash);
  } else if (family.size() > 11 && family[family.size() - 3] == '-' &&
             family[family.size() - 6] == '-' && family[family.size() - 11] == '-') {
    family = family.substr(0, family.size() - 11);
  }
  for (absl::string_view allowed :
       {"claude-code", "interleaved-thinking", "context-management", "thinking-token-count",
        "advanced-tool-use", "thinking-display-updates", "mid-conversation-tool-changes", "effort",
        "fine-grained-tool-streaming", "token-efficient-tools", "prompt-caching", "output-128k",
        "structured-outputs"}) {
    if (family == allowed) return true;
  }
  return false;
}

// The headers the CLI sent that go upstream, each rebuilt from what its
// grammar allows; INVALID_ARGUMENT for one that is not of its form. Every
// other header (keys above all) stays behind.
absl::StatusOr<std::vector<std::string>> ForwardedHeaders(const ClientRequest& r) {
  std::vector<std::string> out;
  auto list = [](absl::string_view value, size_t max_items, auto item_ok) -> std::optional<std::string> {
    std::vector<std::string> items;
    for (absl::string_view item : absl::StrSplit(value, ',')) {
      item = absl::StripAsciiWhitespace(item);
      if (item.empty() || item.size() > 80 || !item_ok(item) || items.size() >= max_items) {
        return std::nullopt;
      }
      items.emplace_back(item);
    }
    return absl::StrJoin(items, ",");
  };
  auto chars = [](absl::string_view allowed) {
    return [allowed](absl::string_view item) {
      for (char c : item) {
        if (!absl::ascii_isalnum(static_cast<unsigned char>(c)) &&
            allowed.find(c) == absl::string_view::npos) {
          return false;
        }
      }
      return true;
    };
  };
  if (const std::string* v = r.Header("anthropic-version"); v != nullptr) {
    if (v->size() != 10 || (*v)[4] != '-' || (*v)[7] != '-' ||
        !chars("-")(*v)) {
      return absl::InvalidArgumentError("ptxbench refused the request: anthropic-version is not a date");
    }
    out.push_back(absl::StrCat("anthropic-version: ", *v));
  }
  // Feature lists: each item a name of letters, digits and a few marks.
  for (const auto& [name, allowed, max_items] :
       {std::tuple{"anthropic-beta", "-.", 32}, std::tuple{"openai-beta", "-._=", 8}}) {
    const std::string* v = r.Header(name);
    if (v == nullptr) continue;
    std::optional<std::string> items = list(*v, max_items, chars(allowed));
    if (!items) {
      return absl::InvalidArgumentError(absl::StrCat(
          "ptxbench refused the request: ", name, " is not a list of feature names"));
    }
    if (absl::string_view(name) == "anthropic-beta") {
      for (absl::string_view beta : absl::StrSplit(*items, ',')) {
        if (!AllowedBeta(beta)) {
          return absl::InvalidArgumentError(absl::StrCat(
              "ptxbench refused the request: the beta ", beta,
              " is not one a session may use (it changes the price, or runs or reads things at "
              "the provider)"));
        }
      }
    }
    out.push_back(absl::StrCat(name, ": ", *items));
  }
  return out;
}

}  // namespace

ModelProxy::ModelProxy(Upstream upstream, Budget budget, CallPermits* permits)
    : upstream_(std::move(upstream)),
      budget_(budget),
      permits_(permits),
      server_(kMaxConnections, [this](int fd) { Answer(fd); }) {
  share_ = proxy_internal::NewShare(share_locks_);
}

ModelProxy::~ModelProxy() {
  Close(absl::ZeroDuration());
  server_.Stop();
  proxy_internal::FreeShare(share_);
}

bool ModelProxy::Listen(const std::string& path) { return server_.Listen(path); }

void ModelProxy::Close(absl::Duration grace) {
  std::unique_lock<std::mutex> lock(mu_);
  closing_ = true;
  settled_.notify_all();  // admissions waiting give up
  // Calls admitted are over once settled (counted), not when their transfer
  // ends: the totals are final only then.
  auto over = [this] { return in_flight_ == 0 && calls_answering_ == 0; };
  settled_.wait_for(lock, absl::ToChronoMilliseconds(grace), over);
  cut_ = true;  // the rest end at their next progress callback, charged
  settled_.wait(lock, over);
}


absl::Time ModelProxy::last_activity() const {
  std::lock_guard<std::mutex> lock(mu_);
  return last_activity_;
}

absl::Time ModelProxy::last_call_admitted() const {
  std::lock_guard<std::mutex> lock(mu_);
  return last_call_admitted_;
}

int ModelProxy::in_flight() const {
  std::lock_guard<std::mutex> lock(mu_);
  return in_flight_;
}

std::vector<ModelProxy::Call> ModelProxy::calls() const {
  std::lock_guard<std::mutex> lock(mu_);
  return calls_;
}

int64_t ModelProxy::calls_dropped() const {
  std::lock_guard<std::mutex> lock(mu_);
  return calls_dropped_;
}

int64_t ModelProxy::token_count_calls() const {
  std::lock_guard<std::mutex> lock(mu_);
  return token_count_calls_;
}

void ModelProxy::Touch() {
  std::lock_guard<std::mutex> lock(mu_);
  last_activity_ = absl::Now();
}

void ModelProxy::Record(Call call) {
  std::lock_guard<std::mutex> lock(mu_);
  last_activity_ = absl::Now();
  if (calls_.size() >= kMaxCallRecords) {
    ++calls_dropped_;
    return;
  }
  const size_t bodies = call.request.size() + call.response.size();
  if (recorded_bodies_ + bodies > kRecordedBodies) {
    call.bodies_truncated |= bodies > 0;
    call.request.clear();
    call.response.clear();
  } else {
    recorded_bodies_ += bodies;
  }
  calls_.push_back(std::move(call));
}

void ModelProxy::Answer(int fd) {
  // A CLI that stops reading must not hold the transfer (and with it the
  // call's reservation and the session's end): a send that cannot go on for
  // 5 s counts the CLI as gone, and the answer is read on without it.
  const timeval patience{5, 0};
  setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &patience, sizeof(patience));
  Call call;
  call.started_unix_ms = absl::ToUnixMillis(absl::Now());
  const absl::Time start = absl::Now();
  // Hostile input never ends the gateway: whatever escapes the checks below
  // (none should) is this connection's 500, not an uncaught exception on a
  // thread of the gateway.
  try {
    absl::StatusOr<ClientRequest> request = ReadRequest(fd, [this] { Touch(); }, cut_);
    if (!request.ok()) {
      if (absl::IsDeadlineExceeded(request.status()) || absl::IsCancelled(request.status())) {
        return;  // an idle, slow or closed connection: nothing to answer
      }
      Refuse(fd, absl::IsOutOfRange(request.status()) ? 413 : 400,
             std::string(request.status().message()), call);
      Linger(fd);
    } else {
      call.target = Cut(absl::StrCat(request->method, " ", request->path), 512);
      Handle(fd, *request, call);
    }
  } catch (const std::exception& e) {
    LogError("model proxy: a request's handler failed", {{"error", e.what()}});
    Refuse(fd, 500, "ptxbench model proxy: internal error", call);
  } catch (...) {
    LogError("model proxy: a request's handler failed", {{"error", "unknown"}});
    Refuse(fd, 500, "ptxbench model proxy: internal error", call);
  }
  call.latency_ms = absl::ToInt64Milliseconds(absl::Now() - start);
  Record(std::move(call));
}

void ModelProxy::Handle(int fd, ClientRequest& request, Call& call) {
  absl::StatusOr<Route> route =
      MatchRoute(upstream_.wire, request, upstream_.base_url, upstream_.model_id);
  if (!route.ok()) {
    return Refuse(fd, 404, absl::StrCat("ptxbench model proxy: ", route.status().message()), call);
  }
  if (const std::string* encoding = request.Header("content-encoding");
      encoding != nullptr && !absl::EqualsIgnoreCase(*encoding, "identity")) {
    return Refuse(fd, 415, "ptxbench model proxy: request bodies must be plain JSON", call);
  }
  if (const std::string* type = request.Header("content-type");
      type != nullptr && !absl::StartsWithIgnoreCase(*type, "application/json")) {
    return Refuse(fd, 415, "ptxbench model proxy: request bodies must be application/json", call);
  }
  if (const std::string spent_budget = spent_reason(); !spent_budget.empty()) {
    return Refuse(fd, 400,
                  absl::StrCat("ptxbench: this session's ", spent_budget, "; the session is over"),
                  call);
  }
  absl::StatusOr<std::vector<std::string>> headers = ForwardedHeaders(request);
  if (!headers.ok()) return Refuse(fd, 400, std::string(headers.status().message()), call);
  absl::StatusOr<CheckedRequest> checked =
      CheckRequestBody(upstream_.wire, route->kind, request.body);
  if (!checked.ok()) return Refuse(fd, 400, std::string(checked.status().message()), call);
  // The bound of the prompt's tokens counts the bytes as sent.
  const size_t body_bytes = request.body.size();
  request.body.clear();  // the checked body is what goes on; free the copy
  request.body.shrink_to_fit();
  if (!route->requested_model.empty() && route->requested_model != upstream_.model_id) {
    call.edits.push_back(absl::StrCat("model ", route->requested_model, " -> ", upstream_.model_id));
  }
  if (route->kind == RouteKind::kTokenCount) {
    return HandleTokenCount(fd, *route, *checked, *headers, call);
  }
  HandleModelCall(fd, *route, *checked, body_bytes, *headers, call);
}

void ModelProxy::HandleTokenCount(int fd, const Route& route, CheckedRequest& checked,
                                  const std::vector<std::string>& headers, Call& call) {
  call.kind = CallKind::kTokenCount;
  bool allowed = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    const absl::Time now = absl::Now();
    counter_tokens_ = std::min<double>(
        kCounterBurst, counter_tokens_ + absl::ToDoubleSeconds(now - counter_refilled_));
    counter_refilled_ = now;
    if (token_count_calls_ < kMaxCounterCalls && counter_tokens_ >= 1) {
      counter_tokens_ -= 1;
      ++token_count_calls_;
      allowed = true;
    }
  }
  if (!allowed) {
    return Refuse(fd, 429,
                  absl::StrCat("ptxbench model proxy: token counting is limited to ",
                               kCounterBurst, " at once and one a second (", kMaxCounterCalls,
                               " in a session)"),
                  call);
  }
  PolicyEdits edits = ApplyRequestPolicy(upstream_.wire, {upstream_.model_id, 0}, checked.body);
  call.edits.insert(call.edits.end(), edits.begin(), edits.end());
  Answered answer = Exchange(fd, route.upstream_url, headers, checked.body, /*slot=*/-1, call);
  EndRelay(fd, answer, call);
}

ModelProxy::Answered ModelProxy::Exchange(int fd, const std::string& url,
                                          const std::vector<std::string>& headers,
                                          StrictJson& body_json, int64_t slot, Call& call) {
  const std::string body = body_json.dump(-1, ' ', false, StrictJson::error_handler_t::replace);
  body_json = StrictJson();  // what is sent is `body`
  call.request = Cut(body, kRecordedBody);
  call.bodies_truncated = body.size() > kRecordedBody;
  Answered answer = Forward(fd, url, headers, body, slot);
  call.status = answer.status;
  call.response = Cut(answer.recorded, kRecordedBody);
  call.bodies_truncated |= answer.recorded_truncated;
  return answer;
}

void ModelProxy::EndRelay(int fd, Answered& answer, Call& call) {
  if (!answer.reached) {
    // Nothing reached the CLI yet: tell it in its API's words. Not counted.
    return Refuse(fd, 502,
                  absl::StrCat("ptxbench model proxy: the provider could not be reached: ",
                               answer.error),
                  call);
  }
  proxy_internal::FinishRelay(fd, answer);
}

void ModelProxy::HandleModelCall(int fd, const Route& route, CheckedRequest& checked,
                                 size_t body_bytes, const std::vector<std::string>& headers,
                                 Call& call) {
  call.kind = CallKind::kModel;
  absl::StatusOr<Reservation> reservation = Admit(checked, body_bytes, headers);
  if (!reservation.ok()) {
    const int status = absl::IsUnavailable(reservation.status()) ? 429 : 400;
    call.kind = CallKind::kRefused;
    return Refuse(fd, status, std::string(reservation.status().message()), call);
  }
  call.reserved_tokens = reservation->tokens();
  PolicyEdits edits =
      ApplyRequestPolicy(upstream_.wire, {upstream_.model_id, reservation->output}, checked.body);
  call.edits.insert(call.edits.end(), edits.begin(), edits.end());
  // The fleet's limits for the model, after the session's own budget: a
  // call waits here for its permit, as long as the session lasts.
  CallPermits::Permit permit;
  if (permits_ != nullptr) {
    absl::StatusOr<CallPermits::Permit> granted =
        permits_->Acquire(upstream_.model, reservation->tokens(), [this] {
          std::lock_guard<std::mutex> lock(mu_);
          return closing_ || cut_.load();
        });
    if (!granted.ok()) {
      Settle(*reservation, Answered(), call);
      call.kind = CallKind::kRefused;
      return Refuse(fd, absl::IsCancelled(granted.status()) ? 429 : 503,
                    absl::StrCat("ptxbench: no call permit for the model: ",
                                 absl::IsCancelled(granted.status())
                                     ? "the session is over"
                                     : granted.status().message()),
                    call);
    }
    permit = *granted;
  }
  Answered answer =
      Exchange(fd, route.upstream_url, headers, checked.body, reservation->slot, call);
  Settle(*reservation, answer, call);
  if (permits_ != nullptr) {
    // What the session was charged (its reservation when the answer did not
    // say its usage whole); nothing for an answer that never came.
    permits_->Release(upstream_.model, permit,
                      call.usage.input_tokens() + call.usage.output_tokens());
  }
  EndRelay(fd, answer, call);
}


void ModelProxy::Refuse(int fd, int status, const std::string& message, Call& call) {
  call.status = status;
  call.refused = message;
  call.response = ErrorBody(upstream_.wire, status, message);
  (void)(WriteAll(fd, HttpHead(status, "application/json")) && WriteChunk(fd, call.response) &&
         WriteAll(fd, "0\r\n\r\n"));
}

}  // namespace ptxbench::agent_gateway
