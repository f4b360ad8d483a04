#include "agent_gateway/agent/model_proxy.h"

#include <curl/curl.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "absl/time/clock.h"
#include "agent_gateway/agent/request_policy.h"
#include "agent_gateway/agent/stream_usage.h"
#include "nlohmann/json.hpp"

namespace ptxbench::agent_gateway {
namespace {

namespace v1 = ::ptxbench::v1;
using Json = nlohmann::json;

constexpr absl::Duration kIdle = absl::Seconds(60);

// The endpoints a session may call, by the path's end: `counted` answers
// are model calls (billed, budgeted); the others count tokens for free.
struct Endpoint {
  bool allowed = false;
  bool counted = false;
};

Endpoint EndpointOf(agents::Wire wire, absl::string_view path) {
  switch (wire) {
    case agents::Wire::kOpenAIResponses:
      return {absl::EndsWith(path, "/responses"), true};
    case agents::Wire::kAnthropicMessages:
      if (absl::EndsWith(path, "/v1/messages/count_tokens")) return {true, false};
      return {absl::EndsWith(path, "/v1/messages"), true};
    case agents::Wire::kGeminiGenerate:
      if (absl::EndsWith(path, ":countTokens")) return {true, false};
      return {absl::EndsWith(path, ":streamGenerateContent") ||
                  absl::EndsWith(path, ":generateContent"),
              true};
  }
  return {};
}

// An error body in the API's own shape, so the CLI shows its message.
std::string ErrorBody(agents::Wire wire, int status, const std::string& message) {
  switch (wire) {
    case agents::Wire::kAnthropicMessages:
      return Json{{"type", "error"},
                  {"error", {{"type", "invalid_request_error"}, {"message", message}}}}
          .dump();
    case agents::Wire::kOpenAIResponses:
      return Json{{"error",
                   {{"message", message}, {"type", "invalid_request_error"}, {"code", "ptxbench"}}}}
          .dump();
    case agents::Wire::kGeminiGenerate:
      return Json{{"error", {{"code", status}, {"message", message}, {"status", "INVALID_ARGUMENT"}}}}
          .dump();
  }
  return message;
}

const char* Reason(int status) {
  switch (status) {
    case 200: return "OK";
    case 400: return "Bad Request";
    case 404: return "Not Found";
    case 405: return "Method Not Allowed";
    case 413: return "Payload Too Large";
    case 415: return "Unsupported Media Type";
    case 429: return "Too Many Requests";
    case 502: return "Bad Gateway";
    default: return "Status";
  }
}

bool WriteAll(int fd, absl::string_view bytes) {
  while (!bytes.empty()) {
    const ssize_t n = send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    bytes.remove_prefix(static_cast<size_t>(n));
  }
  return true;
}

std::string Head(int status, const std::string& content_type) {
  return absl::StrCat("HTTP/1.1 ", status, " ", Reason(status), "\r\nContent-Type: ", content_type,
                      "\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n");
}

bool WriteChunk(int fd, absl::string_view bytes) {
  if (bytes.empty()) return true;
  return WriteAll(fd, absl::StrCat(absl::Hex(bytes.size()), "\r\n", bytes, "\r\n"));
}

// Reads into `buffer` until it holds `want` bytes more than `from`, or an
// error; false on EOF, timeout or a read error.
bool ReadMore(int fd, std::string& buffer) {
  pollfd p{fd, POLLIN, 0};
  const int ready = poll(&p, 1, static_cast<int>(absl::ToInt64Milliseconds(kIdle)));
  if (ready <= 0) return false;
  char chunk[64 << 10];
  const ssize_t n = recv(fd, chunk, sizeof(chunk), 0);
  if (n <= 0) return false;
  buffer.append(chunk, static_cast<size_t>(n));
  return true;
}

// A chunked body from `data` (the bytes after the head), reading more from
// `fd` as needed. INVALID_ARGUMENT for a malformed or oversized one.
absl::StatusOr<std::string> ReadChunked(int fd, std::string data, size_t max) {
  std::string body;
  size_t at = 0;
  for (;;) {
    size_t eol;
    while ((eol = data.find("\r\n", at)) == std::string::npos) {
      if (data.size() - at > 64 || !ReadMore(fd, data)) {
        return absl::InvalidArgumentError("malformed chunked body");
      }
    }
    uint64_t size = 0;
    absl::string_view line(data.data() + at, eol - at);
    line = line.substr(0, line.find(';'));
    if (!absl::SimpleHexAtoi(line, &size) || size > max - body.size()) {
      return absl::InvalidArgumentError("malformed or oversized chunk");
    }
    at = eol + 2;
    while (data.size() < at + size + 2) {
      if (!ReadMore(fd, data)) return absl::InvalidArgumentError("truncated chunk");
    }
    if (size == 0) return body;  // trailers are not read: Connection: close
    body.append(data, at, size);
    at += size + 2;
  }
}

}  // namespace

namespace {

// DNS answers and TLS sessions are shared by the session's calls, so a call
// resumes the TLS session of the last one instead of a full handshake. Each
// call opens its own connection: reusing them was measured 30 ms slower per
// call against a keep-alive server (agent_proxy_bench). curl asks for the
// lock of each kind of data it touches.
void LockShare(CURL*, curl_lock_data data, curl_lock_access, void* user) {
  static_cast<std::mutex*>(user)[data % 8].lock();
}
void UnlockShare(CURL*, curl_lock_data data, void* user) {
  static_cast<std::mutex*>(user)[data % 8].unlock();
}

}  // namespace

ModelProxy::ModelProxy(Upstream upstream, Budget budget)
    : upstream_(std::move(upstream)),
      budget_(budget),
      server_(kMaxConnections, [this](int fd) { Answer(fd); }) {
  share_ = curl_share_init();
  curl_share_setopt(share_, CURLSHOPT_LOCKFUNC, LockShare);
  curl_share_setopt(share_, CURLSHOPT_UNLOCKFUNC, UnlockShare);
  curl_share_setopt(share_, CURLSHOPT_USERDATA, share_locks_);
  curl_share_setopt(share_, CURLSHOPT_SHARE, CURL_LOCK_DATA_DNS);
  curl_share_setopt(share_, CURLSHOPT_SHARE, CURL_LOCK_DATA_SSL_SESSION);
}

ModelProxy::~ModelProxy() {
  stopping_ = true;  // calls in flight end at their next progress callback
  server_.Stop();
  curl_share_cleanup(share_);
}

bool ModelProxy::Listen(const std::string& path) { return server_.Listen(path); }

v1::AgentUsage ModelProxy::totals() const {
  std::lock_guard<std::mutex> lock(mu_);
  return totals_;
}

v1::AgentUsage ModelProxy::CountedLocked() const {
  v1::AgentUsage t = totals_;
  for (const auto& [id, usage] : answering_) {
    v1::Usage& u = *t.mutable_usage();
    u.set_input_tokens(u.input_tokens() + usage.input_tokens());
    u.set_output_tokens(u.output_tokens() + usage.output_tokens());
    t.set_cost_usd(t.cost_usd() + CostUsd(upstream_.price, usage));
  }
  return t;
}

std::optional<v1::AgentEnd> ModelProxy::SpentLocked() const {
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
  const std::optional<v1::AgentEnd> which = SpentLocked();
  if (!which) return "";
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

absl::Time ModelProxy::last_activity() const {
  std::lock_guard<std::mutex> lock(mu_);
  return last_activity_;
}

int ModelProxy::in_flight() const {
  std::lock_guard<std::mutex> lock(mu_);
  return in_flight_;
}

std::vector<ModelProxy::Call> ModelProxy::calls() const {
  std::lock_guard<std::mutex> lock(mu_);
  return calls_;
}

void ModelProxy::Touch() {
  std::lock_guard<std::mutex> lock(mu_);
  last_activity_ = absl::Now();
}

absl::StatusOr<ModelProxy::Request> ModelProxy::ReadRequest(int fd) {
  std::string data;
  size_t head_end;
  while ((head_end = data.find("\r\n\r\n")) == std::string::npos) {
    if (data.size() > kMaxHeadBytes) return absl::InvalidArgumentError("request head too large");
    if (!ReadMore(fd, data)) return absl::InvalidArgumentError("no request");
  }
  Touch();
  std::vector<absl::string_view> lines =
      absl::StrSplit(absl::string_view(data).substr(0, head_end), "\r\n");
  std::vector<absl::string_view> first = absl::StrSplit(lines[0], ' ');
  if (first.size() != 3 || !absl::StartsWith(first[2], "HTTP/1.") ||
      !absl::StartsWith(first[1], "/")) {
    return absl::InvalidArgumentError("malformed request line");
  }
  Request r;
  r.method = std::string(first[0]);
  r.target = std::string(first[1]);
  for (size_t i = 1; i < lines.size(); ++i) {
    const size_t colon = lines[i].find(':');
    if (colon == absl::string_view::npos || colon == 0) {
      return absl::InvalidArgumentError("malformed header");
    }
    r.headers[absl::AsciiStrToLower(lines[i].substr(0, colon))] =
        std::string(absl::StripAsciiWhitespace(lines[i].substr(colon + 1)));
  }
  data.erase(0, head_end + 4);
  auto header = [&](const char* name) {
    auto it = r.headers.find(name);
    return it == r.headers.end() ? std::string() : it->second;
  };
  if (absl::AsciiStrToLower(header("transfer-encoding")) == "chunked") {
    absl::StatusOr<std::string> body = ReadChunked(fd, std::move(data), kMaxBodyBytes);
    if (!body.ok()) return body.status();
    r.body = *std::move(body);
  } else {
    uint64_t length = 0;
    if (!header("content-length").empty() &&
        !absl::SimpleAtoi(header("content-length"), &length)) {
      return absl::InvalidArgumentError("malformed Content-Length");
    }
    if (length > kMaxBodyBytes) return absl::OutOfRangeError("request body too large");
    while (data.size() < length) {
      if (!ReadMore(fd, data)) return absl::InvalidArgumentError("truncated request body");
    }
    data.resize(length);
    r.body = std::move(data);
  }
  return r;
}

void ModelProxy::Answer(int fd) {
  Call call;
  call.started_unix_ms = absl::ToUnixMillis(absl::Now());
  const absl::Time start = absl::Now();
  absl::StatusOr<Request> request = ReadRequest(fd);
  if (!request.ok()) {
    if (request.status().message() == "no request") return;  // an idle or closed connection
    Refuse(fd, request.status().code() == absl::StatusCode::kOutOfRange ? 413 : 400,
           absl::StrCat("ptxbench model proxy: ", request.status().message()), call);
  } else {
    call.target = absl::StrCat(request->method, " ", request->target);
    Handle(fd, *request, call);
  }
  call.latency_ms = absl::ToInt64Milliseconds(absl::Now() - start);
  std::lock_guard<std::mutex> lock(mu_);
  last_activity_ = absl::Now();
  calls_.push_back(std::move(call));
}

void ModelProxy::Handle(int fd, const Request& request, Call& call) {
  std::string path = request.target.substr(0, request.target.find('?'));
  const Endpoint endpoint = EndpointOf(upstream_.wire, path);
  if (request.method != "POST" || !endpoint.allowed) {
    return Refuse(fd, 404,
                  absl::StrCat("ptxbench model proxy: a session may call only its model (",
                               agents::WireTitle(upstream_.wire), "), not ", call.target),
                  call);
  }
  auto encoding = request.headers.find("content-encoding");
  if (encoding != request.headers.end() && encoding->second != "identity") {
    return Refuse(fd, 415, "ptxbench model proxy: request bodies must be plain JSON", call);
  }
  if (std::optional<v1::AgentEnd> spent_budget = spent()) {
    return Refuse(fd, 400,
                  absl::StrCat("ptxbench: this session's ", spent_reason(),
                               "; the session is over"),
                  call);
  }
  Json body = Json::parse(request.body, nullptr, /*allow_exceptions=*/false);
  if (!body.is_object()) {
    return Refuse(fd, 400, "ptxbench model proxy: the request body is not a JSON object", call);
  }
  int64_t left = 0;
  if (endpoint.counted) {
    std::lock_guard<std::mutex> lock(mu_);
    const v1::AgentUsage t = CountedLocked();
    left = std::max<int64_t>(1, budget_.tokens - t.usage().input_tokens() -
                                    t.usage().output_tokens());
  }
  std::string target = request.target;
  call.edits = ApplyRequestPolicy(upstream_.wire, {upstream_.model_id, left}, body, target);
  call.request = body.dump();
  // A call limit holds against calls made at once: each counted call holds
  // its place from here until its answer is counted.
  if (endpoint.counted) {
    std::unique_lock<std::mutex> lock(mu_);
    if (budget_.model_calls > 0 &&
        totals_.model_calls() + calls_answering_ >= budget_.model_calls) {
      lock.unlock();
      return Refuse(fd, 400,
                    absl::StrCat("ptxbench: this session's model call limit of ",
                                 budget_.model_calls, " is taken by the calls made so far"),
                    call);
    }
    ++calls_answering_;
  }
  Forward(fd, target, request, endpoint.counted, call);
  if (endpoint.counted) {
    std::lock_guard<std::mutex> lock(mu_);
    --calls_answering_;
  }
}

void ModelProxy::Refuse(int fd, int status, const std::string& message, Call& call) {
  call.status = status;
  call.refused = message;
  call.response = ErrorBody(upstream_.wire, status, message);
  (void)(WriteAll(fd, Head(status, "application/json")) && WriteChunk(fd, call.response) &&
         WriteAll(fd, "0\r\n\r\n"));
}

std::string ModelProxy::UpstreamUrl(const std::string& target) const {
  // The registry's base URL names the API's root ("https://host/v1"); the
  // CLI's target is a path under the same root, so it goes to the base's
  // scheme and host.
  absl::string_view base = absl::StripSuffix(upstream_.base_url, "/");
  const size_t scheme = base.find("://");
  const size_t slash = base.find('/', scheme == absl::string_view::npos ? 0 : scheme + 3);
  const absl::string_view origin = base.substr(0, slash);
  const absl::string_view root = slash == absl::string_view::npos ? "" : base.substr(slash);
  if (!absl::StartsWith(target, root)) return absl::StrCat(base, target);
  return absl::StrCat(origin, target);
}

namespace {

// What a transfer needs in curl's callbacks.
struct Relay {
  int fd = -1;
  const std::atomic<bool>* stopping = nullptr;
  std::function<void()> touch;
  // A streamed answer's usage so far, told before its bytes go to the CLI.
  std::function<void(const v1::Usage&)> counted;
  bool head_sent = false;
  bool client_gone = false;
  long status = 0;
  std::string content_type = "application/json";
  bool sse = false;
  std::string* recorded = nullptr;
  bool* truncated = nullptr;
  // A plain answer is held until it is whole and its usage counted: the CLI
  // acts on it only then. One over kMaxBodyBytes (no model's) is
  // passed on as it comes.
  std::string json;
  bool passing = false;
  StreamUsage* usage = nullptr;
  CURL* curl = nullptr;
};

size_t OnHeader(char* data, size_t size, size_t n, void* user) {
  Relay& r = *static_cast<Relay*>(user);
  absl::string_view line(data, size * n);
  if (absl::StartsWithIgnoreCase(line, "content-type:")) {
    r.content_type = std::string(absl::StripAsciiWhitespace(line.substr(13)));
    r.sse = absl::StartsWithIgnoreCase(r.content_type, "text/event-stream");
  }
  return size * n;
}

bool SendHead(Relay& r) {
  if (r.head_sent) return true;
  r.head_sent = true;
  curl_easy_getinfo(r.curl, CURLINFO_RESPONSE_CODE, &r.status);
  return WriteAll(r.fd, Head(static_cast<int>(r.status), r.content_type));
}

bool Pass(Relay& r, absl::string_view bytes) {
  if (!SendHead(r) || !WriteChunk(r.fd, bytes)) {
    r.client_gone = true;
    return false;
  }
  return true;
}

size_t OnBody(char* data, size_t size, size_t n, void* user) {
  Relay& r = *static_cast<Relay*>(user);
  const absl::string_view bytes(data, size * n);
  r.touch();
  const size_t room = ModelProxy::kMaxRecordedResponse - std::min(r.recorded->size(),
                                                                  ModelProxy::kMaxRecordedResponse);
  const absl::string_view kept = bytes.substr(0, room);
  r.recorded->append(kept.data(), kept.size());
  if (bytes.size() > room) *r.truncated = true;
  if (r.sse) {
    r.usage->Feed(bytes);
    r.counted(r.usage->usage());
  } else if (!r.passing) {
    r.json.append(bytes.data(), bytes.size());
    if (r.json.size() <= ModelProxy::kMaxBodyBytes) return size * n;
    r.passing = true;
    if (!Pass(r, r.json)) return 0;
    return size * n;
  }
  return Pass(r, bytes) ? size * n : 0;  // 0: the CLI went away, the call ends here
}

int OnProgress(void* user, curl_off_t, curl_off_t, curl_off_t, curl_off_t) {
  return static_cast<Relay*>(user)->stopping->load() ? 1 : 0;
}

}  // namespace

void ModelProxy::Forward(int fd, const std::string& target, const Request& request,
                         bool counted, Call& call) {
  StreamUsage usage(upstream_.wire);
  Relay relay;
  relay.fd = fd;
  relay.stopping = &stopping_;
  relay.touch = [this] { Touch(); };
  relay.recorded = &call.response;
  relay.truncated = &call.response_truncated;
  relay.usage = &usage;
  CURL* curl = curl_easy_init();
  relay.curl = curl;
  curl_slist* headers = nullptr;
  headers = curl_slist_append(headers, "Content-Type: application/json");
  // The API version and beta features the CLI asked for; never its key.
  for (const char* pass : {"anthropic-version", "anthropic-beta", "openai-beta", "accept"}) {
    auto it = request.headers.find(pass);
    if (it != request.headers.end()) {
      headers = curl_slist_append(headers, absl::StrCat(pass, ": ", it->second).c_str());
    }
  }
  for (const std::string& h : upstream_.key_headers) headers = curl_slist_append(headers, h.c_str());
  headers = curl_slist_append(headers, "Expect:");
  const std::string url = UpstreamUrl(target);
  curl_easy_setopt(curl, CURLOPT_URL, url.c_str());
  curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
  curl_easy_setopt(curl, CURLOPT_POSTFIELDS, call.request.data());
  curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(call.request.size()));
  curl_easy_setopt(curl, CURLOPT_USERAGENT, "ptxbench-model-proxy");
  curl_easy_setopt(curl, CURLOPT_SHARE, share_);
  curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT, 30L);
  // An answer that sends nothing for 10 minutes is over.
  curl_easy_setopt(curl, CURLOPT_LOW_SPEED_LIMIT, 1L);
  curl_easy_setopt(curl, CURLOPT_LOW_SPEED_TIME, 600L);
  curl_easy_setopt(curl, CURLOPT_HEADERFUNCTION, OnHeader);
  curl_easy_setopt(curl, CURLOPT_HEADERDATA, &relay);
  curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, OnBody);
  curl_easy_setopt(curl, CURLOPT_WRITEDATA, &relay);
  curl_easy_setopt(curl, CURLOPT_XFERINFOFUNCTION, OnProgress);
  curl_easy_setopt(curl, CURLOPT_XFERINFODATA, &relay);
  curl_easy_setopt(curl, CURLOPT_NOPROGRESS, 0L);
  int64_t answer = 0;
  {
    std::lock_guard<std::mutex> lock(mu_);
    ++in_flight_;
    if (counted) answer = next_answer_++;
  }
  relay.counted = [this, counted, answer](const v1::Usage& so_far) {
    if (!counted) return;
    std::lock_guard<std::mutex> lock(mu_);
    answering_[answer] = so_far;
  };
  const CURLcode code = curl_easy_perform(curl);
  if (!relay.head_sent) curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &relay.status);
  if (!relay.sse && !relay.passing) usage.Answer(relay.json);
  // What reached the CLI, or will: a whole answer, or the part of a stream
  // relayed before it broke.
  const bool answered = code == CURLE_OK || relay.head_sent;
  // Only an answer is a model call; the provider's errors cost nothing. It
  // is counted before the rest of it goes to the CLI.
  {
    std::lock_guard<std::mutex> lock(mu_);
    --in_flight_;
    if (counted) answering_.erase(answer);  // only a counted call has a slot
    if (counted && answered && relay.status == 200) {
      call.usage = usage.usage();
      call.cost_usd = CostUsd(upstream_.price, call.usage);
      v1::Usage& total = *totals_.mutable_usage();
      total.set_input_tokens(total.input_tokens() + call.usage.input_tokens());
      total.set_output_tokens(total.output_tokens() + call.usage.output_tokens());
      total.set_reasoning_tokens(total.reasoning_tokens() + call.usage.reasoning_tokens());
      total.set_cached_tokens(total.cached_tokens() + call.usage.cached_tokens());
      totals_.set_cost_usd(totals_.cost_usd() + call.cost_usd);
      totals_.set_model_calls(totals_.model_calls() + 1);
      totals_.set_latency_ms(totals_.latency_ms() +
                             (absl::ToUnixMillis(absl::Now()) - call.started_unix_ms));
    }
  }
  if (answered) {
    const bool rest = relay.head_sent || relay.passing ? SendHead(relay) : Pass(relay, relay.json);
    if (rest) (void)WriteAll(fd, "0\r\n\r\n");
    call.status = static_cast<int>(relay.status);
  } else {
    // Nothing reached the CLI yet: tell it in its API's words. Not counted.
    Refuse(fd, 502, absl::StrCat("ptxbench model proxy: the provider could not be reached: ",
                                 curl_easy_strerror(code)),
           call);
  }
  curl_slist_free_all(headers);
  curl_easy_cleanup(curl);
}

}  // namespace ptxbench::agent_gateway
