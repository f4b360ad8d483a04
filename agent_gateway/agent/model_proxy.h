#ifndef PTXBENCH_AGENT_GATEWAY_AGENT_MODEL_PROXY_H_
#define PTXBENCH_AGENT_GATEWAY_AGENT_MODEL_PROXY_H_

// The model proxy of one agent session (docs/AGENTS.md, "The model proxy"):
// the session's only way to a model. It serves HTTP/1.1 on a unix socket,
// which the relay inside the session's sandbox joins each of the CLI's
// connections to. Everything it receives is hostile, so it parses and
// rebuilds, and forwards nothing as text:
//  1. the request is read strictly (client_request.h) and must match one of
//     the API's routes (routes.h); the upstream URL is the proxy's own, with
//     the pinned model in it;
//  2. the body is checked against the API's allow-lists (request_allowlist.h)
//     and re-written by the policy (request_policy.h: the model pinned, the
//     answer's length capped); only allow-listed headers go upstream, each
//     checked against its grammar, with the real key (the CLI only ever
//     has a placeholder);
//  3. a model call is admitted only with its worst case reserved: its
//     prompt's tokens (at most one per byte of its body and a margin for
//     media and framing, or the provider's own count when that bound does
//     not fit) plus the output it may produce, capped to what is left; calls
//     at once share what is left, a call that does not fit waits for those
//     in flight and is refused if it still does not fit;
//  4. the answer is relayed as it streams, and read to its end from the
//     provider whatever the CLI does; its usage is the provider's own
//     (stream_usage.h), or the reservation when the answer did not say it
//     whole; so an answer can neither be cut short nor shaped to go
//     uncounted;
//  5. a model call goes upstream only with a call permit for the model
//     (call_permits.h: the fleet's rpm, tpm and concurrency, held by the
//     scheduler), asked for its reservation and released with its usage;
//     the provider's free token counters are rate-limited here and
//     recorded as calls of their own;
//  6. every call is recorded (bounded in bytes and in number).
// No exception from hostile input leaves a connection's handler.

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "agent_gateway/agent/unix_server.h"
#include "agent_gateway/models/call_permits.h"
#include "agent_gateway/models/model_registry.h"
#include "agents/clis.h"
#include "common/json_reader.h"
#include "ptxbench/v1/executor.pb.h"

namespace ptxbench::agent_gateway {

struct CheckedRequest;
struct ClientRequest;
struct Route;
namespace proxy_internal {
struct Answered;
}  // namespace proxy_internal

class ModelProxy {
 public:
  struct Upstream {
    agents::Wire wire = agents::Wire::kOpenAIResponses;
    // As the registry has it: "https://api.openai.com/v1",
    // "https://api.anthropic.com", ".../v1beta" (routes.h).
    std::string base_url;
    // The headers that carry the real key ("x-api-key: ..."): sent upstream
    // only, never recorded.
    std::vector<std::string> key_headers;
    std::string model_id;  // pinned (request_policy.h)
    ModelPrice price;
    // The registry's name of the model: its call permits are kept under it.
    std::string model;
  };
  struct Budget {
    int64_t tokens = 0;       // > 0
    double cost_usd = 0;      // 0: none
    int64_t model_calls = 0;  // 0: none
  };
  enum class CallKind { kModel, kTokenCount, kAdmissionCount, kRefused };
  struct Call {
    int64_t started_unix_ms = 0;
    int64_t latency_ms = 0;
    CallKind kind = CallKind::kRefused;
    std::string target;   // method and path, as asked (cut at 512 bytes)
    int status = 0;       // the upstream's, or the proxy's own answer
    std::string refused;  // why the proxy answered itself; "" when forwarded
    // The bodies as sent upstream (after the policy) and as relayed, each
    // kept up to kRecordedBody while the session's kept bodies stay under
    // kRecordedBodies.
    std::string request;
    std::string response;
    bool bodies_truncated = false;
    ptxbench::v1::Usage usage;  // as charged
    double cost_usd = 0;
    int64_t reserved_tokens = 0;  // held while it was in flight
    // The answer did not say its usage whole (cut, or in no shape the
    // provider sends): its reservation was charged.
    bool charged_reservation = false;
    std::vector<std::string> edits;  // what the policy changed
  };

  static constexpr int kMaxConnections = 16;
  static constexpr size_t kMaxHeadBytes = 64 << 10;
  static constexpr size_t kMaxBodyBytes = 16 << 20;
  // What is read of one answer from the provider, at most.
  static constexpr size_t kMaxAnswerBytes = 64 << 20;
  static constexpr size_t kRecordedBody = 256 << 10;
  static constexpr size_t kRecordedBodies = 4 << 20;
  static constexpr size_t kMaxCallRecords = 10'000;
  // A request's head arrives within the first, the whole request within the
  // second, or the connection is dropped.
  static constexpr absl::Duration kHeadDeadline = absl::Seconds(10);
  static constexpr absl::Duration kRequestDeadline = absl::Seconds(60);
  // A call the budget left cannot cover waits this long for the calls in
  // flight to end before it is refused.
  static constexpr absl::Duration kAdmissionWait = absl::Seconds(60);
  // The CLI's token counters: a burst, then one a second; at most this many
  // in a session.
  static constexpr int kCounterBurst = 10;
  static constexpr int kMaxCounterCalls = 1'000;

  // `permits` (not owned, outlives the proxy) grants each model call; null
  // only in tests of the proxy alone.
  ModelProxy(Upstream upstream, Budget budget, CallPermits* permits = nullptr);
  // Close(0) and stop serving.
  ~ModelProxy();
  ModelProxy(const ModelProxy&) = delete;
  ModelProxy& operator=(const ModelProxy&) = delete;

