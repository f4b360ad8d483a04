#ifndef PTXBENCH_AGENT_GATEWAY_HTTP_CLIENT_H_
#define PTXBENCH_AGENT_GATEWAY_HTTP_CLIENT_H_

// HTTPS POST with libcurl, for model providers. One blocking call per
// request with a hard timeout; the caller decides about retries.

#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace ptxbench::agent_gateway {

struct HttpRequest {
  std::string url;
  std::vector<std::string> headers;  // "Name: value"
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
// with curl's words (never the request's headers). Thread-safe.
absl::StatusOr<HttpResponse> HttpPost(const HttpRequest& request);
// The same for GET (request.body is ignored).
absl::StatusOr<HttpResponse> HttpGet(const HttpRequest& request);

}  // namespace ptxbench::agent_gateway

#endif  // PTXBENCH_AGENT_GATEWAY_HTTP_CLIENT_H_
