// One upstream transfer of the model proxy (model_proxy.h, Forward): the
// request the proxy built, sent with the key; the answer relayed to the CLI
// as it comes and read to its end whatever the CLI does, its usage taken
// from the provider's own events.
#include <curl/curl.h>

#include <functional>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "agent_gateway/agent/model_proxy.h"
#include "agent_gateway/agent/model_proxy_wire.h"
#include "agent_gateway/agent/stream_usage.h"

namespace ptxbench::agent_gateway {
namespace {

namespace v1 = ::ptxbench::v1;
using proxy_internal::Answered;
using proxy_internal::HttpHead;
using proxy_internal::WriteAll;
using proxy_internal::WriteChunk;

// What a transfer needs in curl's callbacks.
struct Relay {
  int fd = -1;  // the CLI's connection; -1: the answer is kept whole
  const std::atomic<bool>* cut = nullptr;
  std::function<void()> touch;
  // A streamed answer's usage so far, told before its bytes go to the CLI.
  std::function<void(const TokenUsage&)> counted;
  Answered* answer = nullptr;
  StreamUsage* usage = nullptr;
  CURL* curl = nullptr;
  size_t read = 0;  // bytes of the answer so far
};

// A content type as the provider gave it, if it is one; else a plain one.
std::string ContentType(absl::string_view value) {
  value = absl::StripAsciiWhitespace(value);
  if (value.empty() || value.size() > 128) return "application/octet-stream";
  for (char c : value) {
    if (!absl::ascii_isalnum(static_cast<unsigned char>(c)) &&
        absl::string_view("/.+-;= _").find(c) == absl::string_view::npos) {
      return "application/octet-stream";
    }
  }
  return std::string(value);
}

size_t OnHeader(char* data, size_t size, size_t n, void* user) {
  Relay& r = *static_cast<Relay*>(user);
  absl::string_view line(data, size * n);
  if (absl::StartsWithIgnoreCase(line, "content-type:")) {
    r.answer->content_type = ContentType(line.substr(13));
    r.answer->sse = absl::StartsWithIgnoreCase(r.answer->content_type, "text/event-stream");
  }
  return size * n;
}

// Bytes to the CLI; once its connection fails, nothing more goes to it and
// the answer is read on.
void Pass(Relay& r, absl::string_view bytes) {
  Answered& a = *r.answer;
  if (r.fd < 0 || a.client_gone) return;
  if (!a.head_sent) {
    a.head_sent = true;
    long status = 0;
    curl_easy_getinfo(r.curl, CURLINFO_RESPONSE_CODE, &status);
    a.status = static_cast<int>(status);
    if (!WriteAll(r.fd, HttpHead(a.status, a.content_type))) a.client_gone = true;
  }
  if (!a.client_gone && !WriteChunk(r.fd, bytes)) a.client_gone = true;
}

size_t OnBody(char* data, size_t size, size_t n, void* user) {
  Relay& r = *static_cast<Relay*>(user);
  Answered& a = *r.answer;
  const absl::string_view bytes(data, size * n);
  r.touch();
  r.read += bytes.size();
  // An answer past this is no model's: the transfer is cut, and charged its
  // reservation.
  if (r.read > ModelProxy::kMaxAnswerBytes) return 0;
  const size_t room =
      ModelProxy::kRecordedBody - std::min(a.recorded.size(), ModelProxy::kRecordedBody);
  a.recorded.append(bytes.data(), std::min(room, bytes.size()));
  if (bytes.size() > room) a.recorded_truncated = true;
  if (a.sse && r.fd >= 0) {
    r.usage->Feed(bytes);
    r.counted(r.usage->usage());
    Pass(r, bytes);
    return bytes.size();
  }
  if (a.passing) {
    Pass(r, bytes);
    return bytes.size();
  }
  // A plain answer is held until it is whole and counted: the CLI acts on
  // it only then. One over kMaxBodyBytes (no model's) is passed on as it
  // comes, and charged its reservation.
  a.body.append(bytes.data(), bytes.size());
  if (a.body.size() > ModelProxy::kMaxBodyBytes) {
    if (r.fd < 0) return 0;
    a.passing = true;
    Pass(r, a.body);
    a.body.clear();
  }
  return bytes.size();
}

int OnProgress(void* user, curl_off_t, curl_off_t, curl_off_t, curl_off_t) {
  return static_cast<Relay*>(user)->cut->load() ? 1 : 0;
}

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

namespace proxy_internal {

v1::Usage ToProto(const TokenUsage& usage) {
  v1::Usage u;
  u.set_input_tokens(usage.input_tokens);
  u.set_output_tokens(usage.output_tokens);
  u.set_reasoning_tokens(usage.reasoning_tokens);
  u.set_cached_tokens(usage.cached_tokens);
  return u;
}

void* NewShare(std::mutex* locks) {
  CURLSH* share = curl_share_init();
  curl_share_setopt(share, CURLSHOPT_LOCKFUNC, LockShare);
  curl_share_setopt(share, CURLSHOPT_UNLOCKFUNC, UnlockShare);
  curl_share_setopt(share, CURLSHOPT_USERDATA, locks);
  curl_share_setopt(share, CURLSHOPT_SHARE, CURL_LOCK_DATA_DNS);
  curl_share_setopt(share, CURLSHOPT_SHARE, CURL_LOCK_DATA_SSL_SESSION);
  return share;
}

void FreeShare(void* share) { curl_share_cleanup(static_cast<CURLSH*>(share)); }

}  // namespace proxy_internal

ModelProxy::Answered ModelProxy::Forward(int fd, const std::string& url,
                                         const std::vector<std::string>& forwarded,
                                         const std::string& body, int64_t slot) {
  Answered answer;
  StreamUsage usage(upstream_.wire);
  Relay relay;
  relay.fd = fd;
  relay.cut = &cut_;
  relay.touch = [this] { Touch(); };
  relay.answer = &answer;
  relay.usage = &usage;
  relay.counted = [this, slot](const TokenUsage& so_far) {
    if (slot < 0) return;
    std::lock_guard<std::mutex> lock(mu_);
    answering_[slot] = proxy_internal::ToProto(so_far);
  };
  CURL* curl = curl_easy_init();
  relay.curl = curl;
  curl_slist* headers = curl_slist_append(nullptr, "Content-Type: application/json");
  for (const std::string& h : forwarded) headers = curl_slist_append(headers, h.c_str());
  for (const std::string& h : upstream_.key_headers) headers = curl_slist_append(headers, h.c_str());
  headers = curl_slist_append(headers, "Expect:");
  curl_easy_setopt(curl, CURLOPT_URL, url.c_str());
  curl_easy_setopt(curl, CURLOPT_PROTOCOLS_STR, "http,https");
  curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
  curl_easy_setopt(curl, CURLOPT_POSTFIELDS, body.data());
  curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(body.size()));
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
  {
    std::lock_guard<std::mutex> lock(mu_);
    ++in_flight_;
  }
  const CURLcode code = curl_easy_perform(curl);
  long status = 0;
  curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &status);
  answer.status = static_cast<int>(status);
  answer.reached = status > 0;
  if (!answer.reached) answer.error = curl_easy_strerror(code);
  if (!answer.sse && !answer.passing) usage.Answer(answer.body);
  answer.usage = usage.usage();
  answer.usage_whole = usage.finished();
  {
    std::lock_guard<std::mutex> lock(mu_);
    --in_flight_;
    settled_.notify_all();
  }
  curl_slist_free_all(headers);
  curl_easy_cleanup(curl);
  return answer;
}

}  // namespace ptxbench::agent_gateway