  // Serves the unix socket at `path` (created 0600; the caller hands it to
  // the session's uid). False when it cannot listen.
  bool Listen(const std::string& path);
  // The session is over: no call is admitted from now; the calls in flight
  // have `grace` to be read to their end, then are cut and charged their
  // reservations. The totals are final when it returns.
  void Close(absl::Duration grace);

  // The calls answered so far, summed (token counts of refused and counter
  // calls are 0; `model_calls` counts answers).
  ptxbench::v1::AgentUsage totals() const;
  // The budget that is spent, if one is: every request is refused from now.
  // Counts what the answers still streaming have reported so far too (the
  // CLI may act on an answer, and call again, before the proxy has its last
  // byte), and a call refused because what was left could not cover it.
  std::optional<ptxbench::v1::AgentEnd> spent() const;
  // In words, e.g. "token budget of 200000 spent (201344 tokens)"; "" when
  // none is.
  std::string spent_reason() const;
  // When a byte last went either way (the stall detector's clock).
  absl::Time last_activity() const;
  // When the last model call was admitted (InfinitePast: none yet).
  absl::Time last_call_admitted() const;
  int in_flight() const;
  std::vector<Call> calls() const;
  // Calls not kept in calls() (past kMaxCallRecords).
  int64_t calls_dropped() const;
  int64_t token_count_calls() const;

 private:
  // What admission holds for a model call until it is settled.
  struct Reservation {
    int64_t slot = 0;
    int64_t prompt = 0;  // tokens: the bound, or the provider's count
    int64_t output = 0;  // the answer's cap
    double cost_usd = 0;
    int64_t tokens() const { return prompt + output; }
  };
  using Answered = proxy_internal::Answered;
  // One connection: one request and its answer, recorded.
  void Answer(int fd);
  void Handle(int fd, ClientRequest& request, Call& call);
  void HandleModelCall(int fd, const Route& route, CheckedRequest& checked, size_t body_bytes,
                       const std::vector<std::string>& headers, Call& call);
  void HandleTokenCount(int fd, const Route& route, CheckedRequest& checked,
                        const std::vector<std::string>& headers, Call& call);
  // Sends `body` (the checked body, consumed) upstream for `call`, recording
  // the bodies and the status.
  Answered Exchange(int fd, const std::string& url, const std::vector<std::string>& headers,
                    StrictJson& body, int64_t slot, Call& call);
  // Ends the CLI's answer: the rest of the relay, or the proxy's 502 when
  // the provider could not be reached.
  void EndRelay(int fd, Answered& answer, Call& call);
  // Reserves the call's worst case, waiting for calls in flight where what
  // is left cannot cover it; the output cap, or why not.
  absl::StatusOr<Reservation> Admit(const CheckedRequest& checked, size_t body_bytes,
                                    const std::vector<std::string>& headers);
  // The provider's count of the prompt of `checked` (kAdmissionCount).
  std::optional<int64_t> CountPrompt(const CheckedRequest& checked,
                                     const std::vector<std::string>& headers);
  // Charges a finished call and frees its reservation.
  void Settle(const Reservation& reservation, const Answered& answer, Call& call);
  // Sends `body` upstream to `url` with the CLI's allowed `headers` and the
  // key, and relays the answer to `fd` (-1: to nobody, kept whole); reads it
  // to its end whatever the CLI does. A model call's `slot` (-1: none) gets
  // the answer's usage as it streams.
  Answered Forward(int fd, const std::string& url, const std::vector<std::string>& headers,
                   const std::string& body, int64_t slot);
  // The proxy's own answer: `status` and an error in the API's shape.
  void Refuse(int fd, int status, const std::string& message, Call& call);
  void Record(Call call);
  void Touch();
  // totals_ plus the usage so far of the answers streaming (mu_ held).
  ptxbench::v1::AgentUsage CountedLocked() const;
  std::optional<ptxbench::v1::AgentEnd> SpentLocked() const;
  std::string SpentReasonLocked() const;

  const Upstream upstream_;
  const Budget budget_;
  CallPermits* const permits_;

  mutable std::mutex mu_;
  std::condition_variable settled_;  // a reservation was freed
  ptxbench::v1::AgentUsage totals_;
  std::vector<Call> calls_;
  int64_t calls_dropped_ = 0;
  size_t recorded_bodies_ = 0;
  int in_flight_ = 0;
  bool closing_ = false;
  // Reservations of the model calls admitted and not yet settled.
  int64_t calls_answering_ = 0;
  int64_t reserved_tokens_ = 0;
  double reserved_cost_ = 0;
  // A call was refused because what was left could not cover it.
  std::optional<ptxbench::v1::AgentEnd> exhausted_;
  std::string exhausted_reason_;
  // The usage the streaming answers have reported so far, by slot: known
  // before the CLI gets the bytes that carry it.
  std::map<int64_t, ptxbench::v1::Usage> answering_;
  int64_t next_slot_ = 0;
  absl::Time last_activity_ = absl::Now();
  absl::Time last_call_admitted_ = absl::InfinitePast();
  // The CLI's token counters: a token bucket.
  double counter_tokens_ = kCounterBurst;
  absl::Time counter_refilled_ = absl::Now();
  int64_t token_count_calls_ = 0;

  std::atomic<bool> cut_{false};  // calls in flight end at their next progress callback
  void* share_ = nullptr;         // CURLSH*: the calls' shared DNS and TLS sessions
  std::mutex share_locks_[8];     // one per curl_lock_data kind
  // Last: stopped first, while what its connections use is alive.
  UnixSocketServer server_;
};

}  // namespace ptxbench::agent_gateway

#endif  // PTXBENCH_AGENT_GATEWAY_AGENT_MODEL_PROXY_H_
