#include "agent_gateway/providers/http_client.h"

#include <curl/curl.h>

#include <future>
#include <mutex>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "absl/time/clock.h"

namespace ptxbench::agent_gateway {
namespace {

size_t AppendBody(char* data, size_t size, size_t count, void* out) {
  static_cast<std::string*>(out)->append(data, size * count);
  return size * count;
}

size_t AppendHeader(char* data, size_t size, size_t count, void* out) {
  absl::string_view line(data, size * count);
  const size_t colon = line.find(':');
  if (colon != absl::string_view::npos) {
    (*static_cast<std::map<std::string, std::string>*>(out))[absl::AsciiStrToLower(
        absl::StripAsciiWhitespace(line.substr(0, colon)))] =
        std::string(absl::StripAsciiWhitespace(line.substr(colon + 1)));
  }
  return size * count;
}

void GlobalInit() {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

CURLM* Multi(void* m) { return static_cast<CURLM*>(m); }

// How often cancellations are looked at when nothing else wakes the loop.
constexpr int kPollMs = 100;

}  // namespace

struct HttpClient::Transfer {
  ~Transfer() {
    if (easy != nullptr) curl_easy_cleanup(easy);
    curl_slist_free_all(headers);
  }
  HttpRequest request;  // owns the body curl reads from
  std::shared_ptr<const std::atomic<bool>> cancelled;
  Done done;
  CURL* easy = nullptr;
  curl_slist* headers = nullptr;
  HttpResponse response;
  char error[CURL_ERROR_SIZE] = {};
};

HttpClient::HttpClient() {
  GlobalInit();
  multi_ = curl_multi_init();
  // Many calls go to one provider host: no cap per host, a connection cache
  // as large as the calls in flight.
  curl_multi_setopt(Multi(multi_), CURLMOPT_MAX_HOST_CONNECTIONS, 0L);
  curl_multi_setopt(Multi(multi_), CURLMOPT_MAXCONNECTS, 2048L);
  thread_ = std::thread([this] { Loop(); });
}

HttpClient::~HttpClient() {
  {
    absl::MutexLock lock(&mu_);
    closing_ = true;
  }
  curl_multi_wakeup(Multi(multi_));
  thread_.join();
  curl_multi_cleanup(Multi(multi_));
}

void HttpClient::Send(HttpRequest request, std::shared_ptr<const std::atomic<bool>> cancelled,
                      Done done) {
  auto t = std::make_unique<Transfer>();
  t->request = std::move(request);
  t->cancelled = std::move(cancelled);
  t->done = std::move(done);
  bool wake = false;
  {
    absl::MutexLock lock(&mu_);
    if (!closing_) {
      ++in_flight_;
      incoming_.push_back(std::move(t));
      wake = !woken_;
      woken_ = true;
    }
  }
  if (t != nullptr) {  // closing: not taken
    std::move(t->done)(absl::CancelledError("HTTP client closing"));
    return;
  }
  if (wake) curl_multi_wakeup(Multi(multi_));
}

HttpResult HttpClient::Fetch(HttpRequest request) {
  std::promise<HttpResult> result;
  std::future<HttpResult> future = result.get_future();
  Send(std::move(request), nullptr, [&result](HttpResult r) { result.set_value(std::move(r)); });
  return future.get();
}

void HttpClient::Loop() {
  std::map<CURL*, std::unique_ptr<Transfer>> active;
  absl::Time scanned = absl::InfinitePast();
  auto finish = [this](std::unique_ptr<Transfer> t, HttpResult result) {
    --in_flight_;
    std::move(t->done)(std::move(result));
  };
  for (;;) {
    std::vector<std::unique_ptr<Transfer>> added;
    bool closing;
    {
      absl::MutexLock lock(&mu_);
      added.swap(incoming_);
      closing = closing_;
      woken_ = false;
    }
    for (std::unique_ptr<Transfer>& t : added) {
      CURL* easy = curl_easy_init();
      if (easy == nullptr) {
        finish(std::move(t), absl::InternalError("curl_easy_init failed"));
        continue;
      }
      t->easy = easy;
      const HttpRequest& r = t->request;
      for (const std::string& h : r.headers) t->headers = curl_slist_append(t->headers, h.c_str());
      curl_easy_setopt(easy, CURLOPT_URL, r.url.c_str());
      if (r.post) {
        curl_easy_setopt(easy, CURLOPT_POST, 1L);
        curl_easy_setopt(easy, CURLOPT_POSTFIELDS, r.body.data());
        curl_easy_setopt(easy, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(r.body.size()));
      }
      curl_easy_setopt(easy, CURLOPT_HTTPHEADER, t->headers);
      curl_easy_setopt(easy, CURLOPT_TIMEOUT_MS,
                       static_cast<long>(absl::ToInt64Milliseconds(r.timeout)));
      curl_easy_setopt(easy, CURLOPT_CONNECTTIMEOUT_MS, 10000L);
      curl_easy_setopt(easy, CURLOPT_NOSIGNAL, 1L);
      curl_easy_setopt(easy, CURLOPT_WRITEFUNCTION, AppendBody);
      curl_easy_setopt(easy, CURLOPT_WRITEDATA, &t->response.body);
      curl_easy_setopt(easy, CURLOPT_HEADERFUNCTION, AppendHeader);
      curl_easy_setopt(easy, CURLOPT_HEADERDATA, &t->response.headers);
      curl_easy_setopt(easy, CURLOPT_ERRORBUFFER, t->error);
      curl_multi_add_handle(Multi(multi_), easy);
      active[easy] = std::move(t);
    }
    // Cancelled calls (revoked leases, a stopping gateway) and, when the
    // client closes, all of them end now. Looked at every kPollMs, not on
    // every wake-up: with many calls in flight the loop wakes often.
    const absl::Time now = absl::Now();
    const bool scan = closing || now - scanned >= absl::Milliseconds(kPollMs);
    if (scan) scanned = now;
    for (auto it = active.begin(); scan && it != active.end();) {
      const Transfer& t = *it->second;
      if (closing || (t.cancelled != nullptr && t.cancelled->load())) {
        curl_multi_remove_handle(Multi(multi_), it->first);
        std::unique_ptr<Transfer> done = std::move(it->second);
        it = active.erase(it);
        finish(std::move(done), absl::CancelledError("HTTP call cancelled"));
      } else {
        ++it;
      }
    }
    if (closing) return;

    int running = 0;
    curl_multi_perform(Multi(multi_), &running);
    int queued = 0;
    while (CURLMsg* msg = curl_multi_info_read(Multi(multi_), &queued)) {
      if (msg->msg != CURLMSG_DONE) continue;
      CURL* easy = msg->easy_handle;
      const CURLcode code = msg->data.result;
      curl_multi_remove_handle(Multi(multi_), easy);
      auto it = active.find(easy);
      std::unique_ptr<Transfer> t = std::move(it->second);
      active.erase(it);
      curl_easy_getinfo(easy, CURLINFO_RESPONSE_CODE, &t->response.status);
      if (code == CURLE_OK) {
        HttpResponse response = std::move(t->response);
        finish(std::move(t), std::move(response));
        continue;
      }
      const std::string what =
          absl::StrCat(curl_easy_strerror(code), t->error[0] != '\0' ? ": " : "", t->error);
      finish(std::move(t), code == CURLE_OPERATION_TIMEDOUT
                               ? absl::DeadlineExceededError(absl::StrCat("model call timed out: ", what))
                               : absl::UnavailableError(absl::StrCat("model call failed: ", what)));
    }
    curl_multi_poll(Multi(multi_), nullptr, 0, kPollMs, nullptr);
  }
}

}  // namespace ptxbench::agent_gateway
