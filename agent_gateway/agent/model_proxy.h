#ifndef PTXBENCH_AGENT_GATEWAY_AGENT_MODEL_PROXY_H_
#define PTXBENCH_AGENT_GATEWAY_AGENT_MODEL_PROXY_H_

// The model proxy of one agent session (docs/AGENTS.md, "The model proxy"):
// the session's only way to a model. It serves HTTP/1.1 on a unix socket,
// which the relay inside the session's sandbox joins each of the CLI's
// connections to, and for each request:
//  1. accepts only the model endpoints of the session's API (a streamed or
//     plain answer, and the free token counters), as plain JSON;
//  2. refuses, with an error in that API's own shape, once a budget of the
//     session is spent (tokens, cost, model calls): the CLI shows it and
//     stops, and the session runner ends the session;
//  3. applies the request policy (request_policy.h: the model pinned, the
//     provider's server-side tools removed, the answer capped to the tokens
//     left);
//  4. forwards it with the real key (the CLI only ever has a placeholder),
//     relaying the answer as it streams, and counts its tokens from the
//     provider's own usage (stream_usage.h) and its cost from the registry's
//     prices;
//  5. records the call: the request as sent, the answer (capped), usage,
//     cost, latency and what the policy changed.
// Requests are hostile input: bounded head and body, strict parsing, a
// connection that sends nothing for 60 s dropped, at most kMaxConnections
// at once. One connection is one request (`Connection: close`).

#include <atomic>
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "absl/status/statusor.h"
#include "agent_gateway/agent/unix_server.h"
#include "agent_gateway/model_registry.h"
#include "agents/clis.h"
#include "ptxbench/v1/executor.pb.h"

namespace ptxbench::agent_gateway {

class ModelProxy {
 public:
  struct Upstream {
    agents::Wire wire = agents::Wire::kOpenAIResponses;
    // As the registry has it: "https://api.openai.com/v1",
    // "https://api.anthropic.com", ".../v1beta". The CLI's paths are taken
    // relative to its scheme and host, and must start with its path.
    std::string base_url;
    // The headers that carry the real key ("x-api-key: ..."): sent upstream
    // only, never recorded.
    std::vector<std::string> key_headers;
    std::string model_id;  // pinned (request_policy.h)
    ModelPrice price;
  };
  struct Budget {
    int64_t tokens = 0;       // > 0
    double cost_usd = 0;      // 0: none
    int64_t model_calls = 0;  // 0: none
  };
  struct Call {
    int64_t started_unix_ms = 0;
    int64_t latency_ms = 0;
    std::string target;   // method and path, as asked
    int status = 0;       // the upstream's, or the proxy's own answer
    std::string refused;  // why the proxy answered itself; "" when forwarded
    std::string request;  // the body as sent upstream (after the policy)
    std::string response;  // as relayed, up to kMaxRecordedResponse
    bool response_truncated = false;
    ptxbench::v1::Usage usage;
    double cost_usd = 0;
    std::vector<std::string> edits;  // what the policy changed
  };

  static constexpr int kMaxConnections = 16;
  static constexpr size_t kMaxHeadBytes = 64 << 10;
  static constexpr size_t kMaxBodyBytes = 64 << 20;
  static constexpr size_t kMaxRecordedResponse = 4 << 20;

  ModelProxy(Upstream upstream, Budget budget);
  // Stops serving, cancels the calls in flight and waits for them.
  ~ModelProxy();
  ModelProxy(const ModelProxy&) = delete;
  ModelProxy& operator=(const ModelProxy&) = delete;

  // Serves the unix socket at `path` (created 0600; the caller hands it to
  // the session's uid). False when it cannot listen.
  bool Listen(const std::string& path);

  // The calls answered upstream so far, summed.
  ptxbench::v1::AgentUsage totals() const;
  // The budget that is spent, if one is: every request is refused from now.
  // Counts what the answers still streaming have reported so far too: the
  // CLI may act on an answer (and make its next call) before the proxy has
  // seen the answer's last byte.
  std::optional<ptxbench::v1::AgentEnd> spent() const;
  // In words, e.g. "token budget of 200000 spent (201344 tokens)"; "" when
  // none is.
  std::string spent_reason() const;
  // When a byte last went either way (the stall detector's clock).
  absl::Time last_activity() const;
  int in_flight() const;
  std::vector<Call> calls() const;

 private:
  struct Request {
    std::string method;
    std::string target;  // path and query
    std::map<std::string, std::string> headers;  // names lower-cased
    std::string body;
  };
  // One connection: one request and its answer, recorded.
  void Answer(int fd);
  absl::StatusOr<Request> ReadRequest(int fd);
  // Checks the endpoint and the budgets, applies the policy, forwards.
  void Handle(int fd, const Request& request, Call& call);
  // Sends the call upstream (at `target`, the policy's) and relays the
  // answer to `fd`; a `counted` answer adds to the totals.
  void Forward(int fd, const std::string& target, const Request& request, bool counted,
               Call& call);
  // The proxy's own answer: `status` and an error in the API's shape.
  void Refuse(int fd, int status, const std::string& message, Call& call);
  std::string UpstreamUrl(const std::string& target) const;
  void Touch();
  // totals_ plus the usage so far of the answers streaming (mu_ held).
  ptxbench::v1::AgentUsage CountedLocked() const;
  std::optional<ptxbench::v1::AgentEnd> SpentLocked() const;

  const Upstream upstream_;
  const Budget budget_;

  mutable std::mutex mu_;
  ptxbench::v1::AgentUsage totals_;
  std::vector<Call> calls_;
  int in_flight_ = 0;
  int64_t calls_answering_ = 0;  // counted calls admitted, not yet counted
  // The counted answers streaming, by a number of their own: the usage their
  // events have reported so far. It is known before the CLI gets the bytes
  // that carry it.
  std::map<int64_t, ptxbench::v1::Usage> answering_;
  int64_t next_answer_ = 0;
  absl::Time last_activity_ = absl::Now();

  std::atomic<bool> stopping_{false};
  void* share_ = nullptr;       // CURLSH*: the calls' shared connections
  std::mutex share_locks_[8];   // one per curl_lock_data kind
  // Last: stopped first, while what its connections use is alive.
  UnixSocketServer server_;
};

}  // namespace ptxbench::agent_gateway

#endif  // PTXBENCH_AGENT_GATEWAY_AGENT_MODEL_PROXY_H_
