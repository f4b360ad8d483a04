#ifndef PTXBENCH_AGENT_GATEWAY_PROVIDERS_HTTP_CLIENT_H_
#define PTXBENCH_AGENT_GATEWAY_PROVIDERS_HTTP_CLIENT_H_

// HTTPS for model providers: one libcurl multi handle driven by one thread,
// so a gateway keeps hundreds of calls in flight without a thread per call
// (connections are reused, HTTP/2 multiplexed where the server offers it).
// The caller decides about retries.

#include <atomic>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/functional/any_invocable.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

namespace ptxbench::agent_gateway {

struct HttpRequest {
  std::string url;
  std::vector<std::string> headers;  // "Name: value"
  bool post = true;                  // else GET (body ignored)
  std::string body;
  absl::Duration timeout = absl::Minutes(10);
};

struct HttpResponse {
  long status = 0;
  std::map<std::string, std::string> headers;  // names lower-cased
  std::string body;
};

// Any HTTP status is a response. Errors are transport failures only:
// kDeadlineExceeded past the timeout, kUnavailable for connection problems,
// with curl's words (never the request's headers); kCancelled for a call
// cancelled by its caller or by the client's destruction.
using HttpResult = absl::StatusOr<HttpResponse>;

class HttpClient {
 public:
  using Done = absl::AnyInvocable<void(HttpResult) &&>;

  HttpClient();
  // Ends every call still in flight with kCancelled, then stops the thread.
  ~HttpClient();
  HttpClient(const HttpClient&) = delete;
  HttpClient& operator=(const HttpClient&) = delete;

  // Starts a call and returns at once. `done` runs exactly once, on the
  // client's thread (keep it short), or on this one if the client is
  // closing. A call whose `cancelled` becomes true ends within about 100 ms
  // with kCancelled. Thread-safe.
  void Send(HttpRequest request, std::shared_ptr<const std::atomic<bool>> cancelled, Done done);
  // Send and wait, for one-off calls (start-up checks).
  HttpResult Fetch(HttpRequest request);

  // Calls started and not finished.
  int in_flight() const { return in_flight_.load(); }

 private:
  struct Transfer;
  void Loop();

  void* multi_ = nullptr;  // CURLM*
  std::atomic<int> in_flight_{0};
  absl::Mutex mu_;
  bool closing_ ABSL_GUARDED_BY(mu_) = false;
  bool woken_ ABSL_GUARDED_BY(mu_) = false;  // a wake-up is pending: one is enough
  std::vector<std::unique_ptr<Transfer>> incoming_ ABSL_GUARDED_BY(mu_);
  std::thread thread_;
};

}  // namespace ptxbench::agent_gateway

#endif  // PTXBENCH_AGENT_GATEWAY_PROVIDERS_HTTP_CLIENT_H_
